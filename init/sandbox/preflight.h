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

#endif
