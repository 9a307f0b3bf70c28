/* Unit tests for common/addr.c (the destinations --explain and connect
 * lines read), seccomp/notify.c (the filter that hands socket(), connect()
 * and Fast Open to the guard) and init/egress/ (the answers, the address
 * check, the route reply, the refusal line): a child under the filter,
 * this process as its guard, the child's sockets and errnos read back
 * from the kernel. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <linux/rtnetlink.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/addr.h"
#include "common/record.h"
#include "init/egress/blocked.h"
#include "init/egress/connects.h"
#include "init/egress/guard.h"
#include "init/egress/route.h"
#include "init/egress/serve.h"
#include "init/sandbox/ephemeral.h"
#include "seccomp/notify.h"
#include "seccomp/sysfilter.h"
#include "unit.h"

#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE 51
#endif

static int parses(const char *s, struct tcp_dest *d)
{
	const char *why = NULL;
	return addr_parse(s, strlen(s), d, &why) == 0;
}

static void test_addr(void)
{
	struct tcp_dest d;
	char buf[64];
	const char *bad[] = { "", ":80", "1.2.3.4:", "1.2.3.4:65536", "1.2.3:80", "::1:80", "[::1]80",
			      "[::1]", "[1.2.3.4]:80", "[]:80", "[::1]:x", "a.b.c.d:80", "1.2.3.4:80:1",
			      "01.2.3.4.5:1", "-1", "65536", "[::1]:80]" };
	size_t i;

	CHECK(parses("7900", &d) && !d.has_addr && d.port == 7900 && !addr_loopback(&d));
	CHECK(parses("127.0.0.1:7900", &d) && d.has_addr && d.family == AF_INET && d.port == 7900 &&
	      addr_loopback(&d));
	CHECK(parses("127.255.0.9:1", &d) && addr_loopback(&d)); /* all of 127/8 */
	CHECK(parses("128.0.0.1:1", &d) && !addr_loopback(&d));
	CHECK(parses("10.9.0.5:0", &d) && !addr_loopback(&d) && d.port == 0);
	CHECK(parses("[::1]:443", &d) && d.family == AF_INET6 && addr_loopback(&d) && d.port == 443);
	CHECK(parses("[fd00::5]:80", &d) && d.family == AF_INET6 && !addr_loopback(&d));
	CHECK_STR(addr_text(&d, buf, sizeof buf), "fd00::5");
	/* an IPv4-mapped address is the IPv4 one: outside stays outside */
	CHECK(parses("[::ffff:10.9.0.5]:7900", &d) && d.family == AF_INET && !addr_loopback(&d));
	CHECK_STR(addr_text(&d, buf, sizeof buf), "10.9.0.5");
	CHECK(parses("[::ffff:127.0.0.1]:7900", &d) && d.family == AF_INET && addr_loopback(&d));
	CHECK(parses("[::]:1", &d) && !addr_loopback(&d));
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int ok = parses(bad[i], &d);
		if (ok)
			fprintf(stderr, "accepted: '%s'\n", bad[i]);
		CHECK(!ok);
	}
	/* a length, not a terminator, bounds it */
	{
		const char *why = NULL;
		CHECK(addr_parse("127.0.0.1:80junk", 12, &d, &why) == 0 && d.port == 80);
		CHECK(addr_parse("1.2.3.4:8\0" "0", 10, &d, &why) != 0 && why);
	}
}

