/* libFuzzer target: /etc/passwd and /etc/group parsing. Input: the user
 * spec, a NUL, the passwd text, a NUL, the group text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/users.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *spec = (const char *)data, *why;
	const uint8_t *z1 = memchr(data, 0, size), *z2;
	struct user_ids u;

	if (!z1)
		return 0;
	z2 = memchr(z1 + 1, 0, size - (size_t)(z1 + 1 - data));
	if (!z2)
		return 0;
	(void)users_resolve_buf(spec, (const char *)z1 + 1, (size_t)(z2 - z1 - 1), (const char *)z2 + 1,
				size - (size_t)(z2 + 1 - data), &u, &why);
	return 0;
}
