/* whoserve: PID 1's end of the bridge's "who asked?" socket pair
 * (common/who.h): each request read is answered at once from the kernel's
 * tables (init/egress/owner.h). A restarted bridge brings a new pair; a
 * malformed request is dropped. Without the egress guard every answer is
 * "not found". One request per wake of the loop, and at most WHO_BURST
 * looked into at once, one more each WHO_REFILL_MS: the bridge (a
 * process that talks to the agent all day) cannot keep PID 1 looking;
 * past that the answer is "not found" at once. */
#ifndef WARD_WHOSERVE_H
#define WARD_WHOSERVE_H

#include <stdint.h>

#include "init/egress/guard.h"
#include "init/supervise/events.h"

#define WHO_BURST 8
#define WHO_REFILL_MS 3000

struct whoserve {
	const struct guard *guard; /* NULL: no guard, nothing is found */
	unsigned tokens;	   /* lookups it may make now */
	uint64_t refilled;	   /* when tokens last grew (ms, CLOCK_MONOTONIC) */
	int fd;			   /* PID 1's end; -1: none */
	int epfd;
	struct event_source src;
};

void whoserve_init(struct whoserve *w, const struct guard *guard, int epfd);

/* A (re)started bridge's pair: the last one's closed. */
void whoserve_attach(struct whoserve *w, int fd);

/* The descriptors it keeps open (close_fds_except). */
int whoserve_fds(const struct whoserve *w, int *fds, int max);

void whoserve_close(struct whoserve *w);

#endif
