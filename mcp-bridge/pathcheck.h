/* pathcheck: a request target judged as any server behind the bridge might
 * read it (mcp-bridge/pathcheck.c). A pure check: the bridge runs it on
 * every request, PID 1 on each configured path. */
#ifndef WARD_PATHCHECK_H
#define WARD_PATHCHECK_H

#include <stddef.h>

/* The deepest decoding judged: a path still changing after this many
 * rounds of percent-decoding is refused. */
#define PATH_MAX_DECODES 4

/* NULL when the target (p, n bytes: a path, maybe a query) is one every
 * server reads alike; else why not, in words for a 400. */
const char *path_refusal(const char *p, size_t n);

#endif
