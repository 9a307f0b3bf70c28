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

#define RETRY_MS 10 /* a unix upstream whose backlog is full is tried again this often */

/* Every upstream is tried at once, within HEALTH_MS in all however many
 * routes there are: PID 1 waits for the bridge to be ready. */
#define HEALTH_MS 1000

int bridge_health(const struct bridge_routes *r)
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
		p[i].fd = upstream_connect(&r->v[i].up);
		p[i].events = POLLOUT;
		err[i] = p[i].fd < 0 ? errno : 0;
		if (p[i].fd < 0 && !err[i])
			err[i] = EIO;
	}
	for (;;) {
		uint64_t now = now_ms();
		int busy = 0, n;

		waiting = 0;
		for (i = 0; i < r->n; i++) {
			if (p[i].fd < 0 && err[i] == EAGAIN && now < end) {
				p[i].fd = upstream_connect(&r->v[i].up);
				err[i] = p[i].fd < 0 ? (errno ? errno : EIO) : 0;
			}
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
