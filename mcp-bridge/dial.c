#define _GNU_SOURCE
#include "mcp-bridge/dial.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "mcp-bridge/resolve.h"
#include "mcp-bridge/tunnel.h"

const char *dial_desc(const struct conn *c)
{
	return c->tun ? c->tun->desc : c->route->up.desc;
}

const char *dial_name(const struct conn *c)
{
	return c->tun ? (c->tun->literal ? "" : c->tun->host) : c->route->up.name;
}

static const char *addr_text(const struct name_addr *a, char *buf, size_t size)
{
	if (!inet_ntop(a->family, a->bytes, buf, (socklen_t)size))
		snprintf(buf, size, "?");
	return buf;
}

/* From c->addr_i on: the first address that takes a connect. When none
 * is left, the name is looked up once more for this request (unless it
 * already waited for a lookup): a server that moved is followed at once,
 * whatever TTL the old answer had. */
static int try_addresses(struct loop *l, struct conn *c, const struct name *e)
{
	char text[INET6_ADDRSTRLEN];

	while (c->addr_i < e->n) {
		const struct name_addr *a = &e->addr[c->addr_i++];
		int fd = upstream_connect_addr((const struct sockaddr *)&a->sa, a->len);
		if (fd >= 0) {
			c->addr = *a;
			return fd;
		}
		log_warn("bridge: route=%s upstream %s at %s: %s", c->route->name, dial_desc(c),
			 addr_text(a, text, sizeof text), strerror(errno));
	}
	resolver_stale(l->res, c->name_i);
	if (!c->looked_up) {
		c->looked_up = 1;
		c->addr_i = 0;
		return dial_start(l, c);
	}
	snprintf(c->why, sizeof c->why, "no address of %s accepted the connection", dial_name(c));
	return DIAL_FAILED;
}

int dial_start(struct loop *l, struct conn *c)
{
	const struct name *e = resolver_get(l->res, c->name_i, now_ms());

	if (!e) {
		/* a lookup is under way; its answer is this request's own */
		c->looked_up = 1;
		return DIAL_WAIT;
	}
	if (!e->n) { /* /etc/hosts gave the proxy's name nothing it connects to */
		snprintf(c->why, sizeof c->why, "%s", e->why);
		return DIAL_FAILED;
	}
	return try_addresses(l, c, e);
}

int dial_answered(struct loop *l, struct conn *c)
{
	const struct name *e = &l->res->v[c->name_i];

	if (!e->n) {
		snprintf(c->why, sizeof c->why, "%s", e->why[0] ? e->why : "cannot resolve the upstream's name");
		return DIAL_FAILED;
	}
	c->addr_i = 0;
	return try_addresses(l, c, e);
}

int dial_next(struct loop *l, struct conn *c, const char *why)
{
	char text[INET6_ADDRSTRLEN];

	log_warn("bridge: route=%s upstream %s at %s: %s", c->route->name, dial_desc(c),
		 addr_text(&c->addr, text, sizeof text), why);
	return try_addresses(l, c, &l->res->v[c->name_i]);
}

int dial_more(const struct loop *l, const struct conn *c)
{
	return c->addr_i < l->res->v[c->name_i].n;
}
