/* record: what a forked child tells PID 1 over a CLOEXEC pipe on its way
 * to exec (the agent) or to serving (the bridge): a failure that stops it,
 * a degradation it goes on with, that it is held before its exec, that it
 * is ready. One fixed-size record per write, far below PIPE_BUF, so a
 * record arrives whole or not at all: a short read is the child's end. */
#ifndef WARD_RECORD_H
#define WARD_RECORD_H

enum record_kind {
	RECORD_FAILED, /* what: enum record_stage; the child exits */
	RECORD_NOTE,   /* what: enum record_note; the child goes on */
	RECORD_HELD,   /* every layer is in force; the agent waits to exec */
	RECORD_READY,  /* the bridge serves; detail: upstreams that answered */
	RECORD_LISTENER, /* the agent's seccomp listener rides along (SCM_RIGHTS) */
};

/* Where a start failed. */
enum record_stage {
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
	STAGE_EGRESS, /* the egress guard's filter or its hand-over */
};

/* What a start noted and went on with. */
enum record_note {
	NOTE_BOUNDING,	 /* detail: how many caps stay in the bounding set */
	NOTE_SECUREBITS, /* err: securebits could not be locked */
	NOTE_EGRESS,	 /* err: the egress guard's filter failed (best effort: ports only) */
};

struct record {
	int kind;   /* enum record_kind */
	int what;   /* enum record_stage or enum record_note, by kind */
	int err;    /* errno */
	int detail;
};

/* From the child: one record each. */
void record_fail(int fd, enum record_stage stage, int err, int detail);
void record_note(int fd, enum record_note note, int err, int detail);
void record_send(int fd, enum record_kind kind, int detail);

/* A record with a descriptor (a unix socket only). 0 or -errno. */
int record_send_fd(int fd, enum record_kind kind, int passed);

/* record_read() on a unix socket: *passed gets a descriptor that came
 * with the record (CLOEXEC), else -1. */
int record_read_fd(int fd, struct record *rec, int *passed);

/* Reads one record: 1 = *rec filled, 0 = end of file (the child exec'd or
 * died), -1 = nothing yet (a non-blocking pipe). A short or failed read
 * is given as a failure at STAGE_NONE. */
int record_read(int fd, struct record *rec);

/* A starting service's reports (its pipe, non-blocking): 1 it is ready
 * (*detail: the ready record's), 0 nothing more yet, -1 it failed or
 * ended, logged as "NAME: ...". Notes are passed over. */
int record_ready(int fd, const char *name, int *detail);

/* "setuid", "landlock_restrict_self", ... for a failure's stage. */
const char *record_stage_name(int stage);

/* The exit status ward reports for a failure before exec. */
int record_exit_code(const struct record *rec);

#endif
