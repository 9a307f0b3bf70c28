/* pool: a route's upstream connections kept open between requests. A
 * request to a tls: or tcp: upstream asks to keep the connection; once
 * its answer has ended where its framing says (respend.h), with nothing
 * left over either way, the connection waits here for the route's next
 * request, which then skips the TCP connect and the TLS handshake. Each
 * kept connection is the bridge's alone: one request on it at a time,
 * never shared between routes, never handed to a client.
 * Private to mcp-bridge/. */
#ifndef WARD_POOL_H
#define WARD_POOL_H

#include <stdint.h>

#include "mcp-bridge/conn.h"
#include "mcp-bridge/tls.h"

/* Kept connections per route at most (the oldest goes for a newer one). */
#define POOL_MAX 4
/* How long one waits at most: under the 5 s that Node's, uvicorn's and
 * most servers' own idle limits allow, so that the server is not the one
 * to close it as a request goes out; a server's Keep-Alive timeout=N
 * shortens it to N - 1 s. */
#define POOL_IDLE_MS 4000
/* A connection older than this (from its connect) is not kept again: its
 * server's certificate is checked anew at least this often, as a kept TLS
 * session is (TLS_SESSION_MAX_S). */
#define POOL_MAX_AGE_MS ((uint64_t)TLS_SESSION_MAX_S * 1000)

struct kept {
	int fd;
	struct tls_conn *tls; /* NULL: plain TCP */
	struct name_addr addr;
	uint64_t until;
	uint64_t born; /* its connect */
};

struct pool {
	struct kept v[POOL_MAX]; /* oldest first */
	int n;
};

/* Whether c's request may leave its upstream connection open: an HTTP/1.1
 * request of a route to a tls: or tcp: upstream (not a stream, not the
 * egress proxy's, not a replay), with no body or with one its method is
 * for (POST, PUT, PATCH). A body on a GET or a DELETE is one an upstream
 * may leave unread, to take it for the start of the next request: the
 * route's next request, credential and all, would be its body. */
int pool_eligible(const struct conn *c);

/* c's answer has ended and its connection may carry another: kept for its
 * route (out of the epoll set; c no longer has it) for POOL_IDLE_MS, or
 * the server's Keep-Alive timeout (c->keep_s) less 1 s if shorter, unless
 * it is older than POOL_MAX_AGE_MS (then closed). */
void pool_put(struct loop *l, struct conn *c);

/* A kept connection of c's route, if one is still open and quiet: 1 with
 * c->ufd, c->tls and c->addr set (not yet polled), else 0. */
int pool_take(struct loop *l, struct conn *c);

/* Kept connections past their time are closed. */
void pool_sweep(struct loop *l, uint64_t now);

#endif
