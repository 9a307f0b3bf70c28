/* preflight: the runtime's environment checked before the agent starts. */
#ifndef WARD_PREFLIGHT_H
#define WARD_PREFLIGHT_H

#include "init/config/config.h"
#include "child/privdrop.h"

/* An rlimit above the hard limit the runtime gave, without
 * CAP_SYS_RESOURCE: 2 after logging, else 0. */
int preflight_rlimits(const struct ward_config *cfg);

/* [agent] writable: each directory exists, is on a writable filesystem
 * that is not full, is covered by a Landlock write rule (2 if not) and lets
 * the agent user create a file (tried as that user unless check). 0, or
 * 2/3 after logging. Call once the Landlock ruleset is built. */
int preflight_writable(const struct confine *agent, const struct ll_ruleset *ll, const struct ward_config *cfg,
		       int check);

/* What ward reads in private for the bridge ([mcp] source, a route
 * header's @PATH) must be out of the agent's Landlock rule paths, and
 * write = . must not be / (ward started in /): 2 after logging, else 0.
 * Before anything is read or written. */
int preflight_private(const struct ward_config *cfg);

/* Each unix: upstream of t out of the agent's reach: its directory (where
 * a symlinked socket leads) under no Landlock write rule of the agent's,
 * or, with no Landlock in force, not writable by its user; and (tried as
 * the agent's user, unless check, when the socket is there) not
 * connectable by it. With no Landlock in force, a header written in the
 * config is refused when the agent's user may read the file. Anything
 * that cannot be judged is refused. 2 after logging, else 0. */
struct route_table;
int preflight_upstreams(const struct confine *agent, const struct ll_ruleset *ll, const struct route_table *t,
			const struct ward_config *cfg, int check);

#endif
