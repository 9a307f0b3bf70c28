/* libFuzzer target: the approver's bytes as the bridge reads them
 * (mcp-bridge/ask.c: JSON lines, answers to open questions). The approver
 * is outside and trusted to decide, but what it sends is parsed all the
 * same: whatever comes, an answer never allows more than a name covering
 * a question's host on that question's port (x.two, never asked about,
 * and a.q.one on another port stay to be asked), and each question is
 * settled at most once. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mcp-bridge/ask.h"

static const struct upstream approver = { .kind = UP_UNIX, .desc = "unix:/fuzz" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct asker a;
	static const char *const hosts[] = { "a.q.one", "b.q.one", "c.one" };
	struct ask_settled s;
	char why[1024];
	int sp[2], ep, i, settled[4] = { 0 };
	size_t off = 0;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sp) != 0)
		abort();
	if (asker_init(&a, &approver, 60, 10, ep, 1) != 0)
		abort();
	a.fd = sp[0];
	for (i = 0; i < 3; i++) {
		a.open[i].id = (uint64_t)i + 1;
		strcpy(a.open[i].host, hosts[i]);
		a.open[i].port = 443;
		a.open[i].deadline = 60000;
	}
	a.next_id = 4;
	/* the bytes in pieces, as reads may bring them */
	while (off < size && a.fd >= 0) {
		size_t n = size - off < 1000 ? size - off : 1000;
		if (send(sp[1], data + off, n, MSG_DONTWAIT) < 0)
			break;
		off += n;
		asker_readable(&a, 1000);
	}
	while (asker_next(&a, &s)) {
		if (s.id < 1 || s.id > 3 || settled[s.id]++)
			abort(); /* settled twice, or a question never asked */
	}
	if (asker_judge(&a, "x.two", 443, why, sizeof why) != ASK_NEEDED ||
	    asker_judge(&a, "a.q.one", 80, why, sizeof why) != ASK_NEEDED)
		abort();
	close(sp[1]);
	asker_free(&a);
	close(ep);
	return 0;
}