/* In the child: what it saw, as bits of its exit status. */
enum {
	SAW_LO4 = 1,	   /* an inet socket, held to lo */
	SAW_LO6 = 2,	   /* an inet6 socket, held to lo */
	SAW_STUCK = 4,	   /* unprivileged, it could not take lo off */
	SAW_FLAGS = 8,	   /* CLOEXEC and NONBLOCK as asked, both ways */
	SAW_UNIX = 16,	   /* a unix socket made without the guard */
	SAW_NOGUARD = 32,  /* with the listener closed: ENOSYS, no socket */
	SAW_RANGE = 64,	   /* the guard's ephemeral ports, read back, on both */
	SAW_LISTEN = 128,  /* listen() on a socket never bound: a port of that range */
	SAW_NOWIDEN = 256, /* the filter alone refuses to change that range (EPERM) */
	SAW_NOURING = 512, /* and io_uring_setup (ENOSYS), which could make sockets */
	SAW_X32 = 1024,	   /* and kills an x32 call (with no deny list under it) */
	SAW_NODGRAM = 2048, /* an inet and inet6 datagram socket, and ping's: EACCES from the guard */
	SAW_REFUSED = 4096, /* connect() to 10.9.9.9 (v4, mapped, v6 fd42::9): ENETUNREACH at once */
	SAW_LOCAL = 8192,   /* connect() to 127.0.0.1 and ::1 on a closed port: the kernel's ECONNREFUSED */
	SAW_FASTOPEN = 16384, /* sendto and sendmsg MSG_FASTOPEN to 10.9.9.9: ENETUNREACH */
	SAW_UNREAD = 32768, /* not dumpable: its connect is not judged, and waits on lo (EINPROGRESS) */
};

/* the guard's range in these tests: inside the usual 32768-60999 */
#define TEST_LO 41000u
#define TEST_HI 41099u
#define TEST_RANGE (TEST_LO | TEST_HI << 16)

static int has_range(int fd)
{
	uint32_t v = 0;
	socklen_t len = sizeof v;
	return fd >= 0 && getsockopt(fd, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &v, &len) == 0 && v == TEST_RANGE;
}

static int held_to_lo(int fd)
{
	char dev[IFNAMSIZ] = { 0 };
	socklen_t len = sizeof dev;
	return fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, &len) == 0 && strcmp(dev, "lo") == 0;
}

