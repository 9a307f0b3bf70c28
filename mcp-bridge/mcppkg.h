/* mcppkg: the packages mcp.json's stdio servers launch. A stdio server
 * runs in the sandbox as the agent, which cannot fetch from a registry:
 * `npx -y PKG` works there only once PKG is in the agent's npm cache.
 * ward-pi lists them (ward --mcp-packages), asks the person, and fetches
 * each once into the project's home. Parsed by jansson, as ward's start
 * parses the file. Pure. */
#ifndef WARD_MCPPKG_H
#define WARD_MCPPKG_H

#include <stddef.h>

/* What a stdio server needs fetched. */
enum mcp_pkg_kind {
	MCP_PKG_NPX,  /* spec: an npm registry package, name[@version or range] */
	MCP_PKG_SKIP, /* spec: why it cannot be fetched (uvx, a path, an option npx would read a package from) */
};

/* Each stdio server whose command is npx (or uvx, or pipx) to visit(ctx,
 * kind, server, spec); other commands run as they are and are not
 * visited. 0, visit's first non-zero, or -1 with err (not JSON, no
 * mcpServers object). */
int mcp_packages(const char *text, size_t len,
		 int (*visit)(void *ctx, enum mcp_pkg_kind kind, const char *server, const char *spec), void *ctx,
		 char *err, size_t errsize);

/* Whether s is an npm registry package spec npx would fetch: [@scope/]name
 * of lower-case letters, digits and - . _ ~ (214 at most), then
 * optionally @ and a version, tag or range of letters, digits and
 * . + - _ ~ ^ < > = * x | (no blank, path, URL or git spec). */
int mcp_npm_spec_ok(const char *s);

#endif
