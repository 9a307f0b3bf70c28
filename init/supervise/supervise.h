/* supervise: PID 1's loop. signalfd + timerfd on one epoll; forwards
 * signals, reaps every child, restarts the agent by policy and tears the
 * tree down (TERM, grace, KILL) before ward exits with the agent's code. */
#ifndef WARD_SUPERVISE_H
#define WARD_SUPERVISE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "init/config/config.h"
#include "init/supervise/events.h"
#include "init/supervise/service.h"

enum agent_state { AGENT_RUNNING, AGENT_DRAINING, AGENT_WAIT_RESTART, AGENT_DONE };

struct confine;

/* What the child noted on its way to exec (degradations, not failures). */
struct start_notes {
	int bounding_kept; /* capabilities left in the bounding set (no CAP_SETPCAP) */
	int securebits_err; /* errno if securebits could not be locked, else 0 */
	int egress_err;	    /* errno if the egress guard's filter could not be loaded */
	int egress_listener; /* the guard's listener arrived for this start */
};

/* Called once per start, right after the agent's exec succeeded. */
typedef void (*start_hook)(void *arg, pid_t agent, const struct start_notes *notes);

#define WARD_RECENT_AGENTS 8
#define WARD_MAX_SERVICES 4

struct supervisor {
	const struct ward_config *cfg;
	char *const *argv;
	char *const *envp;
	sigset_t child_mask; /* the mask the agent gets */
	int cwd_fd;	     /* where the agent starts */
	int close_child_fds; /* agent gets fds 0-2 only */
	int reset_child_signals; /* agent gets default dispositions */
	const struct confine *confine; /* NULL: agent keeps ward's credentials */
	start_hook on_start;
	void *on_start_arg;
	struct start_notes notes;
	/* a pty of PID 1's for the agent (ttyrelay.h), or -1; and what a
	 * SIGWINCH does then, instead of being forwarded */
	int tty;
	void (*on_winch)(void *arg);
	void *on_winch_arg;
	/* the agent's child sent its egress listener: takes the descriptor */
	void (*on_listener)(void *arg, int fd);
	void *on_listener_arg;

	/* the processes kept beside the agent (the bridge), restarted when
	 * they die, stopped after it */
	struct service services[WARD_MAX_SERVICES];
	int n_services;

	/* one more descriptor to poll (the audit log), and what to do when
	 * it is readable; -1: none */
	int watch_fd;
	void (*on_watch)(void *arg, const pid_t *agents, int n);
	void *watch_arg;
	/* the pids of the last agents started (they may have exited since) */
	pid_t started[WARD_RECENT_AGENTS];
	unsigned n_started;

	int sfd, epfd, tfd;
	pid_t tty_pgrp; /* the terminal's foreground group at start, given back at the end (-1: no terminal) */
	struct event_source on_sfd, on_tfd, on_errfd, on_watch_fd;
	pid_t self;
	int pid1; /* PID 1 of our pid namespace: kill(-1) is ours to use */

	enum agent_state state;
	pid_t agent;
	int errfd; /* the agent's exec-error pipe while it is starting */
	int hold_start; /* on_start runs while the agent waits before its exec */
	int relfd;	/* closing it lets a held agent exec; else -1 */
	int start_reported; /* on_start has run for this agent */
	int exec_failed;
	int exit_code;
	uint64_t started_at, exited_at;

	int stopping;	     /* TERM received: shut down, never restart */
	uint64_t stop_deadline;
	int killed;	     /* SIGKILL already sent in this drain */

	uint64_t restart_delay;
	uint64_t *restarts; /* ring of restart times (ms), restart_limit long */
	unsigned n_restarts;
};

/* Prepares the loop's descriptors. Returns 0, or -1 after logging. */
int supervisor_init(struct supervisor *sv, const struct ward_config *cfg, char *const *argv,
		    char *const *envp, const sigset_t *child_mask, int cwd_fd);

/* A service's first start, waited for until it is ready (ready_ms at
 * most): restarted from then on when it dies, stopped after the agent.
 * NULL after logging (and killing a started one). */
struct service *supervisor_start_service(struct supervisor *sv, const struct service_ops *ops, void *arg,
					 uint64_t ready_ms);

/* Polls fd too: fn(arg, the pids of the recent agents) when it is
 * readable. 0 or -1. */
int supervisor_watch(struct supervisor *sv, int fd, void (*fn)(void *arg, const pid_t *agents, int n), void *arg);

/* Starts the agent; returns -1 if it could not even be forked. */
int supervisor_start(struct supervisor *sv);

/* Descriptors the loop owns, for close_fds_except(). */
int supervisor_fds(const struct supervisor *sv, int *fds, int max);

/* Runs until everything is over; returns ward's exit code. */
int supervisor_run(struct supervisor *sv);

void supervisor_free(struct supervisor *sv);

#endif
