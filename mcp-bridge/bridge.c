#define _GNU_SOURCE
#include "mcp-bridge/bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/clock.h"
#include "mcp-bridge/ask.h"
#include "mcp-bridge/conn.h"
#include "mcp-bridge/dial.h"
#include "mcp-bridge/ending.h"
#include "mcp-bridge/pool.h"
#include "mcp-bridge/refresh.h"
#include "mcp-bridge/stream.h"
#include "mcp-bridge/tls.h"
#include "mcp-bridge/toolslist.h"
#include "mcp-bridge/tunnel.h"

/* Listeners in (EPOLLIN) or out (0) of what the loop waits for. */
static void poll_listeners(struct loop *l, unsigned events)
{
	int i;

	for (i = 0; i < l->routes->n; i++) {
		struct epoll_event ev = { .events = events, .data.u64 = (uint64_t)(i + 1) << 1 };
		(void)epoll_ctl(l->epfd, EPOLL_CTL_MOD, l->routes->v[i].lfd, &ev);
	}
}

/* An accept error that stops every client (no descriptor, no memory), not
 * only the one it was about. */
static int shortage(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

static void connect_upstream(struct loop *l, struct conn *c);
static struct conn *conn_add(struct loop *l, const struct bridge_route *r, int fd);

static void accept_one(struct loop *l, const struct bridge_route *r)
{
	int fd = accept4(r->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), err = errno;
	struct conn *c;

	if (fd < 0) {
		uint64_t now;

		/* only a shortage stops every client; anything else (the
		 * client left, a network error Linux passes on) is this one's */
		if (!shortage(err))
			return;
		/* Out of descriptors: the client would stay queued and its
		 * listener wake the loop for nothing. The spare descriptor
		 * makes room to answer it 503 (taken again first if an
		 * earlier attempt could not). */
		if (err == EMFILE || err == ENFILE) {
			if (l->spare < 0)
				l->spare = fcntl(l->epfd, F_DUPFD_CLOEXEC, 0);
			if (l->spare >= 0) {
				close(l->spare);
				fd = accept4(r->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (fd >= 0)
					turn_away(r, fd, l->n_conns, "out of file descriptors");
				else
					err = errno;
				l->spare = fcntl(l->epfd, F_DUPFD_CLOEXEC, 0);
				if (fd >= 0 || !shortage(err))
					return;
			}
		}
		/* No client can be taken now (no descriptor, no memory): the
		 * listeners rest ACCEPT_PAUSE_MS, since a queued client keeps
		 * them ready and the loop would spin on them. */
		now = now_ms();
		if (!l->pause_logged || now - l->pause_logged >= 10000) {
			log_warn("bridge: cannot accept a connection: %s (new clients wait, %d open)", strerror(err),
				 l->n_conns);
			l->pause_logged = now;
		}
		poll_listeners(l, 0);
		l->paused_until = now + ACCEPT_PAUSE_MS;
		return;
	}
	if (l->n_conns >= l->max_conns)
		evict_closed(l);
	if (l->n_conns >= l->max_conns) {
		turn_away(r, fd, l->n_conns, "too many connections");
		return;
	}
	/* No Nagle toward the client either: an answer relayed as it comes
	 * (a head, then each chunk or event) is several small writes, and
	 * each would wait for the client's ACK of the one before */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	c = conn_add(l, r, fd);
	if (!c)
		return;
	if (r->stream) {
		/* no head to wait for: the upstream at once, the client's
		 * bytes left in its socket until it is ready (only a hangup
		 * is heard of it meanwhile) */
		conn_watch(l, c, 0, EPOLL_CTL_ADD, 0);
		connect_upstream(l, c);
		return;
	}
	conn_watch(l, c, 0, EPOLL_CTL_ADD, EPOLLIN);
}

/* A connection of route r on the client socket fd, in the loop's list;
 * NULL (fd closed) without memory. */
static struct conn *conn_add(struct loop *l, const struct bridge_route *r, int fd)
{
	struct conn *c = calloc(1, sizeof *c);

	if (c) {
		c->route = r;
		if (r->stream ? stream_alloc(c) != 0 : !(c->head = malloc(HTTP_MAX_HEAD))) {
			free(c->c2u);
			free(c->u2c);
			free(c->head);
			free(c);
			c = NULL;
		}
	}
	if (!c) {
		close(fd);
		return NULL;
	}
	c->cfd = fd;
	c->ufd = -1;
	c->rpipe_r = c->rpipe_w = -1;
	c->route = r;
	c->name_i = (int)(r - l->routes->v);
	c->started = now_ms();
	c->deadline = c->started + BRIDGE_HEAD_TIMEOUT_MS;
	http_req_init(&c->req, &r->http);
	c->next = l->conns;
	l->conns = c;
	l->n_conns++;
	return c;
}

/* The resolver's descriptor in the epoll set: tagged after the listeners
 * (route index + 1, shifted), below any heap pointer. */
#define RESOLVER_TAG(r) ((uint64_t)((r)->n + 1) << 1)

/* Connects to the route's upstream, or waits to try again while a unix
 * upstream's backlog is full (its connect answers EAGAIN at once, where
 * TCP would queue). */
/* A socket to a named upstream's address, connecting; or the wait for a
 * lookup; or 502 (dial.h). */
static void dialed(struct loop *l, struct conn *c, int fd)
{
	if (fd == DIAL_WAIT) {
		if (c->state != C_RESOLVING) {
			c->state = C_RESOLVING;
			c->deadline = now_ms() + RESOLVE_WAIT_MS;
			conn_rearm(l, c);
		}
		return;
	}
	if (fd < 0) {
		log_warn("bridge: route=%s upstream %s: %s", c->route->name, dial_desc(c), c->why);
		refuse(l, c, 502, c->why);
		return;
	}
	c->ufd = fd;
	c->up_born = now_ms();
	c->state = C_CONNECTING;
	/* one address of several does not hold the request for long */
	c->deadline = now_ms() + (dial_more(l, c) ? NAME_TRY_MS : CONNECT_MS);
	conn_watch(l, c, 1, EPOLL_CTL_ADD, EPOLLOUT);
	conn_rearm(l, c);
}

/* A named upstream's connect failed: its next address, if it has one. */
static void connect_failed(struct loop *l, struct conn *c, const char *why)
{
	conn_close_upstream(c);
	dialed(l, c, dial_next(l, c, why));
}

/* The lookup of a route's name ended: the connections waiting for it go on. */
static void name_answered(struct loop *l, int route)
{
	struct conn *c = l->conns, *next;

	for (; c; c = next) {
		next = c->next; /* c may be closed (and moved to l->dead) */
		if (c->state == C_RESOLVING && c->name_i == route)
			dialed(l, c, dial_answered(l, c));
	}
}

/* Whether the upstream is a name (its addresses tried in turn: dial.h). */
static int by_name(const struct conn *c)
{
	return dial_name(c)[0] != '\0';
}

/* A tunnel to an address an address rule names: that address alone. */
static void connect_literal(struct loop *l, struct conn *c)
{
	c->addr = c->tun->lit;
	c->ufd = upstream_connect_addr((const struct sockaddr *)&c->addr.sa, c->addr.len);
	if (c->ufd < 0) {
		snprintf(c->why, sizeof c->why, "cannot connect to %s: %s", c->tun->desc, strerror(errno));
		refuse(l, c, 502, c->why);
		return;
	}
	c->state = C_CONNECTING;
	c->deadline = now_ms() + CONNECT_MS;
	conn_watch(l, c, 1, EPOLL_CTL_ADD, EPOLLOUT);
	conn_rearm(l, c);
}

/* The route's kept connection carries the request: no connect, no
 * handshake (pool.h). A request sent again after one failed takes a new
 * connection. */
static int connect_kept(struct loop *l, struct conn *c)
{
	if (!c->keepable || c->replayed || !pool_take(l, c))
		return 0;
	leave_retry(l, c);
	c->reused = 1;
	c->sent_at = now_ms();
	c->state = C_RELAY;
	/* it was writable when kept: the request goes now, not after a wait */
	if (conn_flush(c) < 0)
		drop_request(c);
	conn_watch(l, c, 1, EPOLL_CTL_ADD, EPOLLIN);
	conn_rearm(l, c);
	return 1;
}

static void connect_upstream(struct loop *l, struct conn *c)
{
	if (c->tun && c->tun->literal) {
		connect_literal(l, c);
		return;
	}
	if (connect_kept(l, c))
		return;
	if (by_name(c)) {
		dialed(l, c, dial_start(l, c));
		return;
	}
	c->ufd = upstream_connect(&c->route->up);
	if (c->ufd < 0 && errno == EAGAIN && c->retries < RETRY_MAX) {
		if (c->state != C_RETRY)
			l->n_retrying++;
		c->state = C_RETRY;
		c->retries++;
		c->deadline = now_ms() + RETRY_MS;
		conn_rearm(l, c);
		return;
	}
	leave_retry(l, c);
	if (c->ufd < 0) {
		int busy = errno == EAGAIN;
		log_warn("bridge: route=%s upstream %s: %s", c->route->name, c->route->up.desc,
			 busy ? "busy (its backlog stayed full for 2 s)" : strerror(errno));
		refuse(l, c, 502, busy ? "upstream busy" : "upstream unreachable");
		return;
	}
	c->up_born = now_ms();
	c->state = C_CONNECTING;
	c->deadline = now_ms() + CONNECT_MS;
	conn_watch(l, c, 1, EPOLL_CTL_ADD, EPOLLOUT);
	conn_rearm(l, c);
}

/* A credential's refresh socket in the epoll set: tagged after the
 * resolver, by its route's index. */
#define CRED_TAG(r, i) ((uint64_t)((r)->n + 2 + (i)) << 1)
/* the approver's socket ([proxy] ask), after the credentials' */
#define ASK_TAG(r) CRED_TAG(r, (r)->n)

static void head_send(struct loop *l, struct conn *c);

/* The refresh of route ri's credential ended: the requests that waited
 * for it go on with the new token, or get 502 saying what failed. */
static void resume_waiters(struct loop *l, int ri)
{
	const struct bridge_route *r = &l->routes->v[ri];
	struct conn *c = l->conns, *next;

	for (; c; c = next) {
		next = c->next; /* c may be closed (and moved to l->dead) */
		if (c->state != C_CRED || c->route != r)
			continue;
		if (r->cred->failed[0]) {
			snprintf(c->why, sizeof c->why, "the route's login could not be refreshed: %s", r->cred->failed);
			refuse(l, c, 502, c->why);
			continue;
		}
		c->state = C_HEAD;
		c->cred_gen = r->cred->gen;
		head_send(l, c);
	}
}

/* What the refresh of route ri's credential asked for: its token route's
 * connection served, or its waiters resumed. */
static void cred_step(struct loop *l, int ri, enum refresh_step step, int peer)
{
	const struct bridge_route *r = &l->routes->v[ri];
	struct cred_route *cr = r->cred;

	if (step == REFRESH_ASK) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = CRED_TAG(l->routes, ri) };
		struct conn *t = NULL;

		if (l->n_conns >= l->max_conns)
			evict_closed(l);
		if (l->n_conns < l->max_conns)
			t = conn_add(l, &l->routes->v[cr->token_route], peer);
		else
			close(peer);
		log_debug("bridge: route=%s: its login's refresh: asking the token endpoint", r->name);
		if (!t)
			step = refresh_abandon(cr, "no connection to be had for the refresh");
		else if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, cr->sock, &ev) != 0)
			step = refresh_abandon(cr, "cannot wait for the token endpoint");
		else
			conn_watch(l, t, 0, EPOLL_CTL_ADD, EPOLLIN);
	}
	if (step == REFRESH_DONE)
		resume_waiters(l, ri);
}

