#define _GNU_SOURCE
#include "init/supervise/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

/* Everything that is ours except ward itself (and the bridge, which outlives
 * agent restarts): kill(-1) when we are PID 1 of the namespace and there is
 * no bridge, else the agent's group plus our descendants from /proc. */
static void signal_all(struct supervisor *sv, int sig)
{
	int n, pass = 0;

	if (sv->pid1 && sv->bridge <= 0) {
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
		n = signal_descendants(sv->self, sig, &sv->bridge, sv->bridge > 0);
	while (sig == SIGKILL && n > 0 && ++pass < 16);
	if (n < 0 && sv->agent > 0)
		(void)kill(sv->agent, sig);
}

static void set_timerfd(int fd, uint64_t deadline_ms)
{
	struct itimerspec its = { 0 };

	if (deadline_ms) {
		its.it_value.tv_sec = (time_t)(deadline_ms / 1000);
		its.it_value.tv_nsec = (long)(deadline_ms % 1000) * 1000000 + 1;
	}
	(void)timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void end_bridge_notes(struct supervisor *sv)
{
	if (sv->bnfd < 0)
		return;
	/* out of the set first: a child forked meanwhile may still hold it */
	(void)epoll_ctl(sv->epfd, EPOLL_CTL_DEL, sv->bnfd, NULL);
	close(sv->bnfd);
	sv->bnfd = -1;
}

/* The next try after the current delay, which then doubles (10 s at most). */
static void next_bridge_try(struct supervisor *sv, uint64_t now)
{
	set_timerfd(sv->btfd, now + sv->bridge_delay);
	sv->bridge_delay = sv->bridge_delay * 2 > 10000 ? 10000 : sv->bridge_delay * 2;
}

static void bridge_exited(struct supervisor *sv, int status)
{
	uint64_t now = now_ms();

	sv->bridge = sv->bridge_ready = 0;
	end_bridge_notes(sv);
	if (sv->stopping || sv->state == AGENT_DONE)
		return;
	if (now - sv->bridge_started >= 60000)
		sv->bridge_delay = 250;
	sv->bridge_started = now_ms(); /* the first bridge starts right after this */
	log_warn("bridge died (%s %d); restarting it in %llums", WIFSIGNALED(status) ? "signal" : "status",
		 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
		 (unsigned long long)sv->bridge_delay);
	next_bridge_try(sv, now);
}

/* A restarted bridge that failed or is late: killed; its exit, reaped as
 * any, schedules the next try. */
static void drop_starting_bridge(struct supervisor *sv)
{
	end_bridge_notes(sv);
	if (sv->bridge > 0)
		(void)kill(sv->bridge, SIGKILL);
}

static void on_bridge_notes(struct supervisor *sv)
{
	int r = sv->bridge_note(sv->bridge_arg, sv->bnfd, sv->bridge);

	if (r == 0)
		return;
	if (r < 0) {
		drop_starting_bridge(sv);
		return;
	}
	end_bridge_notes(sv);
	set_timerfd(sv->btfd, 0);
	sv->bridge_ready = sv->bridge;
}

static void on_bridge_timer(struct supervisor *sv)
{
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t x;

	if (read(sv->btfd, &x, sizeof x) < 0 || !sv->bridge_spawn || sv->stopping)
		return;
	if (sv->bnfd >= 0) {
		log_error("bridge: pid %d not ready after %llu ms; stopping it", (int)sv->bridge,
			  (unsigned long long)sv->bridge_ready_ms);
		drop_starting_bridge(sv);
		return;
	}
	if (sv->bridge > 0)
		return;
	sv->bridge_started = now_ms();
	sv->bridge = sv->bridge_spawn(sv->bridge_arg, &sv->bnfd);
	if (sv->bridge <= 0) {
		sv->bridge = 0;
		sv->bnfd = -1;
		log_warn("bridge: restart failed; trying again in %llums", (unsigned long long)sv->bridge_delay);
		next_bridge_try(sv, now_ms());
		return;
	}
	ev.data.fd = sv->bnfd;
	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, sv->bnfd, &ev) != 0) {
		log_error("bridge: epoll_ctl: %s", strerror(errno));
		drop_starting_bridge(sv);
		return;
	}
	set_timerfd(sv->btfd, sv->bridge_started + sv->bridge_ready_ms);
}

