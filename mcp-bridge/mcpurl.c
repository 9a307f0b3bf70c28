#define _GNU_SOURCE
#include "mcp-bridge/mcpurl.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp-bridge/http.h"
#include "mcp-bridge/resolve.h"

static int said(char *err, size_t errsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int said(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return -1;
}

/* HOST, HOST:PORT, [V6] or [V6]:PORT: a name of letters, digits, '-', '.',
 * '_' and '~', or an IPv6 literal in brackets; the port 1-65535. It
 * becomes the Host line upstream (and the TLS name). */
static int authority_ok(const char *a)
{
	const char *p = a, *port;
	char *end;
	unsigned long v;

	if (*p == '[') {
		p++;
		p += strspn(p, "0123456789abcdefABCDEF:.");
		if (*p != ']' || p == a + 1)
			return 0;
		port = p + 1;
	} else {
		while (*p && (isalnum((unsigned char)*p) || strchr("-._~", *p)))
			p++;
		if (p == a)
			return 0;
		port = p;
	}
	if (*port == '\0')
		return 1;
	if (*port != ':' || !isdigit((unsigned char)port[1]))
		return 0;
	v = strtoul(port + 1, &end, 10);
	return *end == '\0' && v >= 1 && v <= 65535;
}

int mcp_url_split(const char *url, char *authority, size_t asize, char *target, size_t tsize, int *tls)
{
	const char *p, *slash;
	size_t alen;

	if (strncasecmp(url, "http://", 7) == 0)
		p = url + 7, *tls = 0;
	else if (strncasecmp(url, "https://", 8) == 0)
		p = url + 8, *tls = 1;
	else
		return -1;
	slash = p + strcspn(p, "/?#");
	alen = (size_t)(slash - p);
	if (alen == 0 || alen >= asize)
		return -1;
	memcpy(authority, p, alen);
	authority[alen] = '\0';
	if (!authority_ok(authority))
		return -1;
	if (strchr(slash, '#'))
		return -1;
	if (snprintf(target, tsize, "%s%s", *slash == '?' ? "/" : "", *slash ? slash : "/") >= (int)tsize)
		return -1;
	/* What the agent's client sends must be the route's path byte for
	 * byte: a WHATWG URL parser (Node's) percent-encodes these, in the
	 * path and in the query, and maps \ to / in the path. Non-ASCII is
	 * refused in requests. */
	{
		const char *q = strchr(target, '?');
		for (p = target; *p; p++)
			if ((unsigned char)*p >= 0x80 || strchr(q && p > q ? "\"<>'" : "\"<>`{}^\\", *p))
				return -1;
	}
	/* a path the bridge would refuse */
	if (!http_target_ok(target))
		return -1;
	return 0;
}

/* The host part of an authority (HOST of HOST:PORT, V6 of [V6]:PORT) into
 * host, and its port (def when none). */
static void authority_parts(const char *a, char *host, size_t size, unsigned *port, unsigned def)
{
	const char *colon = a[0] == '[' ? strchr(a, ']') : a, *end;

	colon = colon ? strchr(colon, ':') : NULL;
	end = colon ? colon : a + strlen(a);
	snprintf(host, size, "%.*s", (int)(end - a), a);
	*port = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : def;
}

int mcp_url_upstream(const char *authority, int tls, const struct mcp_where *where, struct upstream *up, char *err,
		     size_t errsize)
{
	char host[256], spec[400];
	unsigned char v4[4];
	const char *why = NULL;
	unsigned port;

	authority_parts(authority, host, sizeof host, &port, tls ? 443 : 80);
	/* the host's loopback: inside the sandbox 127.0.0.1 is the agent's
	 * own, where it could listen and be sent the headers; only a relay
	 * of that one port, made by whoever starts ward, reaches the host's
	 * (on 127.0.0.1: another loopback address is refused, the relay would
	 * carry it to a server that is not the one named) */
	if (strcasecmp(host, "localhost") == 0 || strcasecmp(host, "localhost.") == 0 ||
	    strcmp(host, "127.0.0.1") == 0 || strcmp(host, "0.0.0.0") == 0) {
		if (tls)
			return said(err, errsize, "https on the host's loopback: the relay carries http://; write "
				    "http://127.0.0.1:%u/...", port);
		if (!where->loopback)
			return said(err, errsize, "it is on the host's loopback (port %u), and nothing relays that "
				    "here ([mcp] loopback unset; ward-pi sets it)", port);
		if (snprintf(spec, sizeof spec, "unix:%s/%u.sock", where->loopback, port) >= (int)sizeof spec)
			return said(err, errsize, "[mcp] loopback's socket path is too long");
	} else if (host[0] == '[') {
		return said(err, errsize, "an IPv6 address in its url: give the server's name (on the host's "
			    "loopback, http://127.0.0.1:%u)", port);
	} else if (inet_pton(AF_INET, host, v4) == 1 && v4[0] == 127) {
		return said(err, errsize, "a loopback address other than 127.0.0.1: the relay reaches the host's "
			    "127.0.0.1:%u only", port);
	} else {
		if (inet_pton(AF_INET, host, v4) == 1 && (why = resolver_refuses(AF_INET, v4, 0)))
			return said(err, errsize, "its url's address is %s: not one the bridge connects to", why);
		snprintf(spec, sizeof spec, "%s:%s:%u", tls ? "tls" : "tcp", host, port);
	}
	if (upstream_parse(spec, up, &why) != 0)
		return said(err, errsize, "its url's host cannot be an upstream: %s", why);
	up->dns_only = 1;
	return 0;
}

