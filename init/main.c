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

#include "landlock/landlock.h"
#include "init/config/config.h"
#include "common/log.h"
#include "init/sandbox/privfiles.h"
#include "common/fds.h"
#include "init/supervise/procs.h"
#include "init/report/denials.h"
#include "init/report/explain.h"
#include "init/report/report.h"
#include "init/sandbox/sandbox.h"
#include "init/supervise/supervise.h"
#include "common/version.h"
#include "init/supervise/vm.h"

#define EXIT_USAGE 2

extern char **environ;

struct options {
	const char *config;
	int check;
	int json, ini; /* --check's output: JSON, or the settings as INI */
	const char *explain; /* --explain WHAT */
	int evidence;
	char **command; /* from the command line, NULL if none */
};

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

/* The agent's environment when [agent] is configured: exactly env plus
 * env_pass, nothing else of ward's own. */
static char **agent_environment(const struct ward_config *cfg)
{
	char **envp = calloc((size_t)cfg->n_env + (size_t)cfg->n_env_pass + 1, sizeof *envp);
	int i, n = 0;

	if (!envp)
		return NULL;
	for (i = 0; i < cfg->n_env; i++)
		envp[n++] = cfg->env[i];
	for (i = 0; i < cfg->n_env_pass; i++) {
		size_t len = strlen(cfg->env_pass[i]);
		char **e;
		int j, dup = 0;

		for (j = 0; j < cfg->n_env; j++)
			if (strncmp(cfg->env[j], cfg->env_pass[i], len) == 0 && cfg->env[j][len] == '=')
				dup = 1; /* env = wins over env_pass */
		for (e = environ; !dup && *e; e++) {
			if (strncmp(*e, cfg->env_pass[i], len) == 0 && (*e)[len] == '=') {
				envp[n++] = *e;
				break;
			}
		}
	}
	envp[n] = NULL;
	return envp;
}

static void announce_layers(const struct ward_config *cfg, const struct sandbox *sb)
{
	if (!cfg->path) {
		log_info("no config file: plain init, nothing is confined");
		return;
	}
	if (!sb->confining)
		log_info("%s: no [agent] user: the agent keeps ward's credentials", cfg->path);
	if (!cfg->has_landlock || cfg->landlock.mode == LL_OFF)
		log_info("%s: landlock is off: the filesystem and network are not confined", cfg->path);
	if (!cfg->has_seccomp || !cfg->seccomp.enabled)
		log_info("%s: seccomp is off: no system call filter", cfg->path);
	if (!sb->routes.n)
		log_info("%s: no [route] or [mcp]: no bridge", cfg->path);
}

static void on_denials(void *arg, const pid_t *agents, int n)
{
	denials_read(arg, agents, n);
}

static pid_t spawn_bridge(void *arg, int *note_fd)
{
	return bridgeproc_spawn(arg, note_fd);
}

static int bridge_note(void *arg, int fd, pid_t pid)
{
	return bridgeproc_note(arg, fd, pid);
}

static const struct service_ops bridge_service = { "bridge", spawn_bridge, bridge_note };

static pid_t spawn_guard(void *arg, int *note_fd)
{
	return guardproc_spawn(arg, note_fd);
}

static int guard_note(void *arg, int fd, pid_t pid)
{
	return guardproc_note(arg, fd, pid);
}

static const struct service_ops guard_service = { "egress guard", spawn_guard, guard_note };

static void on_listener(void *arg, int fd)
{
	guardproc_attach(arg, fd);
}

/* 0, 1 and 2 that the runtime left closed get /dev/null (the lowest free
 * number is each one in turn): else the first descriptor ward opens would
 * take the number, and its log lines would go into the evidence file, or
 * the bridge's own dup2 would replace a listener. Again after a VM's
 * mounts: an initramfs may have had no /dev/null before. */
static void std_fds_open(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int null = open("/dev/null", O_RDWR);
			if (null > fd)
				close(null);
		}
}

