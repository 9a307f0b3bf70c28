/* Unit tests for seccomp/sysfilter.c: the build-time filters equal what
 * libseccomp compiles now from the same table; allow/deny change them. */
#include <errno.h>
#include <linux/seccomp.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp/sysfilter.h"
#include "unit.h"

/* In a child under the bridge's filter: which socket calls get through.
 * Bit set = the kernel (not the filter) answered as it should; 255: all.
 * resolver: the filter of a bridge that resolves names, which also makes
 * UDP and IPv6 TCP sockets (and still no MPTCP). */
static int bridge_probe(int resolver)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(1), .sin_addr.s_addr = htonl(0x7f000001) };
	struct msghdr m = { .msg_name = &a, .msg_namelen = sizeof a };
	struct sc_filter f;
	char err[256];
	int got = 0, s;
	pid_t pid = fork();

	if (pid == 0) {
		if (sc_build_bridge(&f, resolver, err, sizeof err) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    sc_load(&f) != 0)
			_exit(0);
		/* MPTCP and SCTP: Landlock's port rules do not see them */
		if (socket(AF_INET, SOCK_STREAM, 262) < 0 && errno == EPERM && socket(AF_INET6, SOCK_STREAM, 262) < 0 &&
		    errno == EPERM)
			got |= 1;
		if (socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP) < 0 && errno == EPERM)
			got |= 2;
		s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (s >= 0 && socket(AF_INET, SOCK_STREAM, IPPROTO_TCP) >= 0)
			got |= 4;
		/* a Fast Open send connects without connect() */
		if (s >= 0 && sendto(s, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&a, sizeof a) < 0 && errno == EPERM)
			got |= 8;
		if (s >= 0 && sendmsg(s, &m, MSG_FASTOPEN) < 0 && errno == EPERM)
			got |= 16;
		/* an ordinary send reaches the kernel: not connected */
		if (s >= 0 && send(s, "x", 1, MSG_NOSIGNAL) < 0 && errno != EPERM)
			got |= 32;
		if (resolver ? socket(AF_INET, SOCK_DGRAM, 0) >= 0 && socket(AF_INET6, SOCK_DGRAM, IPPROTO_UDP) >= 0
			     : socket(AF_INET, SOCK_DGRAM, 0) < 0 && errno == EPERM)
			got |= 64;
		if (resolver ? socket(AF_INET6, SOCK_STREAM, 0) >= 0
			     : socket(AF_INET6, SOCK_STREAM, 0) < 0 && errno == EPERM)
			got |= 128;
		_exit(got);
	}
	if (pid < 0 || waitpid(pid, &s, 0) != pid || !WIFEXITED(s))
		return -1;
	return WEXITSTATUS(s);
}

static int same(const struct sc_filter *a, const struct sc_filter *b)
{
	unsigned char da[32], db[32];

	if (a->len != b->len || a->n_rules != b->n_rules)
		return 0;
	sc_digest(a, da);
	sc_digest(b, db);
	return memcmp(da, db, 32) == 0 && memcmp(a->prog, b->prog, a->len * sizeof *a->prog) == 0;
}

/* "nr >= 470: ENOSYS" in front: the compare and the return after it */
static int has_newer_prefix(const struct sc_filter *f)
{
	return f->len > 6 && f->prog[4].code == (BPF_JMP | BPF_JGE | BPF_K) && f->prog[4].k == 470 &&
	       f->prog[5].code == (BPF_RET | BPF_K) && f->prog[5].k == (SECCOMP_RET_ERRNO | ENOSYS);
}

int main(void)
{
	struct sc_policy p = { 1, NULL, 0, NULL, 0 };
	struct sc_filter pre, now;
	char err[256];
	char *allow[] = { "ptrace" }, *deny[] = { "chmod" }, *newer[] = { "newer-syscalls" }, *udp[] = { "udp" };
	const char *names[128];
	size_t n;

	unsigned action = SECCOMP_RET_ERRNO;

	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0 && errno == ENOSYS) {
		SKIP(20, "libseccomp needs the seccomp system call, which valgrind does not know");
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
	/* the numbers past the list: six instructions in front of libseccomp's
	 * program (what the kernel does with them: the escape probe) */
	p.n_deny = 0;
	p.allow = newer;
	p.n_allow = 1;
	CHECK(sc_build_agent(&p, &now, err, sizeof err) == 0 && now.len == pre.len - 6 &&
	      now.n_rules == pre.n_rules - 1 && memcmp(now.prog, pre.prog + 6, now.len * sizeof *now.prog) == 0);
	CHECK(has_newer_prefix(&pre) && !has_newer_prefix(&now));
	sc_free(&now);
	CHECK(sc_build_init(&p, 0, &now, err, sizeof err) == 0 && !has_newer_prefix(&now));
	sc_free(&now);
	p.n_allow = 0;
	CHECK(sc_build_init(&p, 0, &now, err, sizeof err) == 0 && has_newer_prefix(&now)); /* PID 1's too */
	sc_free(&now);
	/* deny = udp: a group, not in the default list; two rules on socket
	 * (what the kernel does with it: tests/sandbox's datagram case) */
	p.deny = udp;
	p.n_deny = 1;
	CHECK(sc_build_agent(&p, &now, err, sizeof err) == 0 && !same(&pre, &now) && now.n_rules == pre.n_rules + 2);
	sc_free(&now);
	CHECK(sc_build_init(&p, 0, &now, err, sizeof err) == 0); /* PID 1's own list never takes it */
	{
		struct sc_filter base;
		struct sc_policy none = { 1, NULL, 0, NULL, 0 };
		CHECK(sc_build_init(&none, 0, &base, err, sizeof err) == 0 && same(&base, &now));
		sc_free(&base);
	}
	sc_free(&now);
	p.n_deny = 0;
	sc_free(&pre);

	for (int resolver = 0; resolver < 2; resolver++) {
		int r;
		CHECK(sc_build_bridge(&pre, resolver, err, sizeof err) == 0);
		CHECK(sc_compile_bridge(&now, resolver, err, sizeof err) == 0 && same(&pre, &now) && now.n_rules > 40);
		sc_free(&now);
		sc_free(&pre);
		r = bridge_probe(resolver);
		if (r != 255)
			fprintf(stderr, "bridge filter probe (resolver %d): %d (want 255)\n", resolver, r);
		CHECK(r == 255);
	}

	CHECK(sc_default_has("clone3") && sc_default_has("ptrace") && !sc_default_has("read"));
	CHECK(sc_default_has("newer-syscalls") && !sc_known_syscall("newer-syscalls"));
	CHECK(sc_optin_has("udp") && !sc_default_has("udp") && !sc_optin_has("ptrace") && !sc_optin_has("socket"));
	CHECK(sc_known_syscall("openat") && !sc_known_syscall("no_such_call"));
	n = sc_default_names(names, 128, 0);
	CHECK(n > 50);
	CHECK(sc_default_names(names, 128, 1) < n); /* PID 1's list is a part */
	return unit_done("test_sysfilter");
}
