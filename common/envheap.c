#define _GNU_SOURCE
#include "common/envheap.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

int envheap_move(void)
{
	char **old = environ, **copy;
	size_t n = 0, i;

	while (old && old[n])
		n++;
	copy = calloc(n + 1, sizeof *copy);
	if (!copy)
		return -1;
	for (i = 0; i < n; i++) {
		copy[i] = strdup(old[i]);
		if (!copy[i]) {
			while (i > 0)
				free(copy[--i]);
			free(copy);
			return -1;
		}
	}
	environ = copy;
	for (i = 0; i < n; i++)
		explicit_bzero(old[i], strlen(old[i]));
	return 0;
}
