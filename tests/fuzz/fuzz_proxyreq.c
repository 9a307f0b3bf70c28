/* libFuzzer target: the egress proxy's request head (mcp-bridge/
 * proxyreq.c), as an agent sends it: whatever bytes come before the blank
 * line, with the methods its length picks (CONNECT alone, or with GET
 * and POST). A request taken names a host the rules can read and a port;
 * a plain one's origin form is no longer than the head and starts with a
 * path. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "mcp-bridge/allow.h"
#include "mcp-bridge/proxyreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proxy_req r;
	unsigned char b[16];
	int fam;

	unsigned methods = 1u << HTTP_CONNECT;

	if (size & 1)
		methods |= (1u << HTTP_GET) | (1u << HTTP_POST);
	if (proxyreq_parse((const char *)data, size, methods, &r) == 0) {
		if (!r.port || r.port > 65535 || !r.host[0])
			abort();
		if (!allow_literal(r.host, &fam, b) && !upstream_name_ok(r.host, strlen(r.host)))
			abort(); /* only a name or an address reaches the rules and the log */
		if (r.plain) {
			char *h = malloc(size);
			size_t n;
			if (!h)
				return 0;
			memcpy(h, data, size);
			n = proxyreq_origin_form(h, size, &r);
			if (n > size || n < r.url_off + 1 || h[r.url_off] != '/')
				abort();
			free(h);
		}
	} else if (!r.why || (r.status != 400 && r.status != 405)) {
		abort();
	}
	return 0;
}
