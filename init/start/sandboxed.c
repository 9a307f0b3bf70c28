/* The sandboxed run: the config read, the sandbox built once as root
 * (Landlock, seccomp, the bridge as a service, the egress guard in PID 1), the
 * agent started and supervised; or --check's report of the same. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fds.h"
#include "common/log.h"
#include "init/config/config.h"
#include "init/report/denials.h"
#include "init/report/explain.h"
#include "init/report/report.h"
#include "init/sandbox/privfiles.h"
#include "init/sandbox/sandbox.h"
#include "init/start/start.h"
#include "init/supervise/asktty.h"
#include "init/supervise/procs.h"
#include "init/supervise/supervise.h"
#include "init/supervise/ttyrelay.h"
#include "init/supervise/whoserve.h"
#include "init/host/mcppins.h"
#include "init/supervise/vm.h"
#include "landlock/landlock.h"

extern char **environ;

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

static void on_listener(void *arg, int fd)
{
	guardproc_attach(arg, fd);
}

static void on_ask(void *arg, int fd)
{
	asktty_attach(arg, fd);
}

static void on_who(void *arg, int fd)
{
	whoserve_attach(arg, fd);
}

static void on_winch(void *arg)
{
	tty_relay_resize(arg);
}

/* [proxy] ask = terminal: the agent's terminal becomes a pty of PID 1's,
 * whose last row PID 1 asks on (ttyrelay.h, asktty.h). Without a terminal
 * nothing can be asked: said once, and the bridge refuses as unasked. 0,
 * or -1 (logged). */
static int ask_at_terminal(const struct ward_config *cfg, struct supervisor *sv, struct sandbox *sb,
			   struct tty_relay *tty, struct asktty *asker)
{
	int r, store = -1;

