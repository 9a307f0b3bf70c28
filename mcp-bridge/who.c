#define _GNU_SOURCE
#include "mcp-bridge/who.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "common/clock.h"

/* An address and port of one end, into the request's fields. */
static int end_of(const struct sockaddr_storage *ss, uint16_t *family, unsigned char *addr, uint16_t *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
		memcpy(addr, &a->sin_addr, 4);
		*port = ntohs(a->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		memcpy(addr, &a->sin6_addr, 16);
		*port = ntohs(a->sin6_port);
	} else {
		return -1;
	}
	*family = ss->ss_family;
	return 0;
}

int who_ask(int fd, int client, struct who_ans *out)
{
	static uint32_t seq;
	struct sockaddr_storage peer = { 0 }, self = { 0 };
	socklen_t plen = sizeof peer, slen = sizeof self;
	struct who_req q;
	uint64_t deadline = now_ms() + WHO_WAIT_MS, now;
	uint16_t f2;
	ssize_t n;

	memset(out, 0, sizeof *out);
	memset(&q, 0, sizeof q);
	if (fd < 0 || getpeername(client, (struct sockaddr *)&peer, &plen) != 0 ||
	    getsockname(client, (struct sockaddr *)&self, &slen) != 0 ||
	    end_of(&peer, &q.family, q.agent_addr, &q.agent_port) != 0 ||
	    end_of(&self, &f2, q.proxy_addr, &q.proxy_port) != 0 || f2 != q.family)
		return -1;
	q.seq = ++seq;
	if (send(fd, &q, sizeof q, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof q)
		return -1;
	/* PID 1 answers at once; an answer to an earlier request that came
	 * too late is passed over */
	while ((now = now_ms()) < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, (int)(deadline - now)) <= 0)
			continue;
		n = recv(fd, out, sizeof *out, MSG_DONTWAIT);
		if (n == 0)
			break; /* PID 1's end is gone */
		if (n == (ssize_t)sizeof *out && out->seq == q.seq) {
			who_printable(out->cmd, strnlen(out->cmd, sizeof out->cmd), sizeof out->cmd);
			return 0;
		}
	}
	memset(out, 0, sizeof *out);
	return -1;
}
