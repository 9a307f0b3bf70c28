/* libFuzzer target: mcp.json materialisation (jansson parse and rewrite), by
 * [mcp] upstream or by URL (with a host's mcp-auth.json whose sign-ins
 * its servers may name), the list of its !command headers and of its stdio
 * servers' npm packages. */
#include <stdint.h>
#include <stdlib.h>

#include "mcp-bridge/mcpjson.h"
#include "mcp-bridge/mcppkg.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("FUZZ_TOKEN", "tok", 1);
	return 0;
}

static int count_pkg(void *ctx, enum mcp_pkg_kind kind, const char *server, const char *spec)
{
	(void)kind;
	(void)server;
	if (kind == MCP_PKG_NPX && !mcp_npm_spec_ok(spec)) /* only a spec it judged fetchable */
		abort();
	(*(int *)ctx)++;
	return 0;
}

static int count(void *ctx, const char *command)
{
	char name[MCP_CMD_VAR_SIZE];

	mcp_command_var(command, name);
	(*(int *)ctx)++;
	return 0;
}

/* Sign-ins for servers named a and b-c at https://a.test/mcp. */
static const char auth[] =
	"{\"mcp__a|https://a.test/mcp\": {\"tokens\": {\"access_token\": \"t\", \"refresh_token\": \"r\"}, "
	"\"clientInformation\": {\"client_id\": \"c\"}, \"discovery\": {\"authorizationServerMetadata\": "
	"{\"token_endpoint\": \"https://auth.test/token\"}}}, \"mcp__b_c|https://a.test/mcp\": {\"tokens\": {}}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_result r;
	struct mcp_where where = { .by_url = 1, .loopback = "/run/ward/host" };

	/* the first byte picks the mode: every server to [mcp] upstream (a
	 * daemon's), or each where its URL says */
	if (size && data[0] == '!') {
		where.auth = auth;
		where.auth_len = sizeof auth - 1;
		(void)mcp_rewrite((const char *)data + 1, size - 1, 7800, &where, &r);
		mcp_result_free(&r);
		return 0;
	}
	(void)mcp_rewrite((const char *)data, size, 7800, NULL, &r);
	mcp_result_free(&r);
	/* ward-pi's list of !command headers, from the same text */
	{
		char err[128];
		int n = 0;
		(void)mcp_commands((const char *)data, size, count, &n, err, sizeof err);
		(void)mcp_packages((const char *)data, size, count_pkg, &n, err, sizeof err);
	}
	return 0;
}
