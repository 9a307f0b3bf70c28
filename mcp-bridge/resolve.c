#define _GNU_SOURCE
#include "mcp-bridge/resolve.h"

#include <ares.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"

/* The entry a c-ares callback is about, and the resolver to tell. */
struct lookup {
	struct resolver *r;
	int route;
};

static ares_channel channel_of(const struct resolver *r)
{
	return (ares_channel)r->channel;
}

/* c-ares opens and closes its sockets itself; each is mirrored into the
 * resolver's own epoll set, which the loop polls as one descriptor. */
static void sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct resolver *r = data;
	struct epoll_event ev = { .events = (readable ? EPOLLIN : 0u) | (writable ? EPOLLOUT : 0u), .data.fd = fd };

	if (!readable && !writable) {
		(void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, fd, NULL); /* about to be closed */
		return;
	}
	if (epoll_ctl(r->epfd, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
		(void)epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* What went wrong, in words a 502's reader can act on. */
static const char *cause(int status)
{
	switch (status) {
	case ARES_ENOTFOUND:
		return "no such name (NXDOMAIN)";
	case ARES_ENODATA:
		return "the name has no A or AAAA record";
	case ARES_ETIMEOUT:
		return "the resolver did not answer";
	case ARES_ECONNREFUSED:
		return "the resolver refused the connection";
	case ARES_ESERVFAIL:
		return "the resolver failed (SERVFAIL)";
	case ARES_EREFUSED:
		return "the resolver refused the query";
	case ARES_EBADRESP:
	case ARES_EFORMERR:
		return "the resolver's answer was malformed";
	case ARES_ECANCELLED:
	case ARES_EDESTRUCTION:
		return "the lookup was cancelled";
	default:
		return ares_strerror(status);
	}
}

/* One address (4 or 16 bytes of family) into e, unless it is there
 * already or e is full. The bytes are taken apart from any sockaddr: a
 * sockaddr_in read through a struct sockaddr pointer is an aliasing the
 * compiler may assume away (it did, once inlined). */
static int keep(struct name *e, int family, const void *bytes, uint32_t scope)
{
	struct name_addr *a;
	size_t len = family == AF_INET ? sizeof(struct in_addr) : sizeof(struct in6_addr);
	int i;

	if (e->n == NAME_MAX_ADDRS || (family != AF_INET && family != AF_INET6))
		return 0;
	for (i = 0; i < e->n; i++) {
		const struct name_addr *o = &e->addr[i];
		if (o->family == family && memcmp(o->bytes, bytes, len) == 0)
			return 0;
	}
	a = &e->addr[e->n++];
	memset(a, 0, sizeof *a);
	a->family = family;
	memcpy(a->bytes, bytes, len);
	if (family == AF_INET) {
		struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)e->port) };
		memcpy(&s4.sin_addr, bytes, len);
		memcpy(&a->sa, &s4, sizeof s4);
		a->len = (socklen_t)sizeof s4;
	} else {
		struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)e->port),
					   .sin6_scope_id = scope };
		memcpy(&s6.sin6_addr, bytes, len);
		memcpy(&a->sa, &s6, sizeof s6);
		a->len = (socklen_t)sizeof s6;
	}
	return 1;
}

const char *resolver_refuses(int family, const unsigned char *b, int public_only)
{
	static const unsigned char zero[12] = { 0 }, mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (family == AF_INET) {
		if (b[0] == 0)
			return "unspecified";
		if (b[0] == 127)
			return "loopback";
		if (b[0] == 169 && b[1] == 254)
			return "link-local";
		if (b[0] >= 224)
			return b[0] < 240 ? "multicast" : "reserved";
		if (public_only && (b[0] == 10 || (b[0] == 172 && (b[1] & 0xf0) == 16) || (b[0] == 192 && b[1] == 168) ||
				    (b[0] == 100 && (b[1] & 0xc0) == 64)))
			return "private";
		return NULL;
	}
	if (memcmp(b, mapped, 12) == 0)
		return "IPv4-mapped";
	if (memcmp(b, zero, 12) == 0)
		return b[12] || b[13] || b[14] || b[15] > 1 ? "IPv4-compatible" : b[15] ? "loopback" : "unspecified";
	/* addresses a gateway turns into an IPv4 one of its choosing: NAT64
	 * (64:ff9b::/96, 64:ff9b:1::/48, where DNS64 answers any name) and
	 * 6to4 (2002::/16) could reach a private or metadata address */
	if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b &&
	    ((b[4] == 0 && b[5] == 0 && !memcmp(b + 6, zero, 6)) || (b[4] == 0 && b[5] == 1)))
		return "NAT64";
	if (b[0] == 0x20 && b[1] == 0x02)
		return "6to4";
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return "link-local";
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		return "site-local";
	if (b[0] == 0xff)
		return "multicast";
	if (public_only && (b[0] & 0xfe) == 0xfc)
		return "private";
	return NULL;
}