static int child(int sock, int go, int res)
{
	int l, s4, s6, a, b, u, bits = 0;
	char c;

	/* no CAP_NET_RAW, as the agent; dumpable, as an agent after its exec */
	if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
		return 100;
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || (l = sc_load_egress()) < 0)
		return 101;
	if (record_send_fd(sock, RECORD_LISTENER, l) != 0)
		return 102;
	close(l);
	s4 = socket(AF_INET, SOCK_STREAM, 0);
	s6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (held_to_lo(s4))
		bits |= SAW_LO4;
	if (held_to_lo(s6))
		bits |= SAW_LO6;
	if (has_range(s4) && has_range(s6))
		bits |= SAW_RANGE;
	{
		struct sockaddr_in6 a6;
		socklen_t len = sizeof a6;
		if (listen(s6, 1) == 0 && getsockname(s6, (struct sockaddr *)&a6, &len) == 0 &&
		    ntohs(a6.sin6_port) >= TEST_LO && ntohs(a6.sin6_port) <= TEST_HI)
			bits |= SAW_LISTEN;
	}
	if (s4 >= 0 && setsockopt(s4, SOL_SOCKET, SO_BINDTODEVICE, "", 0) != 0 && errno == EPERM && held_to_lo(s4))
		bits |= SAW_STUCK;
	a = fcntl(s4, F_GETFD);
	b = fcntl(s6, F_GETFD);
	if (a == 0 && b == FD_CLOEXEC && !(fcntl(s4, F_GETFL) & O_NONBLOCK) && (fcntl(s6, F_GETFL) & O_NONBLOCK))
		bits |= SAW_FLAGS;
	{
		uint32_t wide = 1024u | 65535u << 16;
		if (s4 >= 0 && setsockopt(s4, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &wide, sizeof wide) != 0 &&
		    errno == EPERM && has_range(s4))
			bits |= SAW_NOWIDEN;
	}
	errno = 0;
	if (syscall(SYS_io_uring_setup, 1, NULL) < 0 && errno == ENOSYS)
		bits |= SAW_NOURING;
	{
		int st;
		pid_t p = fork();
		if (p == 0) {
			syscall(0x40000000 | SYS_getpid);
			_exit(0);
		}
		if (p > 0 && waitpid(p, &st, 0) == p && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
			bits |= SAW_X32;
	}
	u = socket(AF_UNIX, SOCK_STREAM, 0);
	if (u >= 0 && !held_to_lo(u))
		bits |= SAW_UNIX;
	{
		/* datagrams are routed per message, past lo: none is made */
		int d4 = socket(AF_INET, SOCK_DGRAM, 0), e4 = errno;
		int d6 = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, IPPROTO_UDP), e6 = errno;
		int dp = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP), ep = errno;
		if (d4 < 0 && e4 == EACCES && d6 < 0 && e6 == EACCES && dp < 0 && ep == EACCES)
			bits |= SAW_NODGRAM;
	}
	{
		/* a destination off this host: refused at once, however named */
		struct sockaddr_in o4 = { .sin_family = AF_INET, .sin_port = htons(9) };
		struct sockaddr_in6 m6 = { .sin6_family = AF_INET6, .sin6_port = htons(9) };
		struct sockaddr_in6 o6 = { .sin6_family = AF_INET6, .sin6_port = htons(9) };
		struct sockaddr_in l4 = { .sin_family = AF_INET, .sin_port = htons(1) };
		struct sockaddr_in6 l6 = { .sin6_family = AF_INET6, .sin6_port = htons(1) };
		int c4 = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), c6 = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 0);
		int r1, e1, r2, e2, r3, e3, r4, e4, r5, e5;
		inet_pton(AF_INET, "10.9.9.9", &o4.sin_addr);
		inet_pton(AF_INET6, "::ffff:10.9.9.9", &m6.sin6_addr);
		inet_pton(AF_INET6, "fd42::9", &o6.sin6_addr);
		inet_pton(AF_INET, "127.0.0.1", &l4.sin_addr);
		inet_pton(AF_INET6, "::1", &l6.sin6_addr);
		r1 = connect(c4, (struct sockaddr *)&o4, sizeof o4);
		e1 = errno;
		r2 = connect(c6, (struct sockaddr *)&m6, sizeof m6);
		e2 = errno;
		r3 = connect(c6, (struct sockaddr *)&o6, sizeof o6);
		e3 = errno;
		if (r1 && e1 == ENETUNREACH && r2 && e2 == ENETUNREACH && r3 && e3 == ENETUNREACH)
			bits |= SAW_REFUSED;
		close(c4);
		close(c6);
		c4 = socket(AF_INET, SOCK_STREAM, 0);
		c6 = socket(AF_INET6, SOCK_STREAM, 0);
		r4 = connect(c4, (struct sockaddr *)&l4, sizeof l4);
		e4 = errno;
		r5 = connect(c6, (struct sockaddr *)&l6, sizeof l6);
		e5 = errno;
		if (r4 && e4 == ECONNREFUSED && r5 && e5 == ECONNREFUSED)
			bits |= SAW_LOCAL;
		close(c4);
		close(c6);
		c4 = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		r1 = (int)sendto(c4, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&o4, sizeof o4);
		e1 = errno;
		close(c4);
		c6 = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 0);
		{
			struct iovec v = { "x", 1 };
			struct msghdr m = { .msg_name = &o6, .msg_namelen = sizeof o6, .msg_iov = &v, .msg_iovlen = 1 };
			r2 = (int)sendmsg(c6, &m, MSG_FASTOPEN);
			e2 = errno;
		}
		close(c6);
		if (r1 < 0 && e1 == ENETUNREACH && r2 < 0 && e2 == ENETUNREACH)
			bits |= SAW_FASTOPEN;
		/* not dumpable: the guard cannot read the address, and lets the
		 * kernel go on, which holds it on lo */
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		c4 = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		r1 = connect(c4, (struct sockaddr *)&o4, sizeof o4);
		e1 = errno;
		if (r1 && e1 == EINPROGRESS && held_to_lo(c4))
			bits |= SAW_UNREAD;
		close(c4);
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	}
	/* the guard lets go of the listener (it is the last holder) */
	if (write(sock, "x", 1) != 1 || read(go, &c, 1) != 1)
		return 103;
	errno = 0;
	if (socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == ENOSYS)
		bits |= SAW_NOGUARD;
	/* more bits than an exit status holds: written, and 0 for done */
	return write(res, &bits, sizeof bits) == (ssize_t)sizeof bits ? 0 : 104;
}

