/* libFuzzer target: the TCP destination parser (common/addr.c), as
 * --explain tcp:... and the config's connect lines hand it bytes: the
 * whole input, by length (it may hold anything, NUL included). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tcp_dest d;
	const char *why = NULL;
	char buf[64], *s = malloc(size ? size : 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	if (addr_parse(s, size, &d, &why) == 0) {
		(void)addr_loopback(&d);
		(void)addr_text(&d, buf, sizeof buf);
		if (d.port > 65535)
			abort();
	} else if (!why) {
		abort(); /* every refusal says why */
	}
	free(s);
	return 0;
}
