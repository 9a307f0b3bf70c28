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

	(void)mcp_rewrite((const char *)data, size, 7800, &r);
	mcp_result_free(&r);
	return 0;
}
