#define _GNU_SOURCE
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static void report(int fd, int stage, int err, int detail)
{
	struct spawn_error e = { stage, err, detail };
	ssize_t n;

	do
		n = write(fd, &e, sizeof e);
	while (n < 0 && errno == EINTR);
}

/* Runs in the child, between fork and exec: only async-signal-safe calls. */
static void __attribute__((noreturn)) child(const struct spawn_req *req, int errfd)
{
	int i;

	/* Own process group, foreground on the terminal if there is one (as
	 * tini does, from the child, so there is no race with the exec).
	 * SIGTTOU is still blocked here, so tcsetpgrp works from the
	 * background; ENOTTY/ENXIO just mean there is no terminal. */
	if (setpgid(0, 0) != 0) {
		report(errfd, STAGE_SETPGID, errno, 0);
		_exit(3);
	}
	if (isatty(STDIN_FILENO))
		(void)tcsetpgrp(STDIN_FILENO, getpgrp());

	for (i = 0; i < req->n_rlimits; i++) {
		struct rlimit rl = { req->rlimits[i].soft, req->rlimits[i].hard };
		if (setrlimit(req->rlimits[i].resource, &rl) != 0) {
			report(errfd, STAGE_RLIMIT, errno, req->rlimits[i].resource);
			_exit(3);
		}
	}
	if (req->umask_set)
		umask((mode_t)req->umask);
	if ((req->cwd_fd >= 0 && fchdir(req->cwd_fd) != 0) || (req->cwd && chdir(req->cwd) != 0)) {
		report(errfd, STAGE_CHDIR, errno, 0);
		_exit(3);
	}
	if (req->close_fds) {
		/* keep the error pipe (it is CLOEXEC) */
		if (errfd > 3 && close_range(3, (unsigned)errfd - 1, 0) != 0) {
			report(errfd, STAGE_CLOSE, errno, 0);
			_exit(3);
		}
		if (close_range((unsigned)errfd + 1, ~0U, 0) != 0) {
			report(errfd, STAGE_CLOSE, errno, 0);
			_exit(3);
		}
	}

	/* execvp searches the PATH of the environment the child will get. */
	environ = (char **)req->envp;
	sigprocmask(SIG_SETMASK, req->mask, NULL);
	execvp(req->argv[0], req->argv);
	i = errno;
	{
		/* Block again so nothing interrupts the report. */
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
	}
	report(errfd, STAGE_EXEC, i, 0);
	_exit(i == ENOENT || i == ENOTDIR ? 127 : 126);
}

pid_t spawn_child(const struct spawn_req *req, int *errfd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		child(req, p[1]);
	}
	close(p[1]);
	/* Also from the parent, so signals forwarded to the group right
	 * after fork find it; EACCES once the child has exec'd is fine. */
	(void)setpgid(pid, pid);
	(void)fcntl(p[0], F_SETFL, O_NONBLOCK);
	*errfd = p[0];
	return pid;
}

int spawn_result(int errfd, struct spawn_error *err)
{
	ssize_t n;

	do
		n = read(errfd, err, sizeof *err);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n == (ssize_t)sizeof *err)
		return 1;
	if (n < 0 && errno == EAGAIN)
		return -1;
	/* a short or failed read: report it as an unknown failure */
	err->stage = STAGE_NONE;
	err->err = n < 0 ? errno : EIO;
	err->detail = 0;
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
	switch (stage) {
	case STAGE_SETPGID: return "setpgid";
	case STAGE_RLIMIT: return "setrlimit";
	case STAGE_CHDIR: return "chdir";
	case STAGE_CLOSE: return "close_range";
	case STAGE_EXEC: return "exec";
	default: return "start";
	}
}