/* Can a child load the filter here? 0, or its errno (valgrind does not
 * know seccomp(2): ENOSYS). */
static int filter_loads(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		int l;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			_exit(errno);
		l = sc_load_egress();
		_exit(l < 0 ? -l : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return EIO;
	return WEXITSTATUS(status);
}

static void test_guard(int e)
{
	int sv[2], gp[2], rp[2], status = 0, l = -1, served = 0, bits = 0;
	struct record rec;
	struct guard g;
	pid_t pid;

	CHECK(e == 0);

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0 && pipe(gp) == 0 && pipe(rp) == 0);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		close(rp[0]);
		_exit(child(sv[1], gp[0], rp[1]));
	}
	close(sv[1]);
	close(gp[0]);
	close(rp[1]);
	/* this process is the guard: the listener first, then two stream
	 * sockets and three datagram ones */
	{
		struct pollfd p = { sv[0], POLLIN, 0 };
		int r = -1;
		if (poll(&p, 1, 5000) == 1)
			r = record_read_fd(sv[0], &rec, &l);
		CHECK(r == 1 && rec.kind == RECORD_LISTENER && l >= 0);
	}
	/* as PID 1 after its lock: no CAP_SYS_PTRACE, which would read a
	 * process that is not dumpable */
	if (getuid() == 0) {
		capng_get_caps_process();
		capng_update(CAPNG_DROP, CAPNG_EFFECTIVE, CAP_SYS_PTRACE);
		CHECK(capng_apply(CAPNG_SELECT_CAPS) == 0);
	}
	CHECK(guard_open(&g, getuid() == 0 ? 65534 : getuid(), getuid() == 0 ? 65534 : getgid(), TEST_RANGE) == 0);
	/* every call until the child says it is done */
	while (l >= 0) {
		struct pollfd p[2] = { { l, POLLIN, 0 }, { sv[0], POLLIN, 0 } };
		if (poll(p, 2, 5000) < 1)
			break;
		if (p[0].revents & POLLIN) {
			guard_serve(&g, l, 1);
			served++;
		} else if (p[1].revents & POLLIN) {
			char c;
			CHECK(read(sv[0], &c, 1) == 1);
			break;
		}
	}
	/* 5 sockets (2 streams, 3 datagram ones); 7 sockets, 5 connects, 2 Fast
	 * Open sends and 1 connect not read: the unix socket never came */
	CHECK(served == 20);
	CHECK(g.refused == 5 && g.unjudged == 1 && g.sockets == 12 && g.connects == 8);
	guard_close(&g);
	if (l >= 0)
		close(l);
	CHECK(write(gp[1], "g", 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	status = WEXITSTATUS(status);
	if (status)
		fprintf(stderr, "egress child failed at step %d\n", status);
	CHECK(status == 0 && read(rp[0], &bits, sizeof bits) == (ssize_t)sizeof bits);
	CHECK(bits & SAW_LO4);
	CHECK(bits & SAW_LO6);
	CHECK(bits & SAW_STUCK);
	CHECK(bits & SAW_FLAGS);
	CHECK(bits & SAW_UNIX);
	CHECK(bits & SAW_NOGUARD);
	CHECK(bits & SAW_RANGE);
	CHECK(bits & SAW_LISTEN);
	CHECK(bits & SAW_NOWIDEN);
	CHECK(bits & SAW_NOURING);
	CHECK(bits & SAW_NODGRAM);
	CHECK(bits & SAW_X32);
	CHECK(bits & SAW_REFUSED);
	CHECK(bits & SAW_LOCAL);
	CHECK(bits & SAW_FASTOPEN);
	CHECK(bits & SAW_UNREAD);
	close(rp[0]);
	close(sv[0]);
	close(gp[1]);
}

static void test_pick(void)
{
	unsigned lo, hi;
	const unsigned none[] = { 80, 8080 }, mid[] = { 40000 }, two[] = { 40000, 50000, 40000 },
		       ends[] = { 32768, 60999 }, all[] = { 5, 6, 7 };

	CHECK(ephemeral_pick(32768, 60999, none, 2, &lo, &hi) == 0 && lo == 32768 && hi == 60999);
	CHECK(ephemeral_pick(32768, 60999, none, 0, &lo, &hi) == 0 && lo == 32768 && hi == 60999);
	/* the larger side: 40001-60999 holds 20999 ports, 32768-39999 7232 */
	CHECK(ephemeral_pick(32768, 60999, mid, 1, &lo, &hi) == 1 && lo == 40001 && hi == 60999);
	/* three runs, a port given twice: 50001-60999 (10999) beats 40001-49999 (9999) */
	CHECK(ephemeral_pick(32768, 60999, two, 3, &lo, &hi) == 1 && lo == 50001 && hi == 60999);
	CHECK(ephemeral_pick(32768, 60999, ends, 2, &lo, &hi) == 1 && lo == 32769 && hi == 60998);
	/* equal runs: the lowest */
	CHECK(ephemeral_pick(10, 20, (const unsigned[]){ 15 }, 1, &lo, &hi) == 1 && lo == 10 && hi == 14);
	CHECK(ephemeral_pick(5, 7, all, 3, &lo, &hi) == -1);
	CHECK(ephemeral_pick(7, 7, (const unsigned[]){ 8 }, 1, &lo, &hi) == 0 && lo == 7 && hi == 7);
}

/* A sock_diag answer, built as the kernel writes one. */
static size_t diag_msg(char *at, int family, int state, unsigned ifindex, const void *dst, size_t dlen, unsigned port)
{
	struct nlmsghdr *h = (struct nlmsghdr *)at;
	struct inet_diag_msg *m = NLMSG_DATA(h);

	memset(h, 0, NLMSG_SPACE(sizeof *m));
	h->nlmsg_len = NLMSG_LENGTH(sizeof *m);
	h->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	m->idiag_family = (unsigned char)family;
	m->idiag_state = (unsigned char)state;
	m->id.idiag_if = ifindex;
	memcpy(m->id.idiag_dst, dst, dlen);
	m->id.idiag_dport = htons((uint16_t)port);
	m->idiag_inode = 77;
	m->idiag_uid = 4242;
	return NLMSG_SPACE(sizeof *m);
}

static struct blocked_conn got[8];
static int n_got;

static void collect(void *ctx, const struct blocked_conn *c)
{
	(void)ctx;
	if (n_got < 8)
		got[n_got++] = *c;
}

static void test_blocked_parse(void)
{
	static char buf[4096] __attribute__((aligned(8)));
	const unsigned char out4[4] = { 10, 0, 0, 5 }, lo4[4] = { 127, 0, 0, 9 };
	const unsigned char out6[16] = { 0xfd, 0x42, [15] = 2 }, lo6[16] = { [15] = 1 };
	const unsigned char mapped_out[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 6 };
	const unsigned char mapped_lo[16] = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 };
	struct nlmsghdr *done;
	size_t n = 0;

	n += diag_msg(buf + n, AF_INET, 2, 1, out4, 4, 7900);	  /* found */
	n += diag_msg(buf + n, AF_INET, 2, 1, lo4, 4, 7900);	  /* loopback: not */
	n += diag_msg(buf + n, AF_INET, 1, 1, out4, 4, 7900);	  /* established: not */
	n += diag_msg(buf + n, AF_INET, 2, 0, out4, 4, 7900);	  /* not held to lo: not */
	n += diag_msg(buf + n, AF_INET6, 2, 1, out6, 16, 443);	  /* found */
	n += diag_msg(buf + n, AF_INET6, 2, 1, lo6, 16, 443);	  /* ::1: not */
	n += diag_msg(buf + n, AF_INET6, 2, 1, mapped_out, 16, 80); /* found, as IPv4 */
	n += diag_msg(buf + n, AF_INET6, 2, 1, mapped_lo, 16, 80);  /* mapped loopback: not */
	n_got = 0;
	CHECK(blocked_parse(buf, n, 1, collect, NULL) == 0); /* no end yet */
	CHECK(n_got == 3);
	CHECK(got[0].family == AF_INET && memcmp(got[0].dst, out4, 4) == 0 && got[0].port == 7900 &&
	      got[0].uid == 4242 && got[0].inode == 77);
	CHECK(got[1].family == AF_INET6 && memcmp(got[1].dst, out6, 16) == 0 && got[1].port == 443);
	CHECK(got[2].family == AF_INET && got[2].dst[0] == 10 && got[2].dst[3] == 6 && got[2].port == 80);
	done = (struct nlmsghdr *)(buf + n);
	memset(done, 0, NLMSG_SPACE(sizeof(int)));
	done->nlmsg_len = NLMSG_LENGTH(sizeof(int));
	done->nlmsg_type = NLMSG_DONE;
	n_got = 0;
	CHECK(blocked_parse(buf, n + NLMSG_SPACE(sizeof(int)), 1, collect, NULL) == 1 && n_got == 3);
	/* an end that carries an error (the dump was cut short) */
	{
		int status = -EINTR;
		memcpy(NLMSG_DATA(done), &status, sizeof status);
		errno = 0;
		CHECK(blocked_parse(buf, n + NLMSG_SPACE(sizeof(int)), 1, collect, NULL) == -1 && errno == EINTR);
	}
	/* another loopback index: nothing is held to it */
	n_got = 0;
	CHECK(blocked_parse(buf, n, 5, collect, NULL) == 0 && n_got == 0);
	/* cut short, a length past the buffer, an error */
	CHECK(blocked_parse(buf, 10, 1, collect, NULL) == -1);
	((struct nlmsghdr *)buf)->nlmsg_len = (unsigned)n + 100;
	CHECK(blocked_parse(buf, n, 1, collect, NULL) == -1);
	((struct nlmsghdr *)buf)->nlmsg_len = 8; /* shorter than a header */
	CHECK(blocked_parse(buf, n, 1, collect, NULL) == -1);
	((struct nlmsghdr *)buf)->nlmsg_len = NLMSG_LENGTH(4); /* shorter than a diag message */
	CHECK(blocked_parse(buf, n, 1, collect, NULL) == -1);
	done = (struct nlmsghdr *)buf;
	done->nlmsg_len = NLMSG_LENGTH(sizeof(int));
	done->nlmsg_type = NLMSG_ERROR;
	CHECK(blocked_parse(buf, NLMSG_SPACE(sizeof(int)), 1, collect, NULL) == -1);
	CHECK(blocked_parse(buf, 0, 1, collect, NULL) == 0);
}

