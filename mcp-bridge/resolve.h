/* resolve: the bridge's names (tcp:NAME:PORT, tls:NAME:PORT), resolved by
 * the bridge itself with c-ares, on its own event loop, and kept for their
 * answer's TTL. One entry per route; routes by address have none.
 *
 * What is read when: the channel is made in the bridge process before it
 * locks itself down (c-ares reads /etc/resolv.conf there, and its random
 * query ids are seeded there, never in PID 1, whose copy every restarted
 * bridge would share). /etc/hosts is read then too, once: a name it lists
 * keeps those addresses for the bridge's life, and DNS is never asked for
 * it; for the proxy, so are the names its allow rules list exactly (a name
 * under a *.suffix rule is known only at a tunnel: it goes to DNS), and
 * their addresses are judged as DNS answers are. After the lock-down the bridge opens no file: queries go to the
 * resolv.conf servers only (UDP, and TCP for a truncated answer, port 53). */
#ifndef WARD_RESOLVE_H
#define WARD_RESOLVE_H

#include <stdint.h>
#include <sys/socket.h>

#include "mcp-bridge/allow.h"
#include "mcp-bridge/route.h"

#define NAME_MAX_ADDRS 8	  /* addresses kept per name, IPv4 first */
#define NAME_TTL_MAX_S 3600	  /* an answer is kept at most this long */
#define RESOLVE_TIMEOUT_MS 1500	  /* one query's first wait (c-ares doubles it for the next try) */
#define RESOLVE_TRIES 2		  /* tries per server */
#define RESOLVE_WAIT_MS 10000	  /* a request waits for an answer at most this long */
#define RESOLVE_DYNAMIC 256	  /* the proxy's names, entries after the routes' (resolver_hold) */

struct name_addr {
	struct sockaddr_storage sa; /* with the route's port, for connect() */
	socklen_t len;
	int family;		    /* AF_INET or AF_INET6 */
	unsigned char bytes[16];    /* the address alone */
};

/* One route's name: its addresses while they are fresh, or why there are
 * none. */
struct name {
	const char *host; /* the route's upstream name; NULL: the route has none */
	unsigned port;
	struct name_addr addr[NAME_MAX_ADDRS];
	int n;		  /* addresses held (0: none, or the last lookup failed) */
	uint64_t expires; /* now_ms() past which they are stale */
	int fixed;	  /* from /etc/hosts: never stale */
	int querying;	  /* a lookup is in flight */
	int answered;	  /* a lookup ended and its waiters are not yet told */
	unsigned lookups; /* lookups started, for the debug line */
	int fqdn;	  /* looked up as written, no search domain (upstream.h) */
	int public_only;  /* a provider's public host: private answers refused too */
	int dns_only;	  /* its /etc/hosts line not taken (upstream.h) */
	unsigned refused; /* addresses of the last answer not taken (resolver_refuses) */
	char refused_what[96]; /* the first of them, and why: ward's log only */
	const char *refused_class; /* its class ("link-local"): what a refusal says */
	char why[320];	  /* the last lookup's failure, for the 502 and the log */
	/* the proxy's entries: the name (host points here), the tunnels that
	 * wait for or use it, when it was last held, and the [proxy] allow
	 * address rules under which a private answer is taken */
	char own[UPSTREAM_NAME_MAX + 1];
	int refs;
	uint64_t used;
	const struct allow_rule *exempt;
	int n_exempt;
};

/* A name of the proxy's allow rules that /etc/hosts lists, and its
 * addresses there (resolver_init). */
struct hosts_name {
	char name[UPSTREAM_NAME_MAX + 1];
	int n;
	int family[NAME_MAX_ADDRS];
	unsigned char bytes[NAME_MAX_ADDRS][16];
};

struct resolver {
	void *channel; /* ares_channel; NULL when no route has a name */
	struct hosts_name *hosts; /* the proxy's names in /etc/hosts */
	int n_hosts;
	int epfd;      /* the c-ares sockets, polled as one descriptor by the loop */
	struct name *v; /* indexed like the routes, then the proxy's entries */
	int n;		/* entries in all */
	int n_routes;
	int pending; /* entries answered whose waiters are not yet told */
};

/* In the bridge, before its lock-down: the channel (resolv.conf), each
 * name's /etc/hosts entry, and RESOLVE_DYNAMIC entries for the proxy's
 * names when a route is the proxy. 0 (also when no route has a name and
 * none is the proxy: then nothing is made), or -1 with err. */
int resolver_init(struct resolver *r, const struct bridge_routes *routes, char *err, size_t errsize);

/* A proxy tunnel's name: its entry, found or taken (a free one, or the
 * least recently used that no tunnel holds), held until resolver_release.
 * A name /etc/hosts gave at init keeps those addresses (never stale; none
 * if every one is refused: then it fails, DNS is not asked); another is
 * looked up in DNS, as written when it has a dot (no search domain). Its
 * private answers are refused unless one of exempt's address rules covers
 * them. -1 when every entry is held. */
int resolver_hold(struct resolver *r, const char *host, unsigned port, const struct allow_rule *exempt, int n_exempt,
		  uint64_t now);
void resolver_release(struct resolver *r, int i);

/* The name's addresses if they are fresh at now; else NULL, and a lookup
 * is started unless one is in flight (its end is told by resolver_next). */
const struct name *resolver_get(struct resolver *r, int route, uint64_t now);

/* The addresses failed (every one refused or timed out): the next
 * resolver_get looks the name up again. */
void resolver_stale(struct resolver *r, int route);

/* The c-ares sockets' descriptor for the loop's epoll set (-1: none), and
 * how long until c-ares wants its timeouts run (-1: never). */
int resolver_fd(const struct resolver *r);
int resolver_timeout_ms(const struct resolver *r);

/* Reads what is ready and runs the timeouts. */
void resolver_process(struct resolver *r);

/* A route whose lookup ended since the last call, for its waiters to go on
 * (the answer, or its failure, is in its entry); -1 when none is left.
 * Lookups end inside c-ares's calls; the loop tells their waiters here,
 * outside them. */
int resolver_next(struct resolver *r);

void resolver_free(struct resolver *r);

/* Pure: why an address a DNS answer gave is not one the bridge connects
 * to, or NULL. Never: unspecified, loopback, link-local, multicast and
 * reserved addresses, IPv4-mapped or -compatible IPv6 (an answer that
 * points the route, and the key it carries, at this namespace's own
 * services or the cloud's metadata address); with public_only also the
 * private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7); also
 * NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16) and site-local
 * (fec0::/10), which a gateway may turn into any IPv4 address. An
 * address from /etc/hosts is the runtime's and is not judged. bytes: 4 or
 * 16 of family. */
const char *resolver_refuses(int family, const unsigned char *bytes, int public_only);

/* Pure: the same for the egress proxy, as public_only, but for an address
 * that an allow rule names on port: private, link-local and loopback ones
 * are taken when a rule of a /8 or narrower (IPv6: /7) covers them.
 * NULL, or why not. */
const char *resolver_refuses_under(int family, const unsigned char *bytes, unsigned port, const struct allow_rule *v,
				   int n);

/* Pure: an answer's addresses into e (IPv4 first, duplicates dropped, at
 * most NAME_MAX_ADDRS, each with e->port; those resolver_refuses() counted
 * in e->refused), and its TTL in seconds: the smallest of the kept
 * addresses', capped at NAME_TTL_MAX_S. The number kept.
 * For the fuzzer and the tests too. */
struct ares_addrinfo_node;
int resolver_take(struct name *e, const struct ares_addrinfo_node *nodes, unsigned *ttl);

#endif
