/* mcpjson: the host's mcp.json -> bridge routes (holding the secrets)
 * and the agent's copy (URLs pointed at the bridge, secrets removed).
 * Pure: PID 1 calls it on what it read; nothing is opened or written. */
#ifndef WARD_MCPJSON_H
#define WARD_MCPJSON_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/header.h"

struct mcp_route {
	char *name; /* "mcp-<server>" */
	unsigned port;
	char *host; /* the URL's authority: the Host the server checks */
	char *path; /* the URL's exact path?query */
	struct header *headers; /* values final: ${VAR} resolved from ward's environment */
	int n_headers;
};

#define MCP_MAX_VARS 64

struct mcp_result {
	char err[512];
	struct mcp_route *routes;
	int n_routes;
	char *text; /* the agent's copy */
	/* the variables of ward's environment its headers took ${NAME} or
	 * bearerTokenEnv from (secrets: the agent must not be passed them) */
	char *vars[MCP_MAX_VARS];
	int n_vars;
};

/* Rewrites the JSON (Pi's built-in format and pi-mcp-adapter's: both
 * {"mcpServers":{...}}): each url server gets port first_port + i. stdio
 * servers and keys ward does not know stay as they are. 0, or -1 with
 * r->err. The fuzzable core. */
int mcp_rewrite(const char *text, size_t len, unsigned first_port, struct mcp_result *r);

/* The routes of a result, once taken from it. */
void mcp_routes_free(struct mcp_route *v, int n);

void mcp_result_free(struct mcp_result *r);

#endif
