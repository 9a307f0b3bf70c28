/* whoserve: PID 1's end of the bridge's "who asked?" socket pair
 * (common/who.h): each request read is answered at once from the kernel's
 * tables (init/egress/owner.h). A restarted bridge brings a new pair; a
 * malformed request is dropped. Without the egress guard every answer is
 * "not found". */
#ifndef WARD_WHOSERVE_H
#define WARD_WHOSERVE_H

#include "init/egress/guard.h"
#include "init/supervise/events.h"

struct whoserve {
	const struct guard *guard; /* NULL: no guard, nothing is found */
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