static void stop_bridge(struct supervisor *sv)
{
	int i, status;

	if (sv->bnfd >= 0 && sv->bridge > 0) {
		/* still starting: its signals are blocked until it is ready,
		 * and it serves no one yet */
		(void)kill(sv->bridge, SIGKILL);
	}
	end_bridge_notes(sv);
	if (sv->bridge <= 0)
		return;
	(void)kill(sv->bridge, SIGTERM);
	for (i = 0; i < 100; i++) {
		if (waitpid(sv->bridge, &status, WNOHANG) == sv->bridge) {
			sv->bridge = 0;
			return;
		}
		usleep(10000);
	}
	(void)kill(sv->bridge, SIGKILL);
	/* a frozen or stuck bridge does not go even then: 2 s, not for ever */
	for (i = 0; i < 200 && waitpid(sv->bridge, &status, WNOHANG) == 0; i++)
		usleep(10000);
	if (i == 200)
		log_error("bridge: pid %d survives SIGKILL; leaving it", (int)sv->bridge);
	sv->bridge = 0;
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
	};
	struct epoll_event ev = { .events = EPOLLIN };
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
	ev.data.fd = sv->errfd;
	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, sv->errfd, &ev) != 0) {
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

/* The agent's record pipe: notes and failures from the child; end of file
 * means the exec happened (or the child died, which reap() sees). */
static void check_started(struct supervisor *sv)
{
	struct record rec;
	int r;

	if (sv->errfd < 0)
		return;
	while ((r = record_read(sv->errfd, &rec)) == 1) {
		if (rec.kind == RECORD_NOTE && rec.what == NOTE_BOUNDING) {
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
	}
	if (r < 0)
		return; /* more to come */
	if (!sv->exec_failed && sv->agent > 0) {
		log_debug("agent pid %d running %s", (int)sv->agent, sv->argv[0]);
		report_start(sv);
	}
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

static void finish(struct supervisor *sv)
{
	sv->state = AGENT_DONE;
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

/* Returns 1 if ward has no children left (the bridge aside). */
static int no_children(const struct supervisor *sv)
{
	siginfo_t si;
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	if (sv->bridge <= 0) {
		memset(&si, 0, sizeof si);
		return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) != 0 && errno == ECHILD;
	}
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)sv->self, (int)sv->self);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) /* no CONFIG_PROC_CHILDREN: count them from /proc (signal 0) */
		return signal_descendants(sv->self, 0, &sv->bridge, 1) == 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n"))
		if (strtol(tok, NULL, 10) != sv->bridge)
			return 0;
	return 1;
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
			if (pid == sv->agent)
				agent_exited(sv, status);
			else if (pid == sv->bridge)
				bridge_exited(sv, status);
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

int supervisor_init(struct supervisor *sv, const struct ward_config *cfg, char *const *argv,
		    char *const *envp, const sigset_t *child_mask, int cwd_fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t all;

	memset(sv, 0, sizeof *sv);
	sv->cfg = cfg;
	sv->argv = argv;
	sv->envp = envp;
	sv->child_mask = *child_mask;
	sv->cwd_fd = cwd_fd;
	sv->self = getpid();
	sv->pid1 = sv->self == 1;
	sv->errfd = sv->relfd = sv->sfd = sv->epfd = sv->tfd = sv->btfd = sv->bnfd = sv->watch_fd = -1;
	sv->bridge_delay = 250;
	sv->restart_delay = cfg->restart_delay_ms;
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
	sv->btfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (sv->sfd < 0 || sv->epfd < 0 || sv->tfd < 0 || sv->btfd < 0) {
		log_error("cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	ev.data.fd = sv->sfd;
	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, sv->sfd, &ev) != 0)
		goto fail;
	ev.data.fd = sv->tfd;
	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, sv->tfd, &ev) != 0)
		goto fail;
	ev.data.fd = sv->btfd;
	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, sv->btfd, &ev) != 0)
		goto fail;
	return 0;
fail:
	log_error("epoll_ctl: %s", strerror(errno));
	return -1;
}

int supervisor_watch(struct supervisor *sv, int fd, void (*fn)(void *arg, const pid_t *agents, int n), void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
		return -1;
	sv->watch_fd = fd;
	sv->on_watch = fn;
	sv->watch_arg = arg;
	return 0;
}

int supervisor_fds(const struct supervisor *sv, int *fds, int max)
{
	int n = 0, i;
	const int all[] = { sv->sfd, sv->epfd, sv->tfd, sv->btfd, sv->errfd, sv->relfd, sv->cwd_fd, sv->watch_fd };

	for (i = 0; i < (int)(sizeof all / sizeof all[0]) && n < max; i++)
		if (all[i] >= 0)
			fds[n++] = all[i];
	return n;
}

int supervisor_run(struct supervisor *sv)
{
	/* Once the agent has been started nothing here may end ward early:
	 * errors are logged and the loop goes on. */
	while (sv->state != AGENT_DONE) {
		struct epoll_event ev[8];
		int n = epoll_wait(sv->epfd, ev, 8, -1), i;

		if (n < 0) {
			if (errno != EINTR) {
				log_error("epoll_wait: %s", strerror(errno));
				sleep(1);
			}
			continue;
		}
		for (i = 0; i < n; i++) {
			if (ev[i].data.fd == sv->sfd)
				on_signals(sv);
			else if (ev[i].data.fd == sv->tfd)
				on_timer(sv);
			else if (ev[i].data.fd == sv->btfd)
				on_bridge_timer(sv);
			else if (ev[i].data.fd == sv->bnfd && sv->bnfd >= 0)
				on_bridge_notes(sv);
			else if (ev[i].data.fd == sv->errfd && sv->errfd >= 0)
				check_started(sv);
			else if (ev[i].data.fd == sv->watch_fd && sv->watch_fd >= 0)
				sv->on_watch(sv->watch_arg, sv->started,
					     sv->n_started < WARD_RECENT_AGENTS ? (int)sv->n_started : WARD_RECENT_AGENTS);
		}
	}
	stop_bridge(sv);
	return sv->exit_code;
}

void supervisor_free(struct supervisor *sv)
{
	close_errfd(sv);
	if (sv->sfd >= 0)
		close(sv->sfd);
	if (sv->epfd >= 0)
		close(sv->epfd);
	if (sv->tfd >= 0)
		close(sv->tfd);
	if (sv->btfd >= 0)
		close(sv->btfd);
	if (sv->bnfd >= 0)
		close(sv->bnfd);
	free(sv->restarts);
}
