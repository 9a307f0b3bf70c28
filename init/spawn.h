/* spawn: fork the agent and exec it. Everything that goes wrong before the
 * exec, and every degradation noted on the way, is written as a record to
 * a CLOEXEC pipe, so "could not start" is never read as an exit status. */
#ifndef WARD_SPAWN_H
#define WARD_SPAWN_H

#include <signal.h>
#include <sys/types.h>

#include "config.h"

struct confine;

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
	int close_fds;		/* mark every fd above 2 close-on-exec */
	int reset_signals;	/* every disposition back to SIG_DFL */
	const struct confine *confine; /* NULL: run with ward's credentials */
	int hold;		/* confined, the child reports NOTE_HELD and waits for
				 * a byte on the release end before its exec (end of
				 * file: it exits, exit 3) */
};

enum spawn_stage {
	STAGE_NONE,
	STAGE_SETPGID,
	STAGE_RLIMIT,
	STAGE_CHDIR,
	STAGE_CLOSE,
	STAGE_SECUREBITS,
	STAGE_SETGROUPS,
	STAGE_SETGID,
	STAGE_SETUID,
	STAGE_VERIFY_IDS,
	STAGE_VERIFY_CAPS,
	STAGE_NNP,
	STAGE_LANDLOCK,
	STAGE_SECCOMP,
	STAGE_EXEC,
	/* notes: the child goes on */
	NOTE_FIRST = 100,
	NOTE_BOUNDING = NOTE_FIRST, /* detail: how many caps stay in the bounding set */
	NOTE_SECUREBITS,	    /* securebits could not be locked (errno) */
	NOTE_HELD,		    /* every layer is in force; waiting to exec */
};

struct spawn_error {
	int stage; /* enum spawn_stage */
	int err;   /* errno */
	int detail;
};

/* Forks and execs. Returns the child's pid and the read end of the record
 * pipe (non-blocking, CLOEXEC), or -1 with errno if fork failed. With
 * req->hold, *relfd is the end to write a byte to (then close) to let
 * the held child exec (else -1). */
pid_t spawn_child(const struct spawn_req *req, int *errfd, int *relfd);

/* Reads one record: 1 = *rec filled, 0 = end of file (the child exec'd or
 * died), -1 = nothing yet. */
int spawn_read(int errfd, struct spawn_error *rec);

/* Writes one record (from the child). */
void spawn_report(int fd, int stage, int err, int detail);

/* The exit status ward reports for a failure before exec. */
int spawn_error_code(const struct spawn_error *err);

/* "setuid", "landlock_restrict_self", ... */
const char *spawn_stage_name(int stage);

#endif