/* The address check's core: what a connect names, as read from memory. */
static void test_judge(void)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(443) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(80) };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct dest d;
	const char *pass4[] = { "127.0.0.1", "127.9.8.7", "0.0.0.0" };
	const char *pass6[] = { "::1", "::", "::ffff:127.0.0.1", "::ffff:0.0.0.0" };
	size_t i;

	inet_pton(AF_INET, "10.0.0.5", &a4.sin_addr);
	CHECK(connects_judge(&a4, sizeof a4, &d) == JUDGED_ROUTE && d.family == AF_INET && d.port == 443 &&
	      d.addr[0] == 10 && d.addr[3] == 5);
	CHECK(connects_judge(&a4, 128, &d) == JUDGED_ROUTE); /* a whole sockaddr_storage */
	CHECK(connects_judge(&a4, 15, &d) == JUDGED_PASS);   /* too short: the kernel's EINVAL */
	CHECK(connects_judge(&a4, 1, &d) == JUDGED_PASS);
	for (i = 0; i < sizeof pass4 / sizeof pass4[0]; i++) {
		inet_pton(AF_INET, pass4[i], &a4.sin_addr);
		CHECK(connects_judge(&a4, sizeof a4, &d) == JUDGED_PASS);
	}
	for (i = 0; i < sizeof pass6 / sizeof pass6[0]; i++) {
		inet_pton(AF_INET6, pass6[i], &a6.sin6_addr);
		CHECK(connects_judge(&a6, sizeof a6, &d) == JUDGED_PASS);
	}
	inet_pton(AF_INET6, "::ffff:192.168.1.2", &a6.sin6_addr);
	CHECK(connects_judge(&a6, sizeof a6, &d) == JUDGED_ROUTE && d.family == AF_INET && d.addr[0] == 192 &&
	      d.port == 80);
	inet_pton(AF_INET6, "2001:db8::1", &a6.sin6_addr);
	CHECK(connects_judge(&a6, sizeof a6, &d) == JUDGED_ROUTE && d.family == AF_INET6 && d.addr[0] == 0x20);
	CHECK(connects_judge(&a6, 24, &d) == JUDGED_ROUTE); /* no scope id: the kernel takes it */
	CHECK(connects_judge(&a6, 23, &d) == JUDGED_PASS);
	CHECK(connects_judge(&un, sizeof un, &d) == JUDGED_PASS);
	a4.sin_family = AF_UNSPEC; /* a disconnect */
	CHECK(connects_judge(&a4, sizeof a4, &d) == JUDGED_PASS);
}

