#include "mcp-bridge/mcpcmd.h"

#include <jansson.h>
#include <mbedtls/sha256.h>
#include <stdio.h>
#include <string.h>

void mcp_command_var(const char *command, char *name)
{
	unsigned char h[32];

	if (mbedtls_sha256_ret((const unsigned char *)command, strlen(command), h, 0) != 0)
		memset(h, 0, sizeof h); /* (SHA-256 in software does not fail) */
	snprintf(name, MCP_CMD_VAR_SIZE, "WARD_MCP_CMD_%02x%02x%02x%02x%02x%02x%02x%02x", h[0], h[1], h[2], h[3], h[4],
		 h[5], h[6], h[7]);
}

/* "!COMMAND" (not "!!"): its COMMAND to visit. */
static int command_of(const json_t *v, int (*visit)(void *ctx, const char *command), void *ctx)
{
	const char *s = json_string_value(v);

	return s && s[0] == '!' && s[1] != '!' && s[1] ? visit(ctx, s + 1) : 0;
}

int mcp_commands(const char *text, size_t len, int (*visit)(void *ctx, const char *command), void *ctx,
		 char *err, size_t errsize)
{
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL), *servers, *srv, *v;
	const char *name, *key;
	int rc = 0;

	servers = json_object_get(root, "mcpServers");
	if (!json_is_object(servers)) {
		snprintf(err, errsize, "want JSON: an object with an \"mcpServers\" object");
		json_decref(root);
		return -1;
	}
	json_object_foreach(servers, name, srv) {
		if (!json_is_string(json_object_get(srv, "url")))
			continue;
		json_object_foreach(json_object_get(srv, "headers"), key, v)
			if (!rc)
				rc = command_of(v, visit, ctx);
		if (!rc)
			rc = command_of(json_object_get(srv, "bearerToken"), visit, ctx);
		if (rc)
			break;
	}
	json_decref(root);
	return rc;
}

