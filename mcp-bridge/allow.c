#define _GNU_SOURCE
#include "mcp-bridge/allow.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/parse.h"

/* PORT or LO-HI after the host, or the default when there is none. */
static int ports(const char *s, size_t len, struct allow_rule *r, const char **why)
{
	const char *dash = memchr(s, '-', len);
	uint64_t lo, hi;

	if (!len)
		return *why = "expected a port after ':'", -1;
	if (!dash) {
		if (parse_digits(s, len, 5, 65535, &lo) != 0 || lo == 0)
			return *why = "the port must be 1-65535 (or LO-HI)", -1;
		r->port_lo = r->port_hi = (unsigned)lo;
		return 0;
	}
	if (parse_digits(s, (size_t)(dash - s), 5, 65535, &lo) != 0 || lo == 0 ||
	    parse_digits(dash + 1, len - (size_t)(dash - s) - 1, 5, 65535, &hi) != 0 || hi < lo)
		return *why = "a port range is LO-HI, 1 <= LO <= HI <= 65535", -1;
	r->port_lo = (unsigned)lo;
	r->port_hi = (unsigned)hi;
	return 0;
}

/* An address with an optional /N, the host bits cleared. */
static int network(const char *s, size_t len, int family, struct allow_rule *r, const char **why)
{
	char text[INET6_ADDRSTRLEN + 1];
	const char *slash = memchr(s, '/', len);
	size_t alen = slash ? (size_t)(slash - s) : len;
	unsigned max = family == AF_INET ? 32 : 128, b;
	uint64_t prefix = max;

	if (!alen || alen >= sizeof text)
		return *why = "expected an address", -1;
	memcpy(text, s, alen);
	text[alen] = '\0';
	if (inet_pton(family, text, r->addr) != 1)
		return *why = family == AF_INET ? "not an IPv4 address" : "not an IPv6 address", -1;
	if (slash && parse_digits(slash + 1, len - alen - 1, 3, max, &prefix) != 0)
		return *why = family == AF_INET ? "a prefix is /0-/32" : "a prefix is /0-/128", -1;
	if (family == AF_INET6 && prefix >= 96 && allow_literal(text, &r->family, r->addr) && r->family == AF_INET) {
		/* ::ffff:a.b.c.d/N is the IPv4 range it maps */
		prefix -= 96;
		family = AF_INET;
		max = 32;
	}
	r->kind = ALLOW_NET;
	r->family = family;
	r->prefix = (unsigned)prefix;
	for (b = r->prefix; b < max; b++)
		r->addr[b / 8] &= (unsigned char)~(0x80u >> (b % 8));
	return 0;
}

int allow_parse(const char *s, size_t len, struct allow_rule *r, const char **why)
{
	const char *host = s, *colon;
	size_t hlen;

	memset(r, 0, sizeof *r);
	r->port_lo = r->port_hi = ALLOW_DEFAULT_PORT;
	if (!len || memchr(s, '\0', len))
		return *why = "expected HOST[:PORT], *.SUFFIX[:PORT] or ADDRESS[/N][:PORT]", -1;
	if (s[0] == '[') {
		/* [IPV6], then /N, then :PORT, each but the first optional */
		const char *close = memchr(s, ']', len), *after;
		char buf[INET6_ADDRSTRLEN + 8];
		size_t rest, alen, plen = 0;

		if (!close)
			return *why = "an IPv6 address goes in brackets: [IPV6][/N][:PORT]", -1;
		alen = (size_t)(close - s) - 1;
		after = close + 1;
		rest = len - (size_t)(after - s);
		if (rest && *after == '/') {
			const char *c = memchr(after, ':', rest);
			plen = c ? (size_t)(c - after) : rest;
		}
		if (rest > plen && after[plen] != ':')
			return *why = "expected ':' after ']'", -1;
		if (alen + plen + 1 > sizeof buf)
			return *why = "not an IPv6 address", -1;
		memcpy(buf, s + 1, alen);
		memcpy(buf + alen, after, plen);
		if (network(buf, alen + plen, AF_INET6, r, why) != 0)
			return -1;
		return rest > plen ? ports(after + plen + 1, rest - plen - 1, r, why) : 0;
	}
	colon = memchr(s, ':', len);
	if (colon && memchr(colon + 1, ':', len - (size_t)(colon - s) - 1))
		return *why = "an IPv6 address goes in brackets: [IPV6][/N][:PORT]", -1;
	hlen = colon ? (size_t)(colon - s) : len;
	if (colon && ports(colon + 1, len - hlen - 1, r, why) != 0)
		return -1;
	if (!hlen)
		return *why = "expected a host before the port", -1;
	/* digits and dots (and a prefix): an address, never a name
	 * (upstream_name_ok refuses a last label of digits) */
	{
		const char *slash = memchr(host, '/', hlen);
		size_t alen = slash ? (size_t)(slash - host) : hlen, i = 0;
		while (i < alen && (isdigit((unsigned char)host[i]) || host[i] == '.'))
			i++;
		if (slash || i == alen)
			return network(host, hlen, AF_INET, r, why);
	}
	if (hlen > 2 && host[0] == '*' && host[1] == '.') {
		r->kind = ALLOW_SUFFIX;
		host += 2;
		hlen -= 2;
	} else if (memchr(host, '*', hlen)) {
		return *why = "a wildcard is written *.SUFFIX, in front only", -1;
	} else {
		r->kind = ALLOW_NAME;
	}
	if (hlen && host[hlen - 1] == '.')
		hlen--;
	if (!hlen || host[hlen - 1] == '.' || !upstream_name_ok(host, hlen))
		return *why = "not a DNS name (letters, digits and '-' in labels of 1-63)", -1;
	if (r->kind == ALLOW_SUFFIX && !memchr(host, '.', hlen))
		return *why = "*.SUFFIX needs a SUFFIX of two labels or more (*.example.com, not *.com)", -1;
	for (size_t i = 0; i < hlen; i++)
		r->name[i] = (char)tolower((unsigned char)host[i]);
	r->name[hlen] = '\0';
	return 0;
}

