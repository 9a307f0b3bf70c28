#define _GNU_SOURCE
#include "mcp-bridge/pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "mcp-bridge/tls.h"

int pool_eligible(const struct conn *c)
{
	const struct bridge_route *r = c->route;

	unsigned m = c->req.parser.method;
	int body = c->req.body_bytes > 0 || http_req_body_left(&c->req) > 0 || (c->req.parser.flags & F_CHUNKED);

	return !c->tun && !r->stream && !r->proxy && !c->replayed && (r->up.kind == UP_TLS || r->up.kind == UP_TCP) &&
	       c->req.parser.http_major == 1 && c->req.parser.http_minor == 1 &&
	       (!body || m == HTTP_POST || m == HTTP_PUT || m == HTTP_PATCH);
}

static struct pool *route_pool(struct loop *l, const struct conn *c)
{
	return l->pools ? &l->pools[c->route - l->routes->v] : NULL;
}

/* A kept connection closed: TLS says so first (best effort, as a stream's
 * end does), then the socket. */
static void drop(struct loop *l, struct kept *k)
{
	if (k->tls) {
		tls_close_notify(k->tls);
		tls_conn_free(k->tls);
		free(k->tls);
	}
	close(k->fd);
	l->n_kept--;
}

void pool_put(struct loop *l, struct conn *c)
{
	struct pool *p = route_pool(l, c);
	uint64_t idle_ms = c->keep_s && (uint64_t)(c->keep_s - 1) * 1000 < POOL_IDLE_MS ? (uint64_t)(c->keep_s - 1) * 1000
											 : POOL_IDLE_MS;

	if (c->up_polled)
		(void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, c->ufd, NULL);
	c->up_polled = 0;
	c->events[1] = 0;
	if (!p || now_ms() - c->up_born >= POOL_MAX_AGE_MS) {
		conn_close_upstream(c);
		return;
	}
	if (p->n == POOL_MAX) {
		drop(l, &p->v[0]);
		memmove(&p->v[0], &p->v[1], sizeof p->v[0] * (POOL_MAX - 1));
		p->n--;
	}
	p->v[p->n++] = (struct kept){ .fd = c->ufd, .tls = c->tls, .addr = c->addr, .until = now_ms() + idle_ms,
				      .born = c->up_born };
	l->n_kept++;
	c->ufd = -1;
	c->tls = NULL;
}

/* Nothing has come on a kept connection since its answer: a byte, the
 * server's FIN or a reset (its own idle limit, a restart) means it cannot
 * carry a request. */
static int quiet(int fd)
{
	char b;

	return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

int pool_take(struct loop *l, struct conn *c)
{
	struct pool *p = route_pool(l, c);
	uint64_t now = now_ms();

	/* the newest first: the least likely to have been closed meanwhile */
	while (p && p->n > 0) {
		struct kept k = p->v[--p->n];
		if (now < k.until && quiet(k.fd)) {
			l->n_kept--;
			c->ufd = k.fd;
			c->tls = k.tls;
			c->addr = k.addr;
			c->up_born = k.born;
			if (k.tls)
				k.tls->want_rd = k.tls->want_wr = 0;
			return 1;
		}
		log_debug("bridge: route=%s: a kept upstream connection %s", c->route->name,
			  now < k.until ? "was closed by its server" : "waited too long");
		drop(l, &k);
	}
	return 0;
}

void pool_sweep(struct loop *l, uint64_t now)
{
	int i, j;

	if (!l->n_kept)
		return;
	for (i = 0; i < l->routes->n; i++) {
		struct pool *p = &l->pools[i];
		for (j = 0; j < p->n;) {
			if (now < p->v[j].until) {
				j++;
				continue;
			}
			drop(l, &p->v[j]);
			memmove(&p->v[j], &p->v[j + 1], sizeof p->v[0] * (size_t)(p->n - j - 1));
			p->n--;
		}
	}
}
