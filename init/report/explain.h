/* explain: `ward --explain WHAT`: why the agent may or may not reach a
 * path, a TCP port or a system call under the config, rule by rule, and
 * the line to add to allow it. Paths are compared as Landlock does, by
 * the canonical name of each rule's directory at start. */
#ifndef WARD_EXPLAIN_H
#define WARD_EXPLAIN_H

#include <stdio.h>

#include "init/config/config.h"
#include "child/privdrop.h"
#include "init/supervise/routes.h"

/* Returns 0, or 2 when WHAT is neither a path, a port nor a syscall. */
/* agent: NULL when the agent is not confined; ll as built (empty when
 * Landlock is off); routes: the bridge's route table. */
int explain(const struct confine *agent, const struct ll_ruleset *ll, const struct route_table *routes,
	    const struct ward_config *cfg, const char *what, FILE *out);

#endif
