/* allow: the hosts the egress proxy ([proxy] allow) tunnels to, parsed
 * once into rules and matched against each CONNECT's host and port. Pure:
 * PID 1 parses them with the config (and --check, --explain show them);
 * the bridge matches with them.
 *
 * A rule is one of
 *   NAME[:PORT]          exactly that DNS name (any case, a final dot ignored)
 *   *.SUFFIX[:PORT]      any name under SUFFIX (a.SUFFIX, a.b.SUFFIX; not SUFFIX)
 *   IPV4[/N][:PORT]      an address or range, CONNECT to it by address, and
 *   [IPV6][/N][:PORT]    the exception to the proxy's refusal of private,
 *                        loopback and link-local answers: a name whose DNS
 *                        answer falls in it is connected to.
 * PORT is 1-65535, or LO-HI; 443 when left out. */
#ifndef WARD_ALLOW_H
#define WARD_ALLOW_H

#include <stddef.h>
#include <stdint.h>

#include "mcp-bridge/upstream.h"

#define ALLOW_DEFAULT_PORT 443

enum allow_kind { ALLOW_NAME, ALLOW_SUFFIX, ALLOW_NET };

struct allow_rule {
	enum allow_kind kind;
	char name[UPSTREAM_NAME_MAX + 1]; /* lower case, no final dot; SUFFIX without "*." */
	int family;			  /* ALLOW_NET: AF_INET or AF_INET6 */
	unsigned char addr[16];		  /* ALLOW_NET: the network, host bits cleared */
	unsigned prefix;		  /* ALLOW_NET: bits that must match */
	unsigned port_lo, port_hi;
};

/* One rule from the len bytes at s. 0, or -1 with *why. */
int allow_parse(const char *s, size_t len, struct allow_rule *r, const char **why);

/* The rule as written back (canonical form), into buf. */
const char *allow_text(const struct allow_rule *r, char *buf, size_t size);

/* The first rule that allows a CONNECT to host:port, or NULL. host is a
 * name (matched by NAME and SUFFIX rules, any case, a final dot ignored)
 * or an address literal (IPv4, or IPv6 without brackets: matched by NET
 * rules alone). */
const struct allow_rule *allow_match(const struct allow_rule *v, int n, const char *host, unsigned port);

/* The first NET rule whose range holds the address (4 or 16 bytes of
 * family) on port, or NULL: what lets a name's private answer through. */
const struct allow_rule *allow_covers(const struct allow_rule *v, int n, int family, const unsigned char *bytes,
				      unsigned port);

/* An address literal as a CONNECT may name it ("10.0.0.5", "fd00::5";
 * IPv4-mapped IPv6 read as IPv4): 1 with its family and bytes, else 0. */
int allow_literal(const char *host, int *family, unsigned char bytes[16]);

#endif
