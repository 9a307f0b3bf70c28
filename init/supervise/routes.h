/* routes: the bridge's route table, built once at start from the config's
 * [route] sections and the servers of the host's mcp.json, in that order,
 * with one check that no two listen on the same port. The config stays as
 * it was read; what --check, --explain, the sandbox's Landlock rules and
 * the bridge itself see of the routes is this table. (Provider presets
 * add their routes here too; [proxy] is one more, named "proxy", whose
 * upstream is each tunnel's.) */
#ifndef WARD_ROUTES_H
#define WARD_ROUTES_H

#include "common/header.h"
#include "init/config/config.h"
#include "mcp-bridge/mcpjson.h"
#include "mcp-bridge/upstream.h"

struct route {
	const char *name; /* [route NAME], or mcp-SERVER */
	int line;	  /* of its section ([route NAME] or [mcp]), for messages */
	unsigned port;	  /* listen = 127.0.0.1:PORT */
	const struct upstream *up;
	unsigned methods; /* http-parser method bits */
	const char *path; /* the target (path?query) or prefix it allows */
	const char *host; /* the Host it sends (NULL: the upstream's) */
	int exact;	  /* path is matched exactly even ending in '/' (mcp.json's) */
	int from_mcp;	  /* an [mcp] server's: its headers are mcp.json's, final */
	int stream;	  /* protocol = stream: bytes relayed as they come, no HTTP */
	const struct header *headers;
	int n_headers;
	const char *tls_ca, *tls_pin;
	const struct config_proxy *proxy; /* the egress proxy ([proxy]): each CONNECT names its upstream */
	const struct config_cred *cred;   /* a login the bridge sends and refreshes, or NULL */
	const struct tool_rules *tools;   /* the MCP tools the agent may call (tools.h), or NULL: every one */
};

struct route_table {
	struct route *v;
	int n;
	struct mcp_route *mcp; /* mcp.json's servers, which its routes point into */
	int n_mcp;
	struct config_cred *mcp_creds; /* one per server: its sign-in (mcp-auth.json), path NULL when none */
	/* the servers left out, each with why (--check's warnings name them) */
	struct mcp_skipped *skipped;
	int n_skipped, n_skipped_all;
};

/* Builds t from cfg's [route]s, then mcp's servers (its routes are taken
 * over and mcp->routes left empty; the agent's copy stays; NULL: none). The strings stay cfg's and t->mcp's. 0, or the
 * exit status after logging why (2: a port clash, 3: out of memory). */
int routes_build(struct route_table *t, const struct ward_config *cfg, struct mcp_result *mcp);

/* The route listening on port, or NULL. */
const struct route *routes_on_port(const struct route_table *t, unsigned port);

void routes_free(struct route_table *t);

#endif
