/* bridge: the forked, unprivileged process that relays the agent's HTTP
 * requests from loopback listeners inside the sandbox to upstreams outside
 * it, one checked request per connection. */
#ifndef WARD_BRIDGE_H
#define WARD_BRIDGE_H

#include <stdint.h>

#include "http.h"
#include "tls.h"
#include "upstream.h"

#define BRIDGE_MAX_CONNS 1024
#define BRIDGE_HEAD_TIMEOUT_MS 10000 /* a request head must arrive in this time */

struct bridge_route {
	char *name;
	struct http_route http;
	struct upstream up;
	uint16_t port;	/* 127.0.0.1:port inside the sandbox */
	int lfd;	/* the listening socket, opened by PID 1 */
	char *path, *host;
	char **headers; /* "Name: value", secrets resolved */
	int n_headers;
	int line;	/* config line, for messages */
	struct tls_route *tls; /* tls: upstreams */
};

struct bridge_routes {
	struct bridge_route *v;
	int n;
};

/* Opens every route's listener (PID 1, before the agent exists). */
int bridge_listen(struct bridge_routes *r, char *err, size_t errsize);

/* Before the bridge is locked down: raises its soft RLIMIT_NOFILE to the
 * hard one and returns how many connections fit (a client, an upstream and
 * a request pipe each), at most BRIDGE_MAX_CONNS. */
int bridge_conn_limit(int n_routes);

/* The bridge's event loop; returns only on a fatal setup error. */
int bridge_run(const struct bridge_routes *r, int max_conns);

/* Checks once that each upstream accepts a connection, all at once and
 * within a second in all; logs those that do not. Returns how many
 * answered. */
int bridge_health(const struct bridge_routes *r);

#endif
