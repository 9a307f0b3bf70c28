/* route: the bridge's own copy of a route, as PID 1 hands it over:
 * listener open, secrets resolved into the lines it sends, CA roots read.
 * Everything in the bridge process works from these. */
#ifndef WARD_ROUTE_H
#define WARD_ROUTE_H

#include <stdint.h>

#include "mcp-bridge/allow.h"
#include "mcp-bridge/http.h"
#include "mcp-bridge/tls.h"
#include "mcp-bridge/tools.h"
#include "mcp-bridge/upstream.h"

struct cred_route;

#define BRIDGE_MAX_CONNS 1024
#define BRIDGE_HEAD_TIMEOUT_MS 10000 /* a request head must arrive in this time */

/* The egress proxy's rules and limits ([proxy]), as the bridge uses them. */
struct proxy_policy {
	const struct allow_rule *allow;
	int n_allow;
	unsigned methods;     /* [proxy] methods: 1 << HTTP_CONNECT, 1 << HTTP_GET... */
	unsigned max_tunnels; /* open at once */
	uint64_t max_bytes;   /* per tunnel, both ways together; 0: no limit */
	const struct upstream *ask; /* [proxy] ask: the approver (ask.h); NULL: a name no rule allows is refused */
	unsigned ask_timeout_s, ask_rate;
	int ask_terminal; /* ask = terminal: the approver is PID 1, on ask_fd alone */
	int ask_fd;	  /* the bridge's end of PID 1's socket pair (in the bridge), or -1 */
	int who_fd;	  /* the bridge's end of PID 1's "who asked?" pair (common/who.h), or -1 */
};

struct bridge_route {
	const char *name;
	struct http_route http;
	struct upstream up;
	uint16_t port;	/* 127.0.0.1:port inside the sandbox */
	int lfd;	/* the listening socket, opened by PID 1 */
	char **headers; /* "Name: value", secrets resolved */
	int n_headers;
	int line;	/* config line, for messages */
	int stream;	/* protocol = stream: no HTTP, bytes both ways (stream.c) */
	struct tls_route *tls; /* tls: upstreams */
	const struct proxy_policy *proxy; /* the egress proxy: each CONNECT names its upstream (tunnel.h) */
	struct cred_route *cred; /* an OAuth credential's Authorization (refresh.h), or NULL */
	const char *drop;	 /* a header the client's request loses (a login's route: the preset's key header) */
	int hidden;		 /* no listener: a credential's token route, whose client is the bridge */
	const struct tool_rules *tools; /* each request body judged whole (tools.h), or NULL */
};

struct bridge_routes {
	struct bridge_route *v;
	int n;
};

#endif
