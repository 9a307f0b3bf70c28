#define _GNU_SOURCE
#include "init/supervise/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child/exec.h"

extern char **environ;

/* A child with nothing to do before its exec but its process group (the
 * terminal's foreground too), its directory and its signal mask: a plain
 * init's, nothing confined, its environment ward's own. */
static int nothing_before_exec(const struct spawn_req *req)
{
#ifdef WARD_FORK_ONLY
	(void)req;
	return 0; /* the valgrind build (Makefile) */
#else
	return !req->confine && !req->hold && !req->close_fds && !req->reset_signals && !req->umask_set &&
	       !req->n_rlimits && req->envp == environ && req->tty < 0;
#endif
}

/* Such a child by posix_spawn(): glibc starts it without a copy of ward's
 * memory (clone with CLONE_VM | CLONE_VFORK), so no page table is copied
 * and no page is copied on write after it; a plain init starts its child
 * quicker than tini's fork() does (the start row of docs/benchmarks.md).
 * It returns once the exec has happened. 0 and *pid, or an error number:
 * then nothing was started, and the caller forks as for any child, whose
 * exec reports the same error on the record socket as ever. */
static int spawn_plainly(const struct spawn_req *req, pid_t *pid)
{
	posix_spawnattr_t at;
	posix_spawn_file_actions_t fa;
	short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK;
	int rc;

	if ((rc = posix_spawnattr_init(&at)) != 0)
		return rc;
	if ((rc = posix_spawn_file_actions_init(&fa)) != 0) {
		posix_spawnattr_destroy(&at);
		return rc;
	}
	/* as exec_child: its own group, the terminal's foreground if stdin
	 * is one (glibc blocks every signal in the child until the mask) */
	if (isatty(STDIN_FILENO)) {
#ifdef POSIX_SPAWN_TCSETPGROUP
		flags |= POSIX_SPAWN_TCSETPGROUP;
		rc = posix_spawnattr_tcsetpgrp_np(&at, STDIN_FILENO);
#else
		rc = ENOTSUP;
#endif
	}
	if (!rc)
		rc = posix_spawnattr_setpgroup(&at, 0);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&at, req->mask);
	if (!rc)
		rc = posix_spawnattr_setflags(&at, flags);
	if (!rc && req->cwd_fd >= 0)
		rc = posix_spawn_file_actions_addfchdir_np(&fa, req->cwd_fd);
	if (!rc && req->cwd)
		rc = posix_spawn_file_actions_addchdir_np(&fa, req->cwd);
	if (!rc)
		rc = posix_spawnp(pid, req->argv[0], &fa, &at, req->argv, req->envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return rc;
}

pid_t spawn_child(const struct spawn_req *req, int *errfd, int *relfd)
{
	int p[2], h[2] = { -1, -1 };
	pid_t pid;

	*errfd = *relfd = -1;
	if (nothing_before_exec(req) && spawn_plainly(req, &pid) == 0)
		return pid;
	/* a socket, not a pipe: the egress guard's listener rides on a
	 * record; a packet each, so a record still arrives whole or not */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) != 0)
		return -1;
	if (req->hold && pipe2(h, O_CLOEXEC) != 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		if (h[0] >= 0) {
			close(h[0]);
			close(h[1]);
		}
		errno = e;
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		if (h[1] >= 0)
			close(h[1]);
		exec_child(req, p[1], h[0]);
	}
	close(p[1]);
	if (h[0] >= 0)
		close(h[0]);
	*relfd = h[1];
	/* Also from the parent, so signals forwarded to the group right
	 * after fork find it; EACCES once the child has exec'd is fine (and
	 * EPERM once a child with a pty of its own leads its session). */
	if (req->tty < 0) /* a child with a pty of its own: its setsid() makes it the group's leader */
		(void)setpgid(pid, pid);
	(void)fcntl(p[0], F_SETFL, O_NONBLOCK);
	*errfd = p[0];
	return pid;
}
