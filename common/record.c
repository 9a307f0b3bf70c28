#define _GNU_SOURCE
#include "common/record.h"
#include "common/log.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
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

int record_send_fd(int fd, enum record_kind kind, int passed)
{
	struct record r = { (int)kind, 0, 0, 0 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &r, sizeof r };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	ssize_t n;

	memset(u.buf, 0, sizeof u.buf);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &passed, sizeof passed);
	do
		n = sendmsg(fd, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof r ? 0 : n < 0 ? -errno : -EIO;
}

/* Takes the one descriptor a record may carry; any more are closed. */
static int take_fds(struct msghdr *m)
{
	struct cmsghdr *c;
	int got = -1;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		size_t i, n;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
			if (got < 0)
				got = fd;
			else
				close(fd);
		}
	}
	return got;
}

static int read_one(int fd, struct record *rec, int *passed)
{
	ssize_t n;

	if (passed) {
		union {
			char buf[CMSG_SPACE(4 * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = { rec, sizeof *rec };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				    .msg_controllen = sizeof u.buf };
		*passed = -1;
		do
			n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n >= 0)
			*passed = take_fds(&m);
		if (n >= 0 && (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
			n = -1, errno = EMSGSIZE;
	} else {
		do
			n = read(fd, rec, sizeof *rec);
		while (n < 0 && errno == EINTR);
	}
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

int record_read(int fd, struct record *rec)
{
	return read_one(fd, rec, NULL);
}

int record_read_fd(int fd, struct record *rec, int *passed)
{
	int r = read_one(fd, rec, passed);

	if (r != 1 && *passed >= 0) {
		close(*passed);
		*passed = -1;
	}
	return r;
}

int record_ready(int fd, const char *name, int *detail)
{
	struct record rec;

	for (;;) {
		int r = record_read(fd, &rec);

		if (r < 0)
			return 0;
		if (r == 0 || (rec.kind == RECORD_FAILED && rec.what == STAGE_NONE)) {
			log_error("%s: ended before it was ready", name);
			return -1;
		}
		if (rec.kind == RECORD_NOTE)
			continue;
		if (rec.kind != RECORD_READY) {
			log_error("%s: cannot start: %s: %s", name, record_stage_name(rec.what), strerror(rec.err));
			return -1;
		}
		*detail = rec.detail;
		return 1;
	}
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
		[STAGE_EGRESS] = "installing the egress guard's filter",
	};
	if (stage >= 0 && stage < (int)(sizeof names / sizeof names[0]) && names[stage])
		return names[stage];
	return "start";
}