/* The route reply, built as the kernel writes one; and the kernel's own. */
static void test_route(void)
{
	char buf[256] __attribute__((aligned(8)));
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct rtmsg *r = NLMSG_DATA(h);
	struct nlmsgerr *e = NLMSG_DATA(h);
	const unsigned char lo[4] = { 127, 0, 0, 1 }, out[4] = { 10, 9, 9, 9 }, lo6[16] = { [15] = 1 };
	int nl;

	memset(buf, 0, sizeof buf);
	h->nlmsg_len = NLMSG_LENGTH(sizeof *r);
	h->nlmsg_type = RTM_NEWROUTE;
	h->nlmsg_seq = 7;
	r->rtm_type = RTN_LOCAL;
	CHECK(route_parse(buf, h->nlmsg_len, 7) == 1);
	r->rtm_type = RTN_UNICAST;
	CHECK(route_parse(buf, h->nlmsg_len, 7) == 0);
	CHECK(route_parse(buf, h->nlmsg_len, 8) == -EPROTO); /* another request's */
	CHECK(route_parse(buf, 10, 7) == -EPROTO);
	h->nlmsg_len = 400; /* past the buffer */
	CHECK(route_parse(buf, NLMSG_LENGTH(sizeof *r), 7) == -EPROTO);
	h->nlmsg_len = NLMSG_LENGTH(sizeof *e);
	h->nlmsg_type = NLMSG_ERROR;
	e->error = -ENETUNREACH; /* no route at all */
	CHECK(route_parse(buf, h->nlmsg_len, 7) == 0);
	e->error = 0; /* an ack is no answer */
	CHECK(route_parse(buf, h->nlmsg_len, 7) == -EPROTO);
	/* this machine's kernel */
	nl = route_open();
	CHECK(nl >= 0);
	CHECK(route_local(nl, AF_INET, lo) == 1);
	CHECK(route_local(nl, AF_INET6, lo6) == 1);
	CHECK(route_local(nl, AF_INET, out) == 0);
	CHECK(route_local(-1, AF_INET, out) < 0);
	if (nl >= 0)
		close(nl);
}

/* The agent's line: what, the rule, the setting; nothing of ward's. */
static void test_refusal_line(void)
{
	struct refusal f = { "connect", AF_INET6, { 0xfd, 0x42, [15] = 2 }, 443, ENETUNREACH, 77 };
	char line[640];

	CHECK(refusals_format(line, sizeof line, &f, "curl") > 0);
	CHECK(strncmp(line, "refused=connect dst=[fd42::2]:443 errno=ENETUNREACH pid=77 comm=curl rule=", 74) == 0);
	CHECK(strstr(line, "allow=\"") && strstr(line, "[proxy] allow") && strstr(line, "protocol = stream"));
	CHECK(sc_egress_len() > 20);
}

int main(void)
{
	int e = filter_loads();

	test_addr();
	test_pick();
	test_blocked_parse();
	if (e == ENOSYS) {
		SKIP(18, "the guard and its filter: seccomp(2) answers ENOSYS here (valgrind does not know "
			 "it, nor libseccomp then); check-unit runs these natively");
		return unit_done("test_egress");
	}
	test_guard(e);
	test_judge();
	test_route();
	test_refusal_line();
	return unit_done("test_egress");
}