/* The request waits for its route's credential; the first to wait starts
 * the refresh. Its client is polled for nothing but a hangup meanwhile. */
static void wait_for_cred(struct loop *l, struct conn *c)
{
	struct cred_route *cr = c->route->cred;
	int peer = -1;

	enum refresh_step step;

	c->state = C_CRED;
	conn_rearm(l, c);
	if (cr->state != R_IDLE)
		return;
	step = refresh_start(cr, now_ms(), &peer); /* before peer is read */
	cred_step(l, (int)(c->route - l->routes->v), step, peer);
}

/* A checked request on its way: its head rewritten (with its route's
 * login, once the token is there: a request waits for it here), then the
 * upstream. */
static void head_send(struct loop *l, struct conn *c)
{
	size_t n = c->head_used;
	const char *extra = NULL; /* a credential's Authorization */
	ssize_t h;

	if (c->route->cred) {
		struct cred_route *cr = c->route->cred;
		/* a waiter resumed takes the token its refresh brought, fresh or not */
		int k = c->cred_gen && c->cred_gen == cr->gen && cr->state == R_IDLE && !cr->failed[0]
				? (extra = cr->line, 1)
				: refresh_line(cr, now_ms(), &extra, &c->cred_gen);
		if (k < 0) {
			snprintf(c->why, sizeof c->why, "the route's login could not be refreshed: %s", cr->failed);
			refuse(l, c, 502, c->why);
			return;
		}
		if (k == 0) {
			wait_for_cred(l, c);
			return;
		}
	}
	/* an answer rewritten (a tools/list filtered) leaves its upstream
	 * connection for no one */
	c->keepable = !c->list_filter && pool_eligible(c);
	h = http_req_upstream_head(&c->req, extra, c->route->drop, c->keepable, c->c2u, REQ_BUF);
	if (h < 0 || (size_t)h + n - c->req.head_len > REQ_BUF) {
		refuse(l, c, 431, "request head too large after rewriting");
		return;
	}
	c->c2u_len = (size_t)h;
	/* body bytes that came with the head; anything after the request is dropped */
	memcpy(c->c2u + c->c2u_len, c->head + c->req.head_len, n - c->req.head_len);
	c->c2u_len += n - c->req.head_len;
	/* a judged request's body, read whole before it was judged */
	if (c->held_len) {
		if ((size_t)h + n - c->req.head_len + c->held_len > REQ_BUF) {
			refuse(l, c, 413, "request too large to judge after rewriting its head");
			return;
		}
		memcpy(c->c2u + c->c2u_len, c->held, c->held_len);
		c->c2u_len += c->held_len;
		n += c->held_len;
	}
	free(c->held);
	c->held = NULL;
	c->held_len = 0;
	c->bytes_in = (uint64_t)n;
	c->req_done = c->req.done;
	/* all of a request that came with its head stays in c2u as sent (no
	 * more is read into it): it can be sent again (replay) */
	c->whole = c->req_done ? c->c2u_len : 0;
	resp_end_init(&c->rend, c->req.parser.method == HTTP_HEAD);
	connect_upstream(l, c);
}

