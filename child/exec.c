#define _GNU_SOURCE
#include "child/exec.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "child/privdrop.h"
#include "common/fds.h"
#include "common/record.h"
#include "seccomp/notify.h"

extern char **environ;

/* The egress guard's filter, last of all (nothing of ward's makes a
 * socket after it), and its listener handed to PID 1 and closed here: an
 * agent holding it could answer its own calls. Without the filter, a
 * required guard stops the start; a best-effort one is noted (Landlock's
 * ports alone then). */
static int install_egress(const struct confine *c, int errfd)
{
	int l = sc_load_egress(), rc;

	if (l < 0) {
		if (c->egress > 1)
			return record_fail(errfd, STAGE_EGRESS, -l, 0), -1;
		record_note(errfd, NOTE_EGRESS, -l, 0);
		return 0;
	}
	rc = record_send_fd(errfd, RECORD_LISTENER, l);
	close(l);
	if (rc != 0) /* the filter is in: its calls would fail, so fail now */
		return record_fail(errfd, STAGE_EGRESS, -rc, 1), -1;
	return 0;
}

static int set_limits(const struct spawn_req *req, int errfd)
{
	int i, core_set = 0;

	for (i = 0; i < req->n_rlimits; i++) {
		struct rlimit rl = { req->rlimits[i].soft, req->rlimits[i].hard };
		if (setrlimit(req->rlimits[i].resource, &rl) != 0) {
			record_fail(errfd, STAGE_RLIMIT, errno, req->rlimits[i].resource);
			return -1;
		}
		core_set |= req->rlimits[i].resource == RLIMIT_CORE;
	}
	if (req->confine && !core_set) {
		/* no core files of a confined agent unless asked for */
		struct rlimit rl = { 0, 0 };
		if (setrlimit(RLIMIT_CORE, &rl) != 0) {
			record_fail(errfd, STAGE_RLIMIT, errno, RLIMIT_CORE);
			return -1;
		}
	}
	return 0;
}

void exec_child(const struct spawn_req *req, int errfd, int holdfd)
{
	sigset_t all;
	int e;

	/* Own process group, foreground on the terminal if there is one (as
	 * tini does, from the child, so there is no race with the exec).
	 * SIGTTOU is still blocked here, so tcsetpgrp works from the
	 * background; ENOTTY/ENXIO just mean there is no terminal. */
	if (req->tty >= 0) {
		/* PID 1's pty (ttyrelay.h): a session of its own, leading it,
		 * with the pty as its terminal; the real one is PID 1's */
		if (setsid() < 0 || ioctl(req->tty, TIOCSCTTY, 0) != 0 || dup2(req->tty, 0) < 0 ||
		    dup2(req->tty, 1) < 0 || dup2(req->tty, 2) < 0) {
			record_fail(errfd, STAGE_SETPGID, errno, 0);
			_exit(3);
		}
	} else if (setpgid(0, 0) != 0) {
		record_fail(errfd, STAGE_SETPGID, errno, 0);
		_exit(3);
	}
	if (isatty(STDIN_FILENO))
		(void)tcsetpgrp(STDIN_FILENO, getpgrp());

	/* Descriptors above 2 close at exec; until then the Landlock
	 * ruleset and this record pipe stay usable. Before the limits: a
	 * lower RLIMIT_NOFILE would hide ward's higher descriptors from a
	 * pass that counts up to it (no close_range, no /proc). */
	if (req->close_fds && fd_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
		record_fail(errfd, STAGE_CLOSE, errno, 0);
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
		record_fail(errfd, STAGE_CHDIR, errno, 0);
		_exit(3);
	}
	if (req->confine && privdrop_lock(req->confine, errfd) != 0)
		_exit(3);
	if (req->confine && req->confine->egress && install_egress(req->confine, errfd) != 0)
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
		record_send(errfd, RECORD_HELD, 0);
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
	record_fail(errfd, STAGE_EXEC, e, 0);
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

