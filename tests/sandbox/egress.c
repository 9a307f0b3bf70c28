/* egress: a static probe run as ward's agent in a network namespace that
 * has a route to a second one ("outside"), which listens on the agent's
 * allowed ports. It tries every way out it knows and prints one line per
 * try; the harness (tests/sandbox/sandbox.py) counts, in the outside
 * namespace, what arrived: the proof is there, not in these lines.
 *
 *   egress tries OUT4 OUT6 PORT_A PORT_B RACES
 *       connect to loopback on PORT_A (must work); to OUT4 and OUT6 on
 *       both ports, IPv4-mapped, Fast Open, UDP; undo the device; a
 *       thread flipping the address between loopback and OUT4 while
 *       the main thread connects RACES times
 *   egress loop OUT4 PORT_A SECONDS
 *       sockets and connects for SECONDS (the guard is killed meanwhile):
 *       how many sockets came back, how many were not held to lo
 *   egress flood OUT4 PORT N HOLD_MS WAIT_MS
 *       N connects to OUT4 at once, held HOLD_MS, then WAIT_MS idle: what
 *       the guard names of them (ward's stderr) is the harness's to count
 *   egress datagrams OUT4 OUT6_LINK_LOCAL PORT
 *       every datagram way past a device binding a review found: UDP by
 *       sendmsg with IP_PKTINFO naming veth0 (unconnected, connected, by
 *       sendmmsg), from inet6 to a v4-mapped address with IPV6_PKTINFO,
 *       ping's ICMP with IP_PKTINFO, UDPv6 to the outside's link-local
 *       address by scope id, IGMP and MLD reports by joining 239.7.7.7
 *       and ff15::7777 on veth0. Each payload holds "ward-dgram-leak":
 *       the harness's sniffer outside counts the frames that carry it
 *       (or the groups); a line each says how far the try got ("ok"
 *       when the socket was refused)
 *   egress refused OUT4 OUT6 PORT_ON PORT_OFF FASTOPEN_ERRNO
 *       every way to connect to the outside host, blocking and not,
 *       IPv4, IPv6 and IPv4-mapped, on a port Landlock allows and one it
 *       does not, and by Fast Open (sendto, sendmsg): each must fail with
 *       ENETUNREACH (Fast Open: FASTOPEN_ERRNO, EOPNOTSUPP where the deny
 *       list refuses MSG_FASTOPEN) within 100 ms; one line each with the
 *       time it took (the harness checks the agent's file names each)
 *   egress others
 *       prlimit, setpriority (process and user), ioprio_set,
 *       sched_setaffinity and sched_setattr on ward (an ancestor, which
 *       answers the guard's calls, and shares the agent's uid when started
 *       without root): each must be refused; the caller's own (pid 0)
 *       must not
 *   egress peek
 *       whether a process can read a sibling's memory or take its
 *       descriptor (pidfd_getfd, process_vm_readv, /proc/PID/mem), as an
 *       address check on connect() would have to: measured, for the docs
 *   egress grab BRIDGE_PORT TARGET
 *       listen() on sockets never bound until one has TARGET, the port
 *       of the bridge's upstream (down), or the kernel has no port left
 *       for them ("ports: ..."); every other listener is closed again.
 *       Then a request through the bridge on BRIDGE_PORT: what reaches
 *       the agent in 2 s is printed ("caught: ...", and whether the
 *       route's secret header came with it), and the bridge's status */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;

static void result(const char *name, int ok, const char *detail)
{
	if (ok)
		passed++;
	else
		failed++;
	printf("%s %-34s %s\n", ok ? "ok  " : "FAIL", name, detail);
	fflush(stdout);
}

static int held_to_lo(int fd)
{
	char dev[IFNAMSIZ] = { 0 };
	socklen_t len = sizeof dev;
	return getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, &len) == 0 && strcmp(dev, "lo") == 0;
}

