/* libFuzzer target: the egress proxy's request head (mcp-bridge/
 * proxyreq.c), as an agent sends it: whatever bytes come before the blank
 * line. A request taken names a host the rules can read and a port. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/allow.h"
#include "mcp-bridge/proxyreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proxy_req r;
	unsigned char b[16];
	int fam;

	if (proxyreq_parse((const char *)data, size, &r) == 0) {
		if (!r.port || r.port > 65535 || !r.host[0])
			abort();
		if (!allow_literal(r.host, &fam, b) && !upstream_name_ok(r.host, strlen(r.host)))
			abort(); /* only a name or an address reaches the rules and the log */
	} else if (!r.why || (r.status != 400 && r.status != 405)) {
		abort();
	}
	return 0;
}
