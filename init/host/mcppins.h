/* mcppins: ward --mcp-pins ROUTE: the hash of each tool the route's server
 * lists now, as [route] pin lines to paste (tools.h, tools_hash).
 *
 * ward starts the bridge as it would for the agent (the route's upstream,
 * TLS, names, the token it adds: the same route), with the route's tool
 * rules set aside so that every tool is listed, and no agent. PID 1 is
 * then the route's client on its loopback port: initialize, the
 * notification that follows it, tools/list page by page, and DELETE, each
 * request on a connection of its own; each answer, JSON or SSE, read with
 * the parser the bridge filters lists with (toolslist.h). */
#ifndef WARD_MCPPINS_H
#define WARD_MCPPINS_H

#include <stdio.h>

#include "mcp-bridge/tools.h"

/* Lists the tools of the server behind 127.0.0.1:port (path: the route's
 * target) and prints a pin line for each to out; rules (the route's own,
 * or NULL) only annotate. 0, or 1 after logging why. */
int mcp_pins_run(unsigned port, const char *path, const struct tool_rules *rules, FILE *out);

#endif
