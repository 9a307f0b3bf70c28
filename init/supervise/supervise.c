#define _GNU_SOURCE
#include "init/supervise/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/clock.h"
#include "common/parse.h"
#include "common/record.h"
#include "init/supervise/procs.h"
#include "init/supervise/spawn.h"

#define FINAL_WAIT_MS 2000	/* after SIGKILL, before giving up on the stragglers */
#define MAX_RESTART_DELAY_MS 30000
#define RESTART_WINDOW_MS 60000
#define DELAY_RESET_MS 60000	/* a run this long resets the backoff */

static void set_timer(struct supervisor *sv, uint64_t deadline_ms)
{
	struct itimerspec its = { 0 };

	if (deadline_ms) {
		/* an absolute time of 0 would disarm the timer */
		its.it_value.tv_sec = (time_t)(deadline_ms / 1000);
		its.it_value.tv_nsec = (long)(deadline_ms % 1000) * 1000000 + 1;
	}
	if (timerfd_settime(sv->tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
		log_error("timerfd_settime: %s", strerror(errno));
}

static const char *sig_str(int sig, char *buf, size_t size)
{
	return signal_name(sig, buf, size);
}

/* ---- signalling the tree ---------------------------------------------- */

/* The pids of the services running now (the bridge): the agent's
 * teardown leaves them alone, and they do not count as its leftovers. */
static int service_pids(const struct supervisor *sv, pid_t *pids)
{
	int i, n = 0;

	for (i = 0; i < sv->n_services; i++)
		if (sv->services[i].pid > 0)
			pids[n++] = sv->services[i].pid;
	return n;
}

static int is_service(const pid_t *pids, int n, pid_t pid)
{
	int i;

	for (i = 0; i < n; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

/* Everything that is ours except ward itself (and its services, which
 * outlive agent restarts): kill(-1) when we are PID 1 of the namespace and
 * no service runs, else the agent's group plus our descendants from /proc. */
static void signal_all(struct supervisor *sv, int sig)
{
	pid_t keep[WARD_MAX_SERVICES];
	int n, pass = 0, nk = service_pids(sv, keep);

	if (sv->pid1 && !nk) {
		if (kill(-1, sig) != 0 && errno != ESRCH)
			log_warn("kill(-1): %s", strerror(errno));
		return;
	}
	if (sv->agent > 0)
		(void)kill(-sv->agent, sig);
	/* The scan lists, then signals: a process that forks between the two
	 * leaves a child it did not list, which its death hands to ward. KILL
	 * is sent again until a pass finds none (zombies not yet reaped count
	 * too: at most 16 passes). */
	do
		n = signal_descendants(sv->self, sig, keep, nk);
	while (sig == SIGKILL && n > 0 && ++pass < 16);
	if (n < 0 && sv->agent > 0)
		(void)kill(sv->agent, sig);
}

/* ---- the agent -------------------------------------------------------- */

/* go: let a held agent exec (one byte); without it the agent reads end
 * of file and exits: a PID 1 that fails or dies does not let it run. */
static void release_agent(struct supervisor *sv, int go)
{
	if (sv->relfd >= 0) {
		if (go && write(sv->relfd, "g", 1) != 1)
			log_warn("cannot let the agent go on: %s", strerror(errno));
		close(sv->relfd);
	}
	sv->relfd = -1;
}

static void agent_execd(struct supervisor *sv);

int supervisor_start(struct supervisor *sv)
{
	const struct ward_config *cfg = sv->cfg;
	struct spawn_req req = {
		.argv = sv->argv,
		.envp = sv->envp,
		.cwd_fd = sv->cwd_fd,
		.cwd = cfg->cwd,
		.mask = &sv->child_mask,
		.umask_set = cfg->umask_set,
		.umask = cfg->umask,
		.rlimits = cfg->rlimits,
		.n_rlimits = cfg->n_rlimits,
		.close_fds = sv->close_child_fds,
		.reset_signals = sv->reset_child_signals,
		.confine = sv->confine,
		.hold = sv->hold_start,
		.tty = sv->tty,
	};
	pid_t pid = spawn_child(&req, &sv->errfd, &sv->relfd);

	if (pid < 0) {
		log_error("cannot start %s: fork: %s", sv->argv[0], strerror(errno));
		return -1;
	}
	sv->agent = pid;
	sv->started[sv->n_started++ % WARD_RECENT_AGENTS] = pid;
	sv->state = AGENT_RUNNING;
	memset(&sv->notes, 0, sizeof sv->notes);
	sv->started_at = now_ms();
	sv->killed = 0;
	sv->start_reported = 0;
	if (sv->errfd < 0)
		agent_execd(sv); /* posix_spawn: it has, and sends no records */
	else if (event_add(sv->epfd, &sv->on_errfd) != 0) {
		log_warn("epoll_ctl: %s", strerror(errno));
		release_agent(sv, 1); /* its report cannot be read: no evidence, but no hang */
	}
	log_debug("started %s as pid %d", sv->argv[0], (int)pid);
	if (sv->stopping)
		set_timer(sv, sv->stop_deadline);
	return 0;
}

static void close_errfd(struct supervisor *sv)
{
	release_agent(sv, 0);
	if (sv->errfd < 0)
		return;
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, sv->errfd, NULL);
	close(sv->errfd);
	sv->errfd = -1;
}

static void start_failed(struct supervisor *sv, const struct record *err)
{
	static const char *const id_what[] = { "uid/gid", "supplementary groups",
					       "setuid(0) still succeeds" };
	const char *cmd = sv->argv[0];

	sv->exec_failed = 1;
	sv->exit_code = record_exit_code(err);
	switch (err->what) {
	case STAGE_EXEC:
		log_error("cannot run %s: %s", cmd, strerror(err->err));
		break;
	case STAGE_RLIMIT:
		log_error("cannot start %s: setrlimit %s: %s", cmd, rlimit_name(err->detail),
			  strerror(err->err));
		break;
	case STAGE_VERIFY_IDS:
		log_error("cannot start %s: the kernel does not show the agent's credentials as set "
			  "(%s); not running it", cmd, id_what[err->detail % 3]);
		break;
	case STAGE_VERIFY_CAPS:
		if (err->detail)
			log_error("cannot start %s: ambient capability %d is left after dropping them; not "
				  "running it", cmd, err->detail - 1);
		else
			log_error("cannot start %s: capabilities are left after dropping them "
				  "(effective/permitted/inheritable); not running it", cmd);
		break;
	default:
		log_error("cannot start %s: %s: %s", cmd, record_stage_name(err->what), strerror(err->err));
		break;
	}
}

/* on_start, once per agent: while it is held before its exec (nothing it
 * writes can land inside the evidence), else once it has exec'd. */
static void report_start(struct supervisor *sv)
{
	if (sv->start_reported)
		return;
	sv->start_reported = 1;
	if (sv->on_start)
		sv->on_start(sv->on_start_arg, sv->agent, &sv->notes);
}

/* The agent's exec has happened (unless a record said it failed). */
static void agent_execd(struct supervisor *sv)
{
	if (!sv->exec_failed && sv->agent > 0) {
		log_debug("agent pid %d running %s", (int)sv->agent, sv->argv[0]);
		report_start(sv);
	}
}

/* The agent's record pipe: notes and failures from the child; end of file
 * means the exec happened (or the child died, which reap() sees). */
static void check_started(struct supervisor *sv)
{
	struct record rec;
	int r, passed = -1;

	if (sv->errfd < 0)
		return;
	while ((r = record_read_fd(sv->errfd, &rec, &passed)) == 1) {
		if (rec.kind == RECORD_LISTENER && passed >= 0) {
			sv->notes.egress_listener = 1;
			if (sv->on_listener)
				sv->on_listener(sv->on_listener_arg, passed);
			else
				close(passed);
			passed = -1;
		} else if (rec.kind == RECORD_NOTE && rec.what == NOTE_EGRESS) {
			sv->notes.egress_err = rec.err;
			log_warn("egress: the guard's filter could not be loaded (%s): the agent's TCP "
				 "reaches any address on the ports Landlock allows (best_effort)", strerror(rec.err));
		} else if (rec.kind == RECORD_NOTE && rec.what == NOTE_BOUNDING) {
			sv->notes.bounding_kept = rec.detail;
			log_warn("the bounding set keeps %d capabilities: no CAP_SETPCAP to drop them "
				 "(harmless under no_new_privs: nothing can be gained through exec)",
				 rec.detail);
		} else if (rec.kind == RECORD_NOTE && rec.what == NOTE_SECUREBITS) {
			sv->notes.securebits_err = rec.err;
			log_warn("securebits not locked: %s", strerror(rec.err));
		} else if (rec.kind == RECORD_HELD) {
			if (sv->agent > 0)
				report_start(sv);
			release_agent(sv, sv->agent > 0); /* a dead one reads nothing */
		} else if (rec.kind == RECORD_FAILED) {
			start_failed(sv, &rec);
		} else {
			log_warn("the agent's child sent a record of an unknown kind %d", rec.kind);
		}
		if (passed >= 0) { /* a descriptor on a record that carries none */
			close(passed);
			passed = -1;
		}
	}
	if (r < 0)
		return; /* more to come */
	agent_execd(sv);
	close_errfd(sv);
}

static int stdin_at_eof(void)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN | POLLRDHUP };

	/* Only what can hang up counts: pipes, sockets, terminals. /dev/null
	 * or a file never "hangs up", and a closed fd 0 tells nothing. */
	if (poll(&p, 1, 0) != 1)
		return 0;
	return (p.revents & (POLLHUP | POLLRDHUP)) != 0;
}

static int restart_allowed(struct supervisor *sv)
{
	const struct ward_config *cfg = sv->cfg;
	uint64_t now = now_ms();
	unsigned i, recent = 0;

	if (cfg->restart == RESTART_NEVER || sv->stopping)
		return 0;
	if (sv->exec_failed) {
		log_warn("not restarting: the command could not be started");
		return 0;
	}
	if (cfg->restart == RESTART_ON_FAILURE && sv->exit_code == 0)
		return 0;
	if (stdin_at_eof()) {
		log_info("not restarting: stdin has reached end of file (the peer is gone)");
		return 0;
	}
	if (cfg->restart_limit) {
		for (i = 0; i < sv->n_restarts && i < cfg->restart_limit; i++)
			if (now - sv->restarts[i] < RESTART_WINDOW_MS)
				recent++;
		if (recent >= cfg->restart_limit) {
			log_error("giving up: %u restarts within a minute (restart_limit)", recent);
			return 0;
		}
	}
	return 1;
}

/* No more restarts of the services either, once ward is stopping. */
static void hold_services(struct supervisor *sv)
{
	int i;

	for (i = 0; i < sv->n_services; i++)
		service_hold(&sv->services[i]);
}

static void finish(struct supervisor *sv)
{
	sv->state = AGENT_DONE;
	hold_services(sv);
	set_timer(sv, 0);
}

/* Everything the agent left behind is gone: restart it or finish. */
static void drained(struct supervisor *sv)
{
	uint64_t now = now_ms(), at;

	if (!restart_allowed(sv)) {
		finish(sv);
		return;
	}
	if (sv->exited_at - sv->started_at >= DELAY_RESET_MS)
		sv->restart_delay = sv->cfg->restart_delay_ms;
	at = sv->exited_at + sv->restart_delay;
	log_info("restarting %s in %llums (exit status %d)", sv->argv[0],
		 (unsigned long long)(at > now ? at - now : 0), sv->exit_code);
	sv->restart_delay = sv->restart_delay * 2 > MAX_RESTART_DELAY_MS ? MAX_RESTART_DELAY_MS
									   : sv->restart_delay * 2;
	if (sv->cfg->restart_limit)
		sv->restarts[sv->n_restarts++ % sv->cfg->restart_limit] = at;
	sv->state = AGENT_WAIT_RESTART;
	set_timer(sv, at > now ? at : now);
}

/* Returns 1 if ward's children listed by /proc are all services. Apart
 * from no_children, so that its 4 KiB buffer is on the stack only when
 * there are services (a plain init never calls it). */
static __attribute__((noinline)) int only_services(const struct supervisor *sv, const pid_t *keep, int nk)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)sv->self, (int)sv->self);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) /* no CONFIG_PROC_CHILDREN: count them from /proc (signal 0) */
		return signal_descendants(sv->self, 0, keep, nk) == 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n"))
		if (!is_service(keep, nk, (pid_t)strtol(tok, NULL, 10)))
			return 0;
	return 1;
}

