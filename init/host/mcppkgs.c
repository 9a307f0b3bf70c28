#define _GNU_SOURCE
#include "init/host/mcppkgs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/source.h"
#include "mcp-bridge/mcppkg.h"

/* A line for ward-pi, whose words are split on tabs and line breaks: a
 * server name that could hold one (ward's start refuses such a file) is
 * not printed. */
static int print_one(void *ctx, enum mcp_pkg_kind kind, const char *server, const char *spec)
{
	size_t n = strlen(server);

	(void)ctx;
	if (!n || n > 64 || strspn(server, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != n)
		return 0;
	printf("%s\t%s\t%s\n", kind == MCP_PKG_NPX ? "npx" : "skip", server, spec);
	return 0;
}

int mcp_packages_main(const char *file)
{
	char err[512], *text = NULL;
	size_t len = 0;
	int rc;

	if (source_read(file, SOURCE_MAX_FILE, &text, &len, err, sizeof err) != 0) {
		log_error("--mcp-packages: %s", err);
		return 2;
	}
	rc = mcp_packages(text, len, print_one, NULL, err, sizeof err);
	if (rc < 0)
		log_error("--mcp-packages: %s: %s", file, err);
	free(text);
	return fflush(stdout) == 0 && rc == 0 ? 0 : 2;
}
