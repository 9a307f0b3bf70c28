/* libFuzzer target: a login's credential file (cred_parse_file, then
 * cred_file_update on the same bytes) and the token endpoint's answer as
 * the bridge relays it (cred_parse_answer): both are bytes from outside,
 * the host's file and a server's reply. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/cred.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cred_tokens t;
	char why[300];
	size_t n;
	char *text;

	if (size < 1)
		return 0;
	/* first byte: which parser */
	if (data[0] & 1) {
		(void)cred_parse_answer((const char *)data + 1, size - 1, 1000, &t, why, sizeof why);
		return 0;
	}
	if (cred_parse_file((const char *)data + 1, size - 1, "anthropic", &t, why, sizeof why) == 0) {
		struct cred_tokens back;
		text = cred_file_update((const char *)data + 1, size - 1, "anthropic", &t, &n);
		/* what it writes reads back as the same tokens */
		if (!text || cred_parse_file(text, n, "anthropic", &back, why, sizeof why) != 0 ||
		    strcmp(back.access, t.access) != 0 || strcmp(back.refresh, t.refresh) != 0)
			abort();
		free(text);
	}
	return 0;
}
