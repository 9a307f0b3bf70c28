#define _GNU_SOURCE
#include "mcp-bridge/bridge.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "mcp-bridge/resolve.h"

#define RETRY_MS 10 /* a unix upstream whose backlog is full is tried again this often */

/* Every upstream is tried at once, within HEALTH_MS in all however many
 * routes there are: PID 1 waits for the bridge to be ready. */
#define HEALTH_MS 1000

/* The socket for route i's check: its address, or a name's first from
 * /etc/hosts; a name DNS must answer is looked up now (its answer waits
 * for the first request) and not checked: -1 with err 0. */
static int check_connect(const struct bridge_routes *r, struct resolver *res, int i, int *err)
{
	const struct name *e;
	int fd;

	*err = 0;
	if (r->v[i].proxy)
		return -1; /* no upstream of its own: each tunnel's is checked as it comes */
	if (!r->v[i].up.name[0]) {
		fd = upstream_connect(&r->v[i].up);
	} else {
		e = resolver_get(res, i, now_ms());
		if (!e)
			return -1;
		fd = upstream_connect_addr((const struct sockaddr *)&e->addr[0].sa, e->addr[0].len);
	}
	if (fd < 0)
		*err = errno ? errno : EIO;
	return fd;
}

int bridge_health(const struct bridge_routes *r, struct resolver *res)
{
	struct pollfd *p = calloc((size_t)r->n + 1, sizeof *p);
	int *err = calloc((size_t)r->n + 1, sizeof *err), i, ok = 0, waiting;
	uint64_t end = now_ms() + HEALTH_MS;

	if (!p || !err) {
		free(p);
		free(err);
		return 0;
	}
	/* err[i]: 0 while in progress (p[i].fd >= 0) or answered, EAGAIN
	 * while a unix upstream's backlog is full (tried again), else why not */
	for (i = 0; i < r->n; i++) {
		p[i].fd = check_connect(r, res, i, &err[i]);
		p[i].events = POLLOUT;
	}
	for (;;) {
		uint64_t now = now_ms();
		int busy = 0, n;

		waiting = 0;
		for (i = 0; i < r->n; i++) {
			if (p[i].fd < 0 && err[i] == EAGAIN && now < end)
				p[i].fd = check_connect(r, res, i, &err[i]);
			waiting += p[i].fd < 0 && err[i] == EAGAIN;
			busy += p[i].fd >= 0;
		}
		if ((!busy && !waiting) || now >= end)
			break;
		n = poll(p, (nfds_t)r->n, waiting ? RETRY_MS : (int)(end - now));
		if (n < 0 && errno != EINTR)
			break;
		for (i = 0; n > 0 && i < r->n; i++) {
			socklen_t len = sizeof err[i];
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			if (getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &err[i], &len) != 0)
				err[i] = errno;
			close(p[i].fd);
			p[i].fd = -1;
			if (!err[i])
				ok++;
		}
	}
	for (i = 0; i < r->n; i++) {
		if (p[i].fd >= 0) {
			close(p[i].fd);
			err[i] = ETIMEDOUT;
		}
		if (err[i])
			log_warn("bridge: route=%s upstream %s does not answer: %s (its tools will be missing "
				 "until it does)", r->v[i].name, r->v[i].up.desc, strerror(err[i]));
	}
	free(p);
	free(err);
	return ok;
}
