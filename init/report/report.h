/* report: what `ward --check` prints: the effective policy, layer by
 * layer, as a table or as JSON, with a warning (and its fix) for every
 * weak setting: a layer off, Landlock degraded by the kernel, write access
 * to / or a system tree, every port open. */
#ifndef WARD_REPORT_H
#define WARD_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "init/config/config.h"
#include "child/privdrop.h"
#include "init/supervise/routes.h"

/* The policy as JSON (caller owns it); "warnings" is a list of strings.
 * agent: the agent's credentials, NULL when it is not confined; ll and sc
 * as built (empty when the layer is off), notes included; routes: the
 * bridge's route table. */
json_t *report_policy(const struct confine *agent, const struct ll_ruleset *ll, const struct sc_filter *sc,
		      const struct route_table *routes, const struct ward_config *cfg);

/* Prints the table (or JSON). Returns the number of warnings, -1 on error. */
int report_print(const struct confine *agent, const struct ll_ruleset *ll, const struct sc_filter *sc,
		 const struct route_table *routes, const struct ward_config *cfg, int as_json, FILE *out);

#endif
