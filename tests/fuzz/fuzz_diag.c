/* libFuzzer target: the guard's reader of the kernel's socket table
 * (egress/blocked.c), one buffer of a sock_diag dump as read() gives it:
 * any bytes, any length. What it reports must have come from inside the
 * buffer: a family it knows and a port that fits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "init/egress/blocked.h"

static void found(void *ctx, const struct blocked_conn *c)
{
	(void)ctx;
	if ((c->family != AF_INET && c->family != AF_INET6) || c->port > 65535)
		abort();
	if (c->family == AF_INET && c->dst[0] == 127)
		abort(); /* loopback is never a refused connect */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* aligned as the guard's read buffer is */
	void *buf = aligned_alloc(8, size ? (size + 7) / 8 * 8 : 8);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	(void)blocked_parse(buf, size, 1, found, NULL);
	free(buf);
	return 0;
}
