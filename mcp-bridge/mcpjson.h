/* mcpjson: the host's mcp.json -> bridge routes (holding the secrets)
 * and the agent's copy (URLs pointed at the bridge, secrets removed).
 * Pure: PID 1 calls it on what it read; nothing is opened or written. */
#ifndef WARD_MCPJSON_H
#define WARD_MCPJSON_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/header.h"
#include "mcp-bridge/mcpcmd.h"
#include "mcp-bridge/mcpurl.h"
#include "mcp-bridge/tools.h"
#include "mcp-bridge/upstream.h"

struct mcp_route {
	char *name; /* "mcp-<server>" */
	unsigned port;
	char *host; /* the URL's authority: the Host the server checks */
	char *path; /* the URL's exact path?query */
	struct header *headers; /* values final: ${VAR} resolved from ward's environment */
	int n_headers;
	/* where its URL says (struct mcp_where's by_url), or unset (kind
	 * and desc zero: [mcp] upstream's, the one endpoint of a daemon) */
	int has_up;
	struct upstream up;
	/* an OAuth sign-in of the host's mcp-auth.json (mcpcred.h) whose
	 * access token the bridge sends and refreshes, or oauth_key NULL */
	char *oauth_key;   /* its entry's key */
	char *token_host;  /* the token endpoint's authority and exact path */
	char *token_path;
	struct upstream token_up; /* where its URL says, as a server's */
	struct tool_rules tools;  /* its entry's "ward" field: the tools the agent may call (tools.h) */
};


#define MCP_MAX_VARS 64
#define MCP_MAX_SKIPPED 32

/* A server ward cannot serve, left out of the agent's copy (and so of
 * Pi's reach: nothing of its entry, secrets included, is in the copy). */
struct mcp_skipped {
	char why[512]; /* "server NAME: why" (what err said) */
};

struct mcp_result {
	char err[512];
	struct mcp_route *routes;
	int n_routes;
	char *text; /* the agent's copy */
	/* the variables of ward's environment its headers took ${NAME} or
	 * bearerTokenEnv from (secrets: the agent must not be passed them) */
	char *vars[MCP_MAX_VARS];
	int n_vars;
	/* the servers left out, each with why (the first MCP_MAX_SKIPPED;
	 * n_skipped counts them all) */
	struct mcp_skipped skipped[MCP_MAX_SKIPPED];
	int n_skipped;
};

/* Rewrites the JSON (Pi's built-in format and pi-mcp-adapter's: both
 * {"mcpServers":{...}}): each url server it can serve gets the next port
 * from first_port, and its upstream by where (NULL: [mcp] upstream). stdio servers and keys ward does not know stay as they
 * are. A server it cannot serve (OAuth, a !command header, legacy SSE, a
 * host socket, a URL it cannot pin...) is left out of the copy and noted
 * in r->skipped; the others still work. 0, or -1 with r->err when the
 * file itself is wrong (not JSON, no mcpServers object, a bad name) or
 * memory runs out. The fuzzable core. */
int mcp_rewrite(const char *text, size_t len, unsigned first_port, const struct mcp_where *where,
		struct mcp_result *r);

/* The routes of a result, once taken from it. */
void mcp_routes_free(struct mcp_route *v, int n);

void mcp_result_free(struct mcp_result *r);

#endif
