/* mcpcmds: ward as a tool on the host, for ward-pi, never as PID 1: the
 * "!COMMAND" header values of an mcp.json, each written to DIR/NAME (NAME
 * the variable ward will read its output from, mcpjson.h's
 * mcp_command_var), for ward-pi to run on the host and pass by that name.
 * Parsed by the same code as ward's start, so that only what ward would
 * take as a command is one (a stdio server's args never are). */
#ifndef WARD_MCPCMDS_H
#define WARD_MCPCMDS_H

/* ward --mcp-commands FILE DIR: the exit status (0, or 2 after one line). */
int mcp_commands_main(const char *file, const char *dir);

#endif
