#define _GNU_SOURCE
#include "common/record.h"

#include <errno.h>
#include <unistd.h>

static void send_one(int fd, const struct record *r)
{
	ssize_t n;

	do
		n = write(fd, r, sizeof *r);
	while (n < 0 && errno == EINTR);
}

void record_fail(int fd, enum record_stage stage, int err, int detail)
{
	struct record r = { RECORD_FAILED, (int)stage, err, detail };
	send_one(fd, &r);
}

void record_note(int fd, enum record_note note, int err, int detail)
{
	struct record r = { RECORD_NOTE, (int)note, err, detail };
	send_one(fd, &r);
}

void record_send(int fd, enum record_kind kind, int detail)
{
	struct record r = { (int)kind, 0, 0, detail };
	send_one(fd, &r);
}

int record_read(int fd, struct record *rec)
{
	ssize_t n;

	do
		n = read(fd, rec, sizeof *rec);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n == (ssize_t)sizeof *rec)
		return 1;
	if (n < 0 && errno == EAGAIN)
		return -1;
	/* a short or failed read: report it as an unknown failure */
	rec->kind = RECORD_FAILED;
	rec->what = STAGE_NONE;
	rec->err = n < 0 ? errno : EIO;
	rec->detail = 0;
	return 1;
}

int record_exit_code(const struct record *rec)
{
	if (rec->what == STAGE_EXEC)
		return rec->err == ENOENT || rec->err == ENOTDIR ? 127 : 126;
	return 3;
}

const char *record_stage_name(int stage)
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
