#define _GNU_SOURCE
#include "init/sandbox/ephemeral.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/parse.h"
#include "init/supervise/routes.h"

#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE 51 /* Linux 6.3 */
#endif

#define PORT_RANGE_FILE "/proc/sys/net/ipv4/ip_local_port_range"

static int by_value(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

int ephemeral_pick(unsigned ns_lo, unsigned ns_hi, const unsigned *ports, int n, unsigned *lo, unsigned *hi)
{
	unsigned *in = calloc((size_t)n + 1, sizeof *in), from = ns_lo, best_lo = 0, best_hi = 0, best = 0;
	int k = 0, i;

	*lo = ns_lo;
	*hi = ns_hi;
	if (!in)
		return -1;
	for (i = 0; i < n; i++)
		if (ports[i] >= ns_lo && ports[i] <= ns_hi)
			in[k++] = ports[i];
	if (k == 0) {
		free(in);
		return 0;
	}
	qsort(in, (size_t)k, sizeof *in, by_value);
	/* the runs between the ports kept off, and after the last */
	for (i = 0; i <= k; i++) {
		unsigned to = i < k ? in[i] : ns_hi + 1; /* one past the run */
		if (to > from && to - from > best) {
			best = to - from;
			best_lo = from;
			best_hi = to - 1;
		}
		if (i < k && in[i] + 1 > from)
			from = in[i] + 1;
	}
	free(in);
	if (best == 0)
		return -1;
	*lo = best_lo;
	*hi = best_hi;
	return 1;
}

/* "LO<tab>HI\n", as the kernel writes it; 0 or -1. */
static int read_range(FILE *f, unsigned *lo, unsigned *hi)
{
	char line[64], *sep;
	const char *why;
	uint64_t a, b;

	if (!fgets(line, sizeof line, f))
		return -1;
	line[strcspn(line, "\n")] = '\0';
	sep = line + strcspn(line, " \t");
	if (!*sep)
		return -1;
	*sep++ = '\0';
	sep += strspn(sep, " \t");
	if (parse_uint(line, 1, 65535, &a, &why) != 0 || parse_uint(sep, 1, 65535, &b, &why) != 0 || a > b)
		return -1;
	*lo = (unsigned)a;
	*hi = (unsigned)b;
	return 0;
}

/* Does this kernel take a socket's own range? */
static int kernel_has_range(void)
{
	uint32_t v = 0;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;

	if (s < 0)
		return 1; /* no inet at all: nothing to keep off */
	ok = setsockopt(s, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &v, sizeof v) == 0;
	close(s);
	return ok;
}

int ephemeral_prepare(struct ephemeral *e, const struct route_table *t)
{
	unsigned *ports = calloc((size_t)t->n + 1, sizeof *ports);
	FILE *f;
	int n = 0, i, r;

	memset(e, 0, sizeof *e);
	if (!ports) {
		log_error("out of memory");
		return 3;
	}
	for (i = 0; i < t->n; i++) {
		const struct upstream *u = t->v[i].up;
		if (u->kind == UP_TCP || u->kind == UP_TLS)
			ports[n++] = u->port;
	}
	if (n == 0) {
		free(ports); /* no port to keep off: the range is not needed */
		return 0;
	}
	f = fopen(PORT_RANGE_FILE, "re");
	if (!f || read_range(f, &e->ns_lo, &e->ns_hi) != 0) {
		/* no /proc yet (--check in a VM's initramfs), or a runtime that hides it */
		e->unreadable = f ? EINVAL : errno;
		e->kept[0] = ports[0];
		e->n_kept = 1;
		if (f)
			fclose(f);
		free(ports);
		return 0;
	}
	fclose(f);
	for (i = 0; i < n; i++)
		if (ports[i] >= e->ns_lo && ports[i] <= e->ns_hi) {
			if (e->n_kept < EPHEMERAL_MAX_KEPT)
				e->kept[e->n_kept] = ports[i];
			e->n_kept++;
		}
	r = ephemeral_pick(e->ns_lo, e->ns_hi, ports, n, &e->lo, &e->hi);
	free(ports);
	if (r < 0) {
		log_error("egress: every ephemeral port (%u-%u) is a tcp: or tls: upstream's: the agent's "
			  "sockets would have none left", e->ns_lo, e->ns_hi);
		return 3;
	}
	if (r > 0 && !kernel_has_range())
		e->unsupported = 1;
	return 0;
}

uint32_t ephemeral_sockopt(const struct ephemeral *e)
{
	if (!e->n_kept || e->unsupported || e->unreadable)
		return 0;
	return (uint32_t)e->lo | (uint32_t)e->hi << 16;
}
