#define _GNU_SOURCE
#include "common/header.h"

#include <stdlib.h>
#include <string.h>

int header_set(struct header *h, const char *name, size_t name_len, const char *value, const char *source)
{
	h->name = strndup(name, name_len);
	h->value = value ? strdup(value) : NULL;
	h->source = source ? strdup(source) : NULL;
	h->env = 0;
	if (!h->name || (value && !h->value) || (source && !h->source)) {
		header_clear(h);
		return -1;
	}
	return 0;
}

void header_clear(struct header *h)
{
	if (h->value)
		explicit_bzero(h->value, strlen(h->value));
	free(h->name);
	free(h->value);
	free(h->source);
	h->name = h->value = h->source = NULL;
	h->env = 0;
}

void headers_free(struct header *v, int n)
{
	while (n-- > 0)
		header_clear(&v[n]);
	free(v);
}
