/* libFuzzer target: upstreams as the config writes them (tcp:/tls: by
 * address or by DNS name, unix:, vsock:; mcp-bridge/upstream.c), and the
 * resolver's glue (mcp-bridge/resolve.c): an answer's address list, as
 * c-ares hands it over, taken into a name's entry. The first byte picks
 * which; the rest is the input. */
#include <ares.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/resolve.h"
#include "mcp-bridge/upstream.h"

static void parse(const uint8_t *data, size_t size)
{
	struct upstream u;
	const char *why = NULL;
	char *s = malloc(size + 1);

	if (!s)
		return;
	memcpy(s, data, size);
	s[size] = '\0';
	if (upstream_parse(s, &u, &why) == 0) {
		if (u.name[0] && (!upstream_name_ok(u.name, strlen(u.name)) || u.port == 0 || u.port > 65535))
			abort(); /* a name kept must be one */
		if (!memchr(u.default_host, '\0', sizeof u.default_host))
			abort();
	} else if (!why) {
		abort(); /* every refusal says why */
	}
	(void)upstream_name_ok(s, strlen(s));
	free(s);
}

/* Nodes from bytes: family (0: AF_INET, 1: AF_INET6, else junk), TTL (4),
 * the length c-ares says its address has (1), and up to 28 address bytes. */
static void take(const uint8_t *data, size_t size)
{
	struct ares_addrinfo_node nodes[32];
	struct sockaddr_storage addrs[32];
	struct name e;
	unsigned ttl = 0;
	int n = 0, kept, i;

	memset(&e, 0, sizeof e);
	e.port = 443;
	while (size >= 6 && n < 32) {
		struct ares_addrinfo_node *nd = &nodes[n];
		size_t len = data[5] % (sizeof addrs[0] + 1), have = size - 6 < 28 ? size - 6 : 28;

		memset(nd, 0, sizeof *nd);
		memset(&addrs[n], 0, sizeof addrs[n]);
		nd->ai_family = data[0] == 0 ? AF_INET : data[0] == 1 ? AF_INET6 : data[0];
		memcpy(&nd->ai_ttl, data + 1, 4);
		memcpy(&addrs[n], data + 6, have);
		nd->ai_addr = (struct sockaddr *)&addrs[n];
		nd->ai_addrlen = (ares_socklen_t)len;
		if (n)
			nodes[n - 1].ai_next = nd;
		n++;
		data += 6 + have;
		size -= 6 + have;
	}
	kept = resolver_take(&e, n ? &nodes[0] : NULL, &ttl);
	if (kept < 0 || kept > NAME_MAX_ADDRS || kept != e.n || ttl > NAME_TTL_MAX_S)
		abort();
	for (i = 0; i < e.n; i++) {
		/* IPv4 first, every address with the route's port */
		if ((e.addr[i].family != AF_INET && e.addr[i].family != AF_INET6) ||
		    (i && e.addr[i - 1].family == AF_INET6 && e.addr[i].family == AF_INET))
			abort();
		if (e.addr[i].len != (e.addr[i].family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		take(data + 1, size - 1);
	else
		parse(data + 1, size - 1);
	return 0;
}
