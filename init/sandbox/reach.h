/* reach: what of the bridge's the agent could reach, refused before
 * anything runs (reach.c). */
#ifndef WARD_REACH_H
#define WARD_REACH_H

#include "child/privdrop.h"
#include "init/config/config.h"

/* What ward reads in private for the bridge ([mcp] source, a route
 * header's @PATH) must be out of the agent's Landlock rule paths, and
 * write = . must not be / (ward started in /): 2 after logging, else 0.
 * Before anything is read or written. */
int reach_private(const struct ward_config *cfg);

/* Each unix: upstream of t out of the agent's reach: its directory (where
 * a symlinked socket leads) under no Landlock write rule of the agent's,
 * or, with no Landlock in force, not writable by its user; and (tried as
 * the agent's user, unless check, when the socket is there) not
 * connectable by it. With no Landlock in force, a header written in the
 * config is refused when the agent's user may read the file. Anything
 * that cannot be judged is refused. 2 after logging, else 0. */
struct route_table;

/* Landlock asked for but not in force (gVisor, a kernel without it under
 * best_effort): what ward reads in private for the bridge ([mcp] source
 * and auth, a route's credential, a route header's @PATH) is kept from
 * the agent by its modes alone, so each is tried for reading as the
 * agent's user (unless check) and refused if it can. 2 after logging,
 * else 0. */
int reach_private_modes(const struct confine *agent, const struct ll_ruleset *ll, const struct ward_config *cfg,
			int check);

int reach_upstreams(const struct confine *agent, const struct ll_ruleset *ll, const struct route_table *t,
		    const struct ward_config *cfg, int check);

#endif
