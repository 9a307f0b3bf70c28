/* ephemeral: the ports the kernel picks by itself for the agent's sockets.
 * A listen() on a socket never bound, like a connect()'s source port,
 * takes a port of the namespace's ephemeral range (ip_local_port_range),
 * and no Landlock bind rule judges it. An agent could so take the port of
 * a local tcp: or tls: upstream while that upstream is down, and be sent
 * the bridge's secret headers. When an upstream's port lies in the range,
 * each socket the egress guard makes gets the largest part of the range
 * that holds no such port (IP_LOCAL_PORT_RANGE, Linux 6.3), and the
 * agent's filter refuses to change it back (seccomp/sysfilter.c). The
 * namespace's range is read once, at start. */
#ifndef WARD_EPHEMERAL_H
#define WARD_EPHEMERAL_H

#include <stdint.h>

struct route_table;

#define EPHEMERAL_MAX_KEPT 16 /* upstream ports listed; more are counted */

struct ephemeral {
	unsigned ns_lo, ns_hi; /* the namespace's range, as read (0, 0: unread) */
	unsigned lo, hi;       /* what the agent's sockets get: ns_lo..ns_hi when nothing is kept off */
	int n_kept;	       /* upstream ports inside the namespace's range */
	unsigned kept[EPHEMERAL_MAX_KEPT];
	int unsupported;       /* ports to keep off, and a kernel without IP_LOCAL_PORT_RANGE */
	int unreadable;	       /* the namespace's range could not be read (its errno); kept[0]: a port */
};

/* The largest run of ports in ns_lo..ns_hi that holds none of ports[]
 * (the lowest of equal runs): 0 when none of ports[] is in the range
 * (*lo, *hi: the whole range), 1 a narrower run, -1 no port left. */
int ephemeral_pick(unsigned ns_lo, unsigned ns_hi, const unsigned *ports, int n, unsigned *lo, unsigned *hi);

/* Reads the namespace's range (only when t has a tcp: or tls: upstream),
 * keeps their ports off it and asks the kernel whether it can; a range
 * that cannot be read is noted (unreadable), not fatal here. 0, or 3
 * after logging why (every port of the range an upstream's). */
int ephemeral_prepare(struct ephemeral *e, const struct route_table *t);

/* The IP_LOCAL_PORT_RANGE value the guard sets on each socket (lo in the
 * low 16 bits, hi in the high), or 0: nothing to set. */
uint32_t ephemeral_sockopt(const struct ephemeral *e);

#endif
