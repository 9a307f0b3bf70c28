/* upstream: where a route's requests go: unix:PATH, tcp:HOST:PORT,
 * vsock:CID:PORT, tls:HOST:PORT (TCP, then TLS: see tls.h). HOST is a
 * numeric IPv4 address, localhost, or a DNS name that the bridge resolves
 * itself on use (resolve.h). */
#ifndef WARD_UPSTREAM_H
#define WARD_UPSTREAM_H

#include <stddef.h>
#include <sys/socket.h>

/* UP_PROXY: the egress proxy's, which has no upstream of its own: each
 * tunnel connects where its CONNECT asks, if [proxy] allow lets it. */
enum upstream_kind { UP_UNIX, UP_TCP, UP_VSOCK, UP_TLS, UP_PROXY };

#define UPSTREAM_NAME_MAX 253 /* a DNS name's longest text form, without a final dot */

struct upstream {
	enum upstream_kind kind;
	struct sockaddr_storage addr; /* unset for a name: resolve.c finds its addresses */
	socklen_t len;
	unsigned port;			    /* tcp: and tls: */
	char name[UPSTREAM_NAME_MAX + 1];   /* tcp:/tls: by name, or "" (an address) */
	int fqdn;			    /* written with a final dot: looked up as is, no search domain */
	int public_only;		    /* a provider's API host: private answers refused too (resolve.h) */
	int dns_only;			    /* /etc/hosts not taken: a name mcp.json gave, not the operator (resolve.h) */
	char desc[300];			    /* as written */
	char default_host[UPSTREAM_NAME_MAX + 8]; /* Host when the route sets none */
};

/* Parses a spec; 0 or -1 with why. */
int upstream_parse(const char *spec, struct upstream *u, const char **why);

/* The name in a Host value (HOST, HOST:PORT, [IPV6] or [IPV6]:PORT): the
 * TLS server name. 0, or -1 if the value is not of that form (an unclosed
 * bracket, a port that is not 1-65535, a second colon outside brackets)
 * or the name does not fit in size. */
int host_server_name(const char *host, char *name, size_t size);

/* A DNS host name as an upstream may name it: letters, digits and '-' in
 * labels of 1-63 characters that neither start nor end with '-', at most
 * 253 in all, a final dot allowed, and a last label that is not all digits
 * (so 10.1 or 0x7f.1 is never read as a name). 1 if it is one. */
int upstream_name_ok(const char *s, size_t n);

/* A unix: upstream whose path is not a socket now (its connects would
 * fail: a daemon's endpoint not up, a relay nobody made). 1 if so. */
int upstream_unix_absent(const struct upstream *u);

/* A non-blocking connect to an upstream by address (not by name); returns
 * the fd (connecting or connected) or -1. */
int upstream_connect(const struct upstream *u);

/* The same to one address (a name's, as resolved). */
int upstream_connect_addr(const struct sockaddr *sa, socklen_t len);

#endif
