/* libFuzzer target: the ClientHello's server name (mcp-bridge/hello.c),
 * from the first bytes of a tunnel, given whole and in every prefix the
 * first byte picks (a hello arrives in pieces). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/hello.h"
#include "mcp-bridge/upstream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[UPSTREAM_NAME_MAX + 2];
	const char *why = NULL;
	size_t cut;
	int r;

	if (size < 1)
		return 0;
	cut = data[0] % (size);
	data++;
	size--;
	r = hello_server_name(data, size, name, sizeof name, &why);
	if (r == HELLO_BAD && !why)
		abort();
	if (r == HELLO_OK && name[0] && !upstream_name_ok(name, strlen(name)))
		abort();
	/* a prefix of a whole hello is never judged otherwise than "more" or bad */
	if (r == HELLO_OK && cut < size && hello_server_name(data, cut, name, sizeof name, &why) == HELLO_OK &&
	    cut < 9)
		abort();
	return 0;
}