static socklen_t addr_of(const char *ip, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *b = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof *ss);
	if (inet_pton(AF_INET, ip, &a->sin_addr) == 1) {
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		return sizeof *a;
	}
	if (inet_pton(AF_INET6, ip, &b->sin6_addr) == 1) {
		b->sin6_family = AF_INET6;
		b->sin6_port = htons((uint16_t)port);
		return sizeof *b;
	}
	fprintf(stderr, "egress: not an address: %s\n", ip);
	exit(2);
}

/* A non-blocking connect, given 300 ms: 1 connected, 0 not, with why. */
static int try_connect(const char *ip, int port, int type, char *why, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_of(ip, port, &ss);
	int s = socket(ss.ss_family, type | SOCK_NONBLOCK, 0), err = 0, r;
	struct pollfd p;
	socklen_t el = sizeof err;

	if (s < 0) {
		snprintf(why, size, "socket: %s", strerrorname_np(errno));
		return 0;
	}
	if (!held_to_lo(s)) {
		snprintf(why, size, "socket NOT held to lo");
		close(s);
		return 1; /* counts as a way out */
	}
	r = connect(s, (struct sockaddr *)&ss, len);
	if (r != 0 && errno != EINPROGRESS) {
		snprintf(why, size, "connect: %s", strerrorname_np(errno));
		close(s);
		return 0;
	}
	if (type == SOCK_DGRAM) {
		ssize_t n = send(s, "leak", 4, 0);
		snprintf(why, size, "send: %s", n < 0 ? strerrorname_np(errno) : "sent (held to lo)");
		close(s);
		return 0;
	}
	p = (struct pollfd){ s, POLLOUT, 0 };
	if (r != 0 && poll(&p, 1, 300) != 1) {
		snprintf(why, size, "no answer in 300 ms");
		close(s);
		return 0;
	}
	getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el);
	if (err) {
		snprintf(why, size, "%s", strerrorname_np(err));
		close(s);
		return 0;
	}
	(void)send(s, "leak", 4, MSG_NOSIGNAL);
	snprintf(why, size, "CONNECTED");
	close(s);
	return 1;
}

static void expect_out(const char *name, const char *ip, int port, int type)
{
	char why[128];
	int got = try_connect(ip, port, type, why, sizeof why);
	result(name, !got, why);
}

/* The race: one shared sockaddr, flipped by a thread between loopback
 * and the outside host while the main thread connects with it. */
static struct sockaddr_in race_addr;
static struct in_addr race_in, race_out;
static volatile int racing = 1;

static void *flipper(void *arg)
{
	(void)arg;
	while (racing) {
		race_addr.sin_addr = race_out;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		race_addr.sin_addr = race_in;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void race(const char *out4, int port, int n)
{
	pthread_t t;
	int i, made = 0, unheld = 0, inprogress = 0;
	char d[160];

	race_addr.sin_family = AF_INET;
	race_addr.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, "127.0.0.1", &race_in);
	inet_pton(AF_INET, out4, &race_out);
	race_addr.sin_addr = race_in;
	pthread_create(&t, NULL, flipper, NULL);
	for (i = 0; i < n; i++) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (s < 0)
			continue;
		made++;
		unheld += !held_to_lo(s);
		if (connect(s, (struct sockaddr *)&race_addr, sizeof race_addr) != 0 && errno == EINPROGRESS)
			inprogress++;
		close(s);
	}
	racing = 0;
	pthread_join(t, NULL);
	snprintf(d, sizeof d, "%d sockets, %d not held to lo, %d connects left pending (the outside ones)", made,
		 unheld, inprogress);
	result("race: flipped address", made == n && unheld == 0, d);
}