/* the server's own stream carries what it chooses, tool lists too,
 * outside any answer the bridge filters: not relayed on a judged route (a
 * client takes 405 as "no stream here", the spec's answer) */
static const char GET_JUDGED[] = "this route judges each tool call ([route] tools): the server's own stream (GET) "
				 "is not relayed, since what it sends could not be judged";

/* A judged request the head already refuses, for a client that waits for
 * a 100 before its body (Expect: 100-continue): told now, not after a
 * body sent for nothing. Its reason and *status, or NULL. */
static const char *refused_by_head(const struct conn *c, int *status)
{
	const char *bad;
	uint64_t len = c->req.parser.content_length;

	if (c->req.parser.method == HTTP_GET)
		return *status = 405, GET_JUDGED;
	if ((bad = http_req_json_only(&c->req)))
		return *status = 415, bad;
	if (len != ULLONG_MAX && len > JUDGED_BODY_MAX)
		return *status = 413, "request body too large for route's tool rules to judge (239 KiB at most): not sent";
	return NULL;
}

/* A judged route's request, whole: each tool it calls judged (tools.h).
 * Passed, it is sent on; refused, the bridge answers it (JSON-RPC errors
 * with the request's ids) and nothing reaches the server. */
static void judge(struct loop *l, struct conn *c)
{
	struct tools_result r;

	const char *bad;

	if (c->req.whole_over) {
		http_req_free_body(&c->req);
		refuse(l, c, 413, "request body too large for route's tool rules to judge (239 KiB at most): not sent");
		return;
	}
	if (c->req.parser.method == HTTP_GET) {
		http_req_free_body(&c->req);
		refuse(l, c, 405, GET_JUDGED);
		return;
	}
	if (!c->req.body_bytes) { /* DELETE: no call in it */
		head_send(l, c);
		return;
	}
	if ((bad = http_req_json_only(&c->req))) {
		http_req_free_body(&c->req);
		refuse(l, c, 415, bad);
		return;
	}
	if (tools_judge(c->route->tools, c->route->name, c->req.whole ? c->req.whole : "", c->req.whole_len,
			l->pin_seen ? l->pin_seen[c->route - l->routes->v] : NULL, &r) != 0) {
		http_req_free_body(&c->req);
		refuse(l, c, 503, "out of memory");
		return;
	}
	http_req_free_body(&c->req);
	snprintf(c->tool, sizeof c->tool, "%s", r.tool);
	c->tool_kind = r.kind ? r.kind : "tool";
	snprintf(c->rpc_id, sizeof c->rpc_id, "%s", r.id);
	/* every answer to a request with a body is filtered: a server may
	 * answer tools/list in another request's answer (by its id) */
	c->list_filter = 1;
	if (!(c->tl = toolslist_new(r.want, r.n_want, 0))) {
		tools_result_free(&r);
		refuse(l, c, 503, "out of memory");
		return;
	}
	c->lists_tools = r.lists;
	c->tool_args = r.args; /* the connection's now */
	r.args = NULL;
	if (r.verdict == TOOLS_PASS) {
		tools_result_free(&r);
		head_send(l, c);
		return;
	}
	c->tool_refused = 1;
	snprintf(c->why, sizeof c->why, "%s", r.why);
	answer_json(l, c, r.status, r.body, c->why);
	tools_result_free(&r);
}

/* C_BODY: a judged request's body, read as it comes (into held, as sent;
 * decoded by the parser into the request's whole body) until it ends. */
static void body_read(struct loop *l, struct conn *c)
{
	ssize_t n, used;

	if (c->held_len == JUDGED_BODY_MAX) {
		refuse(l, c, 413, "request body too large for route's tool rules to judge (239 KiB at most): not sent");
		return;
	}
	n = recv(c->cfd, c->held + c->held_len, JUDGED_BODY_MAX - c->held_len, 0);
	if (n == 0) {
		c->client_eof = 1;
		c->req.why = "client closed in the middle of the body";
		close_conn(l, c);
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			close_conn(l, c);
		return;
	}
	used = http_req_feed(&c->req, c->held + c->held_len, (size_t)n);
	if (used < 0) {
		refuse(l, c, c->req.status ? c->req.status : 400, c->req.why ? c->req.why : "bad request body");
		return;
	}
	c->extra_in |= used < n; /* bytes past the request: dropped, the connection not kept */
	c->held_len += (size_t)used;
	if (c->req.done) {
		c->state = C_HEAD; /* as a request whose body came with its head */
		judge(l, c);
	}
}

/* A request's head checked as its route's (a plain proxy request's too,
 * on its own route), then sent on. */
static void client_gone(struct loop *l, struct conn *c);

/* "100 Continue" to the client, whole: a new connection's socket has the
 * room. 0, or -1 (the client is gone). */
