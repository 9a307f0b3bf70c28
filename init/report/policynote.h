/* policynote: what the agent may do, in words it reads: written at each
 * start (`[agent] policy_note = PATH`, the image's Pi APPEND_SYSTEM.md)
 * from the rules actually put in force, so that the agent's own idea of
 * its sandbox cannot drift from the policy. Nothing secret goes in it. */
#ifndef WARD_POLICYNOTE_H
#define WARD_POLICYNOTE_H

struct ward_config;
struct confine;
struct ll_ruleset;
struct route_table;

/* The note as Markdown (malloc'd), or NULL when out of memory. ll may be
 * NULL (no Landlock in force); path_env: the agent's PATH, for the tools. */
char *policy_note_text(const struct ward_config *cfg, const struct confine *agent, const struct ll_ruleset *ll,
		       const struct route_table *routes, const char *path_env);

#endif
