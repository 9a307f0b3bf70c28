/* guardproc: the egress guard (init/egress/guard.h) in PID 1's loop. Each
 * agent start sends PID 1 its filter's listener; each joins the loop's
 * epoll set and every notification on it is answered as it comes. An
 * agent's restart brings a new listener while the last one's processes
 * may still be going: up to GUARD_MAX_LISTENERS are served at once, the
 * oldest given up past that (its calls then fail with ENOSYS, never pass),
 * and one whose processes are all gone (it hangs up) is closed. A timer
 * brings the look at connects left waiting on lo (blocked.h) and the end
 * of each window of refusal lines. */
#ifndef WARD_GUARDPROC_H
#define WARD_GUARDPROC_H

#include <stdint.h>
#include <sys/types.h>

#include "common/users.h"
#include "init/egress/guard.h"
#include "init/supervise/events.h"

#define GUARD_MAX_LISTENERS 8

struct guardproc;

/* One listener's place in the loop: its descriptor, -1 when free. */
struct guard_slot {
	int fd;
	unsigned seq; /* its agent start, in order */
	struct guardproc *owner;
	struct event_source src;
};

struct guardproc {
	int active;		/* the agent's sockets go through it */
	struct guard guard;	/* the answers (init/egress/guard.h) */
	struct guard_slot slot[GUARD_MAX_LISTENERS];
	unsigned handed;	/* listeners received from agents' starts */
	int epfd;		/* the loop's set, once bound; else -1 */
	int tfd;		/* the timer, or -1 */
	struct event_source on_timer;
};

/* An inactive one, which guardproc_free() accepts. */
void guardproc_init(struct guardproc *g);

/* As root, before anything runs: the guard's netlink sockets; refusals_fd:
 * the agent's file of refusal lines (taken), or -1. 0, or 3 after logging
 * why. */
int guardproc_prepare(struct guardproc *g, const struct user_ids *agent, uint32_t port_range, int refusals_fd);

/* Joins the loop's set (its timer now, the listeners as they come). 0 or -1. */
int guardproc_bind(struct guardproc *g, int epfd);

/* The agent's child sent its listener: served from now on. Takes fd. */
void guardproc_attach(struct guardproc *g, int fd);

/* The listener of the newest agent start, or -1. */
int guardproc_newest(const struct guardproc *g);

int guardproc_fds(const struct guardproc *g, int *fds, int max);
void guardproc_free(struct guardproc *g);

#endif