static int tries(char **argv)
{
	const char *out4 = argv[2], *out6 = argv[3];
	int pa = atoi(argv[4]), pb = atoi(argv[5]), n = atoi(argv[6]), s;
	char why[128], mapped[64];

	result("loopback on the allowed port", try_connect("127.0.0.1", pa, SOCK_STREAM, why, sizeof why), why);
	result("IPv6 loopback on the allowed port", try_connect("::1", pa, SOCK_STREAM, why, sizeof why), why);
	expect_out("outside IPv4, allowed port A", out4, pa, SOCK_STREAM);
	expect_out("outside IPv4, allowed port B", out4, pb, SOCK_STREAM);
	snprintf(mapped, sizeof mapped, "::ffff:%s", out4);
	expect_out("outside IPv4-mapped IPv6", mapped, pa, SOCK_STREAM);
	expect_out("outside IPv6", out6, pa, SOCK_STREAM);
	expect_out("outside UDP", out4, pa, SOCK_DGRAM);
	expect_out("outside UDP over IPv6", out6, pa, SOCK_DGRAM);
	{
		/* Fast Open: the deny list refuses MSG_FASTOPEN; were it let
		 * through, the socket is held to lo all the same */
		struct sockaddr_storage ss;
		socklen_t len = addr_of(out4, pa, &ss);
		int one = 1;
		ssize_t r;
		s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		r = sendto(s, "leak", 4, MSG_FASTOPEN, (struct sockaddr *)&ss, len);
		snprintf(why, sizeof why, "sendto MSG_FASTOPEN: %s", r < 0 ? strerrorname_np(errno) : "sent");
		result("outside by Fast Open", r < 0 && held_to_lo(s), why);
		close(s);
		s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		setsockopt(s, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one);
		r = connect(s, (struct sockaddr *)&ss, len);
		snprintf(why, sizeof why, "TCP_FASTOPEN_CONNECT connect: %s", r < 0 ? strerrorname_np(errno) : "0");
		result("outside by Fast Open connect", held_to_lo(s), why);
		close(s);
	}
	{
		/* the device cannot be taken off or changed without CAP_NET_RAW */
		int zero = 0, r1, r2, r3, e1, e2, e3;
		s = socket(AF_INET, SOCK_STREAM, 0);
		r1 = setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, "", 0);
		e1 = errno;
		r2 = setsockopt(s, SOL_SOCKET, SO_BINDTOIFINDEX, &zero, sizeof zero);
		e2 = errno;
		r3 = setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, "veth0", 6);
		e3 = errno;
		snprintf(why, sizeof why, "%s, %s, %s", r1 ? strerrorname_np(e1) : "cleared",
			 r2 ? strerrorname_np(e2) : "cleared", r3 ? strerrorname_np(e3) : "changed");
		result("undo the device", r1 && r2 && r3 && held_to_lo(s), why);
		close(s);
	}
	race(out4, pa, n);
	printf("egress: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

static int loop(char **argv)
{
	const char *out4 = argv[2];
	int pa = atoi(argv[3]), secs = atoi(argv[4]), made = 0, unheld = 0, failures = 0;
	struct sockaddr_storage ss;
	socklen_t len = addr_of(out4, pa, &ss);
	time_t end = time(NULL) + secs;

	while (time(NULL) < end) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (s < 0) {
			failures++;
			continue;
		}
		made++;
		unheld += !held_to_lo(s);
		(void)connect(s, (struct sockaddr *)&ss, len);
		close(s);
		usleep(1000);
	}
	printf("loop: %d sockets, %d not held to lo, %d refused\n", made, unheld, failures);
	return unheld ? 1 : 0;
}

/* N connects to OUT4:PORT at once, held HOLD ms, closed; then a wait of
 * WAIT ms (the guard's rate-limit window ends in it). */
static int flood(char **argv)
{
	int n = atoi(argv[4]), hold = atoi(argv[5]), wait = atoi(argv[6]), i, *s = calloc((size_t)n, sizeof *s);
	struct sockaddr_storage ss;
	socklen_t len = addr_of(argv[2], atoi(argv[3]), &ss);

	if (!s)
		return 1;
	for (i = 0; i < n; i++) {
		s[i] = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (s[i] >= 0)
			(void)connect(s[i], (struct sockaddr *)&ss, len);
	}
	usleep((useconds_t)hold * 1000);
	for (i = 0; i < n; i++)
		if (s[i] >= 0)
			close(s[i]);
	free(s);
	usleep((useconds_t)wait * 1000);
	printf("flood: %d connects held %d ms\n", n, hold);
	return 0;
}