/* Returns 1 if ward has no children left (its services aside). */
static int no_children(const struct supervisor *sv)
{
	siginfo_t si;
	pid_t keep[WARD_MAX_SERVICES];
	int nk = service_pids(sv, keep);

	if (nk)
		return only_services(sv, keep, nk);
	memset(&si, 0, sizeof si);
	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) != 0 && errno == ECHILD;
}

static void agent_exited(struct supervisor *sv, int status)
{
	char buf[32];

	sv->exited_at = now_ms();
	sv->agent = 0;
	if (WIFEXITED(status)) {
		sv->exit_code = WEXITSTATUS(status);
		log_debug("agent exited with status %d", sv->exit_code);
	} else if (WIFSIGNALED(status)) {
		sv->exit_code = 128 + WTERMSIG(status);
		log_debug("agent killed by signal %s", sig_str(WTERMSIG(status), buf, sizeof buf));
	} else {
		sv->exit_code = 1;
	}
	/* If it died before exec, the pipe holds why; the child is gone, so
	 * whatever it wrote is there to read now. */
	check_started(sv);
	close_errfd(sv);

	sv->state = AGENT_DRAINING;
	if (no_children(sv)) {
		drained(sv);
		return;
	}
	if (sv->killed) {
		/* already past the grace period of a shutdown */
		signal_all(sv, SIGKILL);
		set_timer(sv, now_ms() + FINAL_WAIT_MS);
		return;
	}
	log_debug("agent gone; sending TERM to what it left behind");
	signal_all(sv, SIGTERM);
	set_timer(sv, sv->stopping ? sv->stop_deadline : now_ms() + sv->cfg->grace_ms);
}

