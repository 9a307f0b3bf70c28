/* libFuzzer target: mcp.json materialisation (jansson parse and rewrite). */
#include <stdint.h>
#include <stdlib.h>

#include "mcp-bridge/mcpjson.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("FUZZ_TOKEN", "tok", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_result r;
	struct mcp_where where = { .by_url = 1, .loopback = "/run/ward/host" };

	/* the first byte picks the mode: every server to [mcp] upstream (a
	 * daemon's), or each where its URL says */
	if (size && data[0] == '!') {
		(void)mcp_rewrite((const char *)data + 1, size - 1, 7800, &where, &r);
		mcp_result_free(&r);
		return 0;
	}
	(void)mcp_rewrite((const char *)data, size, 7800, NULL, &r);
	mcp_result_free(&r);
	return 0;
}
