/* Unit tests for init/sysfilter.c: the build-time filters equal what
 * libseccomp compiles now from the same table; allow/deny change them. */
#include <errno.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sysfilter.h"
#include "unit.h"

static int same(const struct sc_filter *a, const struct sc_filter *b)
{
	return a->len == b->len && memcmp(a->sha256, b->sha256, 32) == 0 && a->n_rules == b->n_rules;
}

int main(void)
{
	struct sc_policy p = { 1, NULL, 0, NULL, 0 };
	struct sc_filter pre, now;
	char err[256];
	char *allow[] = { "ptrace" }, *deny[] = { "chmod" };
	const char *names[128];
	size_t n;

	unsigned action = SECCOMP_RET_ERRNO;

	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0 && errno == ENOSYS) {
		SKIP(19, "libseccomp needs the seccomp system call, which valgrind does not know");
		return unit_done("test_sysfilter");
	}
	CHECK(sc_build_agent(&p, &pre, err, sizeof err) == 0);
	CHECK(sc_compile(&p, 0, 0, &now, err, sizeof err) == 0);
	CHECK(pre.len > 50 && same(&pre, &now));
	sc_free(&now);
	sc_free(&pre);
	CHECK(sc_build_init(&p, 0, &pre, err, sizeof err) == 0);
	CHECK(sc_compile(&p, 1, 0, &now, err, sizeof err) == 0);
	CHECK(same(&pre, &now));
	sc_free(&now);
	sc_free(&pre);
	CHECK(sc_build_init(&p, 1, &pre, err, sizeof err) == 0);
	CHECK(sc_compile(&p, 1, 1, &now, err, sizeof err) == 0);
	CHECK(same(&pre, &now));
	sc_free(&now);

	/* the VM's PID 1 keeps reboot: a different filter */
	CHECK(sc_build_init(&p, 0, &now, err, sizeof err) == 0 && !same(&pre, &now));
	sc_free(&now);
	sc_free(&pre);

	CHECK(sc_build_agent(&p, &pre, err, sizeof err) == 0);
	p.allow = allow;
	p.n_allow = 1;
	CHECK(sc_build_agent(&p, &now, err, sizeof err) == 0 && !same(&pre, &now));
	sc_free(&now);
	p.n_allow = 0;
	p.deny = deny;
	p.n_deny = 1;
	CHECK(sc_build_agent(&p, &now, err, sizeof err) == 0 && !same(&pre, &now) && now.n_rules == pre.n_rules + 1);
	sc_free(&now);
	sc_free(&pre);

	CHECK(sc_build_bridge(&pre, err, sizeof err) == 0);
	CHECK(sc_compile_bridge(&now, err, sizeof err) == 0 && same(&pre, &now) && now.n_rules > 40);
	sc_free(&now);
	sc_free(&pre);

	CHECK(sc_default_has("clone3") && sc_default_has("ptrace") && !sc_default_has("read"));
	CHECK(sc_known_syscall("openat") && !sc_known_syscall("no_such_call"));
	n = sc_default_names(names, 128, 0);
	CHECK(n > 50);
	CHECK(sc_default_names(names, 128, 1) < n); /* PID 1's list is a part */
	return unit_done("test_sysfilter");
}