static void reap(struct supervisor *sv)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);

		if (pid > 0) {
			int i;

			if (pid == sv->agent) {
				agent_exited(sv, status);
				continue;
			}
			for (i = 0; i < sv->n_services && sv->services[i].pid != pid; i++)
				;
			if (i < sv->n_services)
				service_exited(&sv->services[i], status);
			else
				log_debug("reaped pid %d", (int)pid);
			continue;
		}
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0 && errno != ECHILD)
			log_warn("waitpid: %s", strerror(errno));
		break;
	}
	if (sv->state == AGENT_DRAINING && no_children(sv))
		drained(sv);
}

/* ---- signals and timers ---------------------------------------------- */

static void begin_stop(struct supervisor *sv)
{
	if (sv->stopping)
		return;
	sv->stopping = 1;
	hold_services(sv);
	sv->stop_deadline = now_ms() + sv->cfg->grace_ms;
	if (sv->state == AGENT_RUNNING)
		set_timer(sv, sv->stop_deadline);
	else if (sv->state == AGENT_WAIT_RESTART)
		finish(sv); /* nothing runs: stop now with the last status */
}

static void forward(struct supervisor *sv, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo, to = sig;
	char b1[32], b2[32];

	/* the agent's terminal is PID 1's pty: its size changes, which
	 * signals the agent's foreground group itself */
	if (sig == SIGWINCH && sv->on_winch) {
		sv->on_winch(sv->on_winch_arg);
		return;
	}
	if (sig < WARD_NSIG && sv->cfg->rewrite[sig] >= 0)
		to = sv->cfg->rewrite[sig];
	/* a TERM rewritten to something else still stops the agent (its
	 * grace, then KILL); one rewritten to 0 is dropped altogether */
	if (to != 0 && (sig == SIGTERM || to == SIGTERM))
		begin_stop(sv);
	if (to == 0) {
		log_debug("dropped %s (signal_rewrite)", sig_str(sig, b1, sizeof b1));
		return;
	}
	if (sv->state != AGENT_RUNNING || sv->agent <= 0) {
		log_debug("%s received while no agent runs", sig_str(sig, b1, sizeof b1));
		return;
	}
	if (kill(sv->cfg->forward_to == FORWARD_GROUP ? -sv->agent : sv->agent, to) != 0 &&
	    errno != ESRCH)
		log_warn("forwarding %s: %s", sig_str(to, b2, sizeof b2), strerror(errno));
	else if (log_enabled(LOG_DEBUG))
		log_debug("forwarded %s as %s", sig_str(sig, b1, sizeof b1), sig_str(to, b2, sizeof b2));
}

