#define _GNU_SOURCE
#include "common/envref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int envref_has(const char *v)
{
	return strstr(v, "${") != NULL;
}

int envref_names(const char *v, int (*visit)(void *ctx, const char *name), void *ctx, const char **why)
{
	const char *p = v;

	while ((p = strstr(p, "${")) != NULL) {
		const char *end = strchr(p + 2, '}');
		char name[ENVREF_NAME_MAX];
		int rc;

		if (!end || end == p + 2 || (size_t)(end - p - 2) >= sizeof name)
			return *why = "bad ${VAR}: a name in ${...}, closed, under 128 bytes", -1;
		memcpy(name, p + 2, (size_t)(end - p - 2));
		name[end - p - 2] = '\0';
		if (visit && (rc = visit(ctx, name)) != 0)
			return rc;
		p = end + 1;
	}
	return 0;
}

/* out += s[0..n), grown as needed: 0, or -1 out of memory */
static int append(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t c = (*len + n + 1) * 2;
		char *g = realloc(*out, c);
		if (!g)
			return -1;
		*out = g;
		*cap = c;
	}
	memcpy(*out + *len, s, n);
	*len += n;
	(*out)[*len] = '\0';
	return 0;
}

static void drop(char *s, size_t n)
{
	if (s) {
		explicit_bzero(s, n);
		free(s);
	}
}

char *envref_expand(const char *v, char *err, size_t errsize)
{
	size_t cap = 0, n = 0;
	char *out = NULL;
	const char *p = v, *why = NULL;

	if (envref_names(v, NULL, NULL, &why) != 0) {
		snprintf(err, errsize, "%s", why);
		return NULL;
	}
	if (append(&out, &n, &cap, "", 0) != 0)
		goto oom;
	while (*p) {
		if (p[0] == '$' && p[1] == '{') {
			const char *end = strchr(p + 2, '}'), *val;
			char name[ENVREF_NAME_MAX];

			memcpy(name, p + 2, (size_t)(end - p - 2)); /* checked above */
			name[end - p - 2] = '\0';
			if (!(val = getenv(name))) {
				snprintf(err, errsize, "names ${%s}, which is not in ward's environment", name);
				drop(out, n);
				return NULL;
			}
			if (append(&out, &n, &cap, val, strlen(val)) != 0)
				goto oom;
			p = end + 1;
		} else {
			size_t lit = strcspn(p + 1, "$") + 1;
			if (append(&out, &n, &cap, p, lit) != 0)
				goto oom;
			p += lit;
		}
	}
	if (strpbrk(out, "\r\n")) {
		snprintf(err, errsize, "a header value holds a line break");
		drop(out, n);
		return NULL;
	}
	return out;
oom:
	snprintf(err, errsize, "out of memory");
	drop(out, n);
	return NULL;
}
