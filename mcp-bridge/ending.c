#define _GNU_SOURCE
#include "mcp-bridge/ending.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "mcp-bridge/dial.h"
#include "mcp-bridge/stream.h"
#include "mcp-bridge/toolslist.h"
#include "mcp-bridge/tunnel.h"

/* The upstream stopped taking the request (it closed, or answered early,
 * e.g. 413): the rest is dropped and no more read from the client; what
 * the upstream answers is relayed, and if it answers nothing, 502. */
void drop_request(struct conn *c)
{
	if (!c->req.done || c->c2u_len > c->c2u_off || c->in_rpipe) {
		if (!c->req_cut)
			c->deadline = now_ms() + CUT_WAIT_MS;
		c->req_cut = 1;
		if (!c->req.why)
			c->req.why = "upstream stopped reading the request";
	}
	c->c2u_len = c->c2u_off = 0;
	c->in_rpipe = 0;
	c->req_done = 1;
}

/* The connection's audit line: a tunnel's, or a route's request or stream. */
static void audit(const struct conn *c)
{
	if (c->tun)
		tunnel_audit(c);
	else
		conn_audit(c);
}

/* Out of C_RETRY (the loop polls quickly while any connection is in it). */
void leave_retry(struct loop *l, struct conn *c)
{
	if (c->state == C_RETRY) {
		l->n_retrying--;
		c->state = C_CONNECTING;
	}
}

/* A connection's bulk buffer counts against BULK_MAX until it ends. */
static void drop_bulk(struct loop *l, struct conn *c)
{
	if (c->u2c_room == BULK_BUF)
		l->n_bulk--;
	c->u2c_room = 0;
}

/* Closes both sides now; the memory goes after this batch of events, which
 * may still name the connection. */