/* What an address check on connect() would need: another process of the
 * same uid (not an ancestor: the guard is the agent's sibling) reading the
 * agent's memory, or taking its socket. Three ways, each tried from a
 * sibling of the process holding a buffer; one line each. */
static int peek(void)
{
	static char secret[] = "ward-peek-secret";
	int p[2], q[2];
	char *at = NULL, buf[sizeof secret];
	pid_t holder, looker;

	if (pipe(p) != 0 || pipe(q) != 0)
		return 1;
	holder = fork();
	if (holder == 0) {
		char c;
		char *addr = secret;
		(void)write(p[1], &addr, sizeof addr);
		(void)read(q[0], &c, 1); /* until the looker is done */
		_exit(0);
	}
	if (read(p[0], &at, sizeof at) != (ssize_t)sizeof at)
		return 1;
	looker = fork();
	if (looker == 0) {
		struct iovec l = { buf, sizeof buf }, r = { at, sizeof buf };
		int pidfd = (int)syscall(SYS_pidfd_open, holder, 0), fd, mem;
		char path[64];

		setvbuf(stdout, NULL, _IONBF, 0);
		fd = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, 0, 0) : -1;
		printf("peek: pidfd_getfd %s\n", fd >= 0 ? "ok" : strerrorname_np(errno));
		memset(buf, 0, sizeof buf);
		errno = 0;
		printf("peek: process_vm_readv %s\n", process_vm_readv(holder, &l, 1, &r, 1, 0) == (ssize_t)sizeof buf &&
		       memcmp(buf, secret, sizeof buf) == 0 ? "ok" : strerrorname_np(errno));
		snprintf(path, sizeof path, "/proc/%d/mem", (int)holder);
		memset(buf, 0, sizeof buf);
		errno = 0;
		mem = open(path, O_RDONLY | O_CLOEXEC);
		printf("peek: /proc/PID/mem %s\n", mem >= 0 && pread(mem, buf, sizeof buf, (off_t)(uintptr_t)at) ==
		       (ssize_t)sizeof buf && memcmp(buf, secret, sizeof buf) == 0 ? "ok" : strerrorname_np(errno));
		_exit(0);
	}
	waitpid(looker, NULL, 0);
	(void)write(q[1], "x", 1);
	waitpid(holder, NULL, 0);
	return 0;
}

#define GRAB_MAX 256