static int continue_now(struct conn *c)
{
	static const char line[] = "HTTP/1.1 100 Continue\r\n\r\n";
	size_t off = 0;

	while (off < sizeof line - 1) {
		ssize_t n = send(c->cfd, line + off, sizeof line - 1 - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

static void head_checked(struct loop *l, struct conn *c)
{
	ssize_t n;

	/* a judged route keeps each body whole to judge it (tools.h) */
	if (c->route->tools)
		http_req_keep_body(&c->req, JUDGED_BODY_MAX);
	n = http_req_feed(&c->req, c->head, c->head_len);

	if (n < 0 || (size_t)n < c->req.head_len) {
		refuse(l, c, n < 0 ? c->req.status : 400, n < 0 && c->req.why ? c->req.why : "bad request");
		return;
	}
	c->head_used = (size_t)n;
	/* bytes past the request (pipelined): dropped, and the connection
	 * is not kept, since they were */
	c->extra_in = c->head_len > c->head_used;
	/* a kept connection's next request has its buffers still */
	if (!c->c2u)
		c->c2u = malloc(REQ_BUF);
	if (!c->u2c)
		c->u2c = malloc(RESP_CAP);
	c->u2c_room = RESP_BUF;
	if (!c->c2u || !c->u2c) {
		refuse(l, c, 503, "out of memory");
		return;
	}
	/* Expect: 100-continue (a hop-by-hop field, not sent on): the
	 * client waits for a 100 before its body, which the bridge reads
	 * itself (whole, on a judged route), so the bridge gives it the 100;
	 * else it would wait its own timeout first (a second, for curl). Not
	 * to HTTP/1.0 (whose expectations are ignored), and a refusal the
	 * head already shows comes in its place. */
	if (c->req.expect_continue && !c->req.done && c->req.parser.http_minor >= 1) {
		int st;
		const char *why = c->route->tools ? refused_by_head(c, &st) : NULL;
		if (why) {
			http_req_free_body(&c->req);
			refuse(l, c, st, why);
			return;
		}
		if (continue_now(c) != 0) {
			client_gone(l, c);
			return;
		}
	}
	if (!c->route->tools) {
		head_send(l, c);
		return;
	}
	if (c->req.done) {
		judge(l, c);
		return;
	}
	/* the rest of the body first: nothing is sent before it is judged */
	c->held = malloc(JUDGED_BODY_MAX);
	if (!c->held) {
		refuse(l, c, 503, "out of memory");
		return;
	}
	c->state = C_BODY;
	c->deadline = now_ms() + BRIDGE_HEAD_TIMEOUT_MS;
	conn_rearm(l, c);
}

/* A proxy request past its host's checks (tunnel_open's or
 * tunnel_admit's return, r): refused, held for the person's answer,
 * connected (a tunnel), or checked as a route's (a plain request). */
static void proxy_next(struct loop *l, struct conn *c, int r, int status, const char *why)
{
	if (r == TUNNEL_ASKED) {
		/* polled for nothing but a hangup until the answer, which the
		 * question's own time bounds (this deadline is a backstop) */
		c->state = C_ASK;
		c->deadline = now_ms() + ((uint64_t)c->route->proxy->ask_timeout_s + 5) * 1000;
		conn_rearm(l, c);
		return;
	}
	if (r != 0) {
		refuse(l, c, status, why);
		return;
	}
	if (!c->tun->plain)
		connect_upstream(l, c);
	else
		head_checked(l, c);
}

/* The whole head is in: check it (before a request may wait for, or
 * start, its route's refresh), then send it on. */
static void head_complete(struct loop *l, struct conn *c)
{
	if (c->route->proxy) {
		int status = 0, r;
		const char *why = NULL;
		r = tunnel_open(l, c, &status, &why);
		proxy_next(l, c, r, status, why);
		return;
	}
	head_checked(l, c);
}

/* A request held for the person's answer whose client went: closed, and
 * its question withdrawn if no other request waits on it. */
static void ask_left(struct loop *l, struct conn *c)
{
	uint64_t id = c->ask_id;
	const struct conn *o;

	c->req.why = "client went away while the person was asked";
	close_conn(l, c);
	for (o = l->conns; o; o = o->next)
		if (o != c && !o->dead && o->state == C_ASK && o->ask_id == id)
			return;
	asker_cancel(l->ask, id, now_ms());
}

/* Questions to the person that ended: the requests held for each go on
 * (tunnel_admit) or get its 403. */
static void ask_settled(struct loop *l)
{
	struct ask_settled s;
	struct conn *c, *next;

	while (asker_next(l->ask, &s))
		for (c = l->conns; c; c = next) {
			int status = 0, r;
			const char *why = NULL;
			next = c->next; /* c may be closed (and moved to l->dead) */
			if (c->state != C_ASK || c->ask_id != s.id || c->dead)
				continue;
			c->state = C_HEAD;
			if (!s.allowed) {
				snprintf(c->why, sizeof c->why, "%s", s.why);
				refuse(l, c, 403, c->why);
				continue;
			}
			r = tunnel_admit(l, c, &status, &why);
			proxy_next(l, c, r, status, why);
		}
}

/* A body framed by Content-Length, once what the buffer holds is
 * upstream: client -> pipe -> upstream, at most the bytes left, so nothing
 * after the request is ever taken from the client. Returns 0 when the body
 * is not for splicing (small, chunked, TLS, no pipe to be had). */
static int splice_body(struct loop *l, struct conn *c)
{
	uint64_t left = http_req_body_left(&c->req);
	ssize_t n;

	if (c->rpipe_r < 0) {
		int p[2];

		if (c->tls || c->c2u_len || left < SPLICE_MIN || pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0)
			return 0;
		c->rpipe_r = p[0];
		c->rpipe_w = p[1];
		/* refused over the per-user pipe quota: the default size does */
		(void)fcntl(c->rpipe_w, F_SETPIPE_SZ, (int)PIPE_BIG);
	}
	if (!c->in_rpipe && left) {
		n = splice(c->cfd, NULL, c->rpipe_w, NULL, left < PIPE_BIG ? (size_t)left : PIPE_BIG,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n == 0) {
			c->client_eof = 1;
			c->req.why = "client closed in the middle of the body";
			close_conn(l, c); /* upstream gets a truncated request, nothing more */
			return 1;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			close_conn(l, c);
			return 1;
		}
		if (n > 0) {
			c->in_rpipe = (size_t)n;
			http_req_body_skipped(&c->req, (uint64_t)n);
			c->bytes_in += (uint64_t)n;
			c->req_done = c->req.done;
		}
	}
	if (c->state == C_RELAY && conn_flush(c) < 0)
		drop_request(c);
	conn_rearm(l, c);
	return 1;
}

static void on_client_read(struct loop *l, struct conn *c)
{
	ssize_t n;
	size_t from;

	if (c->state == C_BODY) {
		body_read(l, c);
		return;
	}
	if (c->state == C_HEAD) {
		n = recv(c->cfd, c->head + c->head_len, HTTP_MAX_HEAD - c->head_len, 0);
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				if (c->served && !c->head_len) { /* a kept connection, done with */
					close_idle(l, c);
					return;
				}
				c->req.why = "client closed before the head was complete";
				close_conn(l, c);
			}
			return;
		}
		if (c->served && !c->head_len) { /* a kept connection's next request begins */
			c->started = now_ms();
			c->deadline = c->started + BRIDGE_HEAD_TIMEOUT_MS;
		}
		/* only the new bytes (and the 3 before them) are searched: a
		 * head sent a byte at a time is not rescanned from its start */
		from = c->head_len > 3 ? c->head_len - 3 : 0;
		c->head_len += (size_t)n;
		if (http_head_end(c->head + from, c->head_len - from))
			head_complete(l, c);
		else if (c->head_len == HTTP_MAX_HEAD)
			refuse(l, c, 431, "request head larger than 16 KiB");
		return;
	}
	/* relaying the body: only as much as the request frames */
	if (!c->req_done && splice_body(l, c))
		return;
	if (c->req_done || c->c2u_len == REQ_BUF) {
		conn_rearm(l, c);
		return;
	}
	/* straight into the relay buffer; what does not belong to the
	 * request is simply not counted, so never sent */
	n = recv(c->cfd, c->c2u + c->c2u_len, REQ_BUF - c->c2u_len, 0);
	if (n == 0) {
		c->client_eof = 1;
		if (!c->req_done) {
			c->req.why = "client closed in the middle of the body";
			close_conn(l, c); /* upstream gets a truncated request, nothing more */
			return;
		}
	} else if (n > 0) {
		ssize_t used = http_req_feed(&c->req, c->c2u + c->c2u_len, (size_t)n);
		if (used >= 0 && used < n)
			c->extra_in = 1;
		if (used < 0) {
			/* the upstream has the body up to the bad bytes, never
			 * an end; the client is told why unless the upstream's
			 * answer has begun to reach it */
			if (!c->resp_head_done && !c->bytes_out) {
				refuse(l, c, 400, c->req.why);
				return;
			}
			c->status = 400;
			close_conn(l, c);
			return;
		}
		c->c2u_len += (size_t)used;
		c->bytes_in += (uint64_t)used;
		c->req_done = c->req.done;
	} else if (errno != EAGAIN && errno != EINTR) {
		close_conn(l, c);
		return;
	}
	conn_rearm(l, c);
}

static int flush(int fd, char *buf, size_t *off, size_t *len, uint64_t *counter)
{
	while (*off < *len) {
		ssize_t n = send(fd, buf + *off, *len - *off, MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		*off += (size_t)n;
		if (counter)
			*counter += (uint64_t)n;
	}
	*off = *len = 0;
	return 0;
}

/* The client's socket failed while the answer was going out: its audit
 * line must not read as a whole answer. */
static void client_gone(struct loop *l, struct conn *c)
{
	if (!c->req.why)
		c->req.why = "client went away during the response";
	close_conn(l, c);
}

/* A kept connection that its server had closed as the request went out
 * (its own idle limit, a restart): not one byte of an answer came, so the
 * request goes again, once, on a new connection. Only a request c2u still
 * holds whole; a server that closes an idle connection has not read it. */
static int replay(struct loop *l, struct conn *c)
{
	/* at once, or not at all: a server that closes an idle connection
	 * answers the request's first bytes with its FIN or reset within a
	 * round trip; a close after it had the request for a while (a server
	 * that crashed running a tool call) may have done the work, and the
	 * client is told 502 rather than have it done twice */
	if (!c->reused || !c->whole || c->got_bytes || c->bytes_out || now_ms() - c->sent_at > REPLAY_WINDOW_MS)
		return 0;
	log_debug("bridge: route=%s: its kept upstream connection closed under the request: sent again on a new one",
		  c->route->name);
	conn_close_upstream(c);
	conn_free_tls(c);
	c->reused = 0;
	c->replayed = 1;
	c->got_bytes = 0;
	c->up_eof = c->req_cut = 0;
	c->stalled_since = 0;
	c->req.why = NULL; /* drop_request's, when the send failed first */
	c->c2u_off = 0;
	c->c2u_len = c->whole;
	c->req_done = 1;
	c->events[1] = 0;
	resp_end_init(&c->rend, c->req.parser.method == HTTP_HEAD);
	connect_upstream(l, c);
	return 1;
}

/* The answer of a request that asked to keep its connection ended where
 * its framing says (the upstream does not close to say so). What came
 * after it is nobody's; the connection waits for the route's next request
 * if nothing is left over either way and the server keeps it, else it is
 * closed. An answer whose framing is broken is cut. */
static void answer_ended(struct loop *l, struct conn *c, size_t extra)
{
	/* an error may be an answer to a request the upstream did not read
	 * to its end: that connection is not trusted with another */
	int reuse = c->rend.done && c->rend.keep && !extra && c->req_done && !c->req_cut && c->c2u_len == c->c2u_off &&
		    !c->in_rpipe && (!c->tls || (!tls_pending(c->tls) && !c->tls->wr_pending)) && c->keep_s != 1 &&
		    c->status < 400;

	if (!c->rend.done) {
		if (!c->req.why)
			c->req.why = "upstream's answer is not framed as HTTP/1.1 says: cut";
		c->cut = 1;
	}
	c->u2c_len -= extra;
	/* answered before all of the request went: the rest is not sent */
	if (!c->req_done || c->c2u_len > c->c2u_off || c->in_rpipe)
		drop_request(c);
	if (reuse)
		pool_put(l, c);
	else
		conn_close_upstream(c);
	c->up_eof = 1;
}

/* Whether the client may keep its connection for another request, as far
 * as the request tells: one that asked to keep its upstream's (pool.h),
 * whole, with nothing sent past it, from a client that did not ask to
 * close; not the refresh's own (a hidden route's client reads to the end). */
static int client_may_keep(const struct conn *c)
{
	return c->keepable && !c->route->hidden && c->req.done && c->req_done && !c->req_cut && !c->extra_in &&
	       !c->client_fin && http_should_keep_alive(&c->req.parser);
}

/* What the filter gave for the client, after what is held for it: the
 * buffer grows to hold it (an SSE answer's events, or a JSON answer whole;
 * the upstream is read again only once what is held went out). */
static int list_hold(struct conn *c, const struct toolslist_out *o)
{
	if (!o->len)
		return 0;
	if (c->u2c_len + o->len > RESP_CAP) {
		char *g = realloc(c->u2c, c->u2c_len + o->len);
		if (!g)
			return -1;
		c->u2c = g;
	}
	memcpy(c->u2c + c->u2c_len, o->resp, o->len);
	c->u2c_len += o->len;
	return 0;
}

/* The answer to a request with a body on a judged route, as it comes:
 * each read goes through the filter (toolslist.h), and what it gives goes
 * to the client: an SSE answer event by event, a JSON one whole. */
static void list_read(struct loop *l, struct conn *c)
{
	char buf[16384];
	struct toolslist_out o;
	enum toolslist_state st;
	ssize_t n;

	do {
		n = conn_recv(c, buf, sizeof buf);
		if (n == -1) {
			conn_rearm(l, c);
			return;
		}
		if (n > 0)
			c->got_bytes = 1;
		/* a reset, or TLS ended without its close: not the answer's end
		 * (a body only the close frames would pass for whole) */
		if (n < -1) {
			st = TL_FAIL;
			o = (struct toolslist_out){ .why = "the server's connection failed before its answer ended" };
		} else {
			st = toolslist_feed(c->tl, c->route->tools, c->route->name, buf, n > 0 ? (size_t)n : 0, n == 0,
					    l->pin_seen ? l->pin_seen[c->route - l->routes->v] : NULL, &o);
		}
		if (st != TL_FAIL && list_hold(c, &o) != 0)
			st = TL_FAIL, o.why = "out of memory";
		free(o.resp);
		if (st == TL_FAIL) {
			if (!c->resp_head_done) {
				refuse(l, c, 502, o.why);
				return;
			}
			/* its head went: what was judged goes, then a reset, so the
			 * client cannot take the answer for whole */
			c->req.why = o.why;
			c->cut = 1;
			c->up_eof = 1;
			if (flush(c->cfd, c->u2c, &c->u2c_off, &c->u2c_len, &c->bytes_out) < 0) {
				client_gone(l, c);
				return;
			}
			abort_client(l, c);
			return;
		}
		if (o.len) {
			c->status = o.status;
			c->resp_head_done = c->resp_framed = 1;
			c->client_keep = 0; /* the answer says Connection: close */
		}
		c->tools_hidden += o.removed;
		if (o.changed)
			log_warn("bridge: route=%s tool=%s changed since it was pinned (%d tool(s) in this answer): taken "
				 "out of the list, its calls refused", c->route->name, o.changed_name, o.changed);
	} while (st == TL_MORE && c->tls && tls_pending(c->tls) && c->u2c_len < c->u2c_room);
	if (st == TL_DONE) {
		toolslist_free(c->tl);
		c->tl = NULL;
		c->up_eof = 1; /* the upstream is done with */
	}
	if (c->u2c_len && flush(c->cfd, c->u2c, &c->u2c_off, &c->u2c_len, &c->bytes_out) < 0) {
		client_gone(l, c);
		return;
	}
	if (c->up_eof && c->u2c_len == 0) {
		finish(l, c);
		return;
	}
	conn_rearm(l, c);
}

static void on_upstream_read(struct loop *l, struct conn *c)
{
	ssize_t n;
	size_t extra = 0;

	if (c->tls && c->state == C_HANDSHAKE)
		return;
	/* its end is read once: a later event (a reset answering what the
	 * bridge still sent) must not turn a whole answer into a cut one */
	if (c->up_eof) {
		conn_rearm(l, c);
		return;
	}
	if (c->list_filter) {
		list_read(l, c);
		return;
	}
again:
	/* a bulk body: fewer, larger moves. Streams of small events (SSE)
	 * keep the small buffer, and a thousand of them little memory. */
	if (c->u2c_room == RESP_BUF && c->filled && c->bytes_out > BULK_AFTER && l->n_bulk < BULK_MAX) {
		char *big = realloc(c->u2c, BULK_BUF);
		if (big) {
			c->u2c = big;
			c->u2c_room = BULK_BUF;
			l->n_bulk++;
		}
	}
	if (c->u2c_len >= c->u2c_room) {
		conn_rearm(l, c); /* the client has not taken what we have */
		return;
	}
	n = conn_recv(c, c->u2c + c->u2c_len, c->u2c_room - c->u2c_len);
	c->filled = n == (ssize_t)(c->u2c_room - c->u2c_len);
	if (n > 0)
		c->kept_last = c->kept_now;
	c->kept_now = 0;

	if (n == 0) {
		if (!c->resp_head_done && replay(l, c))
			return;
		c->up_eof = 1;
		if (!c->resp_head_done) {
			refuse(l, c, 502, "upstream closed without a response");
			return;
		}
	} else if (n < 0) {
		if (n == -1) {
			conn_rearm(l, c);
			return;
		}
		if (!c->resp_head_done && replay(l, c))
			return;
		if (!c->resp_head_done) {
			refuse(l, c, 502, n == -3 ? "upstream closed without a response" : "upstream reset the connection");
			return;
		}
		/* A reset, or a TLS stream that just stops: whether the answer
		 * is whole, a body with a length or chunks says (its client
		 * checks). One that only the close ends is taken as cut: its
		 * client gets a reset, not an end. */
		if (!c->req.why && (n == -2 || !c->resp_framed))
			c->req.why = n == -3 ? "upstream TLS stream ended without close_notify: the answer may be cut"
					     : "upstream reset the connection during the response";
		c->cut = !c->resp_framed;
		c->up_eof = 1;
	} else {
		c->got_bytes = 1;
		/* a kept-alive upstream's answer ends where its framing says */
		if (c->keepable)
			extra = (size_t)n - resp_end_feed(&c->rend, c->u2c + c->u2c_len, (size_t)n);
		c->u2c_len += (size_t)n;
		while (!c->resp_head_done) {
			/* the rewrite may be longer: ": " where "Name:value"
			 * had no blank, and its own Connection line */
			char head[2 * HTTP_MAX_HEAD];
			size_t hl = 0, seen = c->u2c_len < HTTP_MAX_HEAD ? c->u2c_len : HTTP_MAX_HEAD;
			size_t from = c->resp_scan > 3 ? c->resp_scan - 3 : 0;
			struct http_resp r = { 0, 0, 0 };
			ssize_t used;
			int keep;

			/* parsed once it is whole; until then only new bytes are
			 * searched for its end (no rescan per read) */
			if (!http_head_end(c->u2c + from, seen - from)) {
				if (seen >= HTTP_MAX_HEAD) {
					refuse(l, c, 502, "upstream sent a malformed response head");
					return;
				}
				c->resp_scan = seen;
				break;
			}
			keep = client_may_keep(c);
			used = http_resp_head(c->u2c, c->u2c_len, keep, head, sizeof head, &hl, &r);
			/* an answer only the close ends cannot leave the connection open */
			if (keep && used > 0 && !(r.framed || c->req.parser.method == HTTP_HEAD))
				used = http_resp_head(c->u2c, c->u2c_len, keep = 0, head, sizeof head, &hl, &r);
			c->client_keep = keep;
			c->status = r.status;
			c->keep_s = r.keep_s;
			c->resp_framed = r.framed || c->req.parser.method == HTTP_HEAD;
			if (used < 0 || (used == 0 && c->u2c_len >= HTTP_MAX_HEAD)) {
				refuse(l, c, 502, "upstream sent a malformed response head");
				return;
			}
			if (used == 0)
				break;
			if (c->status == 401 && c->route->cred)
				refresh_rejected(c->route->cred, c->cred_gen, now_ms());
			if (c->status == 101) {
				refuse(l, c, 502, "upstream switched protocols (Upgrade is not allowed)");
				return;
			}
			if (c->status >= 100 && c->status < 200) {
				/* an interim answer (100 Continue, 103 Early Hints) is
				 * dropped: the final head is the one rewritten, relayed
				 * and logged */
				memmove(c->u2c, c->u2c + used, c->u2c_len - (size_t)used);
				c->u2c_len -= (size_t)used;
				c->status = 0;
				c->resp_scan = 0;
				continue;
			}
			{
				size_t rest = c->u2c_len - (size_t)used;
				if (hl + rest > RESP_CAP) { /* cannot happen: hl <= sizeof head */
					refuse(l, c, 502, "upstream response head too large");
					return;
				}
				memmove(c->u2c + hl, c->u2c + used, rest);
				memcpy(c->u2c, head, hl);
				c->u2c_len = hl + rest;
				c->resp_head_done = 1;
			}
		}
		if (c->keepable && (c->rend.done || c->rend.failed)) {
			if (!c->resp_head_done) { /* its parser and the head's disagree */
				refuse(l, c, 502, "upstream sent a malformed response head");
				return;
			}
			answer_ended(l, c, extra);
		}
	}
	if (c->resp_head_done && flush(c->cfd, c->u2c, &c->u2c_off, &c->u2c_len, &c->bytes_out) < 0) {
		client_gone(l, c);
		return;
	}
	if (c->up_eof && c->u2c_len == 0) {
		finish(l, c);
		return;
	}
	/* TLS: what did not fit of a record stays with mbedTLS, and no
	 * socket event will announce it; read it while there is room (each
	 * pass takes at least a byte of it) */
	if (c->tls && !c->up_eof && c->u2c_len < c->u2c_room && tls_pending(c->tls)) {
		c->kept_reads++;
		c->kept_now = 1;
		goto again;
	}
	conn_rearm(l, c);
}

/* A stream's event; its end is the connection's. A tunnel's ends at the
 * proxy's byte limit too. */
static void on_stream(struct loop *l, struct conn *c, int upstream, unsigned ev)
{
	if (stream_event(c, upstream, ev)) {
		close_conn(l, c);
	} else if (c->tun && tunnel_over(c)) {
		c->req.why = "the tunnel reached [proxy] max_bytes";
		close_conn(l, c);
	} else {
		conn_rearm(l, c);
	}
}

/* A tunnel waiting for its client's ClientHello: the upstream hears
 * nothing until the hello names the CONNECT host; then it is a stream,
 * the hello its first bytes. */
static void on_hello(struct loop *l, struct conn *c, int upstream, unsigned ev)
{
	int r;

	if (upstream) {
		if (ev & (EPOLLHUP | EPOLLERR)) {
			c->req.why = "upstream closed before the client's TLS ClientHello";
			close_conn(l, c);
		}
		return;
	}
	r = tunnel_hello(c);
	if (r < 0) {
		log_warn("bridge: route=%s tunnel %s cut: %s", c->route->name, c->tun->desc, c->req.why);
		close_conn(l, c);
	} else if (r == 0) {
		conn_rearm(l, c);
	} else {
		c->state = C_STREAM;
		on_stream(l, c, 1, EPOLLOUT);
	}
}

static void on_event(struct loop *l, struct conn *c, int upstream, unsigned ev)
{
	if (c->dead)
		return;
	/* an upstream event of this batch for a socket c no longer has (kept
	 * for the route, or closed at its answer's end) */
	if (upstream && c->ufd < 0)
		return;
	if (c->state == C_STREAM) {
		on_stream(l, c, upstream, ev);
		return;
	}
	if (c->state == C_HELLO) {
		on_hello(l, c, upstream, ev);
		return;
	}
	if (c->state == C_DRAIN) {
		if (!upstream)
			drain(l, c);
		return;
	}
	if (c->state == C_ABORT) {
		/* Polled for nothing, so only a client that went away is news;
		 * other events of the batch that ended in C_ABORT are stale
		 * (the upstream's socket is closed, the client's EPOLLOUT was
		 * for the relay). The reset is what it gets either way. */
		if (!upstream && (ev & (EPOLLERR | EPOLLHUP)))
			abort_now(l, c);
		return;
	}
	if (!upstream && (c->state == C_HEAD || c->state == C_BODY)) {
		on_client_read(l, c);
		return;
	}
	if (c->state == C_ASK) {
		if (!upstream && (ev & (EPOLLERR | EPOLLHUP | EPOLLRDHUP)))
			ask_left(l, c);
		return;
	}
	if (c->state == C_CRED) {
		/* polled for nothing: only a client that went away is news */
		if (!upstream && (ev & (EPOLLERR | EPOLLHUP))) {
			c->req.why = "client went away while the route's login was refreshed";
			close_conn(l, c);
		}
		return;
	}
	/* the client's side reset or fully closed (epoll always reports it): no
	 * answer can reach it, so nothing more is relayed. (A FIN alone may be
	 * a client that half-closed and still reads: it is served.) */
	if (!upstream && (ev & (EPOLLERR | EPOLLHUP))) {
		if (!c->req.why)
			c->req.why = "client went away";
		close_conn(l, c);
		return;
	}
	if (!upstream && (ev & EPOLLRDHUP) && c->req_done) {
		c->client_fin = 1; /* it may still read (a half-close): served on */
		ev &= ~(unsigned)EPOLLRDHUP;
		if (!(ev & (EPOLLIN | EPOLLOUT))) {
			conn_rearm(l, c);
			return;
		}
	}
	if (upstream && c->state == C_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof err;
		if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err) {
			if (by_name(c)) {
				connect_failed(l, c, strerror(err ? err : errno));
				return;
			}
			log_warn("bridge: route=%s upstream %s: %s", c->route->name, dial_desc(c),
				 strerror(err ? err : errno));
			refuse(l, c, 502, "upstream unreachable");
			return;
		}
		if (c->tun && !c->tun->plain) {
			/* told 200; the hello is awaited before anything goes on */
			if (tunnel_established(c) != 0) {
				close_conn(l, c);
				return;
			}
			c->state = C_HELLO;
			c->deadline = now_ms() + HELLO_WAIT_MS;
			if (c->c2u_len) /* the hello came with the CONNECT */
				on_hello(l, c, 0, EPOLLIN);
			else
				conn_rearm(l, c);
			return;
		}
		if (c->route->tls) {
			c->tls = calloc(1, sizeof *c->tls);
			if (!c->tls || tls_conn_start(c->tls, c->route->tls, c->ufd) != 0) {
				refuse(l, c, 502, "cannot start TLS");
				return;
			}
			c->state = C_HANDSHAKE;
		} else if (c->route->stream) {
			c->state = C_STREAM;
			on_stream(l, c, 1, EPOLLOUT);
			return;
		} else {
			c->state = C_RELAY;
			ev = EPOLLOUT;
		}
	}
	if (upstream && c->state == C_HANDSHAKE) {
		const char *why = NULL;
		int r = tls_handshake(c->tls, &why);
		if (r < 0) {
			log_warn("bridge: route=%s upstream %s: %s", c->route->name, c->route->up.desc, why);
			refuse(l, c, 502, why);
			return;
		}
		if (r > 0) {
			conn_rearm(l, c);
			return;
		}
		if (c->route->stream) {
			c->state = C_STREAM;
			on_stream(l, c, 1, EPOLLOUT);
			return;
		}
		c->state = C_RELAY;
		ev = EPOLLOUT;
	}
	if (upstream) {
		if ((ev & (EPOLLOUT | EPOLLIN)) && conn_flush(c) < 0)
			drop_request(c);
		if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) || (c->tls && (ev & c->tls->want_rd))) {
			on_upstream_read(l, c);
			return;
		}
		conn_rearm(l, c);
		return;
	}
	if ((ev & EPOLLOUT) && c->resp_head_done && flush(c->cfd, c->u2c, &c->u2c_off, &c->u2c_len, &c->bytes_out) < 0) {
		client_gone(l, c);
		return;
	}
	if (c->up_eof && c->u2c_len == 0) {
		finish(l, c);
		return;
	}
	/* TLS may hold decrypted bytes no socket event will announce */
	if (c->tls && c->state == C_RELAY && c->u2c_len < c->u2c_room && tls_pending(c->tls)) {
		c->kept_reads++;
		c->kept_now = 1;
		on_upstream_read(l, c);
		return;
	}
	if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
		on_client_read(l, c);
	else
		conn_rearm(l, c);
}

