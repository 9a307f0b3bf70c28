/* bridgeproc: the MCP bridge as a process of its own: prepared by PID 1
 * (listeners, secrets, its user, its Landlock), forked before the agent,
 * supervised and restarted by PID 1. */
#ifndef WARD_BRIDGEPROC_H
#define WARD_BRIDGEPROC_H

#include <sys/types.h>

#include "landlock/landlock.h"
#include "mcp-bridge/bridge.h"
#include "init/config/config.h"
#include "init/supervise/routes.h"
#include "child/privdrop.h"

struct bridgeproc {
	int active;		   /* there are routes */
	struct bridge_routes routes;
	struct confine confine;	   /* its user, Landlock, seccomp */
	struct ll_ruleset ll;
	struct sc_filter sc;	   /* its own allowlist */
	int health_ok;		   /* upstreams that answered at the first start */
	int started;		   /* it was started once: restarts skip the health check */
	struct proxy_policy proxy; /* [proxy]'s rules and limits, the proxy route's */
	/* [proxy] ask = terminal with a terminal: PID 1's end of each start's
	 * socket pair goes here (asktty.h); NULL: none is made */
	void (*on_ask)(void *arg, int fd);
	void *on_ask_arg;
	/* [proxy] ask, any approver: PID 1's end of each start's "who
	 * asked?" pair goes here (common/who.h, whoserve.h); NULL: none */
	void (*on_who)(void *arg, int fd);
	void *on_who_arg;
};

/* The bridge's user ([ward] bridge_user, default BRIDGE_USER_DEFAULT): it must resolve
 * and differ from 0 and the agent's uid. 0, or 2 after logging why. */
int bridgeproc_user(const struct ward_config *cfg, const struct user_ids *agent, struct user_ids *user);

/* As root, before anything runs: resolve the bridge user (it must differ
 * from the agent's), read header secrets (@PATH, @fd:N) once, open the
 * listeners of the route table t, build its Landlock ruleset. Returns 0, 2 (config) or 3. */
int bridgeproc_prepare(struct bridgeproc *b, const struct route_table *t, const struct ward_config *cfg,
		       const struct user_ids *agent);

/* How long a starting bridge may take to listen and confine itself. */
#define BRIDGE_READY_MS 5000

/* Forks the bridge. *note_fd gets the read end (non-blocking) of the pipe
 * on which it reports; pass it to bridgeproc_note() when it is readable,
 * and close it. Returns its pid, or -1 after logging why. */
pid_t bridgeproc_spawn(struct bridgeproc *b, int *note_fd);

/* Reads what the starting bridge reported: 1 ready (logged), 0 nothing
 * more yet, -1 it failed or ended (logged; the caller kills it). */
int bridgeproc_note(struct bridgeproc *b, int fd, pid_t pid);

/* The listening descriptors PID 1 keeps for restarts. */
int bridgeproc_fds(const struct bridgeproc *b, int *fds, int max);

void bridgeproc_free(struct bridgeproc *b);

#endif
