/* libFuzzer target: the resolver's glue end to end (mcp-bridge/resolve.c):
 * a route's name looked up through c-ares, whose sockets are the fuzzer's
 * (ares_set_socket_functions), and each query answered with the input: a
 * DNS header and answer records of the fuzzer's behind the query's own id
 * and question (so c-ares takes it for the answer), or nothing (a timeout,
 * run by the resolver's own timeout processing). Then the entry must be
 * whole: addresses within bounds, IPv4 first, each with the route's port,
 * or a reason; and the channel freed (ASan sees leaks and overruns). */
#define _GNU_SOURCE
#include <ares.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/log.h"
#include "mcp-bridge/resolve.h"
#include "mcp-bridge/route.h"

#define MAX_Q 8

/* What the fake network holds for one lookup. */
static struct {
	const uint8_t *data; /* the input left for answers */
	size_t size;
	unsigned char q[MAX_Q][512]; /* queries sent, to answer in order */
	size_t qlen[MAX_Q];
	int nq, answered;
	struct sockaddr_storage server; /* where c-ares connected: answers come from there */
	ares_socklen_t server_len;
} net;

static ares_socket_t f_socket(int family, int type, int protocol, void *u)
{
	(void)family, (void)type, (void)protocol, (void)u;
	/* a real descriptor, for the resolver's epoll set */
	return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

static int f_close(ares_socket_t s, void *u)
{
	(void)u;
	return close(s);
}

static int f_connect(ares_socket_t s, const struct sockaddr *sa, ares_socklen_t len, void *u)
{
	(void)s, (void)u;
	if (len > sizeof net.server)
		len = sizeof net.server;
	memcpy(&net.server, sa, len);
	net.server_len = len;
	return 0;
}

static ares_ssize_t f_sendv(ares_socket_t s, const struct iovec *v, int n, void *u)
{
	size_t total = 0;
	int i;

	(void)s, (void)u;
	for (i = 0; i < n; i++) {
		if (net.nq < MAX_Q && total + v[i].iov_len <= sizeof net.q[0])
			memcpy(net.q[net.nq] + total, v[i].iov_base, v[i].iov_len);
		total += v[i].iov_len;
	}
	if (net.nq < MAX_Q && total <= sizeof net.q[0])
		net.qlen[net.nq++] = total;
	return (ares_ssize_t)total;
}

/* The answer to the next query not yet answered, from 4 bytes of the
 * input (the rcode, the answer and additional counts, the records' length)
 * and that many bytes of records, behind the query's own id and question. */
static ares_ssize_t f_recvfrom(ares_socket_t s, void *buf, size_t size, int flags, struct sockaddr *from,
			       ares_socklen_t *from_len, void *u)
{
	unsigned char *out = buf;
	const unsigned char *q;
	size_t ql, take;

	(void)s, (void)flags, (void)u;
	if (net.answered >= net.nq || net.size < 4) {
		errno = EAGAIN;
		return -1;
	}
	q = net.q[net.answered];
	ql = net.qlen[net.answered++];
	if (ql < 12 || size < ql)
		return errno = EAGAIN, -1;
	memcpy(out, q, ql); /* id and question */
	out[2] = 0x81;	    /* a response, recursion desired */
	out[3] = (unsigned char)(0x80 | (net.data[0] & 0x0f)); /* recursion available, an rcode */
	out[6] = 0, out[7] = net.data[1] % 8;
	out[8] = 0, out[9] = 0;
	out[10] = 0, out[11] = net.data[2] % 4;
	take = net.data[3];
	net.data += 4;
	net.size -= 4;
	if (take > net.size)
		take = net.size;
	if (take > size - ql)
		take = size - ql;
	memcpy(out + ql, net.data, take);
	net.data += take;
	net.size -= take;
	if (from && from_len) {
		ares_socklen_t l = *from_len < net.server_len ? *from_len : net.server_len;
		memcpy(from, &net.server, l);
		*from_len = net.server_len;
	}
	return (ares_ssize_t)(ql + take);
}

static const struct ares_socket_functions fake = { f_socket, f_close, f_connect, f_recvfrom, f_sendv };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bridge_route route;
	struct bridge_routes routes = { &route, 1 };
	struct resolver r;
	const struct name *e;
	char err[256];
	int i, told = 0, rounds;
	const char *why = NULL;

	memset(&route, 0, sizeof route);
	route.name = "fuzz";
	if (upstream_parse("tls:provider.example:443", &route.up, &why) != 0)
		abort();
	memset(&net, 0, sizeof net);
	net.data = data;
	net.size = size;
	if (resolver_init(&r, &routes, err, sizeof err) != 0)
		return 0; /* no resolv.conf to read here: nothing to fuzz */
	ares_set_socket_functions((ares_channel)r.channel, &fake, NULL);
	if (resolver_get(&r, 0, 0))
		abort(); /* nothing can be fresh before a lookup */
	/* answers as the loop would take them: readiness, then the timeouts */
	for (rounds = 0; rounds < 16 && !told; rounds++) {
		if (net.answered < net.nq && net.size >= 4) {
			/* every descriptor c-ares polls is readable: it reads them all */
			ares_process_fd((ares_channel)r.channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
			{
				ares_socket_t socks[ARES_GETSOCK_MAXNUM];
				int bits = ares_getsock((ares_channel)r.channel, socks, ARES_GETSOCK_MAXNUM), k;
				for (k = 0; k < ARES_GETSOCK_MAXNUM; k++)
					if (ARES_GETSOCK_READABLE(bits, k))
						ares_process_fd((ares_channel)r.channel, socks[k], ARES_SOCKET_BAD);
			}
		} else {
			break; /* no more answers: the rest would be timeouts */
		}
		while (resolver_next(&r) >= 0)
			told = 1;
	}
	e = &r.v[0];
	if (e->n < 0 || e->n > NAME_MAX_ADDRS)
		abort();
	for (i = 0; i < e->n; i++) {
		if (e->addr[i].family != AF_INET && e->addr[i].family != AF_INET6)
			abort();
		if (i && e->addr[i - 1].family == AF_INET6 && e->addr[i].family == AF_INET)
			abort(); /* IPv4 first */
	}
	if (told && !e->n && !e->why[0])
		abort(); /* a failed lookup says why */
	if (getenv("FUZZ_DNS_SHOW")) /* what a seed reaches: FUZZ_DNS_SHOW=1 fuzz_dns FILE */
		fprintf(stderr, "queries %d answered %d told %d addresses %d why '%s'\n", net.nq, net.answered, told,
			e->n, e->why);
	resolver_free(&r);
	return 0;
}
