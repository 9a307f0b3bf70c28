#define _GNU_SOURCE
#include "common/addr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/parse.h"

static int port_of(const char *s, size_t len, unsigned *port, const char **why)
{
	char buf[8];
	uint64_t v;

	if (!len || len >= sizeof buf)
		return *why = "expected a port (0..65535)", -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (parse_uint(buf, 0, 65535, &v, why) != 0)
		return -1;
	*port = (unsigned)v;
	return 0;
}

int addr_parse(const char *s, size_t len, struct tcp_dest *d, const char **why)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *host_at;
	size_t host_len;

	memset(d, 0, sizeof *d);
	if (memchr(s, '\0', len))
		return *why = "contains a NUL byte", -1;
	if (len && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close || (size_t)(close - s) + 1 >= len || close[1] != ':')
			return *why = "expected [IPV6]:PORT", -1;
		host_at = s + 1;
		host_len = (size_t)(close - s) - 1;
		colon = close + 1;
		d->family = AF_INET6;
	} else {
		colon = memrchr(s, ':', len);
		if (!colon)
			return port_of(s, len, &d->port, why);
		if (memchr(s, ':', (size_t)(colon - s)))
			return *why = "an IPv6 address goes in brackets: [IPV6]:PORT", -1;
		host_at = s;
		host_len = (size_t)(colon - s);
		d->family = AF_INET;
	}
	if (!host_len || host_len >= sizeof host)
		return *why = "expected an address before the port", -1;
	memcpy(host, host_at, host_len);
	host[host_len] = '\0';
	if (port_of(colon + 1, len - (size_t)(colon + 1 - s), &d->port, why) != 0)
		return -1;
	d->has_addr = 1;
	if (d->family == AF_INET) {
		if (inet_pton(AF_INET, host, &d->addr4) != 1)
			return *why = "not an IPv4 address (A.B.C.D)", -1;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &d->addr6) != 1)
		return *why = "not an IPv6 address", -1;
	if (IN6_IS_ADDR_V4MAPPED(&d->addr6)) {
		/* the kernel connects a mapped address as the IPv4 one */
		memcpy(&d->addr4, &d->addr6.s6_addr[12], 4);
		d->family = AF_INET;
	}
	return 0;
}

int addr_loopback(const struct tcp_dest *d)
{
	if (!d->has_addr)
		return 0;
	if (d->family == AF_INET)
		return (ntohl(d->addr4.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&d->addr6);
}

const char *addr_text(const struct tcp_dest *d, char *buf, size_t size)
{
	if (!d->has_addr || !inet_ntop(d->family, d->family == AF_INET ? (const void *)&d->addr4
								   : (const void *)&d->addr6,
				     buf, (socklen_t)size))
		snprintf(buf, size, "%s", "(any)");
	return buf;
}