/* An event, and the proxy's byte limit for a plain request (a tunnel's
 * stream checks its own). */
static void conn_event(struct loop *l, struct conn *c, int upstream, unsigned ev)
{
	on_event(l, c, upstream, ev);
	if (c->dead || !c->tun || !c->tun->plain || c->state == C_ABORT || c->state == C_DRAIN || !tunnel_over(c))
		return;
	c->req.why = "the request reached [proxy] max_bytes";
	if (c->resp_head_done) {
		/* an answer begun is cut: a reset, never an end a client could
		 * take for the whole of a body that only the close ends */
		abort_now(l, c);
		return;
	}
	refuse(l, c, 502, c->req.why);
}

/* A tunnel whose client sent no whole ClientHello in HELLO_WAIT_MS. */
static void hello_late(struct loop *l, struct conn *c)
{
	c->req.why = "no TLS ClientHello within 10 s of the 200";
	close_conn(l, c);
}

/* Request bytes the upstream has taken none of for CUT_WAIT_MS: it
 * stopped reading without closing. The rest of the request is dropped, as
 * when a send fails, and an answer already coming is relayed; without
 * one, 502 (the CUT_WAIT_MS it had to answer are over). */
static void stall_check(struct conn *c, uint64_t now)
{
	if (!c->stalled_since) {
		c->stalled_since = now;
	} else if (now - c->stalled_since >= CUT_WAIT_MS) {
		drop_request(c);
		c->deadline = now;
	}
}

