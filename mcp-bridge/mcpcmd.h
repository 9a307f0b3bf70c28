/* mcpcmd: a header value "!COMMAND" of mcp.json (pi-mcp-adapter runs
 * COMMAND by the shell and sends what it prints). ward runs nothing: it
 * takes the value from its environment under a name of the command's, and
 * lists the commands for ward-pi, which runs them on the host and passes
 * their output by those names. Pure. */
#ifndef WARD_MCPCMD_H
#define WARD_MCPCMD_H

#include <stddef.h>

/* The name: WARD_MCP_CMD_ and the first 16 hex digits of COMMAND's
 * SHA-256. name: at least MCP_CMD_VAR_SIZE. */
#define MCP_CMD_VAR_SIZE 30
void mcp_command_var(const char *command, char *name);

/* Each COMMAND of a "!COMMAND" header value or bearerToken of the file's
 * url servers (not "!!", the adapter's escaped '!'), to visit(ctx,
 * COMMAND); nothing else of the file is visited (a stdio server's args
 * are never a command to run). 0, visit's first non-zero, or -1 with err
 * (not JSON, no mcpServers object). */
int mcp_commands(const char *text, size_t len, int (*visit)(void *ctx, const char *command), void *ctx,
		 char *err, size_t errsize);

#endif