const char *resolver_refuses_under(int family, const unsigned char *b, unsigned port, const struct allow_rule *v,
				   int n)
{
	const char *why = resolver_refuses(family, b, 1);
	const struct allow_rule *r;

	/* what a rule may lift: a class of addresses a person can mean (a
	 * database in the pod, a mirror on the LAN, a service on loopback),
	 * never one that stands for another address (mapped, NAT64) */
	if (!why || (strcmp(why, "private") != 0 && strcmp(why, "link-local") != 0 && strcmp(why, "loopback") != 0))
		return why;
	r = allow_covers(v, n, family, b, port);
	/* and only a rule that names a network, not the whole internet
	 * (0.0.0.0/0 is "any address", not "the metadata service") */
	if (r && r->prefix >= (family == AF_INET ? 8u : 7u))
		return NULL;
	return why;
}

/* A DNS answer's address, unless it is refused (counted, the first named). */
static int keep_answer(struct name *e, int family, const void *bytes, uint32_t scope)
{
	/* a proxy's name: an address rule may let a private answer through */
	const char *why = e->exempt ? resolver_refuses_under(family, bytes, e->port, e->exempt, e->n_exempt)
				    : resolver_refuses(family, bytes, e->public_only);
	char text[INET6_ADDRSTRLEN];

	if (!why)
		return keep(e, family, bytes, scope);
	if (!e->refused++ && inet_ntop(family, bytes, text, sizeof text)) {
		snprintf(e->refused_what, sizeof e->refused_what, "%s (%s)", text, why);
		e->refused_class = why;
	}
	return 0;
}

/* A node's address, if it is one of its family's, whole. */
static int node_keep(struct name *e, const struct ares_addrinfo_node *n)
{
	if (n->ai_family == AF_INET && n->ai_addrlen >= (socklen_t)sizeof(struct sockaddr_in)) {
		struct sockaddr_in s4;
		memcpy(&s4, n->ai_addr, sizeof s4);
		return s4.sin_family == AF_INET && keep_answer(e, AF_INET, &s4.sin_addr, 0);
	}
	if (n->ai_family == AF_INET6 && n->ai_addrlen >= (socklen_t)sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 s6;
		memcpy(&s6, n->ai_addr, sizeof s6);
		return s6.sin6_family == AF_INET6 && keep_answer(e, AF_INET6, &s6.sin6_addr, s6.sin6_scope_id);
	}
	return 0;
}

int resolver_take(struct name *e, const struct ares_addrinfo_node *nodes, unsigned *ttl)
{
	const struct ares_addrinfo_node *n;
	int pass;
	unsigned t = NAME_TTL_MAX_S;

	e->n = 0;
	e->refused = 0;
	e->refused_what[0] = '\0';
	e->refused_class = NULL;
	/* IPv4 first: containers and pods without IPv6 routes are common, and
	 * an address that cannot be reached costs a connect timeout */
	for (pass = 0; pass < 2; pass++)
		for (n = nodes; n; n = n->ai_next) {
			if (!n->ai_addr || n->ai_family != (pass ? AF_INET6 : AF_INET))
				continue;
			if (node_keep(e, n) && (unsigned)(n->ai_ttl < 0 ? 0 : n->ai_ttl) < t)
				t = (unsigned)(n->ai_ttl < 0 ? 0 : n->ai_ttl);
		}
	*ttl = t;
	return e->n;
}

/* A lookup ended (inside a c-ares call): the entry takes the answer or
 * its failure; the waiters are told later, by resolver_next. */