/* Bytes the client sent that are not read yet. */
static int waiting(int fd)
{
	char b;

	return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/* Heads that take too long (slowloris) get 408; connecting and the TLS
 * handshake have CONNECT_MS; established streams have no idle timeout. */
static void expire(struct loop *l)
{
	uint64_t now = now_ms();
	struct conn *c = l->conns, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->state == C_HEAD && now >= c->deadline && c->served && !c->head_len && waiting(c->cfd))
			c->deadline = now + BRIDGE_HEAD_TIMEOUT_MS; /* its next request came as the time ran out */
		else if (c->state == C_HEAD && now >= c->deadline && c->served && !c->head_len)
			close_idle(l, c); /* kept, and no next request came */
		else if (c->state == C_HEAD && now >= c->deadline)
			refuse(l, c, 408, "request head not received in time");
		else if (c->state == C_BODY && now >= c->deadline)
			refuse(l, c, 408, "request body not received in time (a judged route reads it whole first)");
		else if (c->state == C_DRAIN && now >= c->deadline)
			close_conn(l, c);
		else if (c->state == C_ABORT && (now >= c->deadline || !unsent(c->cfd)))
			abort_client(l, c);
		else if (c->state == C_RETRY && now >= c->deadline)
			connect_upstream(l, c);
		else if (c->state == C_RELAY && c->req_cut && !c->resp_head_done && now >= c->deadline)
			refuse(l, c, 502, "upstream stopped reading the request and did not answer");
		else if (c->state == C_RESOLVING && now >= c->deadline)
			refuse(l, c, 502, "the resolver did not answer in time");
		else if (c->state == C_HELLO && now >= c->deadline)
			hello_late(l, c);
		else if (c->state == C_ASK && now >= c->deadline)
			refuse(l, c, 403, "no answer to the question to the person in time");
		else if (c->state == C_CONNECTING && by_name(c) && now >= c->deadline)
			connect_failed(l, c, "did not accept the connection in time");
		else if ((c->state == C_CONNECTING || c->state == C_HANDSHAKE) && now >= c->deadline)
			refuse(l, c, 502, c->state == C_HANDSHAKE ? "upstream did not complete the TLS handshake in time"
								 : "upstream did not accept the connection in time");
		else if (c->state == C_RELAY && !c->req_cut && (c->c2u_len > c->c2u_off || c->in_rpipe))
			stall_check(c, now);
	}
	pool_sweep(l, now);
}

