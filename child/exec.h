/* exec: the agent's child between fork and exec. Its own process group,
 * rlimits, descriptors, umask, credentials (child/privdrop.c), directory,
 * no_new_privs, Landlock, seccomp, signal state, then exec. Everything that
 * goes wrong on the way, and every degradation noted, is written as a
 * record (common/record.h) to a CLOEXEC pipe, so "could not start" is never
 * read as an exit status. */
#ifndef WARD_EXEC_H
#define WARD_EXEC_H

#include <signal.h>

#include "common/parse.h"

struct confine;

struct spawn_req {
	char *const *argv;
	char *const *envp;	/* the child's environment */
	int cwd_fd;		/* fchdir here first (-1: stay) ... */
	const char *cwd;	/* ... then chdir here (NULL: stay) */
	const sigset_t *mask;	/* signal mask the child gets */
	int umask_set;
	unsigned umask;
	const struct rlimit_value *rlimits;
	int n_rlimits;
	int close_fds;		/* mark every fd above 2 close-on-exec */
	int reset_signals;	/* every disposition back to SIG_DFL */
	const struct confine *confine; /* NULL: run with ward's credentials */
	int hold;		/* confined, the child sends RECORD_HELD and waits
				 * for a byte on holdfd before its exec (end of
				 * file: it exits, exit 3) */
	int tty;		/* a pty of PID 1's (ttyrelay.h): the child's own
				 * session, this its controlling terminal and fds
				 * 0-2; -1: the terminal ward has, as it is */
};

/* Runs in the child, between fork and exec: ward is single-threaded, so
 * nothing is locked here that the parent held. Records go to errfd;
 * holdfd is the read end of the hold pipe (or -1). Never returns. */
void exec_child(const struct spawn_req *req, int errfd, int holdfd) __attribute__((noreturn));

#endif
