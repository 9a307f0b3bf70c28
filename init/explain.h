/* explain: `ward --explain WHAT`: why the agent may or may not reach a
 * path, a TCP port or a system call under the config, rule by rule, and
 * the line to add to allow it. Paths are compared as Landlock does, by
 * the canonical name of each rule's directory at start. */
#ifndef WARD_EXPLAIN_H
#define WARD_EXPLAIN_H

#include <stdio.h>

#include "config.h"
#include "sandbox.h"

/* Returns 0, or 2 when WHAT is neither a path, a port nor a syscall. */
int explain(const struct sandbox *sb, const struct ward_config *cfg, const char *what, FILE *out);

#endif