static void on_signals(struct supervisor *sv)
{
	struct signalfd_siginfo si[16];

	for (;;) {
		ssize_t n = read(sv->sfd, si, sizeof si);
		size_t i;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		for (i = 0; i < (size_t)n / sizeof si[0]; i++) {
			if (si[i].ssi_signo == SIGCHLD)
				reap(sv);
			else if ((pid_t)si[i].ssi_pid == sv->self && si[i].ssi_code == SI_USER)
				/* e.g. SIGPIPE from our own write to a closed stderr */
				continue;
			else
				forward(sv, &si[i]);
		}
	}
}

static void on_timer(struct supervisor *sv)
{
	uint64_t expirations;

	if (read(sv->tfd, &expirations, sizeof expirations) < 0)
		return;
	switch (sv->state) {
	case AGENT_RUNNING:
		if (!sv->stopping || now_ms() < sv->stop_deadline)
			return;
		if (sv->killed) {
			/* frozen (a cgroup freezer) or in uninterruptible sleep */
			log_error("%s survives SIGKILL; stopping without it", sv->argv[0]);
			sv->exit_code = 128 + SIGKILL;
			finish(sv);
			break;
		}
		log_warn("%s did not exit within %llums of TERM; sending KILL", sv->argv[0],
			 (unsigned long long)sv->cfg->grace_ms);
		sv->killed = 1;
		signal_all(sv, SIGKILL);
		set_timer(sv, now_ms() + FINAL_WAIT_MS);
		break;
	case AGENT_DRAINING:
		if (!sv->killed) {
			log_warn("processes left by %s did not exit within the grace period; "
				 "sending KILL", sv->argv[0]);
			sv->killed = 1;
			signal_all(sv, SIGKILL);
			set_timer(sv, now_ms() + FINAL_WAIT_MS);
		} else {
			log_error("processes survive SIGKILL; continuing without them");
			drained(sv);
		}
		break;
	case AGENT_WAIT_RESTART:
		if (stdin_at_eof()) {
			log_info("not restarting: stdin has reached end of file (the peer is gone)");
			finish(sv);
		} else if (supervisor_start(sv) != 0) {
			sv->exit_code = 1; /* as a first start that fails: not the last run's status */
			finish(sv);
		}
		break;
	case AGENT_DONE:
		break;
	}
}

