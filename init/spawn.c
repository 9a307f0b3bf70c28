#define _GNU_SOURCE
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "privdrop.h"
#include "procs.h"

extern char **environ;

void spawn_report(int fd, int stage, int err, int detail)
{
	struct spawn_error e = { stage, err, detail };
	ssize_t n;

	do
		n = write(fd, &e, sizeof e);
	while (n < 0 && errno == EINTR);
}

static int set_limits(const struct spawn_req *req, int errfd)
{
	int i, core_set = 0;

	for (i = 0; i < req->n_rlimits; i++) {
		struct rlimit rl = { req->rlimits[i].soft, req->rlimits[i].hard };
		if (setrlimit(req->rlimits[i].resource, &rl) != 0) {
			spawn_report(errfd, STAGE_RLIMIT, errno, req->rlimits[i].resource);
			return -1;
		}
		core_set |= req->rlimits[i].resource == RLIMIT_CORE;
	}
	if (req->confine && !core_set) {
		/* no core files of a confined agent unless asked for */
		struct rlimit rl = { 0, 0 };
		if (setrlimit(RLIMIT_CORE, &rl) != 0) {
			spawn_report(errfd, STAGE_RLIMIT, errno, RLIMIT_CORE);
			return -1;
		}
	}
	return 0;
}

/* Runs in the child, between fork and exec. ward is single-threaded, so
 * nothing is locked here that the parent held. */
static void __attribute__((noreturn)) child(const struct spawn_req *req, int errfd, int holdfd)
{
	sigset_t all;
	int e;

	/* Own process group, foreground on the terminal if there is one (as
	 * tini does, from the child, so there is no race with the exec).
	 * SIGTTOU is still blocked here, so tcsetpgrp works from the
	 * background; ENOTTY/ENXIO just mean there is no terminal. */
	if (setpgid(0, 0) != 0) {
		spawn_report(errfd, STAGE_SETPGID, errno, 0);
		_exit(3);
	}
	if (isatty(STDIN_FILENO))
		(void)tcsetpgrp(STDIN_FILENO, getpgrp());

	/* Descriptors above 2 close at exec; until then the Landlock
	 * ruleset and this record pipe stay usable. Before the limits: a
	 * lower RLIMIT_NOFILE would hide ward's higher descriptors from a
	 * pass that counts up to it (no close_range, no /proc). */
	if (req->close_fds && fd_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
		spawn_report(errfd, STAGE_CLOSE, errno, 0);
		_exit(3);
	}
	if (set_limits(req, errfd) != 0)
		_exit(3);
	if (req->umask_set)
		umask((mode_t)req->umask);
	/* The working directory is entered as the agent user, so it must be
	 * one the agent may enter. */
	if (req->confine && privdrop_credentials(req->confine, errfd) != 0)
		_exit(3);
	if ((req->cwd_fd >= 0 && fchdir(req->cwd_fd) != 0) || (req->cwd && chdir(req->cwd) != 0)) {
		spawn_report(errfd, STAGE_CHDIR, errno, 0);
		_exit(3);
	}
	if (req->confine && privdrop_lock(req->confine, errfd) != 0)
		_exit(3);

	if (req->reset_signals) {
		int sig;
		for (sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL); /* EINVAL for glibc's own: fine */
	}
	if (holdfd >= 0) {
		/* confined as it will run: PID 1 reads /proc now (the exec
		 * changes none of it), then sends one byte */
		char c;
		ssize_t n;
		spawn_report(errfd, NOTE_HELD, 0, 0);
		do
			n = read(holdfd, &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(3); /* PID 1 failed or died: not let go */
		close(holdfd);
	}
	/* execvp searches the PATH of the environment the child will get. */
	environ = (char **)req->envp;
	sigprocmask(SIG_SETMASK, req->mask, NULL);
	execvp(req->argv[0], req->argv);
	e = errno;
	sigfillset(&all); /* nothing may interrupt the report */
	sigprocmask(SIG_SETMASK, &all, NULL);
	spawn_report(errfd, STAGE_EXEC, e, 0);
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

pid_t spawn_child(const struct spawn_req *req, int *errfd, int *relfd)
{
	int p[2], h[2] = { -1, -1 };
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
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
		child(req, p[1], h[0]);
	}
	close(p[1]);
	if (h[0] >= 0)
		close(h[0]);
	*relfd = h[1];
	/* Also from the parent, so signals forwarded to the group right
	 * after fork find it; EACCES once the child has exec'd is fine. */
	(void)setpgid(pid, pid);
	(void)fcntl(p[0], F_SETFL, O_NONBLOCK);
	*errfd = p[0];
	return pid;
}

int spawn_read(int errfd, struct spawn_error *rec)
{
	ssize_t n;

	do
		n = read(errfd, rec, sizeof *rec);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n == (ssize_t)sizeof *rec)
		return 1;
	if (n < 0 && errno == EAGAIN)
		return -1;
	/* a short or failed read: report it as an unknown failure */
	rec->stage = STAGE_NONE;
	rec->err = n < 0 ? errno : EIO;
	rec->detail = 0;
	return 1;
}

int spawn_error_code(const struct spawn_error *err)
{
	if (err->stage == STAGE_EXEC)
		return err->err == ENOENT || err->err == ENOTDIR ? 127 : 126;
	return 3;
}

const char *spawn_stage_name(int stage)
{
	static const char *const names[] = {
		[STAGE_NONE] = "start",
		[STAGE_SETPGID] = "setpgid",
		[STAGE_RLIMIT] = "setrlimit",
		[STAGE_CHDIR] = "chdir",
		[STAGE_CLOSE] = "close_range",
		[STAGE_SECUREBITS] = "locking securebits",
		[STAGE_SETGROUPS] = "setgroups",
		[STAGE_SETGID] = "setresgid",
		[STAGE_SETUID] = "setresuid",
		[STAGE_VERIFY_IDS] = "verifying uid/gid/groups",
		[STAGE_VERIFY_CAPS] = "verifying that no capability is left",
		[STAGE_NNP] = "PR_SET_NO_NEW_PRIVS",
		[STAGE_LANDLOCK] = "landlock_restrict_self",
		[STAGE_SECCOMP] = "loading the seccomp filter",
		[STAGE_EXEC] = "exec",
	};
	if (stage >= 0 && stage < (int)(sizeof names / sizeof names[0]) && names[stage])
		return names[stage];
	return "start";
}