int main(int argc, char **argv)
{
	struct ward_config cfg;
	struct supervisor sv;
	struct service *bridge = NULL; /* the bridge as a service of the loop, when there are routes */
	struct service *guard = NULL;  /* the egress guard, when the agent's sockets go through it */
	struct sandbox sb;
	struct options opt;
	/* 8 KiB of buffers, used only when the audit log is read: in .bss they
	 * cost nothing until then; on the stack every call below main would
	 * sit under them */
	static struct denials den;
	sigset_t all, inherited;
	char **envp = NULL;
	const char *path;
	int rc, *fds = NULL, nfds, cwd_fd = -1, vm, vm_init, have_sv = 0, agent_forked = 0;

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
	vm = !opt.check && vm_init;
	config_defaults(&cfg);
	sandbox_init(&sb);
	denials_init(&den);
	path = config_path(&opt);
	if (path && config_load(&cfg, path) != 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	log_setup(cfg.log_format, cfg.log_level);
	/* descriptors are handed in at run time: --check leaves them be */
	rc = opt.check ? 0 : privfiles_check_fds(&cfg);
	if (rc)
		goto out;
	if (opt.check) {
		rc = sandbox_prepare(&sb, &cfg, 0, 1);
		if (rc == 0 && opt.explain) {
			rc = explain(sb.confining ? &sb.confine : NULL, &sb.ll, &sb.routes, &cfg, opt.explain, stdout);
		} else if (rc == 0 && opt.ini) {
			config_print(&cfg, stdout);
			sandbox_print(&sb, &cfg, stdout);
		} else if (rc == 0 && report_print(sb.confining ? &sb.confine : NULL, &sb.ll, &sb.sc, &sb.routes, &cfg, opt.json, stdout) < 0) {
			log_error("out of memory");
			rc = 1;
		}
		if (fflush(stdout) != 0)
			rc = 1;
		goto out;
	}
	if (vm && opt.command && cfg.command) {
		/* the kernel hands init every command-line word it does not know
		 * ("splash"): in a VM the config's command is the agent */
		log_warn("ignoring '%s' on the kernel command line: in a VM, [agent] command runs",
			 opt.command[0]);
		opt.command = NULL;
	}
	if (!opt.command && !cfg.command) {
		log_error("no command: give one after -- or set [agent] command (see ward --help)");
		rc = EXIT_USAGE;
		goto out;
	}
	envp = cfg.has_agent ? agent_environment(&cfg) : environ;
	if (!envp) {
		log_error("out of memory");
		rc = 1;
		goto out;
	}

	if (vm) {
		vm_mount();
		std_fds_open();
	} else if (getpid() != 1 && prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		log_warn("cannot become a child subreaper (%s): orphans will not be reaped",
			 strerror(errno));
	log_detach_stderr();

	/* Everything the sandbox needs is opened and built now, as root,
	 * once: restarts reuse it. */
	rc = sandbox_prepare(&sb, &cfg, vm, 0);
	if (rc)
		goto out;
	sb.ev.to_stderr = opt.evidence;
	announce_layers(&cfg, &sb);

	if (!cfg.cwd) {
		cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cwd_fd < 0)
			log_warn("cannot open the current directory: %s", strerror(errno));
	}
	have_sv = 1;
	rc = 1;
	if (supervisor_init(&sv, &cfg, opt.command ? opt.command : cfg.command, envp, &inherited,
			    cwd_fd) != 0)
		goto out;
	/* With [agent] the agent gets fds 0-2 only and a clean signal state;
	 * a plain init hands its inherited descriptors, mask and ignored
	 * signals to the first child, as tini does. */
	sv.close_child_fds = cfg.has_agent;
	sv.reset_child_signals = cfg.has_agent;
	if (cfg.has_agent)
		sigemptyset(&sv.child_mask);
	sv.confine = sb.confining ? &sb.confine : NULL;
	/* the bridge listens (PID 1 opened its ports) and is confined before
	 * the agent exists; the guard serves before the agent's first
	 * socket(): the listener the agent's child sends is handed on as it
	 * arrives */
	if (sb.bridge.active &&
	    !(bridge = supervisor_start_service(&sv, &bridge_service, &sb.bridge, BRIDGE_READY_MS))) {
		rc = 3;
		goto out;
	}
	if (sb.guard.active) {
		if (!(guard = supervisor_start_service(&sv, &guard_service, &sb.guard, GUARD_READY_MS))) {
			rc = 3;
			goto out;
		}
		sv.on_listener = on_listener;
		sv.on_listener_arg = &sb.guard;
	}
	/* log_level = debug: the agent's Landlock denials from the kernel's
	 * audit log, where ward can read it (ABI 7; not in a container) */
	if (cfg.log_level == LOG_DEBUG && sb.confine.ll && sb.ll.abi >= 7 && denials_open(&den) >= 0 &&
	    supervisor_watch(&sv, den.fd, on_denials, &den) != 0)
		denials_close(&den);
	sb.keep_audit_read = den.fd >= 0;
	sv.on_start = evidence_on_start;
	sv.hold_start = sb.ev.to_stderr || sb.ev.fd >= 0; /* the evidence before the agent's first word */
	sv.on_start_arg = &sb.ev;
	sb.ev.bridge = &sb.bridge;
	sb.ev.bridge_pid = bridge ? &bridge->ready : NULL; /* a restarted bridge once it is confined */
	sb.ev.guard_pid = guard ? &guard->ready : NULL;
	if (supervisor_start(&sv) != 0)
		goto out;
	agent_forked = 1;

	/* ward keeps nothing it inherited and does not pin any directory. */
	/* room for the loop's, the log's, every bridge listener and the rest */
	fds = calloc((size_t)sb.bridge.routes.n + 19, sizeof *fds);
	if (!fds) {
		log_error("out of memory");
		rc = 1;
		goto out;
	}
	nfds = supervisor_fds(&sv, fds, 12);
	fds[nfds++] = log_fd();
	nfds += bridgeproc_fds(&sb.bridge, fds + nfds, sb.bridge.routes.n + 1);
	nfds += guardproc_fds(&sb.guard, fds + nfds, 3);
	if (sb.ll.fd >= 0)
		fds[nfds++] = sb.ll.fd;
	if (sb.ev.fd >= 0)
		fds[nfds++] = sb.ev.fd;
	close_fds_except(fds, nfds);
	free(fds);
	fds = NULL;
	if (chdir("/") != 0)
		log_warn("chdir /: %s", strerror(errno));
	sandbox_lock_pid1(&sb, &cfg, vm);

	rc = supervisor_run(&sv);
out:
	if (rc && !agent_forked)
		sandbox_unwrite(&sb, &cfg); /* nothing is left half-started */
	free(fds);
	if (have_sv)
		supervisor_free(&sv);
	denials_close(&den);
	if (cwd_fd >= 0)
		close(cwd_fd);
	sandbox_free(&sb);
	if (envp && envp != environ)
		free(envp);
	config_free(&cfg);
	if (vm || vm_init) {
		/* A VM's init must not exit (the kernel would panic). The
		 * status is the guest's only result: said at any log level. */
		if (rc)
			log_error("finished with status %d; powering off", rc);
		else
			log_info("finished with status %d; powering off", rc);
		vm_poweroff();
	}
	return rc;
}
