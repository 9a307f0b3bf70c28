/* ward: a static PID 1 that supervises one agent. See docs/ward.8. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <http_parser.h>
#include <jansson.h>
#include <mbedtls/version.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/envheap.h"
#include "common/fds.h"
#include "common/log.h"
#include "common/version.h"
#include "init/config/config.h"
#include "init/host/mcpcmds.h"
#include "init/host/mcppkgs.h"
#include "init/start/start.h"
#include "init/report/denylog.h"
#include "init/supervise/vm.h"
#include "landlock/landlock.h"

static void usage(FILE *out)
{
	fputs("usage: ward [-c|--config FILE] [--check [--json|--ini]] [--explain WHAT] [--evidence]\n"
	      "            [--version] [--help]\n"
	      "            [--] [COMMAND [ARG]...]\n"
	      "\n"
	      "Runs COMMAND (or [agent] command) as the supervised agent: forwards signals,\n"
	      "reaps every child, tears the tree down when the agent exits and exits with\n"
	      "its status (128+N if killed by signal N).\n"
	      "\n"
	      "  -c, --config FILE  config file (default: $WARD_CONFIG, else\n"
	      "                     " WARD_DEFAULT_CONFIG " if it exists, else none)\n"
	      "      --check        validate the config, print the effective policy as a\n"
	      "                     table with a warning for each weak setting, exit\n"
	      "      --json         with --check: the same as JSON\n"
	      "      --ini          with --check: the effective settings as a config file\n"
	      "      --explain WHAT why the agent may or may not reach WHAT: a path, a TCP port\n"
	      "                     (tcp:N) or a system call, and the line that would allow it\n"
	      "      --evidence     print what is in force (JSON) on stderr before the agent execs\n"
	      "      --mcp-commands FILE DIR\n"
	      "                     for ward-pi on the host: each !COMMAND header value of\n"
	      "                     the mcp.json FILE written to DIR/WARD_MCP_CMD_..., exit\n"
	      "      --mcp-packages FILE\n"
	      "                     for ward-pi on the host: the npm package each stdio server\n"
	      "                     of the mcp.json FILE launches with npx, a line each, exit\n"
	      "      --mcp-pins ROUTE\n"
	      "                     start the bridge with the config, no agent; print a\n"
	      "                     [route] pin line for each tool ROUTE's server lists now\n"
	      "      --denials FILE what an audit log (ward's lines; - for stdin) says was\n"
	      "                     refused, grouped, with the setting that would allow each\n"
	      "  -V, --version      print the versions (ward, its libraries, kernel Landlock ABI)\n"
	      "  -h, --help         print this help\n"
	      "\n"
	      "Exit status: the agent's; 128+N for signal N; 126/127 if it cannot be\n"
	      "executed or found; 2 for usage and config errors; 3 if the agent's\n"
	      "environment could not be put in force. See ward(8) and ward.conf(5).\n",
	      out);
}

#ifndef WARD_CAPNG_VERSION
#define WARD_CAPNG_VERSION "unknown"
#endif
#ifndef WARD_INIH_VERSION
#define WARD_INIH_VERSION "unknown"
#endif

/* The libraries are linked statically: these are the versions in the binary. */
static void version(void)
{
	const struct scmp_version *sv = seccomp_version();
	int abi = ll_abi();

	printf("ward %s\n", WARD_VERSION);
	printf("libseccomp %u.%u.%u\n", sv ? sv->major : 0, sv ? sv->minor : 0, sv ? sv->micro : 0);
	printf("libcap-ng %s\n", WARD_CAPNG_VERSION);
	printf("inih r%s\n", WARD_INIH_VERSION);
	printf("mbedTLS %s\n", MBEDTLS_VERSION_STRING);
	printf("jansson %s\n", jansson_version_str());
	printf("http-parser %lu.%lu.%lu\n", (http_parser_version() >> 16) & 255, (http_parser_version() >> 8) & 255,
	       http_parser_version() & 255);
	if (abi > 0)
		printf("kernel Landlock ABI %d\n", abi);
	else
		printf("kernel Landlock: not available\n");
}

