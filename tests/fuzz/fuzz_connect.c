/* libFuzzer target: the guard's address check (init/egress/connects.c),
 * the bytes a connect() names as read from the caller's memory, any
 * length up to a sockaddr_storage; and its reader of the kernel's route
 * reply (init/egress/route.c). The invariant, against a reference written
 * here: a destination is let through unjudged (PASS) only when it is no
 * inet destination the kernel would take, or loopback, or the any address;
 * everything else must go to the route check, with the address and port
 * the bytes hold (a v4-mapped one as IPv4). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "init/egress/connects.h"
#include "init/egress/route.h"

/* 1: the kernel's connect would go to an inet address that is not loopback or any */
static int leaves(const uint8_t *b, size_t n, int *fam, unsigned char *addr, unsigned *port)
{
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff }, zero[16], one[16] = { [15] = 1 };
	uint16_t f;

	if (n < 2)
		return 0;
	memcpy(&f, b, 2);
	if (f == AF_INET && n >= 16) {
		*fam = AF_INET;
		memcpy(addr, b + 4, 4);
	} else if (f == AF_INET6 && n >= 24) {
		if (memcmp(b + 8, mapped, 12) == 0) {
			*fam = AF_INET;
			memcpy(addr, b + 20, 4);
		} else {
			*fam = AF_INET6;
			memcpy(addr, b + 8, 16);
			*port = (unsigned)b[2] << 8 | b[3];
			return memcmp(addr, zero, 16) != 0 && memcmp(addr, one, 16) != 0;
		}
	} else {
		return 0;
	}
	*port = (unsigned)b[2] << 8 | b[3];
	return addr[0] != 127 && memcmp(addr, zero, 4) != 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char addr[16] = { 0 };
	unsigned port = 0;
	int fam = 0, want;
	struct dest d;
	void *buf;

	if (size <= 128) {
		want = leaves(data, size, &fam, addr, &port);
		if ((connects_judge(data, size, &d) == JUDGED_ROUTE) != want)
			abort();
		if (want && (d.family != fam || d.port != port || memcmp(d.addr, addr, fam == AF_INET ? 4 : 16) != 0))
			abort();
	}
	/* the route reply: any bytes, aligned as the read buffer is */
	buf = aligned_alloc(8, size ? (size + 7) / 8 * 8 : 8);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	{
		int r = route_parse(buf, size, 1);
		if (r != 0 && r != 1 && r != -71 /* EPROTO */)
			abort();
	}
	free(buf);
	return 0;
}
