#define _GNU_SOURCE
#include "init/supervise/guardproc.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "init/egress/serve.h"
#include "seccomp/notify.h"

static void arm(struct guardproc *g);

void guardproc_init(struct guardproc *g)
{
	int i;

	memset(g, 0, sizeof *g);
	g->epfd = g->tfd = g->guard.rtnl = g->guard.blocked.nl = -1;
	refusals_init(&g->guard.refusals);
	for (i = 0; i < GUARD_MAX_LISTENERS; i++)
		g->slot[i].fd = -1;
}

int guardproc_prepare(struct guardproc *g, const struct user_ids *agent, uint32_t port_range, int refusals_fd)
{
	guardproc_init(g);
	g->active = 1;
	/* without the route query the guard still holds every socket to lo:
	 * refused connects wait there, as they used to, and the log says so */
	(void)guard_open(&g->guard, agent->uid, agent->gid, port_range);
	g->guard.refusals.fd = refusals_fd;
	g->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (g->tfd < 0) {
		log_error("egress guard: timerfd: %s", strerror(errno));
		return 3;
	}
	return 0;
}

/* The next look at waiting connects, or the end of a window of refusal
 * lines, whichever comes first. */
static void arm(struct guardproc *g)
{
	struct itimerspec its = { 0 };
	uint64_t due = g->guard.blocked.due, w = g->guard.refusals.window;

	if (w && (g->guard.refusals.log_dropped) && (!due || w + REFUSALS_WINDOW_MS < due))
		due = w + REFUSALS_WINDOW_MS;
	if (due) {
		its.it_value.tv_sec = (time_t)(due / 1000);
		its.it_value.tv_nsec = (long)(due % 1000) * 1000000 + 1; /* 0 would disarm it */
	}
	(void)timerfd_settime(g->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void on_timer(void *owner)
{
	struct guardproc *g = owner;
	uint64_t n, now = now_ms();

	if (read(g->tfd, &n, sizeof n) < 0 && errno == EAGAIN)
		return;
	blocked_look(&g->guard.blocked, now);
	refusals_tick(&g->guard.refusals, now);
	arm(g);
}

static void close_slot(struct guardproc *g, struct guard_slot *s)
{
	if (s->fd < 0)
		return;
	if (g->epfd >= 0)
		(void)epoll_ctl(g->epfd, EPOLL_CTL_DEL, s->fd, NULL);
	close(s->fd);
	s->fd = -1;
}

/* A listener is readable (a call waits) or hung up (every process of
 * that agent is gone). epoll does not say which: poll does. RECV only
 * when a call waits: before Linux 6.6 a RECV with none pending sleeps on
 * a semaphore even after the listener hung up. */
static void on_listener(void *owner)
{
	struct guard_slot *s = owner;
	struct guardproc *g = s->owner;
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	if (poll(&p, 1, 0) != 1)
		return;
	if (p.revents & POLLIN) {
		uint64_t due = g->guard.blocked.due, w = g->guard.refusals.window;
		(void)guard_serve(&g->guard, s->fd, now_ms());
		if (g->guard.blocked.due != due || g->guard.refusals.window != w)
			arm(g);
	} else if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) {
		close_slot(g, s);
	}
}

int guardproc_bind(struct guardproc *g, int epfd)
{
	g->epfd = epfd;
	g->on_timer = (struct event_source){ &g->tfd, on_timer, g };
	return event_add(epfd, &g->on_timer);
}

void guardproc_attach(struct guardproc *g, int fd)
{
	struct guard_slot *s = NULL;
	int i;

	for (i = 0; i < GUARD_MAX_LISTENERS && !s; i++)
		if (g->slot[i].fd < 0)
			s = &g->slot[i];
	if (!s) {
		/* the oldest agent's: its calls now fail (ENOSYS), never pass */
		s = &g->slot[0];
		for (i = 1; i < GUARD_MAX_LISTENERS; i++)
			if (g->slot[i].seq < s->seq)
				s = &g->slot[i];
		close_slot(g, s);
	}
	s->fd = fd;
	s->seq = ++g->handed;
	s->owner = g;
	s->src = (struct event_source){ &s->fd, on_listener, s };
	/* best effort: older kernels answer EINVAL, and are slower only */
	(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	if (g->epfd < 0 || event_add(g->epfd, &s->src) != 0) {
		/* never served: its calls would wait for ever; closed, they fail */
		log_error("egress guard: cannot watch the agent's listener: %s", strerror(errno));
		close(s->fd);
		s->fd = -1;
	}
}

int guardproc_newest(const struct guardproc *g)
{
	int i, best = -1;
	unsigned seq = 0;

	for (i = 0; i < GUARD_MAX_LISTENERS; i++)
		if (g->slot[i].fd >= 0 && g->slot[i].seq >= seq) {
			seq = g->slot[i].seq;
			best = g->slot[i].fd;
		}
	return best;
}

int guardproc_fds(const struct guardproc *g, int *fds, int max)
{
	int n = 0, i;
	const int all[] = { g->tfd, g->guard.rtnl, g->guard.blocked.nl, g->guard.refusals.fd };

	for (i = 0; i < (int)(sizeof all / sizeof all[0]) && n < max; i++)
		if (all[i] >= 0)
			fds[n++] = all[i];
	for (i = 0; i < GUARD_MAX_LISTENERS && n < max; i++)
		if (g->slot[i].fd >= 0)
			fds[n++] = g->slot[i].fd;
	return n;
}

void guardproc_free(struct guardproc *g)
{
	int i;

	for (i = 0; i < GUARD_MAX_LISTENERS; i++)
		close_slot(g, &g->slot[i]);
	if (g->tfd >= 0)
		close(g->tfd);
	guard_close(&g->guard);
	guardproc_init(g);
}
