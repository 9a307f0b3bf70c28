/* tunnel: a connection to the egress proxy ([proxy] in the config). Its
 * CONNECT HOST:PORT is checked against the allow rules; the bridge
 * resolves the name itself (the agent has no DNS) and refuses answers of
 * loopback, link-local and private addresses that no address rule names;
 * once the upstream is connected the client is told 200, and the first
 * bytes it sends, a TLS ClientHello, must name the CONNECT host (SNI)
 * before anything is forwarded. Then bytes both ways (stream.c), within
 * the proxy's byte limit. A plain http:// request ([proxy] methods past
 * CONNECT) passes the same checks of its host, is rewritten to origin form
 * and then goes as a route's request does (http.h): its head checked, Host
 * the URL's, one request, its response relayed. One audit line per tunnel
 * or request. Private to mcp-bridge/; the loop (bridge.c) accepts,
 * connects and closes. */
#ifndef WARD_TUNNEL_H
#define WARD_TUNNEL_H

#include "mcp-bridge/conn.h"

#define HELLO_WAIT_MS 10000 /* the ClientHello must come this soon after the 200 */

struct tunnel {
	char host[UPSTREAM_NAME_MAX + 2]; /* lower case, no final dot; or an address */
	unsigned port;
	int literal;		  /* host is an address: connected to as is */
	struct name_addr lit;	  /* that address */
	const struct allow_rule *rule;
	char sni[UPSTREAM_NAME_MAX + 2];
	char desc[UPSTREAM_NAME_MAX + 16]; /* "HOST:PORT", for messages */
	int counted;			   /* one of the loop's n_tunnels */
	int plain;			   /* a plain http:// request: relayed as a route's */
	struct http_route http;		   /* its route: the methods, any path, Host the URL's */
	char authority[UPSTREAM_NAME_MAX + 16]; /* that Host: "host", "host:port", "[v6]:port" */
};

/* The head is whole (c->head): 0 with c->tun set, so the upstream is
 * connected next; -1 with the refusal's status and why; or TUNNEL_ASKED:
 * no rule allows the name, and the person is being asked (c->ask_id, see
 * ask.h: tunnel_admit once the answer allows it). A CONNECT's
 * stream buffers are ready (what came after the head kept for the hello);
 * a plain request (c->tun->plain) has its head rewritten to origin form
 * in c->head and c->req started on its route, to be fed as a route's. */
#define TUNNEL_ASKED 1
int tunnel_open(struct loop *l, struct conn *c, int *status, const char **why);

/* The person's answer allowed an asked tunnel or request: the rest of
 * tunnel_open, its return the same (never TUNNEL_ASKED). */
int tunnel_admit(struct loop *l, struct conn *c, int *status, const char **why);

/* The upstream accepted: "200 Connection established" to the client (the
 * hello is waited for). 0, or -1 when the client is gone. */
int tunnel_established(struct conn *c);

/* The client's bytes while the hello is awaited: 0 (more needed), 1 (the
 * hello names the CONNECT host: it is in c2u, to go upstream as a stream),
 * -1 (cut: c->req.why says why; nothing was forwarded). */
int tunnel_hello(struct conn *c);

/* The stream has passed the proxy's byte limit: 1 (c->req.why set). */
int tunnel_over(const struct conn *c);

/* The tunnel's audit line: host, port, address, server name, bytes each
 * way, duration, status, why refused or cut. */
void tunnel_audit(const struct conn *c);

/* The tunnel is closed: its name's entry let go. */
void tunnel_close(struct loop *l, struct conn *c);

#endif