static void on_answer(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	struct lookup *lk = arg;
	struct resolver *r = lk->r;
	struct name *e = &r->v[lk->route];
	unsigned ttl = 0;

	(void)timeouts;
	free(lk);
	if (status == ARES_EDESTRUCTION) {
		/* the channel is being destroyed: nobody waits any more */
		if (res)
			ares_freeaddrinfo(res);
		return;
	}
	e->querying = 0;
	if (status == ARES_SUCCESS && res && resolver_take(e, res->nodes, &ttl) > 0) {
		e->expires = now_ms() + (uint64_t)ttl * 1000;
		e->why[0] = '\0';
	} else if (status == ARES_SUCCESS && e->refused) {
		e->n = 0;
		/* the class only: the agent, which has no DNS of its own, must
		 * not map addresses through any name under an allowed suffix;
		 * the address itself is in ward's log */
		snprintf(e->why, sizeof e->why, "cannot resolve %s: it answered only addresses the bridge does not "
			 "connect to (%s addresses)", e->host, e->refused_class ? e->refused_class : "refused");
		log_warn("bridge: %s: every address of its answer refused, such as %s", e->host, e->refused_what);
	} else {
		e->n = 0;
		snprintf(e->why, sizeof e->why, "cannot resolve %s: %s", e->host,
			 status == ARES_SUCCESS ? "the answer held no address" : cause(status));
	}
	if (e->refused && e->n)
		log_warn("bridge: %s: %u address(es) of its answer not connected to, such as %s", e->host, e->refused,
			 e->refused_what);
	if (res)
		ares_freeaddrinfo(res);
	if (!e->answered) {
		e->answered = 1;
		r->pending++;
	}
}

static void start_lookup(struct resolver *r, int route)
{
	struct name *e = &r->v[route];
	struct ares_addrinfo_hints h;
	struct lookup *lk = malloc(sizeof *lk);

	if (!lk) {
		e->n = 0;
		snprintf(e->why, sizeof e->why, "cannot resolve %s: out of memory", e->host);
		if (!e->answered) {
			e->answered = 1;
			r->pending++;
		}
		return;
	}
	lk->r = r;
	lk->route = route;
	memset(&h, 0, sizeof h);
	/* A and AAAA; no sorting: c-ares would sort by connecting a UDP socket
	 * to each address, calls the bridge's filter has no business allowing */
	h.ai_family = AF_UNSPEC;
	h.ai_socktype = SOCK_STREAM;
	h.ai_flags = ARES_AI_NOSORT;
	e->querying = 1;
	e->lookups++;
	log_debug("bridge: resolving %s (lookup %u)", e->host, e->lookups);
	if (e->fqdn) {
		/* whole: c-ares tries no search domain before it */
		char whole[UPSTREAM_NAME_MAX + 2];
		snprintf(whole, sizeof whole, "%s.", e->host);
		ares_getaddrinfo(channel_of(r), whole, NULL, &h, on_answer, lk);
		return;
	}
	ares_getaddrinfo(channel_of(r), e->host, NULL, &h, on_answer, lk);
}

/* The name's line of /etc/hosts, if it has one: its addresses for good. */
static void hosts_entry(ares_channel ch, struct name *e)
{
	static const int families[] = { AF_INET, AF_INET6 };
	size_t f;

	for (f = 0; f < sizeof families / sizeof families[0]; f++) {
		struct hostent *he = NULL;
		char **p;

		if (ares_gethostbyname_file(ch, e->host, families[f], &he) != ARES_SUCCESS || !he)
			continue;
		for (p = he->h_addr_list; *p; p++) {
			if ((he->h_addrtype == AF_INET && he->h_length == (int)sizeof(struct in_addr)) ||
			    (he->h_addrtype == AF_INET6 && he->h_length == (int)sizeof(struct in6_addr)))
				keep(e, he->h_addrtype, *p, 0);
		}
		ares_free_hostent(he);
	}
	e->fixed = e->n > 0;
}

/* The proxy's exactly named hosts that /etc/hosts lists: read now, before
 * the lock-down, as the routes' names are (a pod's hostAliases, docker's
 * --add-host). */
static int proxy_hosts(struct resolver *r, ares_channel ch, const struct proxy_policy *p)
{
	static const int families[] = { AF_INET, AF_INET6 };
	int i;

	r->hosts = calloc((size_t)p->n_allow, sizeof *r->hosts);
	if (!r->hosts && p->n_allow)
		return -1;
	for (i = 0; i < p->n_allow; i++) {
		struct hosts_name *h = &r->hosts[r->n_hosts];
		size_t f;

		if (p->allow[i].kind != ALLOW_NAME)
			continue;
		snprintf(h->name, sizeof h->name, "%s", p->allow[i].name);
		h->n = 0;
		for (f = 0; f < sizeof families / sizeof families[0]; f++) {
			struct hostent *he = NULL;
			char **a;

			if (ares_gethostbyname_file(ch, h->name, families[f], &he) != ARES_SUCCESS || !he)
				continue;
			for (a = he->h_addr_list; *a && h->n < NAME_MAX_ADDRS; a++) {
				size_t len = he->h_addrtype == AF_INET ? 4 : 16;
				if ((he->h_addrtype != AF_INET && he->h_addrtype != AF_INET6) || he->h_length != (int)len)
					continue;
				h->family[h->n] = he->h_addrtype;
				memcpy(h->bytes[h->n++], *a, len);
			}
			ares_free_hostent(he);
		}
		if (h->n)
			r->n_hosts++;
	}
	return 0;
}