/* The loop's wait, no longer than the next lock try or deadline of a
 * credential's refresh. */
static void cred_wait(const struct loop *l, int *wait)
{
	uint64_t now = now_ms();
	int i;

	for (i = 0; i < l->routes->n; i++) {
		uint64_t due = l->routes->v[i].cred ? refresh_due(l->routes->v[i].cred) : 0;
		int ms = !due ? -1 : due <= now ? 0 : due - now > 60000 ? 60000 : (int)(due - now);
		if (ms >= 0 && (*wait < 0 || ms < *wait))
			*wait = ms;
	}
}

/* Each refresh whose lock try or deadline came. */
static void cred_ticks(struct loop *l)
{
	uint64_t now = now_ms();
	int i, peer;

	for (i = 0; i < l->routes->n; i++) {
		struct cred_route *cr = l->routes->v[i].cred;
		if (cr && cr->state != R_IDLE && refresh_due(cr) <= now) {
			enum refresh_step step;
			peer = -1;
			step = refresh_tick(cr, now, &peer); /* before peer is read */
			cred_step(l, i, step, peer);
		}
	}
}

/* What the session saw of the routes' pins, let go. */
static void pins_free(struct loop *l, int n)
{
	int i;

	for (i = 0; l->pin_seen && i < n; i++)
		free(l->pin_seen[i]);
	free(l->pin_seen);
	l->pin_seen = NULL;
}

