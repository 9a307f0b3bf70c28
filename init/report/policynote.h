/* policynote: what the agent may do, in words it reads: written at each
 * start (`[agent] policy_note = PATH`, the image's Pi APPEND_SYSTEM.md)
 * from the rules actually put in force, so that the agent's own idea of
 * its sandbox cannot drift from the policy. Nothing secret goes in it. */
#ifndef WARD_POLICYNOTE_H
#define WARD_POLICYNOTE_H

#include <stddef.h>

struct ward_config;
struct confine;
struct ll_ruleset;
struct route_table;

/* The note as Markdown (malloc'd), or NULL when out of memory. ll may be
 * NULL (no Landlock in force); path_env: the agent's PATH, for the tools. */
char *policy_note_text(const struct ward_config *cfg, const struct confine *agent, const struct ll_ruleset *ll,
		       const struct route_table *routes, const char *path_env);

/* [agent] policy_note_add: the text of that file (the one who starts ward
 * provides it: ward-pi's facts of the session) appended to *text, which is
 * replaced; a file that is not there adds nothing. At most 16 KiB, a
 * regular file, no symbolic link followed, no control character but line
 * breaks and tabs. 0, or -1 with err. */
int policy_note_append(char **text, const char *path, char *err, size_t errsize);

#endif
