/* libFuzzer target: every value parser. The first byte picks the parser,
 * the rest is the value (as inih hands it over: a NUL-terminated string). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "landlock/landlock.h"
#include "common/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why;
	char *s, **argv = NULL;
	uint64_t u;
	unsigned m;
	int a, b;
	rlim_t soft, hard;
	struct port_range *v = NULL;

	if (size == 0)
		return 0;
	s = malloc(size);
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 8) {
	case 0: (void)parse_duration(s, &u, &why); break;
	case 1: (void)parse_signal(s, data[0] & 8, &a, &why); break;
	case 2: (void)parse_rewrite(s, &a, &b, &why); break;
	case 3: (void)parse_umask(s, &m, &why); break;
	case 4: (void)parse_rlimit(s, &soft, &hard, &why); break;
	case 5:
		if (split_words(s, &argv, &a, &why) == 0)
			free(argv);
		break;
	case 6:
		a = 0;
		(void)ll_parse_ports(s, &v, &a, &why);
		free(v);
		break;
	case 7: (void)parse_uint(s, 0, UINT64_MAX, &u, &why); break;
	}
	free(s);
	return 0;
}