int bridge_run(const struct bridge_routes *r, struct resolver *res, int max_conns)
{
	struct loop l = { .max_conns = max_conns, .routes = r, .res = res };
	struct epoll_event ev;
	int i;

	l.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l.epfd < 0)
		return -1;
	l.spare = fcntl(l.epfd, F_DUPFD_CLOEXEC, 0);
	for (i = 0; i < r->n; i++) {
		ev.events = EPOLLIN;
		/* listeners are tagged with their route index + 1, below any heap pointer */
		ev.data.u64 = (uint64_t)(i + 1) << 1;
		if (!r->v[i].hidden && epoll_ctl(l.epfd, EPOLL_CTL_ADD, r->v[i].lfd, &ev) != 0)
			return -1;
	}
	/* the resolver's sockets, as one descriptor, tagged after the listeners */
	if (resolver_fd(res) >= 0) {
		ev.events = EPOLLIN;
		ev.data.u64 = RESOLVER_TAG(r);
		if (epoll_ctl(l.epfd, EPOLL_CTL_ADD, resolver_fd(res), &ev) != 0)
			return -1;
	}
	/* without it no connection is kept: each request its own */
	l.pools = calloc((size_t)r->n, sizeof *l.pools);
	/* what this session saw of each route's pins (tools.h) */
	l.pin_seen = calloc((size_t)r->n, sizeof *l.pin_seen);
	for (i = 0; l.pin_seen && i < r->n; i++)
		if (r->v[i].tools && r->v[i].tools->n_pins &&
		    !(l.pin_seen[i] = calloc((size_t)r->v[i].tools->n_pins, 1))) {
			pins_free(&l, r->n);
			free(l.pools);
			return -1;
		}
	/* the proxy's approver, connected at the first question */
	for (i = 0; i < r->n; i++)
		if (r->v[i].proxy && r->v[i].proxy->ask) {
			const struct proxy_policy *p = r->v[i].proxy;
			l.ask = malloc(sizeof *l.ask);
			if (!l.ask || asker_init(l.ask, p->ask, p->ask_timeout_s, p->ask_rate, l.epfd, ASK_TAG(r)) != 0 ||
			    (p->ask_terminal && asker_given(l.ask, p->ask_fd) != 0)) {
				pins_free(&l, r->n);
				free(l.pools);
				return -1;
			}
			l.ask->who_fd = p->who_fd; /* PID 1 names who asked (common/who.h) */
		}
	for (;;) {
		struct epoll_event evs[64];
		int wait = l.n_retrying ? RETRY_MS : l.n_aborting ? ABORT_POLL_MS : l.conns || l.n_kept ? 1000 : -1, n, k;
		int dns = resolver_timeout_ms(res), dns_ready = 0;
		uint64_t dns_due = dns >= 0 ? now_ms() + (uint64_t)dns : 0;

		if (dns >= 0 && (wait < 0 || dns < wait))
			wait = dns;
		cred_wait(&l, &wait);
		if (l.ask) {
			int ask = asker_wait_ms(l.ask, now_ms());
			if (ask >= 0 && (wait < 0 || ask < wait))
				wait = ask;
		}

		if (l.paused_until) {
			uint64_t now = now_ms();
			if (now >= l.paused_until) {
				poll_listeners(&l, EPOLLIN);
				l.paused_until = 0;
			} else if (wait < 0 || l.paused_until - now < (uint64_t)wait) {
				wait = (int)(l.paused_until - now);
			}
		}
		n = epoll_wait(l.epfd, evs, 64, wait);
		if (n < 0 && errno != EINTR) {
			pins_free(&l, r->n);
			free(l.pools); /* the bridge ends: its kept connections with it */
			return -1;
		}
		for (k = 0; k < n; k++) {
			uint64_t d = evs[k].data.u64;
			if (d == RESOLVER_TAG(r)) {
				dns_ready = 1; /* read below, with the timeouts */
				continue;
			}
			if (d <= (uint64_t)r->n << 1) {
				accept_one(&l, &r->v[(d >> 1) - 1]);
				continue;
			}
			if (l.ask && d == ASK_TAG(r)) {
				asker_readable(l.ask, now_ms());
				ask_settled(&l);
				continue;
			}
			if (d >= CRED_TAG(r, 0) && d < CRED_TAG(r, r->n)) {
				i = (int)(d >> 1) - r->n - 2;
				cred_step(&l, i, refresh_readable(r->v[i].cred, now_ms()), -1);
				continue;
			}
			conn_event(&l, (struct conn *)(uintptr_t)(d & ~(uint64_t)1), // NOLINT(performance-no-int-to-ptr)
				   (int)(d & 1), evs[k].events);
		}
		/* lookups that ended (c-ares also ends some inside the calls
		 * that start them): their waiters go on */
		if (dns_ready || (dns_due && now_ms() >= dns_due))
			resolver_process(res);
		while ((i = resolver_next(res)) >= 0)
			name_answered(&l, i);
		expire(&l);
		if (l.ask) {
			asker_expire(l.ask, now_ms());
			ask_settled(&l);
		}
		cred_ticks(&l);
		reap_dead(&l);
	}
}