/* A proxy's entry for a name /etc/hosts gave: its addresses for good,
 * judged as an answer is. */
static void hosts_fill(const struct resolver *r, struct name *e)
{
	int i, k;

	for (i = 0; i < r->n_hosts; i++) {
		const struct hosts_name *h = &r->hosts[i];
		if (strcasecmp(h->name, e->host) != 0)
			continue;
		for (k = 0; k < h->n; k++)
			keep_answer(e, h->family[k], h->bytes[k], 0);
		e->fixed = 1;
		e->expires = UINT64_MAX;
		if (!e->n)
			snprintf(e->why, sizeof e->why, "cannot resolve %.120s: /etc/hosts gives it only addresses the "
				 "bridge does not connect to (%s addresses)", e->host,
				 e->refused_class ? e->refused_class : "refused");
		return;
	}
}

/* A resolver on this namespace's loopback (or none in resolv.conf: c-ares
 * then asks 127.0.0.1) could be answered by a process of the agent's that
 * binds UDP port 53 there before it does; said once at start. */
static void warn_loopback_servers(ares_channel ch)
{
	struct ares_addr_port_node *servers = NULL, *s;

	if (ares_get_servers_ports(ch, &servers) != ARES_SUCCESS)
		return;
	for (s = servers; s; s = s->next) {
		const unsigned char *b = s->family == AF_INET ? (const unsigned char *)&s->addr.addr4
							     : (const unsigned char *)&s->addr.addr6;
		const char *why = resolver_refuses(s->family, b, 0);
		char text[INET6_ADDRSTRLEN];
		if (why && strcmp(why, "loopback") == 0 && inet_ntop(s->family, b, text, sizeof text)) {
			log_warn("bridge: its resolver %s is on loopback: an agent that may bind UDP port 53 there could "
				 "answer for it ([seccomp] deny = udp keeps it from that)", text);
			break;
		}
	}
	ares_free_data(servers);
}

int resolver_init(struct resolver *r, const struct bridge_routes *routes, char *err, size_t errsize)
{
	struct ares_options o;
	ares_channel ch = NULL;
	char lookups[] = "b"; /* DNS only: /etc/hosts was read before the lock-down */
	int i, named = 0, dynamic = 0, rc;

	memset(r, 0, sizeof *r);
	r->epfd = -1;
	for (i = 0; i < routes->n; i++)
		named += routes->v[i].up.name[0] != '\0';
	for (i = 0; i < routes->n; i++)
		dynamic = routes->v[i].proxy ? RESOLVE_DYNAMIC : dynamic;
	if (!named && !dynamic)
		return 0;
	r->v = calloc((size_t)routes->n + (size_t)dynamic, sizeof *r->v);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!r->v || r->epfd < 0) {
		snprintf(err, errsize, "resolver: %s", strerror(errno ? errno : ENOMEM));
		return -1;
	}
	r->n_routes = routes->n;
	r->n = routes->n + dynamic;
	/* c-ares 1.18 seeds its query ids from /dev/urandom, and silently from
	 * rand() without it: predictable ids make answers easy to forge */
	rc = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (rc < 0) {
		snprintf(err, errsize, "resolver: /dev/urandom: %s (DNS query ids would be predictable)", strerror(errno));
		return -1;
	}
	close(rc);
	if ((rc = ares_library_init(ARES_LIB_INIT_ALL)) != ARES_SUCCESS) {
		snprintf(err, errsize, "resolver: c-ares: %s", ares_strerror(rc));
		return -1;
	}
	memset(&o, 0, sizeof o);
	o.timeout = RESOLVE_TIMEOUT_MS;
	o.tries = RESOLVE_TRIES;
	o.lookups = lookups;
	o.sock_state_cb = sock_state;
	o.sock_state_cb_data = r;
	/* reads /etc/resolv.conf (servers, search, ndots) now, before the
	 * lock-down; the timeouts are ward's, whatever resolv.conf says */
	rc = ares_init_options(&ch, &o, ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_LOOKUPS | ARES_OPT_SOCK_STATE_CB);
	if (rc != ARES_SUCCESS) {
		snprintf(err, errsize, "resolver: c-ares: %s", ares_strerror(rc));
		return -1;
	}
	r->channel = ch;
	for (i = 0; i < routes->n; i++) {
		const struct upstream *u = &routes->v[i].up;
		if (!u->name[0])
			continue;
		r->v[i].host = u->name;
		r->v[i].port = u->port;
		r->v[i].fqdn = u->fqdn;
		r->v[i].public_only = u->public_only;
		/* an mcp.json server's name: /etc/hosts lists the sandbox's own
		 * names (localhost's variants, its hostname), whose addresses
		 * are judged by nothing and where the agent could listen: DNS
		 * answers only, each judged */
		if (!u->dns_only)
			hosts_entry(ch, &r->v[i]);
	}
	for (i = 0; i < routes->n; i++)
		if (routes->v[i].proxy && proxy_hosts(r, ch, routes->v[i].proxy) != 0) {
			snprintf(err, errsize, "resolver: out of memory");
			return -1;
		}
	warn_loopback_servers(ch);
	return 0;
}