/* Returns 0 to go on, or an exit status + 1000 to stop with. */
static int parse_args(int argc, char **argv, struct options *o)
{
	int i;

	memset(o, 0, sizeof *o);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;
		if (strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0) {
			if (++i >= argc) {
				log_error("%s: needs a FILE argument", a);
				return 1000 + EXIT_USAGE;
			}
			o->config = argv[i];
		} else if (strncmp(a, "--config=", 9) == 0) {
			o->config = a + 9;
		} else if (strcmp(a, "--check") == 0) {
			o->check = 1;
		} else if (strcmp(a, "--mcp-pins") == 0) {
			if (++i >= argc) {
				log_error("%s: needs a ROUTE (a [route] NAME, or mcp-SERVER)", a);
				return 1000 + EXIT_USAGE;
			}
			o->mcp_pins = argv[i];
		} else if (strcmp(a, "--explain") == 0) {
			if (++i >= argc) {
				log_error("%s: needs a path, tcp:PORT or system call", a);
				return 1000 + EXIT_USAGE;
			}
			o->explain = argv[i];
			o->check = 1;
		} else if (strcmp(a, "--json") == 0) {
			o->json = 1;
		} else if (strcmp(a, "--ini") == 0) {
			o->ini = 1;
		} else if (strcmp(a, "--evidence") == 0) {
			o->evidence = 1;
		} else if (strcmp(a, "--mcp-commands") == 0) {
			/* ward-pi's, on the host: nothing of PID 1's runs */
			if (i + 2 >= argc) {
				log_error("%s: needs FILE and DIR", a);
				return 1000 + EXIT_USAGE;
			}
			return 1000 + mcp_commands_main(argv[i + 1], argv[i + 2]);
		} else if (strcmp(a, "--mcp-packages") == 0) {
			/* ward-pi's, on the host: nothing of PID 1's runs */
			if (i + 1 >= argc) {
				log_error("%s: needs FILE", a);
				return 1000 + EXIT_USAGE;
			}
			return 1000 + mcp_packages_main(argv[i + 1]);
		} else if (strcmp(a, "--denials") == 0) {
			/* an audit log read, nothing of PID 1's runs */
			if (i + 1 >= argc) {
				log_error("%s: needs an audit log FILE (- for stdin)", a);
				return 1000 + EXIT_USAGE;
			}
			return 1000 + denylog_main(argv[i + 1]);
		} else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
			version();
			return 1000;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 1000;
		} else {
			log_error("%s: unknown option (see ward --help)", a);
			return 1000 + EXIT_USAGE;
		}
	}
	if ((o->json || o->ini) && !o->check) {
		log_error("%s: only with --check (see ward --help)", o->json ? "--json" : "--ini");
		return 1000 + EXIT_USAGE;
	}
	if (o->json && o->ini) {
		log_error("--json and --ini: choose one");
		return 1000 + EXIT_USAGE;
	}
	if (i < argc)
		o->command = argv + i;
	return 0;
}

/* -c FILE, else $WARD_CONFIG, else the default path if it exists. */
static const char *config_path(const struct options *o)
{
	const char *env = getenv("WARD_CONFIG");

	if (o->config)
		return o->config;
	if (env && *env)
		return env;
	if (access(WARD_DEFAULT_CONFIG, F_OK) == 0)
		return WARD_DEFAULT_CONFIG;
	return NULL;
}

int main(int argc, char **argv)
{
	struct options opt;
	sigset_t all, inherited;
	const char *path;
	int rc, vm_init;

	/* Block every signal before anything else: as PID 1 a signal with the
	 * default disposition would be dropped, and one that arrives before
	 * the mask is lost. From here on they queue for the signalfd. A real
	 * fault still kills ward: the kernel forces synchronous signals.
	 * By system call: glibc's sigfillset and sigprocmask leave out its
	 * internal 32 and 33, and those would kill a ward that is not PID 1
	 * (ward has no threads; the child's libc unblocks them again). */
	memset(&all, 0xff, sizeof all);
	sigemptyset(&inherited);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &inherited, (size_t)(_NSIG / 8));

	std_fds_open();
	/* before any secret is read from it: /proc/1/environ shows nothing
	 * to a runtime that lets the agent read it (gVisor) */
	if (envheap_move() != 0)
		log_warn("cannot move the environment to the heap (out of memory): /proc/1/environ keeps it");

	/* A VM's init must never return, not even on a usage error (the kernel
	 * passes its unknown command-line words to init): it powers off. */
	vm_init = vm_detect();
	rc = parse_args(argc, argv, &opt);
	if (rc) {
		if (vm_init) {
			log_info("finished with status %d; powering off", rc - 1000);
			vm_poweroff();
		}
		return rc - 1000;
	}
	path = config_path(&opt);
	/* Without a config there is nothing to confine: the plain path builds
	 * no sandbox state at all (a VM's init mounts and powers off, and
	 * --evidence reports, so those take the full one). */
	if (!path && !vm_init && !opt.check && !opt.evidence)
		return run_plain(opt.command, &inherited);
	return run_sandboxed(&opt, path, &inherited, vm_init);
}