static int grab(char **argv)
{
	int bridge_port = atoi(argv[2]), target = atoi(argv[3]), l[GRAB_MAX], n = 0, i, c, caught = 0, held = -1;
	struct sockaddr_in a;
	socklen_t len;
	char buf[4096];
	struct pollfd p[GRAB_MAX];
	const char req[] = "GET /v1/x HTTP/1.1\r\nHost: up\r\nConnection: close\r\n\r\n";
	ssize_t got;

	{
		/* first, the socket's ports widened back to the namespace's (0) */
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		uint32_t zero = 0;
		printf("widen: %s\n", s >= 0 && setsockopt(s, IPPROTO_IP, 51 /* IP_LOCAL_PORT_RANGE */, &zero,
							     sizeof zero) == 0 ? "ok" : strerrorname_np(errno));
		if (s >= 0)
			close(s);
	}
	printf("ports:");
	while (n < GRAB_MAX) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		uint32_t zero = 0;
		(void)setsockopt(s, IPPROTO_IP, 51, &zero, sizeof zero); /* refused under the guard */
		len = sizeof a;
		if (s < 0 || listen(s, 8) != 0 || getsockname(s, (struct sockaddr *)&a, &len) != 0) {
			if (s >= 0)
				close(s);
			break;
		}
		printf(" %d", ntohs(a.sin_port));
		l[n++] = s;
		if (ntohs(a.sin_port) == target) {
			held = s;
			break;
		}
	}
	printf("\n");
	/* the rest let go: the bridge needs a source port of its own */
	for (i = 0; i < n; i++)
		if (l[i] != held)
			close(l[i]);
	n = 0;
	if (held >= 0)
		l[n++] = held;
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)bridge_port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) != 0 || send(c, req, sizeof req - 1, MSG_NOSIGNAL) < 0) {
		printf("bridge: cannot send (%s)\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++)
		p[i] = (struct pollfd){ l[i], POLLIN, 0 };
	if (n && poll(p, (nfds_t)n, 2000) > 0)
		for (i = 0; i < n; i++)
			if (p[i].revents & POLLIN) {
				int s = accept(l[i], NULL, NULL);
				got = s >= 0 ? recv(s, buf, sizeof buf - 1, 0) : -1;
				buf[got > 0 ? got : 0] = '\0';
				printf("caught: %zd bytes, secret header %s\n", got,
				       strstr(buf, "s3cret-value") ? "RECEIVED" : "absent");
				caught = 1;
				if (s >= 0)
					close(s);
			}
	if (!caught)
		printf("caught: nothing\n");
	got = recv(c, buf, sizeof buf - 1, 0);
	buf[got > 0 ? got : 0] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	printf("bridge: %s\n", got > 0 ? buf : "no answer");
	return 0;
}


/* ---------------------------------------------------------------- datagrams */

static const char LEAK[] = "ward-dgram-leak";

/* one datagram try: the socket, then what the kernel did with a send */
static void dgram_result(const char *name, int s, ssize_t sent, int err)
{
	char why[160];

	if (s < 0)
		snprintf(why, sizeof why, "socket: %s", strerrorname_np(err));
	else
		snprintf(why, sizeof why, "socket made; send: %s", sent < 0 ? strerrorname_np(err) : "sent");
	result(name, s < 0, why);
	if (s >= 0)
		close(s);
}

/* sendmsg with a packet-info control message naming ifindex */
static ssize_t send_pktinfo(int s, const struct sockaddr *to, socklen_t tolen, int v6, int ifindex)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { (void *)LEAK, sizeof LEAK };
	struct msghdr m = { (void *)to, tolen, &iov, 1, c.buf, 0, 0 };
	struct cmsghdr *h;

	memset(&c, 0, sizeof c);
	m.msg_controllen = v6 ? CMSG_SPACE(sizeof(struct in6_pktinfo)) : CMSG_SPACE(sizeof(struct in_pktinfo));
	h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = v6 ? IPPROTO_IPV6 : IPPROTO_IP;
	h->cmsg_type = v6 ? IPV6_PKTINFO : IP_PKTINFO;
	h->cmsg_len = v6 ? CMSG_LEN(sizeof(struct in6_pktinfo)) : CMSG_LEN(sizeof(struct in_pktinfo));
	if (v6)
		((struct in6_pktinfo *)CMSG_DATA(h))->ipi6_ifindex = (unsigned)ifindex;
	else
		((struct in_pktinfo *)CMSG_DATA(h))->ipi_ifindex = ifindex;
	return sendmsg(s, &m, 0);
}

