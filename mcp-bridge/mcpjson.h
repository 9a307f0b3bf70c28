/* mcpjson: the host's mcp.json -> bridge routes (holding the secrets)
 * and the agent's copy (URLs pointed at the bridge, secrets removed).
 * Pure: PID 1 calls it on what it read; nothing is opened or written. */
#ifndef WARD_MCPJSON_H
#define WARD_MCPJSON_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/header.h"
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
};

/* Where the servers' requests go: NULL, every one to [mcp] upstream (a
 * daemon's single endpoint, which serves them all); by_url, each where
 * its URL says: https://NAME[:PORT] by name over TLS, http://NAME[:PORT]
 * over TCP, and the host's loopback (127.0.0.1, localhost, [::1]: inside
 * the sandbox that would be the agent's own) to the relay socket
 * LOOPBACK/PORT.sock that whoever starts ward provides for that port
 * alone (NULL: such a server is left out). */
struct mcp_where {
	int by_url;
	const char *loopback;
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

/* A header value "!COMMAND" (pi-mcp-adapter runs COMMAND by the shell and
 * sends what it prints): ward runs nothing, and takes the value from
 * ward's environment under the name this gives, WARD_MCP_CMD_ and the
 * first 16 hex digits of COMMAND's SHA-256 (ward-pi runs the command on the
 * host and passes its output by that name). name: at least
 * MCP_CMD_VAR_SIZE. */
#define MCP_CMD_VAR_SIZE 30
void mcp_command_var(const char *command, char *name);

/* Each COMMAND of a "!COMMAND" header value or bearerToken of the file's
 * url servers (not "!!", the adapter's escaped '!'), to visit(ctx,
 * COMMAND); nothing else of the file is visited (a stdio server's args
 * are never a command to run). 0, visit's first non-zero, or -1 with err
 * (not JSON, no mcpServers object). Pure. */
int mcp_commands(const char *text, size_t len, int (*visit)(void *ctx, const char *command), void *ctx,
		 char *err, size_t errsize);

/* The routes of a result, once taken from it. */
void mcp_routes_free(struct mcp_route *v, int n);

void mcp_result_free(struct mcp_result *r);

#endif
