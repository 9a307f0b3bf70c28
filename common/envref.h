/* envref: ${NAME} in a header value, taken from ward's own environment at
 * start (docker run -e, a pod's env): the host hands a secret to ward, and
 * the agent's environment never has it (the config refuses an env_pass of
 * it). One reader for the config's route headers and mcp.json's. A '$'
 * not followed by '{' is itself. */
#ifndef WARD_ENVREF_H
#define WARD_ENVREF_H

#include <stddef.h>

#define ENVREF_NAME_MAX 128

/* Each ${NAME} of v, in order, to visit(ctx, name) (visit may be NULL):
 * the syntax only, nothing resolved (the config resolves nothing when it
 * is read). 0, the first non-zero visit() return, or -1 with *why (an
 * unclosed or empty ${}, a name of ENVREF_NAME_MAX or more). */
int envref_names(const char *v, int (*visit)(void *ctx, const char *name), void *ctx, const char **why);

/* Does v hold a ${? */
int envref_has(const char *v);

/* v with each ${NAME} replaced by its value in ward's environment: a new
 * string, or NULL with err (a variable not there, a line break in the
 * result, out of memory). */
char *envref_expand(const char *v, char *err, size_t errsize);

#endif