/* ---- set-up ------------------------------------------------------------ */

static void on_errfd(void *owner)
{
	check_started(owner);
}

static void on_watch(void *owner)
{
	struct supervisor *sv = owner;

	sv->on_watch(sv->watch_arg, sv->started, sv->n_started < WARD_RECENT_AGENTS ? (int)sv->n_started
										 : WARD_RECENT_AGENTS);
}

static void on_signals_ready(void *owner)
{
	on_signals(owner);
}

static void on_timer_ready(void *owner)
{
	on_timer(owner);
}

int supervisor_init(struct supervisor *sv, const struct ward_config *cfg, char *const *argv,
		    char *const *envp, const sigset_t *child_mask, int cwd_fd)
{
	sigset_t all;

	memset(sv, 0, sizeof *sv);
	sv->cfg = cfg;
	sv->argv = argv;
	sv->envp = envp;
	sv->child_mask = *child_mask;
	sv->cwd_fd = cwd_fd;
	sv->self = getpid();
	sv->pid1 = sv->self == 1;
	/* the terminal's foreground group before the agent takes it (each
	 * agent makes its own group the foreground: child/exec.c) */
	sv->tty_pgrp = isatty(STDIN_FILENO) ? tcgetpgrp(STDIN_FILENO) : -1;
	sv->errfd = sv->relfd = sv->sfd = sv->epfd = sv->tfd = sv->watch_fd = sv->tty = -1;
	sv->restart_delay = cfg->restart_delay_ms;
	sv->on_sfd = (struct event_source){ &sv->sfd, on_signals_ready, sv };
	sv->on_tfd = (struct event_source){ &sv->tfd, on_timer_ready, sv };
	sv->on_errfd = (struct event_source){ &sv->errfd, on_errfd, sv };
	sv->on_watch_fd = (struct event_source){ &sv->watch_fd, on_watch, sv };
	if (cfg->restart_limit) {
		sv->restarts = calloc(cfg->restart_limit, sizeof *sv->restarts);
		if (!sv->restarts) {
			log_error("out of memory");
			return -1;
		}
	}
	/* every signal, 32 and 33 too (glibc's sigfillset leaves them out) */
	memset(&all, 0xff, sizeof all);
	sv->sfd = signalfd(-1, &all, SFD_NONBLOCK | SFD_CLOEXEC);
	sv->epfd = epoll_create1(EPOLL_CLOEXEC);
	sv->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (sv->sfd < 0 || sv->epfd < 0 || sv->tfd < 0) {
		log_error("cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	if (event_add(sv->epfd, &sv->on_sfd) != 0 || event_add(sv->epfd, &sv->on_tfd) != 0) {
		log_error("epoll_ctl: %s", strerror(errno));
		return -1;
	}
	return 0;
}

struct service *supervisor_start_service(struct supervisor *sv, const struct service_ops *ops, void *arg,
					 uint64_t ready_ms)
{
	struct service *s;
	pid_t pid;

	if (sv->n_services == WARD_MAX_SERVICES) {
		log_error("%s: no room for another service", ops->name);
		return NULL;
	}
	pid = service_first_start(ops, arg, (int)ready_ms);
	if (pid < 0)
		return NULL;
	s = &sv->services[sv->n_services];
	if (service_init(s, ops, arg, ready_ms, sv->epfd, pid) != 0) {
		service_free(s);
		kill(pid, SIGKILL); /* reaped by the loop, as any child */
		return NULL;
	}
	sv->n_services++;
	return s;
}

int supervisor_watch(struct supervisor *sv, int fd, void (*fn)(void *arg, const pid_t *agents, int n), void *arg)
{
	sv->watch_fd = fd;
	if (event_add(sv->epfd, &sv->on_watch_fd) != 0) {
		sv->watch_fd = -1;
		return -1;
	}
	sv->on_watch = fn;
	sv->watch_arg = arg;
	return 0;
}

int supervisor_fds(const struct supervisor *sv, int *fds, int max)
{
	int n = 0, i;
	const int all[] = { sv->sfd, sv->epfd, sv->tfd, sv->errfd, sv->relfd, sv->cwd_fd, sv->watch_fd };

	for (i = 0; i < (int)(sizeof all / sizeof all[0]) && n < max; i++)
		if (all[i] >= 0)
			fds[n++] = all[i];
	for (i = 0; i < sv->n_services && n < max; i++)
		n += service_fds(&sv->services[i], fds + n, max - n);
	return n;
}

int supervisor_run(struct supervisor *sv)
{
	int i;

	/* Once the agent has been started nothing here may end ward early:
	 * errors are logged and the loop goes on. */
	while (sv->state != AGENT_DONE) {
		struct epoll_event ev[8];
		int n = epoll_wait(sv->epfd, ev, 8, -1);

		if (n < 0) {
			if (errno != EINTR) {
				log_error("epoll_wait: %s", strerror(errno));
				sleep(1);
			}
			continue;
		}
		for (i = 0; i < n; i++)
			event_dispatch(&ev[i]);
	}
	/* the services last: the agent's teardown may still have needed them */
	for (i = sv->n_services - 1; i >= 0; i--)
		service_stop(&sv->services[i]);
	/* The terminal back to the group that had it (the shell's job that
	 * ran ward): left to the agent's dead group, the shell would stop on
	 * its next read from the terminal (SIGTTIN). Every signal is blocked
	 * here, SIGTTOU too, so this works from the background. */
	if (sv->tty_pgrp > 0 && isatty(STDIN_FILENO))
		(void)tcsetpgrp(STDIN_FILENO, sv->tty_pgrp);
	return sv->exit_code;
}

void supervisor_free(struct supervisor *sv)
{
	int i;

	close_errfd(sv);
	if (sv->sfd >= 0)
		close(sv->sfd);
	if (sv->epfd >= 0)
		close(sv->epfd);
	if (sv->tfd >= 0)
		close(sv->tfd);
	for (i = 0; i < sv->n_services; i++)
		service_free(&sv->services[i]);
	free(sv->restarts);
}