static int datagrams(char **argv)
{
	const char *out4 = argv[2], *ll6 = argv[3];
	int port = atoi(argv[4]), ifx = (int)if_nametoindex("veth0"), s, e;
	struct sockaddr_storage o4, m6, l6;
	socklen_t o4l = addr_of(out4, port, &o4), m6l, l6l;
	char mapped[64];
	ssize_t r;

	snprintf(mapped, sizeof mapped, "::ffff:%s", out4);
	m6l = addr_of(mapped, port, &m6);
	l6l = addr_of(ll6, port, &l6);
	((struct sockaddr_in6 *)&l6)->sin6_scope_id = (uint32_t)ifx;

	s = socket(AF_INET, SOCK_DGRAM, 0), e = errno, r = -1;
	if (s >= 0)
		r = send_pktinfo(s, (struct sockaddr *)&o4, o4l, 0, ifx), e = errno;
	dgram_result("udp by sendmsg with IP_PKTINFO", s, r, e);

	s = socket(AF_INET, SOCK_DGRAM, 0), e = errno, r = -1;
	if (s >= 0 && connect(s, (struct sockaddr *)&o4, o4l) == 0)
		r = send_pktinfo(s, NULL, 0, 0, ifx);
	e = errno;
	dgram_result("udp connected, with IP_PKTINFO", s, r, e);

	s = socket(AF_INET, SOCK_DGRAM, 0), e = errno, r = -1;
	if (s >= 0) {
		union {
			char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
			struct cmsghdr align;
		} c;
		struct iovec iov = { (void *)LEAK, sizeof LEAK };
		struct mmsghdr mm;
		struct cmsghdr *h;
		memset(&mm, 0, sizeof mm);
		memset(&c, 0, sizeof c);
		mm.msg_hdr = (struct msghdr){ &o4, o4l, &iov, 1, c.buf, sizeof c.buf, 0 };
		h = CMSG_FIRSTHDR(&mm.msg_hdr);
		h->cmsg_level = IPPROTO_IP, h->cmsg_type = IP_PKTINFO, h->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
		((struct in_pktinfo *)CMSG_DATA(h))->ipi_ifindex = ifx;
		r = sendmmsg(s, &mm, 1, 0), e = errno;
	}
	dgram_result("udp by sendmmsg with IP_PKTINFO", s, r, e);

	s = socket(AF_INET6, SOCK_DGRAM, 0), e = errno, r = -1;
	if (s >= 0)
		r = send_pktinfo(s, (struct sockaddr *)&m6, m6l, 1, ifx), e = errno;
	dgram_result("udp6 to v4-mapped with IPV6_PKTINFO", s, r, e);

	s = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP), e = errno, r = -1;
	if (s >= 0) {
		/* an echo request whose data is the marker (the kernel sets id and checksum) */
		struct {
			unsigned char type, code;
			unsigned short sum, id, seq;
			char data[sizeof LEAK];
		} echo = { 8, 0, 0, 0, htons(1), { 0 } };
		struct iovec iov = { &echo, sizeof echo };
		union {
			char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
			struct cmsghdr align;
		} c;
		struct msghdr m = { &o4, o4l, &iov, 1, c.buf, sizeof c.buf, 0 };
		struct cmsghdr *h;
		memcpy(echo.data, LEAK, sizeof LEAK);
		memset(&c, 0, sizeof c);
		h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = IPPROTO_IP, h->cmsg_type = IP_PKTINFO, h->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
		((struct in_pktinfo *)CMSG_DATA(h))->ipi_ifindex = ifx;
		r = sendmsg(s, &m, 0), e = errno;
	}
	dgram_result("ping (ICMP echo) with IP_PKTINFO", s, r, e);

	s = socket(AF_INET6, SOCK_DGRAM, 0), e = errno, r = -1;
	if (s >= 0)
		r = sendto(s, LEAK, sizeof LEAK, 0, (struct sockaddr *)&l6, l6l), e = errno;
	dgram_result("udp6 to link-local by scope id", s, r, e);

	s = socket(AF_INET, SOCK_DGRAM, 0), e = errno, r = -1;
	if (s >= 0) {
		struct ip_mreqn mr;
		memset(&mr, 0, sizeof mr);
		inet_pton(AF_INET, "239.7.7.7", &mr.imr_multiaddr);
		mr.imr_ifindex = ifx;
		r = setsockopt(s, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof mr), e = errno;
	}
	dgram_result("join 239.7.7.7 on veth0 (IGMP report)", s, r, e);

	s = socket(AF_INET6, SOCK_DGRAM, 0), e = errno, r = -1;
	if (s >= 0) {
		struct ipv6_mreq mr;
		memset(&mr, 0, sizeof mr);
		inet_pton(AF_INET6, "ff15::7777", &mr.ipv6mr_multiaddr);
		mr.ipv6mr_interface = (unsigned)ifx;
		r = setsockopt(s, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &mr, sizeof mr), e = errno;
	}
	dgram_result("join ff15::7777 on veth0 (MLD report)", s, r, e);
	/* (the reports go out now and on timers: a moment for them) */
	usleep(300 * 1000);
	printf("egress: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}


/* ---------------------------------------------------------------- stuck */

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* One refused try: how: 0 blocking connect, 1 non-blocking (EINPROGRESS
 * then SO_ERROR counts as the answer), 2 sendto MSG_FASTOPEN, 3 sendmsg
 * MSG_FASTOPEN. */
static void refused_one(const char *name, const char *ip, int port, int how, int want)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_of(ip, port, &ss);
	struct timespec t0;
	int s = socket(ss.ss_family, SOCK_STREAM | (how == 1 ? SOCK_NONBLOCK : 0), 0), err = 0, r;
	char d[160];
	double took;

	if (s < 0) {
		snprintf(d, sizeof d, "socket: %s", strerrorname_np(errno));
		result(name, 0, d);
		return;
	}
	if (how == 0) { /* a connect the kernel held would end here, not after its SYN retries */
		struct timeval tv = { 3, 0 };
		setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (how <= 1) {
		r = connect(s, (struct sockaddr *)&ss, len);
		err = r ? errno : 0;
		if (r && err == EINPROGRESS) {
			struct pollfd p = { s, POLLOUT, 0 };
			socklen_t el = sizeof err;
			err = poll(&p, 1, 3000) == 1 && getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el) == 0 ? err : ETIMEDOUT;
		}
	} else if (how == 2) {
		r = (int)sendto(s, "leak", 4, MSG_FASTOPEN, (struct sockaddr *)&ss, len);
		err = r < 0 ? errno : 0;
	} else {
		struct iovec v = { "leak", 4 };
		struct msghdr m = { .msg_name = &ss, .msg_namelen = len, .msg_iov = &v, .msg_iovlen = 1 };
		r = (int)sendmsg(s, &m, MSG_FASTOPEN);
		err = r < 0 ? errno : 0;
	}
	took = ms_since(&t0);
	close(s);
	snprintf(d, sizeof d, "%s in %.3f ms", err ? strerrorname_np(err) : "no error", took);
	result(name, err == want && took < 1000.0, d);
}

