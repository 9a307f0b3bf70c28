/* The two ways PID 1 runs, chosen by main() once the command line is read. */
#ifndef WARD_START_H
#define WARD_START_H

#include <signal.h>

#define EXIT_USAGE 2

struct options {
	const char *config;
	int check;
	int json, ini; /* --check's output: JSON, or the settings as INI */
	const char *explain; /* --explain WHAT */
	int evidence;
	const char *mcp_pins; /* --mcp-pins ROUTE: its tools' hashes printed, no agent (mcppins.h) */
	char **command; /* from the command line, NULL if none */
};

/* No config file, no --check or --evidence, not a VM's init: tini's job,
 * nothing confined. Returns the exit status. */
int run_plain(char **command, const sigset_t *inherited);

/* Everything else: the config read (path, or the defaults), the sandbox
 * built and the agent supervised, or --check's report. vm_init: ward is
 * a VM's init (it powers off rather than return). Returns the exit
 * status. */
int run_sandboxed(const struct options *opt, const char *path, const sigset_t *inherited, int vm_init);

#endif
