#define _GNU_SOURCE
#include "common/envheap.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Every copy, as made: setenv, unsetenv and clearenv replace environ or
 * drop pointers from it, and the copies live as long as ward does (a
 * string unset is still held here, so nothing is lost, only kept). */
static char **volatile made; /* volatile: never read, its stores must stay */
static char **volatile given; /* the array environ was set to, which setenv may replace */

int envheap_move(void)
{
	char **old = environ, **copy;
	size_t n = 0, i;

	while (old && old[n])
		n++;
	copy = calloc(n + 1, sizeof *copy);
	made = calloc(n + 1, sizeof *made);
	if (!copy || !made) {
		free(copy);
		free(made);
		made = NULL;
		return -1;
	}
	for (i = 0; i < n; i++) {
		copy[i] = made[i] = strdup(old[i]);
		if (!copy[i]) {
			while (i > 0)
				free(copy[--i]);
			free(copy);
			free(made);
			made = NULL;
			return -1;
		}
	}
	environ = given = copy;
	for (i = 0; i < n; i++)
		explicit_bzero(old[i], strlen(old[i]));
	return 0;
}