static int refused(char **argv)
{
	const char *out4 = argv[2], *out6 = argv[3];
	int on = atoi(argv[4]), off = atoi(argv[5]), fo = atoi(argv[6]);
	char mapped[64], n[96];
	const char *ips[3] = { out4, out6, mapped };
	const char *names[3] = { "IPv4", "IPv6", "IPv4-mapped" };
	int i, how;

	snprintf(mapped, sizeof mapped, "::ffff:%s", out4);
	for (i = 0; i < 3; i++)
		for (how = 0; how < 2; how++) {
			snprintf(n, sizeof n, "%s %s, allowed port", names[i], how ? "non-blocking" : "blocking");
			refused_one(n, ips[i], on, how, ENETUNREACH);
			snprintf(n, sizeof n, "%s %s, port not allowed", names[i], how ? "non-blocking" : "blocking");
			refused_one(n, ips[i], off, how, ENETUNREACH);
		}
	refused_one("IPv4 sendto MSG_FASTOPEN", out4, on, 2, fo);
	refused_one("IPv6 sendmsg MSG_FASTOPEN", out6, on, 3, fo);
	printf("egress: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

/* ---------------------------------------------------------------- others */

/* a process's parent and name, from /proc/PID/stat; -1 when it is gone */
static int stat_of(pid_t pid, char *comm, size_t size)
{
	char path[64], line[512], *o, *c;
	FILE *f;
	int ppid = -1;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(line, sizeof line, f) && (o = strchr(line, '(')) && (c = strrchr(line, ')')) &&
	    sscanf(c + 1, " %*c %d", &ppid) == 1)
		snprintf(comm, size, "%.*s", (int)(c - o - 1), o + 1);
	fclose(f);
	return ppid;
}

/* ward: the nearest ancestor named ward */
static pid_t find_ward(void)
{
	char comm[64] = "";
	pid_t p = getppid();

	while (p > 1) {
		int pp = stat_of(p, comm, sizeof comm);
		if (pp < 0)
			return -1;
		if (strcmp(comm, "ward") == 0)
			return p;
		p = pp;
	}
	return -1;
}

static void others_on(const char *who, pid_t pid)
{
	struct rlimit lim = { 3, 3 };
	cpu_set_t one;
	struct {
		uint32_t size, policy;
		uint64_t flags;
		int32_t nice;
		uint32_t prio;
		uint64_t rt, dl, period;
	} attr = { 48, 0, 0, 19, 0, 0, 0, 0 };
	char name[96], why[96];
	int r, e;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
#define TRY(what, call)                                                                                      \
	do {                                                                                                 \
		errno = 0;                                                                                   \
		r = (int)(call);                                                                             \
		e = errno;                                                                                   \
		snprintf(name, sizeof name, "%s on %s", what, who);                                         \
		snprintf(why, sizeof why, "%s", r < 0 ? strerrorname_np(e) : "done");                       \
		result(name, r < 0 && e == EPERM, why);                                                      \
	} while (0)
	TRY("prlimit NOFILE 3", prlimit(pid, RLIMIT_NOFILE, &lim, NULL));
	TRY("setpriority", setpriority(PRIO_PROCESS, (id_t)pid, 19));
	TRY("ioprio_set idle", syscall(SYS_ioprio_set, 1, pid, 3 << 13));
	TRY("sched_setaffinity", sched_setaffinity(pid, sizeof one, &one));
	TRY("sched_setattr", syscall(SYS_sched_setattr, pid, &attr, 0));
#undef TRY
}

static int others(void)
{
	pid_t ward = find_ward();
	struct rlimit lim;
	char why[64];
	int r;

	if (ward > 0)
		others_on("ward", ward);
	else
		result("ward found", 0, "no ancestor named ward");
	errno = 0;
	r = setpriority(PRIO_USER, 0, 19);
	snprintf(why, sizeof why, "%s", r < 0 ? strerrorname_np(errno) : "done");
	result("setpriority of the whole uid", r < 0 && errno == EPERM, why);
	/* the caller's own stays allowed */
	r = getrlimit(RLIMIT_CORE, &lim) == 0 && setrlimit(RLIMIT_CORE, &lim) == 0 && setpriority(PRIO_PROCESS, 0, 1) == 0;
	result("its own limits and priority (pid 0)", r, r ? "done" : strerrorname_np(errno));
	printf("egress: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 7 && strcmp(argv[1], "tries") == 0)
		return tries(argv);
	if (argc == 5 && strcmp(argv[1], "loop") == 0)
		return loop(argv);
	if (argc == 2 && strcmp(argv[1], "peek") == 0)
		return peek();
	if (argc == 5 && strcmp(argv[1], "datagrams") == 0)
		return datagrams(argv);
	if (argc == 2 && strcmp(argv[1], "others") == 0)
		return others();
	if (argc == 7 && strcmp(argv[1], "refused") == 0)
		return refused(argv);
	if (argc == 7 && strcmp(argv[1], "flood") == 0)
		return flood(argv);
	if (argc == 4 && strcmp(argv[1], "grab") == 0)
		return grab(argv);
	fprintf(stderr, "usage: egress tries OUT4 OUT6 PORT_A PORT_B RACES | egress loop OUT4 PORT SECONDS | "
		"egress grab BRIDGE_PORT TARGET | egress flood OUT4 PORT N HOLD_MS WAIT_MS | "
		"egress peek | egress datagrams OUT4 OUT6_LINK_LOCAL PORT | egress others | "
		"egress refused OUT4 OUT6 PORT_ON PORT_OFF FASTOPEN_ERRNO\n");
	return 2;
}
