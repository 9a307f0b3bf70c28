/* blocked: the agent's TCP connects that the guard's hold on lo leaves
 * unanswered, one warning line each, naming the destination. The guard
 * decides nothing here: a socket held to lo cannot leave the namespace
 * whatever this finds. It only reads the kernel's socket table (sock_diag,
 * no privilege needed) for TCP sockets bound to lo that are still in
 * SYN_SENT towards an address that is not loopback: a connect on lo to a
 * local address is answered at once, so one that is still waiting is a
 * connect out of the sandbox, which lo drops. It looks BLOCKED_FIRST_MS
 * after the agent made a socket and again every BLOCKED_AGAIN_MS while
 * such connects wait; an idle agent costs nothing. At most BLOCKED_BURST
 * lines per BLOCKED_WINDOW_MS; the rest are counted. */
#ifndef WARD_BLOCKED_H
#define WARD_BLOCKED_H

#include <stddef.h>
#include <stdint.h>

#define BLOCKED_FIRST_MS 200
#define BLOCKED_AGAIN_MS 1000
#define BLOCKED_BURST 10
#define BLOCKED_WINDOW_MS 10000
#define BLOCKED_SEEN 1024 /* sockets already named, by inode (4 KiB) */

/* One waiting connect, from the kernel's table. */
struct blocked_conn {
	int family;		/* AF_INET, or AF_INET6 (an IPv4-mapped address is given as AF_INET) */
	unsigned char dst[16];	/* the address, network order */
	unsigned port;
	unsigned inode, uid;
};

struct blocked {
	int nl;			/* NETLINK_SOCK_DIAG, or -1: no audit */
	unsigned lo_index;	/* the loopback device's */
	uint64_t due;		/* the next look (ms, CLOCK_MONOTONIC), or 0 */
	unsigned seen[BLOCKED_SEEN];
	unsigned n_seen;	/* written so far (a ring past BLOCKED_SEEN) */
	uint64_t window;	/* the rate limit's window began */
	unsigned in_window, dropped;
};

/* Opens the socket-table query, before PID 1's own filter is loaded. 0, or
 * -errno (the guard runs without it). */
int blocked_open(struct blocked *b);

/* The agent made a socket: look soon. */
void blocked_poke(struct blocked *b, uint64_t now);

/* How long poll() may wait for it (ms), or -1. */
int blocked_timeout(const struct blocked *b, uint64_t now);

/* If a look is due: query, log what is new, look again later while any wait. */
void blocked_look(struct blocked *b, uint64_t now);

/* The fuzzable core: one buffer of a sock_diag dump's answer. Each waiting
 * connect found (SYN_SENT, bound to lo_index, not to a loopback address)
 * goes to found(ctx, c). Returns 1 at the dump's end (NLMSG_DONE), 0 when
 * more is to come, -1 on an error message or a malformed one. */
int blocked_parse(const void *buf, size_t len, unsigned lo_index,
		  void (*found)(void *ctx, const struct blocked_conn *c), void *ctx);

#endif
