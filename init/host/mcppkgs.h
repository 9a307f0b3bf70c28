/* mcppkgs: ward as a tool on the host, for ward-pi, never as PID 1: the
 * packages an mcp.json's stdio servers launch (mcp-bridge/mcppkg.h), one
 * line each on stdout, for ward-pi to fetch once after the person agrees. */
#ifndef WARD_MCPPKGS_H
#define WARD_MCPPKGS_H

/* ward --mcp-packages FILE: "npx SERVER SPEC" or "skip SERVER WHY", tab
 * separated, a line each; the exit status (0, or 2 after one line). */
int mcp_packages_main(const char *file);

#endif