	if (!sb->bridge.active || !cfg->proxy.has || !cfg->proxy.has_ask || !cfg->proxy.ask_terminal)
		return 0;
	r = tty_relay_open(tty);
	if (r < 0)
		return -1;
	if (r == 0) {
		log_warn("[proxy] ask = terminal: ward has no terminal (docker run -t): nothing can be asked, and "
			 "a host no allow rule names is refused");
		return 0;
	}
	if (cfg->proxy.ask_store) {
		store = open(cfg->proxy.ask_store, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (store < 0)
			log_warn("[proxy] ask_store %s: %s: an answer of always holds for this session only",
				 cfg->proxy.ask_store, strerror(errno));
	}
	if (tty_relay_bind(tty, sv->epfd) != 0) {
		log_error("[proxy] ask = terminal: epoll_ctl: %s", strerror(errno));
		if (store >= 0)
			close(store);
		return -1;
	}
	asktty_init(asker, tty, sv->epfd, store);
	sv->tty = tty->slave;
	sv->on_winch = on_winch;
	sv->on_winch_arg = tty;
	sb->bridge.on_ask = on_ask;
	sb->bridge.on_ask_arg = asker;
	return 0;
}

/* --mcp-pins ROUTE: the route of that name (an HTTP one, with a listener),
 * its tool rules kept aside for the annotations, and every route's set
 * aside, so that the bridge lists every tool (mcppins.h). Its index, or -1
 * after logging why. */
static int pins_route(struct bridgeproc *b, const char *name, const struct tool_rules **rules)
{
	int i, found = -1;

	for (i = 0; i < b->routes.n; i++) {
		struct bridge_route *r = &b->routes.v[i];
		if (strcmp(r->name, name) == 0 && !r->hidden && !r->stream && !r->proxy) {
			found = i;
			*rules = r->tools;
		}
		r->tools = NULL;
	}
	if (found < 0)
		log_error("--mcp-pins %s: no HTTP route of that name ([route NAME], or mcp-SERVER for mcp.json's)", name);
	return found;
}

int run_sandboxed(const struct options *opt, const char *path, const sigset_t *inherited, int vm_init)
{
	struct ward_config cfg;
	struct supervisor sv;
	struct service *bridge = NULL; /* the bridge as a service of the loop, when there are routes */
	struct sandbox sb;
	/* 8 KiB of buffers, used only when the audit log is read: in .bss they
	 * cost nothing until then; on the stack every call below would sit
	 * under them */
	static struct denials den;
	/* [proxy] ask = terminal: the agent's pty and the questions on it */
	static struct tty_relay tty = { .in = -1, .out = -1, .master = -1, .slave = -1, .logr = -1, .log_saved = -1 };
	/* [proxy] ask: PID 1's answers to the bridge's "who asked?" */
	static struct whoserve who = { .fd = -1 };
	const struct tool_rules *pins_rules = NULL; /* --mcp-pins: the route's rules, which only annotate */
	int pins = -1;
	static struct asktty asker = { .fd = -1, .store = -1 };
	char **envp = NULL, **command = opt->command;
	int rc, *fds = NULL, nfds, cwd_fd = -1, vm, have_sv = 0, agent_forked = 0;

	vm = !opt->check && vm_init;
	config_defaults(&cfg);
	sandbox_init(&sb);
	denials_init(&den);
	if (path && config_load(&cfg, path) != 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	log_setup(cfg.log_format, cfg.log_level);
	/* a copy of the log for ward --denials, opened as root before anything */
	if (cfg.log_copy && !opt->check) {
		int fd = open(cfg.log_copy, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd < 0)
			log_warn("%s: [ward] log_copy %s: %s: no copy of the log is kept", cfg.path, cfg.log_copy,
				 strerror(errno));
		else
			log_copy_to(fd);
	}
	/* descriptors are handed in at run time: --check leaves them be */
	rc = opt->check ? 0 : privfiles_check_fds(&cfg);
	if (rc)
		goto out;
	if (opt->check) {
		rc = sandbox_prepare(&sb, &cfg, 0, 1);
		if (rc == 0 && opt->explain) {
			rc = explain(sb.confining ? &sb.confine : NULL, &sb.ll, &sb.routes, &cfg, opt->explain, stdout);
		} else if (rc == 0 && opt->ini) {
			config_print(&cfg, stdout);
			sandbox_print(&sb, &cfg, stdout);
		} else if (rc == 0 && report_print(sb.confining ? &sb.confine : NULL, &sb.ll, &sb.sc, &sb.routes, &cfg, opt->json, stdout) < 0) {
			log_error("out of memory");
			rc = 1;
		}
		if (fflush(stdout) != 0)
			rc = 1;
		goto out;
	}
	if (vm && command && cfg.command) {
		/* the kernel hands init every command-line word it does not know
		 * ("splash"): in a VM the config's command is the agent */
		log_warn("ignoring '%s' on the kernel command line: in a VM, [agent] command runs",
			 command[0]);
		command = NULL;
	}
	if (!command && !cfg.command && !opt->mcp_pins) { /* --mcp-pins runs no agent */
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
	sb.ev.to_stderr = opt->evidence;
	announce_layers(&cfg, &sb);

	if (!cfg.cwd) {
		cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cwd_fd < 0)
			log_warn("cannot open the current directory: %s", strerror(errno));
	}
	have_sv = 1;
	rc = 1;
	if (supervisor_init(&sv, &cfg, command ? command : cfg.command, envp, inherited,
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
	if (ask_at_terminal(&cfg, &sv, &sb, &tty, &asker) != 0) {
		rc = 3;
		goto out;
	}
	/* a question names the process that asked, which only PID 1 can
	 * see, as the guard does (common/who.h) */
	if (sb.bridge.active && cfg.proxy.has && cfg.proxy.has_ask) {
		whoserve_init(&who, sb.guard.active ? &sb.guard.guard : NULL, sv.epfd);
		sb.bridge.on_who = on_who;
		sb.bridge.on_who_arg = &who;
	}
	/* the bridge listens (PID 1 opened its ports) and is confined before
	 * the agent exists; the guard is PID 1's own: the listener the
	 * agent's child sends joins the loop as it arrives, before the
	 * agent's first socket() can be answered */
	if (opt->mcp_pins && (!sb.bridge.active || (pins = pins_route(&sb.bridge, opt->mcp_pins, &pins_rules)) < 0)) {
		if (!sb.bridge.active)
			log_error("--mcp-pins %s: the config has no routes", opt->mcp_pins);
		rc = 2;
		goto out;
	}
	if (sb.bridge.active &&
	    !(bridge = supervisor_start_service(&sv, &bridge_service, &sb.bridge, BRIDGE_READY_MS))) {
		rc = 3;
		goto out;
	}
	/* --mcp-pins: PID 1 is the route's client, and no agent runs */
	if (opt->mcp_pins && bridge) {
		rc = mcp_pins_run(sb.bridge.routes.v[pins].port, sb.bridge.routes.v[pins].http.path, pins_rules, stdout);
		fflush(stdout);
		kill(bridge->pid, SIGTERM);
		(void)waitpid(bridge->pid, NULL, 0);
		bridge->pid = 0;
		goto out;
	}
	if (sb.guard.active) {
		if (guardproc_bind(&sb.guard, sv.epfd) != 0) {
			log_error("egress guard: epoll_ctl: %s", strerror(errno));
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
	if (supervisor_start(&sv) != 0)
		goto out;
	agent_forked = 1;

	/* ward keeps nothing it inherited and does not pin any directory. */
	/* room for the loop's, the log's, every bridge listener and the rest */
	fds = calloc((size_t)sb.bridge.routes.n + 40 + GUARD_MAX_LISTENERS, sizeof *fds);
	if (!fds) {
		log_error("out of memory");
		rc = 1;
		goto out;
	}
	nfds = supervisor_fds(&sv, fds, 12);
	fds[nfds++] = log_fd();
	if (log_copy_fd() >= 0)
		fds[nfds++] = log_copy_fd();
	nfds += bridgeproc_fds(&sb.bridge, fds + nfds, sb.bridge.routes.n + 1);
	nfds += guardproc_fds(&sb.guard, fds + nfds, 4 + GUARD_MAX_LISTENERS);
	nfds += tty_relay_fds(&tty, fds + nfds, 5);
	nfds += asktty_fds(&asker, fds + nfds, 2);
	nfds += whoserve_fds(&who, fds + nfds, 1);
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
	asktty_close(&asker);
	whoserve_close(&who);
	tty_relay_close(&tty); /* the terminal's modes as they were */
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
