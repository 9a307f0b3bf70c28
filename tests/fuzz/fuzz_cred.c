/* libFuzzer target: a login's credential file (cred_parse_file, then
 * cred_file_update on the same bytes) and the token endpoint's answer as
 * the bridge relays it (cred_parse_answer): both are bytes from outside,
 * the host's file and a server's reply. The first byte's bit 2 picks the
 * format: Pi's auth.json, or its mcp-auth.json (mcpcred.h: the entry
 * found by a server's name and URL, the refresh request, the answer and
 * the update). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/cred.h"
#include "mcp-bridge/credfile.h"
#include "mcp-bridge/mcpcred.h"

static int mcp_format(const uint8_t *data, size_t size)
{
	static struct cred_tokens t, back;
	static char req[CRED_MAX_TOKEN * 4 + CRED_MAX_FIELD * 12];
	char why[400], key[CRED_MAX_FIELD + 128];
	const char *buf = (const char *)data + 1;
	size_t n;
	char *text;

	if (data[0] & 1) {
		memset(&t, 0, sizeof t);
		t.format = CRED_MCP;
		strcpy(t.access, "a");
		strcpy(t.refresh, "r");
		(void)credfile_answer(buf, size - 1, 1000, &t, why, sizeof why);
		return 0;
	}
	if (mcpcred_find(buf, size - 1, "srv-1", "https://mcp.example.com/mcp", key, sizeof key, &t, why,
			 sizeof why) != 1)
		return 0;
	(void)credfile_request(&t, "auth.example.com", "/token", NULL, req, sizeof req);
	text = credfile_update(buf, size - 1, key, &t, &n);
	/* what it writes reads back as the same tokens */
	if (!text || mcpcred_parse(text, n, key, &back, why, sizeof why) != 0 || strcmp(back.access, t.access) != 0 ||
	    strcmp(back.refresh, t.refresh) != 0 || back.expires != t.expires)
		abort();
	free(text);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cred_tokens t;
	char why[300];
	size_t n;
	char *text;

	if (size < 1)
		return 0;
	if (data[0] & 2)
		return mcp_format(data, size);
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
