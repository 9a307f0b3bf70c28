/* route: does the kernel deliver an address to this host? The guard holds
 * every socket of the agent's to lo, so a connect reaches exactly the
 * addresses the namespace routes locally (loopback, and its own: a pod's
 * address goes over lo too). One RTM_GETROUTE on PID 1's own netlink
 * socket answers it (the kernel replies within the send). */
#ifndef WARD_ROUTE_H
#define WARD_ROUTE_H

#include <stddef.h>

/* A NETLINK_ROUTE socket, or -errno. */
int route_open(void);

/* 1: local (RTN_LOCAL), 0: not (another type, or no route at all),
 * -errno: unknown. addr is 4 or 16 bytes, network order. */
int route_local(int nl, int family, const unsigned char *addr);

/* The fuzzable core: the reply in buf. 1, 0 or -EPROTO, as above. */
int route_parse(const void *buf, size_t len, unsigned seq);

#endif
