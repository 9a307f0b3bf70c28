/* bare-relay: the least a relay can do, for the bridge bench to measure
 * against. TCP on 127.0.0.1:PORT to a unix socket, a process per
 * connection (as socat), each direction moved by read() into one 256 KiB
 * buffer and write() out of it, blocking. No parsing, no limits, no
 * confinement: what is left between it and a direct connection is the
 * cost of a second hop itself.
 *
 * With `splice`, the upstream's answers are moved the zero-copy way
 * instead: splice() from the unix socket into a 1 MiB pipe and from the
 * pipe into TCP, never through the relay's memory. The bench runs both,
 * to show which way a relay should move a response on this kernel.
 *
 * With `connect:IPV4:PORT` in place of the unix path it is the least a
 * CONNECT proxy can do, for the proxy bench: the client's head read and
 * not looked at, a TCP connection to that one address, "200", and then
 * the same relay (no rule, no name resolved, no ClientHello read).
 *
 *   bare-relay PORT UNIX-PATH [splice]
 *   bare-relay PORT connect:IPV4:PORT */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* all of what one splice() from the unix socket brought, on into TCP */
static int splice_on(int u, int c, const int pp[2])
{
	ssize_t n = splice(u, NULL, pp[1], NULL, 1 << 20, SPLICE_F_MOVE);

	if (n <= 0)
		return -1;
	while (n > 0) {
		ssize_t k = splice(pp[0], NULL, c, NULL, (size_t)n, SPLICE_F_MOVE);
		if (k <= 0)
			return -1;
		n -= k;
	}
	return 0;
}

/* connect:IPV4:PORT: the CONNECT head taken whole (unread), the address
 * connected to, 200 told. The upstream, or -1. */
static int tunnel(int c, const char *target)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct sockaddr_in ta = { .sin_family = AF_INET };
	char head[4096], addr[64];
	const char *colon = strrchr(target, ':');
	size_t n = 0;
	int u;

	if (!colon || (size_t)(colon - target) >= sizeof addr)
		return -1;
	memcpy(addr, target, (size_t)(colon - target));
	addr[colon - target] = '\0';
	ta.sin_port = htons((unsigned short)atoi(colon + 1));
	if (inet_pton(AF_INET, addr, &ta.sin_addr) != 1)
		return -1;
	while (n < 4 || memcmp(head + n - 4, "\r\n\r\n", 4) != 0) { /* a byte at a time: nothing past the head */
		if (n == sizeof head || read(c, head + n, 1) != 1)
			return -1;
		n++;
	}
	u = socket(AF_INET, SOCK_STREAM, 0);
	if (u < 0 || connect(u, (struct sockaddr *)&ta, sizeof ta) != 0 || write_all(c, ok, sizeof ok - 1) != 0)
		return -1;
	return u;
}

static void relay(int c, const char *path, int spliced)
{
	static char buf[256 * 1024];
	struct sockaddr_un ua = { .sun_family = AF_UNIX };
	struct pollfd p[2];
	int u, open_c = 1, pp[2];

	if (spliced && (pipe(pp) != 0 || fcntl(pp[1], F_SETPIPE_SZ, 1 << 20) < 0))
		return;
	if (strncmp(path, "connect:", 8) == 0) {
		u = tunnel(c, path + 8);
	} else {
		if (strlen(path) >= sizeof ua.sun_path)
			return;
		strcpy(ua.sun_path, path);
		u = socket(AF_UNIX, SOCK_STREAM, 0);
		if (u >= 0 && connect(u, (struct sockaddr *)&ua, sizeof ua) != 0)
			u = -1;
	}
	if (u < 0)
		return;
	for (;;) {
		p[0] = (struct pollfd){ .fd = open_c ? c : -1, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = u, .events = POLLIN };
		if (poll(p, 2, -1) < 0)
			return;
		if (p[0].revents) {
			ssize_t n = read(c, buf, sizeof buf);
			if (n <= 0) {
				shutdown(u, SHUT_WR);
				open_c = 0;
			} else if (write_all(u, buf, (size_t)n) != 0) {
				return;
			}
		}
		if (p[1].revents && spliced) {
			if (splice_on(u, c, pp) != 0)
				return;
		} else if (p[1].revents) {
			ssize_t n = read(u, buf, sizeof buf);
			if (n <= 0 || write_all(c, buf, (size_t)n) != 0)
				return;
		}
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	int spliced = argc == 4 && strcmp(argv[3], "splice") == 0;

	if ((argc != 3 && !spliced) || l < 0) {
		fprintf(stderr, "usage: bare-relay PORT UNIX-PATH [splice] | bare-relay PORT connect:IPV4:PORT\n");
		return 2;
	}
	signal(SIGCHLD, SIG_IGN); /* children reaped by the kernel */
	a.sin_port = htons((unsigned short)atoi(argv[1]));
	if (setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1024) != 0) {
		perror("bare-relay: listen");
		return 1;
	}
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			continue;
		if (fork() == 0) {
			close(l);
			relay(c, argv[2], spliced);
			_exit(0);
		}
		close(c);
	}
}
