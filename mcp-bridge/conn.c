#define _GNU_SOURCE
#include "mcp-bridge/conn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"

/* Upstream I/O, plain or TLS: > 0 bytes, 0 end, -1 would block, -2 error,
 * -3 (TLS) the stream ended without close_notify. */
ssize_t conn_send(struct conn *c, const char *buf, size_t len)
{
	ssize_t n;

	if (c->tls)
		return tls_write(c->tls, buf, len);
	n = send(c->ufd, buf, len, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? -1 : -2;
	return n;
}

ssize_t conn_recv(struct conn *c, char *buf, size_t len)
{
	ssize_t n;

	if (c->tls)
		return tls_read(c->tls, buf, len);
	n = recv(c->ufd, buf, len, 0);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? -1 : -2;
	return n;
}

int conn_flush(struct conn *c)
{
	while (c->c2u_off < c->c2u_len) {
		ssize_t n = conn_send(c, c->c2u + c->c2u_off, c->c2u_len - c->c2u_off);
		if (n == -1)
			return 0;
		if (n < 0)
			return -1;
		c->c2u_off += (size_t)n;
		c->stalled_since = 0;
	}
	c->c2u_off = c->c2u_len = 0;
	while (c->in_rpipe) {
		ssize_t n = splice(c->rpipe_r, NULL, c->ufd, NULL, c->in_rpipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		c->in_rpipe -= (size_t)n;
		c->stalled_since = 0;
	}
	return 0;
}

/* epoll data: a pointer tagged with which side of a connection woke. */
static void *tag(struct conn *c, int upstream)
{
	/* a tagged pointer by design: conn structs are at least 8-aligned */
	return (void *)((uintptr_t)c | (uintptr_t)upstream); // NOLINT(performance-no-int-to-ptr)
}

void conn_watch(struct loop *l, struct conn *c, int upstream, int op, unsigned events)
{
	struct epoll_event ev = { .events = events, .data.ptr = tag(c, upstream) };
	int fd = upstream ? c->ufd : c->cfd;

	if (upstream) {
		/* Nothing wanted of the upstream (the client has not taken
		 * what we hold): out of the set, since epoll reports a hangup
		 * whatever it is asked, and an upstream that has closed would
		 * wake the loop for nothing until the client reads. */
		if (op == EPOLL_CTL_MOD && !events) {
			if (c->up_polled && epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL) == 0)
				c->up_polled = 0;
			return;
		}
		if (!c->up_polled)
			op = EPOLL_CTL_ADD;
	}
	if (op == EPOLL_CTL_MOD && c->events[upstream] == events)
		return; /* as it is: no system call */
	if (epoll_ctl(l->epfd, op, fd, &ev) != 0)
		return;
	c->events[upstream] = events;
	if (upstream)
		c->up_polled = 1;
}

/* The upstream socket is done with (closing it takes it out of the set). */
void conn_close_upstream(struct conn *c)
{
	if (c->ufd >= 0) {
		close(c->ufd);
		c->ufd = -1;
	}
	c->up_polled = 0;
}

void conn_free_tls(struct conn *c)
{
	if (c->tls) {
		tls_conn_free(c->tls);
		free(c->tls);
		c->tls = NULL;
	}
}

/* A stream (stream.c): each direction's buffer is read into while it has
 * room and written out while it holds bytes. */
static void stream_events(const struct conn *c, unsigned *client, unsigned *upstream)
{
	unsigned ce = 0, ue = 0;

	if (!c->client_eof && c->c2u_len < RESP_BUF)
		ce |= EPOLLIN;
	if (c->u2c_len > c->u2c_off)
		ce |= EPOLLOUT;
	if (c->c2u_len > c->c2u_off)
		ue |= c->tls && c->tls->want_wr ? c->tls->want_wr : EPOLLOUT;
	if (!c->up_eof && c->u2c_len < RESP_BUF)
		ue |= c->tls && c->tls->want_rd ? c->tls->want_rd : EPOLLIN;
	*client = ce;
	*upstream = ue;
}

/* What each side should be polled for now (backpressure: read only when
 * there is room to keep what is read). */
void conn_rearm(struct loop *l, struct conn *c)
{
	unsigned ce = 0, ue = 0;

	if (c->state == C_HEAD || c->state == C_BODY || c->state == C_DRAIN ||
	    (c->state == C_HELLO && c->c2u_len < RESP_BUF))
		ce = EPOLLIN;
	if (c->state == C_RELAY) {
		/* a pipe is read into only when empty: a "full" pipe (its
		 * slots taken by partial pages) would otherwise spin */
		if (!c->req_done && !c->client_eof && (c->rpipe_r >= 0 ? !c->in_rpipe : c->c2u_len < REQ_BUF))
			ce |= EPOLLIN;
		/* once the request is in: told when the client closes its side */
		if (c->req_done && !c->client_fin)
			ce |= EPOLLRDHUP;
		/* what is held goes out once the head is whole and rewritten
		 * (a head that came in pieces is not passed on as it came) */
		if (c->resp_head_done && c->u2c_len > c->u2c_off)
			ce |= EPOLLOUT;
		/* TLS: a write or a read that blocked waits for what it said */
		if (c->c2u_len > c->c2u_off || c->in_rpipe)
			ue |= c->tls && c->tls->want_wr ? c->tls->want_wr : EPOLLOUT;
		if (!c->up_eof && c->u2c_len < c->u2c_room)
			ue |= c->tls && c->tls->want_rd ? c->tls->want_rd : EPOLLIN;
	}
	if (c->state == C_STREAM) {
		stream_events(c, &ce, &ue);
		/* A client that ended its side and was told the end hangs up,
		 * which epoll reports whatever it is asked: out of the set
		 * while what it sent still goes to the upstream. */
		if (c->client_eof && c->shut_client && !c->client_unpolled &&
		    epoll_ctl(l->epfd, EPOLL_CTL_DEL, c->cfd, NULL) == 0)
			c->client_unpolled = 1;
		if (c->client_unpolled)
			ce = c->events[0];
	}
	/* held for the person's answer: told when the client goes (ask.h) */
	if (c->state == C_ASK)
		ce = EPOLLRDHUP;
	if (c->state == C_CONNECTING)
		ue = EPOLLOUT;
	if (c->state == C_HANDSHAKE)
		ue = c->tls->want_hs ? c->tls->want_hs : EPOLLOUT;
	conn_watch(l, c, 0, EPOLL_CTL_MOD, ce);
	if (c->ufd >= 0)
		conn_watch(l, c, 1, EPOLL_CTL_MOD, ue);
}

const char *conn_target_text(const struct conn *c, char *target)
{
	size_t i, n = c->req.target.p ? (c->req.target.n > CONN_TARGET_TEXT - 1 ? CONN_TARGET_TEXT - 1 : c->req.target.n) : 0;

	/* A refused target may hold anything (a refusal can come before its
	 * bytes are checked): a blank, control or non-ASCII byte is written
	 * as '?', so it can neither add fields to the line nor break it. */
	for (i = 0; i < n; i++) {
		unsigned char b = (unsigned char)c->req.target.p[i];
		target[i] = '?';
		if (b > ' ' && b < 0x7f)
			target[i] = c->req.target.p[i];
	}
	target[n] = '\0';
	return n ? target : "-";
}

static void conn_audit_http(const struct conn *c)
{
	char rpc[96], target[CONN_TARGET_TEXT];
	const char *m = c->req.headers_done ? http_method_str(c->req.parser.method) : "-";
	const char *method = c->req.done ? http_req_rpc_method(&c->req, rpc, sizeof rpc) : NULL;
	const char *t = conn_target_text(c, target);

	char tool[TOOLS_NAME_MAX + 6 * TOOLS_ARGS_SHOWN + 100] = "";
	const char *kind = c->tool_kind ? c->tool_kind : "tool";

	/* a judged route's tool call, resource read or prompt (tools.h):
	 * which, its id, and whether the bridge refused it */
	if (c->tool[0])
		snprintf(tool, sizeof tool, " %s=%s%s%s %s_verdict=%s%s%s", kind, c->tool,
			 c->rpc_id[0] ? " id=" : "", c->rpc_id, kind, c->tool_refused ? "refused" : "allowed",
			 c->tool_args ? " args=" : "", c->tool_args ? c->tool_args : "");
	else if (c->lists_tools || c->tools_hidden)
		snprintf(tool, sizeof tool, " tools_hidden=%d", c->tools_hidden);
	log_info("bridge: route=%s method=%s target=%s status=%d in=%llu out=%llu ms=%llu%s%s%s%s%s",
		 c->route->name, m, t, c->status, (unsigned long long)c->bytes_in,
		 (unsigned long long)c->bytes_out, (unsigned long long)(now_ms() - c->started),
		 method ? " rpc=" : "", method ? method : "", tool, c->req.why ? " reason=" : "",
		 c->req.why ? c->req.why : "");
	if (c->kept_reads)
		log_debug("bridge: route=%s target=%s: %u read(s) of plaintext mbedTLS had kept back%s", c->route->name,
			  t, c->kept_reads, c->kept_last ? ", the last bytes read among them" : "");
}

static void stream_audit(const struct conn *c)
{
	log_info("bridge: route=%s stream in=%llu out=%llu ms=%llu%s%s", c->route->name,
		 (unsigned long long)c->bytes_in, (unsigned long long)c->bytes_out,
		 (unsigned long long)(now_ms() - c->started), c->req.why ? " reason=" : "",
		 c->req.why ? c->req.why : "");
}

void conn_audit(const struct conn *c)
{
	if (c->route->stream)
		stream_audit(c);
	else
		conn_audit_http(c);
}

void conn_close_rpipe(struct conn *c)
{
	if (c->rpipe_r >= 0) {
		close(c->rpipe_r);
		close(c->rpipe_w);
	}
	c->rpipe_r = c->rpipe_w = -1;
	c->in_rpipe = 0;
}