const struct name *resolver_get(struct resolver *r, int route, uint64_t now)
{
	struct name *e;

	if (!r->channel || route < 0 || route >= r->n || !r->v[route].host)
		return NULL;
	e = &r->v[route];
	/* fixed: /etc/hosts's, kept even when it gave nothing the bridge
	 * connects to (the proxy's: then the dial fails with e->why) */
	if (e->fixed || (e->n && now < e->expires))
		return e;
	if (!e->querying)
		start_lookup(r, route);
	return NULL;
}

int resolver_hold(struct resolver *r, const char *host, unsigned port, const struct allow_rule *exempt, int n_exempt,
		  uint64_t now)
{
	struct name *e;
	int i, pick = -1;

	if (!r->channel)
		return -1;
	for (i = r->n_routes; i < r->n; i++) {
		e = &r->v[i];
		if (e->host && e->port == port && strcasecmp(e->own, host) == 0) {
			pick = i;
			break;
		}
		/* else the free entry used least recently */
		if (!e->refs && !e->querying && !e->answered && (pick < 0 || e->used < r->v[pick].used))
			pick = i;
	}
	if (pick < 0)
		return -1;
	e = &r->v[pick];
	if (!e->host || e->port != port || strcasecmp(e->own, host) != 0) {
		memset(e, 0, sizeof *e);
		snprintf(e->own, sizeof e->own, "%s", host);
		e->host = e->own;
		e->port = port;
		e->fqdn = strchr(host, '.') != NULL;
		e->public_only = 1;
		e->exempt = exempt;
		e->n_exempt = n_exempt;
		hosts_fill(r, e);
	}
	e->refs++;
	e->used = now;
	return pick;
}

void resolver_release(struct resolver *r, int i)
{
	if (i >= r->n_routes && i < r->n && r->v[i].refs > 0)
		r->v[i].refs--;
}

void resolver_stale(struct resolver *r, int route)
{
	if (r->channel && route >= 0 && route < r->n && !r->v[route].fixed)
		r->v[route].expires = 0;
}

int resolver_fd(const struct resolver *r)
{
	return r->channel ? r->epfd : -1;
}

int resolver_timeout_ms(const struct resolver *r)
{
	struct timeval tv, *t;

	if (!r->channel)
		return -1;
	t = ares_timeout(channel_of(r), NULL, &tv);
	if (!t)
		return -1;
	return (int)(t->tv_sec * 1000 + (t->tv_usec + 999) / 1000);
}

void resolver_process(struct resolver *r)
{
	struct epoll_event ev[16];
	int n, i;

	if (!r->channel)
		return;
	n = epoll_wait(r->epfd, ev, 16, 0);
	for (i = 0; i < n; i++) {
		ares_socket_t fd = ev[i].data.fd;
		ares_process_fd(channel_of(r), (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) ? fd : ARES_SOCKET_BAD,
				(ev[i].events & EPOLLOUT) ? fd : ARES_SOCKET_BAD);
	}
	/* the timeouts that are due */
	ares_process_fd(channel_of(r), ARES_SOCKET_BAD, ARES_SOCKET_BAD);
}

int resolver_next(struct resolver *r)
{
	int i;

	for (i = 0; r->pending && i < r->n; i++)
		if (r->v[i].answered) {
			r->v[i].answered = 0;
			r->pending--;
			return i;
		}
	return -1;
}

void resolver_free(struct resolver *r)
{
	if (r->channel)
		ares_destroy(channel_of(r));
	if (r->epfd >= 0)
		close(r->epfd);
	free(r->v);
	free(r->hosts);
	memset(r, 0, sizeof *r);
	r->epfd = -1;
}