const char *allow_text(const struct allow_rule *r, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN], p[16];
	unsigned max = r->family == AF_INET ? 32 : 128;

	if (r->port_lo == r->port_hi)
		snprintf(p, sizeof p, "%u", r->port_lo);
	else
		snprintf(p, sizeof p, "%u-%u", r->port_lo, r->port_hi);
	if (r->kind != ALLOW_NET) {
		snprintf(buf, size, "%s%s:%s", r->kind == ALLOW_SUFFIX ? "*." : "", r->name, p);
		return buf;
	}
	if (!inet_ntop(r->family, r->addr, a, sizeof a))
		snprintf(a, sizeof a, "?");
	if (r->family == AF_INET6 && r->prefix == max)
		snprintf(buf, size, "[%s]:%s", a, p);
	else if (r->family == AF_INET6)
		snprintf(buf, size, "[%s]/%u:%s", a, r->prefix, p);
	else if (r->prefix == max)
		snprintf(buf, size, "%s:%s", a, p);
	else
		snprintf(buf, size, "%s/%u:%s", a, r->prefix, p);
	return buf;
}

int allow_literal(const char *host, int *family, unsigned char bytes[16])
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	unsigned char b[16];

	if (inet_pton(AF_INET, host, b) == 1) {
		*family = AF_INET;
		memcpy(bytes, b, 4);
		return 1;
	}
	if (inet_pton(AF_INET6, host, b) != 1)
		return 0;
	if (memcmp(b, mapped, 12) == 0) {
		*family = AF_INET;
		memcpy(bytes, b + 12, 4);
		return 1;
	}
	*family = AF_INET6;
	memcpy(bytes, b, 16);
	return 1;
}

static int in_range(const struct allow_rule *r, int family, const unsigned char *b)
{
	unsigned full = r->prefix / 8, rest = r->prefix % 8;

	if (r->kind != ALLOW_NET || r->family != family)
		return 0;
	if (memcmp(r->addr, b, full) != 0)
		return 0;
	return !rest || ((r->addr[full] ^ b[full]) & (unsigned char)(0xff00u >> rest)) == 0;
}

const struct allow_rule *allow_covers(const struct allow_rule *v, int n, int family, const unsigned char *bytes,
				      unsigned port)
{
	int i;

	for (i = 0; i < n; i++)
		if (port >= v[i].port_lo && port <= v[i].port_hi && in_range(&v[i], family, bytes))
			return &v[i];
	return NULL;
}

const struct allow_rule *allow_match(const struct allow_rule *v, int n, const char *host, unsigned port)
{
	char name[UPSTREAM_NAME_MAX + 2];
	unsigned char b[16];
	size_t len = strlen(host), i;
	int family;

	if (allow_literal(host, &family, b))
		return allow_covers(v, n, family, b, port);
	if (len && host[len - 1] == '.')
		len--;
	if (!len || len > UPSTREAM_NAME_MAX || host[len - 1] == '.' || !upstream_name_ok(host, len))
		return NULL;
	for (i = 0; i < len; i++)
		name[i] = (char)tolower((unsigned char)host[i]);
	name[len] = '\0';
	for (int k = 0; k < n; k++) {
		const struct allow_rule *r = &v[k];
		size_t rl = strlen(r->name);
		if (port < r->port_lo || port > r->port_hi)
			continue;
		if (r->kind == ALLOW_NAME && strcmp(r->name, name) == 0)
			return r;
		if (r->kind == ALLOW_SUFFIX && len > rl + 1 && name[len - rl - 1] == '.' &&
		    memcmp(name + len - rl, r->name, rl) == 0)
			return r;
	}
	return NULL;
}
