/* bridge: the forked, unprivileged process that relays the agent's HTTP
 * requests from loopback listeners inside the sandbox to upstreams outside
 * it, one checked request per connection. */
#ifndef WARD_BRIDGE_H
#define WARD_BRIDGE_H

#include <stdint.h>
#include <sys/types.h>

#include "mcp-bridge/route.h"

struct resolver;

/* The bridge's event loop; returns only on a fatal setup error. res: the
 * routes' names (resolve.h). */
int bridge_run(const struct bridge_routes *r, struct resolver *res, int max_conns);

/* Checks once that each upstream accepts a connection, all at once and
 * within a second in all; logs those that do not. An upstream by name is
 * looked up (its answer kept for the first request), not connected, unless
 * /etc/hosts gave its address. Returns how many answered. */
int bridge_health(const struct bridge_routes *r, struct resolver *res);

struct confine;

/* What PID 1 prepared for the bridge process (as root, before the fork). */
struct bridge_start {
	struct bridge_routes *routes; /* listeners open, secrets resolved, CA roots read */
	const struct confine *confine; /* its user, Landlock, seccomp */
	int ll_fd;		       /* its Landlock ruleset, kept across the close, or -1 */
	int check_health;	       /* the first start: try every upstream once */
};

/* The bridge process, right after PID 1's fork: nothing of PID 1's kept
 * but the listeners and the log, its own user, parent-death signal,
 * Landlock and seccomp; "ready" (common/record.h) on rfd; then the loop.
 * parent: PID 1's pid, to tell a ward already gone. Never returns. */
void bridge_main(const struct bridge_start *s, int rfd, pid_t parent) __attribute__((noreturn));

#endif
