/* libFuzzer target: [proxy] allow rules (mcp-bridge/allow.c): a rule
 * parsed from the whole input, written back and parsed again to the same
 * rule; then matched against the input as a CONNECT host. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/allow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct allow_rule r, again;
	const char *why = NULL;
	char text[400], text2[400], host[300];
	unsigned char b[16];
	int fam;

	if (allow_parse((const char *)data, size, &r, &why) == 0) {
		allow_text(&r, text, sizeof text);
		/* the canonical form reads back as the same rule */
		if (allow_parse(text, strlen(text), &again, &why) != 0 ||
		    strcmp(allow_text(&again, text2, sizeof text2), text) != 0 || again.kind != r.kind)
			abort();
		if (r.port_lo < 1 || r.port_lo > r.port_hi || r.port_hi > 65535)
			abort();
		if (r.kind != ALLOW_NET && allow_match(&r, 1, r.name, r.port_lo) != (r.kind == ALLOW_NAME ? &r : NULL))
			abort(); /* a name rule matches its name; a suffix rule never the suffix itself */
	} else if (!why) {
		abort(); /* every refusal says why */
	}
	if (size < sizeof host) {
		memcpy(host, data, size);
		host[size] = '\0';
		(void)allow_match(&r, 1, host, 443);
		if (allow_literal(host, &fam, b))
			(void)allow_covers(&r, 1, fam, b, 443);
	}
	return 0;
}
