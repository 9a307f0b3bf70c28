/* header: one header a route adds to each request it relays: its name,
 * and either its value or the source its value is read from at start
 * (a header = Name: @fd:N or @/path line), or a value with ${NAME}s
 * taken from ward's environment at start (common/envref.h). Parsed once, where it is
 * written (the config, mcp.json); joined into the "Name: value" line the
 * bridge sends only once the value is known. */
#ifndef WARD_HEADER_H
#define WARD_HEADER_H

#include <stddef.h>

struct header {
	char *name;
	char *value;  /* as sent; with a source, what goes before the secret
		       * ("Bearer "), or NULL for the secret alone */
	char *source; /* "fd:N" or an absolute path; NULL when the value is written */
	int env;      /* value holds ${NAME}s, expanded at start (no source then) */
};

/* A header with both parts copied (either may be NULL). 0, or -1 when out
 * of memory (nothing kept). */
int header_set(struct header *h, const char *name, size_t name_len, const char *value, const char *source);

/* Zeroes the value (it may be a secret) and frees every part. */
void header_clear(struct header *h);

/* header_clear() on each, then the array. */
void headers_free(struct header *v, int n);

#endif
