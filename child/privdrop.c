#define _GNU_SOURCE
#include "child/privdrop.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "common/record.h"
#include "common/users.h"

int cap_effective(int cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) != 0)
		return 0;
	return (int)((data[cap / 32].effective >> (cap % 32)) & 1);
}

/* Drops what needs root (CAP_SETPCAP) first: the bounding set, ambient
 * caps, the securebits that stop root from regaining capabilities. */
static int drop_bounding(const struct confine *c, int errfd)
{
	unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED |
			     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
			     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
	int cap, kept = 0;

	capng_clear(CAPNG_SELECT_ALL);
	/* Without CAP_SETPCAP (runc's default spec) the bounding set cannot
	 * shrink, and libcap-ng would say so through syslog(3), outside the
	 * sandbox: ask only when the kernel says we may. */
	if (cap_effective(CAP_SETPCAP))
		(void)capng_apply(CAPNG_SELECT_BOUNDS); /* verified below, not trusted */
	(void)capng_apply(CAPNG_SELECT_AMBIENT);
	for (cap = 0; cap <= 63; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		if (r < 0)
			break; /* past the kernel's last capability */
		if (r == 1)
			kept++;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) == 1) {
			record_fail(errfd, STAGE_VERIFY_CAPS, EPERM, cap + 1); /* 0: not ambient */
			return -1;
		}
	}
	if (kept)
		record_note(errfd, NOTE_BOUNDING, 0, kept);
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) {
		if (c->user.uid == 0) {
			/* root would get its capabilities back on exec */
			record_fail(errfd, STAGE_SECUREBITS, errno, 0);
			return -1;
		}
		record_note(errfd, NOTE_SECUREBITS, errno, 0);
	}
	return 0;
}

static int become_user(const struct user_ids *u, int errfd)
{
	uid_t r, e, s;
	gid_t gr, ge, gs, got[USERS_MAX_GROUPS + 1];
	int n, i, j;

	/* (skipped when they are already ours: a start without root) */
	if (users_setgroups(u) != 0)
		return record_fail(errfd, STAGE_SETGROUPS, errno, 0), -1;
	if (setresgid(u->gid, u->gid, u->gid) != 0)
		return record_fail(errfd, STAGE_SETGID, errno, 0), -1;
	if (setresuid(u->uid, u->uid, u->uid) != 0)
		return record_fail(errfd, STAGE_SETUID, errno, 0), -1;

	/* read back */
	if (getresuid(&r, &e, &s) != 0 || r != u->uid || e != u->uid || s != u->uid ||
	    getresgid(&gr, &ge, &gs) != 0 || gr != u->gid || ge != u->gid || gs != u->gid)
		return record_fail(errfd, STAGE_VERIFY_IDS, EPERM, 0), -1;
	n = getgroups(USERS_MAX_GROUPS + 1, got);
	if (n != u->ngroups)
		return record_fail(errfd, STAGE_VERIFY_IDS, EPERM, 1), -1;
	for (i = 0; i < n; i++) {
		for (j = 0; j < u->ngroups && got[i] != u->groups[j]; j++)
			;
		if (j == u->ngroups)
			return record_fail(errfd, STAGE_VERIFY_IDS, EPERM, 1), -1;
	}
	if (u->uid != 0 && (setuid(0) == 0 || errno != EPERM))
		return record_fail(errfd, STAGE_VERIFY_IDS, EPERM, 2), -1;
	return 0;
}

static int clear_caps(int errfd)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	int i;

	/* CAPS only: the bounding set was handled while we could */
	capng_clear(CAPNG_SELECT_CAPS);
	(void)capng_apply(CAPNG_SELECT_CAPS);
	memset(data, 0xff, sizeof data);
	if (syscall(SYS_capget, &hdr, data) != 0)
		return record_fail(errfd, STAGE_VERIFY_CAPS, errno, 0), -1;
	for (i = 0; i < 2; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return record_fail(errfd, STAGE_VERIFY_CAPS, EPERM, 0), -1;
	return 0;
}

int privdrop_credentials(const struct confine *c, int errfd)
{
	if (!c->enabled)
		return 0;
	if (drop_bounding(c, errfd) != 0 || become_user(&c->user, errfd) != 0 || clear_caps(errfd) != 0)
		return -1;
	return 0;
}

int privdrop_lock(const struct confine *c, int errfd)
{
	int rc;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return record_fail(errfd, STAGE_NNP, errno, 0), -1;
	/* exec resets dumpability; ptrace is closed by seccomp and Landlock */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (c->ll && (rc = ll_restrict(c->ll)) != 0)
		return record_fail(errfd, STAGE_LANDLOCK, -rc, 0), -1;
	if (c->sc && (rc = sc_load(c->sc)) != 0)
		return record_fail(errfd, STAGE_SECCOMP, -rc, 0), -1;
	return 0;
}

int privdrop_detach(void)
{
	extern char **environ;
	int i, null;

	for (i = 0; environ && environ[i]; i++)
		explicit_bzero(environ[i], strlen(environ[i]));
	clearenv();
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || (log_fd() != 2 && dup2(null, 2) < 0))
		return -1;
	if (null > 2)
		close(null);
	signal(SIGPIPE, SIG_IGN);
	if (setsid() < 0 && errno != EPERM)
		return -1;
	return 0;
}
