/* service: a process PID 1 keeps running beside the agent (the MCP bridge,
 * the egress guard). Its first start comes
 * before the agent's and is waited for by its owner; after that PID 1
 * restarts it when it dies, with a backoff (250 ms doubling to 10 s, back
 * to 250 ms after a run of a minute), without holding up the loop: a
 * restarted one's reports are read as they come, and one not ready within
 * ready_ms is killed (the next try backs off). Stopped last of all. */
#ifndef WARD_SERVICE_H
#define WARD_SERVICE_H

#include <stdint.h>
#include <sys/types.h>

#include "init/supervise/events.h"

struct service_ops {
	const char *name; /* in log lines: "bridge" */
	/* Forks it. *note_fd: the read end (non-blocking) of the pipe its
	 * reports come on. Its pid, or -1 after logging why. */
	pid_t (*spawn)(void *arg, int *note_fd);
	/* Reads its reports: 1 ready (logged), 0 nothing more yet, -1 it
	 * failed or ended (logged). */
	int (*note)(void *arg, int fd, pid_t pid);
};

struct service {
	const struct service_ops *ops;
	void *arg;
	uint64_t ready_ms; /* how long a restart may take to be ready */
	int epfd;	   /* the loop's set, which its descriptors join */
	pid_t pid;	   /* running, or 0 */
	pid_t ready;	   /* pid once it has reported ready (confined), else 0 */
	int tfd;	   /* its timer: the next try, or a starting one's deadline */
	int nfd;	   /* a restarted one's report pipe until it is ready, else -1 */
	int stopping;	   /* ward is stopping: no more restarts */
	uint64_t started, delay;
	struct event_source on_timer, on_notes;
};

/* The first start, before the agent: spawns it and waits up to ready_ms
 * until it is ready. Its pid, or -1 after logging why (and killing it). */
pid_t service_first_start(const struct service_ops *ops, void *arg, int ready_ms);

/* Its timer, in the loop's set; pid: the first start, already ready.
 * 0, or -1 after logging. */
int service_init(struct service *s, const struct service_ops *ops, void *arg, uint64_t ready_ms, int epfd,
		 pid_t pid);

/* It was reaped: a restart is scheduled unless ward is stopping. */
void service_exited(struct service *s, int status);

/* Ward is stopping: no more restarts. */
void service_hold(struct service *s);

/* TERM, then KILL after 1 s, then 2 s at most for a frozen one: the last
 * thing ward stops. */
void service_stop(struct service *s);

/* The descriptors it owns, for close_fds_except(). */
int service_fds(const struct service *s, int *fds, int max);

void service_free(struct service *s);

#endif