void close_conn(struct loop *l, struct conn *c)
{
	struct conn **pp;

	if (c->dead)
		return;
	drop_bulk(l, c);
	leave_retry(l, c);
	if (c->state == C_ABORT)
		l->n_aborting--;
	if (!c->audited)
		audit(c);
	if (c->tun)
		tunnel_close(l, c);
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	conn_close_rpipe(c);
	c->cfd = c->ufd = -1;
	for (pp = &l->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->dead = 1;
	c->next = l->dead;
	l->dead = c;
	l->n_conns--;
}

void reap_dead(struct loop *l)
{
	while (l->dead) {
		struct conn *c = l->dead;
		l->dead = c->next;
		conn_free_tls(c);
		free(c->tun);
		free(c->held);
		toolslist_free(c->tl);
		free(c->tool_args);
		http_req_free_body(&c->req);
		free(c->head);
		free(c->c2u);
		free(c->u2c);
		free(c);
	}
}

/* A refusal: a short JSON answer, then a lingering close (see linger()). */
static void linger(struct loop *l, struct conn *c);

void refuse(struct loop *l, struct conn *c, int status, const char *why)
{
	char out[1536];
	int n;

	/* a refused tunnel is none while its answer lingers: its count and
	 * its name's entry go now (tunnel_close is once only) */
	if (c->tun)
		tunnel_close(l, c);

	if (c->route->stream) {
		/* a stream has no answer to give: the client sees the close */
		if (!c->req.why)
			c->req.why = why;
		close_conn(l, c);
		return;
	}
	n = http_refusal(status, why, c->route->http.methods, out, sizeof out);
	c->status = status;
	if (!c->req.why)
		c->req.why = why;
	if (n > 0)
		(void)send(c->cfd, out, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (c->state == C_DRAIN) {
		close_conn(l, c);
		return;
	}
	linger(l, c);
}

void answer_json(struct loop *l, struct conn *c, int status, const char *body, const char *why)
{
	size_t bl = strlen(body), sent = 0;
	char head[160];
	int hl = snprintf(head, sizeof head,
			  "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
			  "Connection: close\r\n\r\n",
			  status, status == 200 ? "OK" : status == 400 ? "Bad Request" : "Forbidden", bl);
	struct iovec iov[2] = { { head, (size_t)hl }, { (void *)body, bl } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;

	c->status = status;
	if (!c->req.why)
		c->req.why = why;
	/* a fresh connection's socket takes this much at once (the body is
	 * bounded: tools.c); what it does not take is cut, and says so */
	n = sendmsg(c->cfd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n > 0)
		sent = (size_t)n;
	c->bytes_out += sent;
	if (sent < (size_t)hl + bl)
		log_warn("bridge: route=%s: the client took %zu of the %zu bytes of ward's answer", c->route->name, sent,
			 (size_t)hl + bl);
	linger(l, c);
}

/* The answer is all with the client's socket: its audit line, once, and
 * the upstream is done with. */
static void answered(struct conn *c)
{
	if (!c->audited) {
		audit(c);
		c->audited = 1;
	}
	conn_close_upstream(c);
}

/* The answer is complete (relayed or refused): its audit line now, then a
 * lingering close. Closing a socket with unread input makes the kernel
 * reset the connection and drop what it has not sent yet, so the rest of
 * the answer could be lost when the client has sent more than was taken
 * (a body the upstream did not read, pipelined requests): it is told the
 * end (FIN), and what it still sends is read and dropped until it closes,
 * for DRAIN_MS and DRAIN_MAX bytes at most. */
static void linger(struct loop *l, struct conn *c)
{
	/* a proxy's plain request is answered: no tunnel while it lingers */
	if (c->tun)
		tunnel_close(l, c);
	answered(c);
	if (c->client_eof || shutdown(c->cfd, SHUT_WR) != 0) {
		close_conn(l, c);
		return;
	}
	/* the relay buffers are done with (after the FIN: not in its way) */
	conn_close_rpipe(c);
	drop_bulk(l, c);
	free(c->c2u);
	free(c->u2c);
	c->c2u = c->u2c = NULL;
	c->c2u_len = c->c2u_off = c->u2c_len = c->u2c_off = 0;
	c->state = C_DRAIN;
	c->deadline = now_ms() + DRAIN_MS;
	c->drained = 0;
	conn_rearm(l, c);
}

/* Bytes given to the client's socket that it has not sent yet (its
 * window is full); 0 if unknown. */
unsigned unsent(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof ti;

	memset(&ti, 0, sizeof ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < offsetof(struct tcp_info, tcpi_notsent_bytes) + sizeof ti.tcpi_notsent_bytes)
		return 0;
	return ti.tcpi_notsent_bytes;
}

/* Ends a cut answer with a reset, so that a client whose body only the
 * close ends cannot take it for whole. What was relayed is sent first
 * (a reset drops what the socket still holds): waited for in C_ABORT,
 * DRAIN_MS at most. */
void abort_now(struct loop *l, struct conn *c)
{
	static const struct linger now = { 1, 0 };

	(void)setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &now, sizeof now);
	close_conn(l, c);
}

void abort_client(struct loop *l, struct conn *c)
{
	answered(c);
	if (c->state != C_ABORT && unsent(c->cfd) > 0) {
		c->state = C_ABORT;
		c->deadline = now_ms() + DRAIN_MS;
		l->n_aborting++; /* the loop looks again every ABORT_POLL_MS */
		conn_rearm(l, c);
		return;
	}
	abort_now(l, c);
}

/* All of the answer is with the client's socket. A client told it may
 * keep its connection keeps it only if the answer ended where its framing
 * says and the client has not closed its side. */
void finish(struct loop *l, struct conn *c)
{
	if (c->cut)
		abort_client(l, c);
	else if (c->client_keep && c->rend.done && !c->client_fin && !c->client_eof)
		next_request(l, c);
	else
		linger(l, c);
}

/* Everything of the request that ended goes (its upstream, kept or
 * closed, its buffers, its pipe); what stays is the client's socket, its
 * route, its head buffer and its place in the loop. The next request gets
 * the same checks as a first one, and its own audit line. */
void next_request(struct loop *l, struct conn *c)
{
	struct conn was;

	answered(c);
	conn_free_tls(c);
	conn_close_rpipe(c);
	/* the relay buffers stay for the next request (no new mapping and
	 * its page faults per request), but not a bulk one */
	if (c->u2c_room == BULK_BUF) {
		free(c->u2c);
		c->u2c = NULL;
	}
	drop_bulk(l, c);
	free(c->held);
	toolslist_free(c->tl);
	free(c->tool_args);
	http_req_free_body(&c->req);
	was = *c;
	memset(c, 0, sizeof *c);
	c->c2u = was.c2u;
	c->u2c = was.u2c;
	c->cfd = was.cfd;
	c->route = was.route;
	c->name_i = was.name_i;
	c->next = was.next;
	c->events[0] = was.events[0];
	c->head = was.head;
	c->served = was.served + 1;
	c->ufd = c->rpipe_r = c->rpipe_w = -1;
	c->started = now_ms();
	/* a second past what the answer said: a client that keeps to it
	 * has let the connection go before ward closes it */
	c->deadline = c->started + (uint64_t)(BRIDGE_CLIENT_IDLE_S + 1) * 1000;
	http_req_init(&c->req, &c->route->http);
	c->state = C_HEAD;
	conn_rearm(l, c);
}

void close_idle(struct loop *l, struct conn *c)
{
	c->audited = 1; /* no request: nothing to log */
	close_conn(l, c);
}

void drain(struct loop *l, struct conn *c)
{
	char buf[16384];
	ssize_t n = recv(c->cfd, buf, sizeof buf, 0);

	if (n > 0) {
		c->drained += (uint64_t)n;
		if (c->drained < DRAIN_MAX)
			return;
	} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		return;
	}
	close_conn(l, c);
}

/* At the connection limit: connections whose client has closed its side
 * (a FIN after the whole request) go before a new client is refused. Most
 * are gone for good, noticed only when the next bytes for them (an SSE
 * event) would be refused; a client that half-closed and still reads loses
 * its answer, only when the limit is reached. */
void evict_closed(struct loop *l)
{
	struct conn *c = l->conns, *next;
	int n = 0;

	for (; c; c = next) {
		next = c->next;
		if (c->state == C_RELAY && c->client_fin) {
			c->req.why = "closed at the connection limit: its client had closed its side";
			close_conn(l, c);
			n++;
		} else if (c->state == C_HEAD && c->served && !c->head_len) {
			close_idle(l, c); /* kept for a next request that has not come */
			n++;
		}
	}
	if (n)
		log_warn("bridge: at the limit of %d connections: closed %d whose client had closed its side or "
			 "sent no next request", l->max_conns, n);
}

/* A client refused before it has a connection: 503, then no lingering
 * (there is no room for it), but what it has sent already is read out, so
 * the close ends with a FIN, not a reset that could destroy the answer
 * before it is read. */
void turn_away(const struct bridge_route *r, int fd, int open, const char *why)
{
	char out[512];
	int n = http_refusal(503, why, 0, out, sizeof out);

	log_warn("bridge: route=%s refused a connection (%s): %d open", r->name, why, open);
	if (n > 0)
		(void)send(fd, out, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)shutdown(fd, SHUT_WR);
	for (n = 0; n < 16; n++)
		if (recv(fd, out, sizeof out, MSG_DONTWAIT) <= 0)
			break;
	close(fd);
}
