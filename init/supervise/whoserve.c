#define _GNU_SOURCE
#include "init/supervise/whoserve.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "init/egress/owner.h"

static void detach(struct whoserve *w)
{
	if (w->fd >= 0)
		close(w->fd); /* out of the epoll set with it */
	w->fd = -1;
}

/* Whether a lookup may be made now (the bucket: WHO_BURST, one more each
 * WHO_REFILL_MS). */
static int may_look(struct whoserve *w)
{
	uint64_t now = now_ms();

	while (w->tokens < WHO_BURST && now - w->refilled >= WHO_REFILL_MS) {
		w->tokens++;
		w->refilled += WHO_REFILL_MS;
	}
	if (w->tokens == WHO_BURST)
		w->refilled = now;
	if (!w->tokens)
		return 0;
	w->tokens--;
	return 1;
}

/* One request answered (the loop calls again while more wait); the
 * bridge's end gone: closed. */
static void on_ready(void *owner)
{
	struct whoserve *w = owner;
	struct who_req q;
	struct who_ans a;
	ssize_t n;

	n = recv(w->fd, &q, sizeof q, MSG_DONTWAIT);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		detach(w);
		return;
	}
	if (n != (ssize_t)sizeof q)
		return;
	memset(&a, 0, sizeof a);
	a.seq = q.seq;
	if (w->guard && may_look(w))
		owner_find(w->guard, &q, &a);
	(void)send(w->fd, &a, sizeof a, MSG_DONTWAIT | MSG_NOSIGNAL);
}

void whoserve_init(struct whoserve *w, const struct guard *guard, int epfd)
{
	memset(w, 0, sizeof *w);
	w->guard = guard;
	w->tokens = WHO_BURST;
	w->refilled = now_ms();
	w->fd = -1;
	w->epfd = epfd;
	w->src.fd = &w->fd;
	w->src.ready = on_ready;
	w->src.owner = w;
}

void whoserve_attach(struct whoserve *w, int fd)
{
	detach(w);
	w->fd = fd;
	if (event_add(w->epfd, &w->src) != 0) {
		log_warn("bridge: who asked: epoll_ctl: %s: questions name no process", strerror(errno));
		detach(w);
	}
}

int whoserve_fds(const struct whoserve *w, int *fds, int max)
{
	if (w->fd >= 0 && max > 0) {
		fds[0] = w->fd;
		return 1;
	}
	return 0;
}

void whoserve_close(struct whoserve *w)
{
	detach(w);
}
