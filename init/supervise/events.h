/* events: PID 1's epoll set. Each descriptor in it carries a pointer to
 * one of these, and the loop calls its handler: who owns a descriptor
 * says what its readiness means, with no chain of comparisons in the loop. */
#ifndef WARD_EVENTS_H
#define WARD_EVENTS_H

#include <sys/epoll.h>

struct event_source {
	const int *fd;		    /* the owner's descriptor: -1 once closed, and a later
				     * event of the same batch is dropped */
	void (*ready)(void *owner); /* it is readable */
	void *owner;
};

/* Adds *src->fd to the set for reading. 0, or -1 with errno. */
static inline int event_add(int epfd, struct event_source *src)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = src };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, *src->fd, &ev);
}

/* One event the loop was given: its owner's handler, if the descriptor is
 * still open. */
static inline void event_dispatch(const struct epoll_event *ev)
{
	const struct event_source *src = ev->data.ptr;

	if (*src->fd >= 0)
		src->ready(src->owner);
}

#endif
