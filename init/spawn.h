/* spawn: fork the agent and exec it, reporting any failure before exec
 * through a CLOEXEC pipe so "could not start" is never read as an exit. */
#ifndef WARD_SPAWN_H
#define WARD_SPAWN_H

#include <signal.h>
#include <sys/types.h>

#include "config.h"

struct spawn_req {
	char *const *argv;
	char *const *envp;	/* the child's environment */
	int cwd_fd;		/* fchdir here first (-1: stay) ... */
	const char *cwd;	/* ... then chdir here (NULL: stay) */
	const sigset_t *mask;	/* signal mask the child gets */
	int umask_set;
	unsigned umask;
	const struct config_rlimit *rlimits;
	int n_rlimits;
	int close_fds;		/* close every fd above 2 before exec */
};

enum spawn_stage { STAGE_NONE, STAGE_SETPGID, STAGE_RLIMIT, STAGE_CHDIR, STAGE_CLOSE, STAGE_EXEC };

struct spawn_error {
	int stage; /* enum spawn_stage */
	int err;   /* errno */
	int detail; /* e.g. the rlimit resource */
};

/* Forks and execs. Returns the child's pid and the read end of the error
 * pipe (non-blocking, CLOEXEC), or -1 with errno if fork failed. */
pid_t spawn_child(const struct spawn_req *req, int *errfd);

/* Reads the error pipe: 0 = exec succeeded (EOF), 1 = *err filled,
 * -1 = nothing yet (the child has not exec'd). */
int spawn_result(int errfd, struct spawn_error *err);

/* The exit status ward reports for a failure before exec. */
int spawn_error_code(const struct spawn_error *err);

const char *spawn_stage_name(int stage);

#endif
