/* Unit tests for mcp-bridge/mcppkg.c: the npm packages mcp.json's stdio
 * servers launch with npx, as ward-pi fetches them, and what is not
 * fetched (uvx, a path, a URL, an option npx would read a source from). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "mcp-bridge/mcppkg.h"
#include "unit.h"

struct seen {
	char text[2048];
};

static int note(void *ctx, enum mcp_pkg_kind kind, const char *server, const char *spec)
{
	struct seen *s = ctx;
	size_t n = strlen(s->text);

	snprintf(s->text + n, sizeof s->text - n, "%s %s %s;", kind == MCP_PKG_NPX ? "npx" : "skip", server,
		 kind == MCP_PKG_NPX ? spec : "-");
	return 0;
}

static void test_spec(void)
{
	CHECK(mcp_npm_spec_ok("cowsay"));
	CHECK(mcp_npm_spec_ok("@modelcontextprotocol/server-filesystem"));
	CHECK(mcp_npm_spec_ok("@scope/pkg@1.2.3"));
	CHECK(mcp_npm_spec_ok("pkg@^1.2.0"));
	CHECK(mcp_npm_spec_ok("pkg@latest"));
	CHECK(!mcp_npm_spec_ok(""));
	CHECK(!mcp_npm_spec_ok("./local"));
	CHECK(!mcp_npm_spec_ok("/abs/path"));
	CHECK(!mcp_npm_spec_ok("github:user/repo"));
	CHECK(!mcp_npm_spec_ok("https://example.com/x.tgz"));
	CHECK(!mcp_npm_spec_ok("git+ssh://git@host/x.git"));
	CHECK(!mcp_npm_spec_ok("Caps"));
	CHECK(!mcp_npm_spec_ok("pkg@"));
	CHECK(!mcp_npm_spec_ok("pkg@1 2"));
	CHECK(!mcp_npm_spec_ok("@scope"));
	CHECK(!mcp_npm_spec_ok("@/x"));
	CHECK(!mcp_npm_spec_ok(".hidden"));
	CHECK(!mcp_npm_spec_ok("pkg@file:../x"));
}

static void test_packages(void)
{
	struct seen s = { "" };
	char err[256];
	const char *json = "{\"mcpServers\": {"
			   "\"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"@m/server-fs@1.0.0\", \"/w\"]},"
			   "\"p\": {\"command\": \"/usr/local/bin/npx\", \"args\": [\"--package=a\", \"-p\", \"b\", \"run-it\"]},"
			   "\"u\": {\"command\": \"uvx\", \"args\": [\"mcp-server-git\"]},"
			   "\"g\": {\"command\": \"npx\", \"args\": [\"-y\", \"github:x/y\"]},"
			   "\"o\": {\"command\": \"npx\", \"args\": [\"--registry\", \"https://evil/\", \"x\"]},"
			   "\"e\": {\"command\": \"npx\"},"
			   "\"n\": {\"command\": \"node\", \"args\": [\"server.js\"]},"
			   "\"r\": {\"url\": \"https://x/mcp\", \"command\": \"npx\"}}}";

	CHECK(mcp_packages(json, strlen(json), note, &s, err, sizeof err) == 0);
	CHECK_STR(s.text, "npx fs @m/server-fs@1.0.0;npx p a;npx p b;skip u -;skip g -;skip o -;skip e -;");
	CHECK(mcp_packages("[]", 2, note, &s, err, sizeof err) == -1 && strstr(err, "mcpServers"));
	CHECK(mcp_packages("{", 1, note, &s, err, sizeof err) == -1);
}

int main(void)
{
	test_spec();
	test_packages();
	return unit_done("test_mcppkg");
}
