#define _GNU_SOURCE
#include "mcp-bridge/mcppkg.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* A name part of an npm package: lower case, digits, - . _ ~, not
 * starting with . or _ (npm's validate-npm-package-name). */
static int name_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || s[0] == '.' || s[0] == '_')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || strchr("-._~", s[i])))
			return 0;
	return 1;
}

int mcp_npm_spec_ok(const char *s)
{
	const char *name = s, *slash, *at;
	size_t total;

	if (*s == '@') {
		slash = strchr(s, '/');
		if (!slash || !name_ok(s + 1, (size_t)(slash - s - 1)))
			return 0;
		name = slash + 1;
	}
	at = strchr(name, '@');
	total = (size_t)((at ? at : name + strlen(name)) - s);
	if (total > 214 || !name_ok(name, (size_t)((at ? at : name + strlen(name)) - name)))
		return 0;
	if (at) {
		const char *v = at + 1;
		if (!*v || strlen(v) > 256)
			return 0;
		for (; *v; v++)
			if (!((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') || (*v >= '0' && *v <= '9') ||
			      strchr(".+-_~^<>=*|", *v)))
				return 0;
	}
	return 1;
}

/* The command's last path component. */
static const char *base(const char *cmd)
{
	const char *slash = strrchr(cmd, '/');

	return slash ? slash + 1 : cmd;
}

/* npx's options before its package (npm exec's): the ones that take no
 * value, and the package given by -p/--package; any other option could
 * name a registry, a cache or a command: not guessed at. */
static int npx_server(const char *name, json_t *args,
		      int (*visit)(void *, enum mcp_pkg_kind, const char *, const char *), void *ctx)
{
	size_t i, n = json_is_array(args) ? json_array_size(args) : 0;
	int given = 0, rc;

	for (i = 0; i < n; i++) {
		const char *a = json_string_value(json_array_get(args, i));
		if (!a)
			return visit(ctx, MCP_PKG_SKIP, name, "an npx argument is not a string");
		if (strcmp(a, "-y") == 0 || strcmp(a, "--yes") == 0 || strcmp(a, "-q") == 0 ||
		    strcmp(a, "--quiet") == 0 || strcmp(a, "--silent") == 0 || strcmp(a, "--prefer-offline") == 0)
			continue;
		if (strcmp(a, "-p") == 0 || strcmp(a, "--package") == 0 || strncmp(a, "--package=", 10) == 0) {
			const char *spec = a[2] == 'p' && a[9] == '=' ? a + 10 : json_string_value(json_array_get(args, ++i));
			if (!spec || !mcp_npm_spec_ok(spec))
				return visit(ctx, MCP_PKG_SKIP, name, "its npx package is not a registry package's name");
			if ((rc = visit(ctx, MCP_PKG_NPX, name, spec)) != 0)
				return rc;
			given = 1;
			continue;
		}
		if (a[0] == '-')
			return visit(ctx, MCP_PKG_SKIP, name, "npx has an option ward-pi does not read (only -y, -q, -p)");
		if (given) /* the command of the packages -p named */
			return 0;
		if (!mcp_npm_spec_ok(a))
			return visit(ctx, MCP_PKG_SKIP, name, "its npx package is not a registry package's name (a path, "
				     "a URL or a git spec is not fetched)");
		return visit(ctx, MCP_PKG_NPX, name, a);
	}
	return given ? 0 : visit(ctx, MCP_PKG_SKIP, name, "npx is given no package");
}

int mcp_packages(const char *text, size_t len,
		 int (*visit)(void *ctx, enum mcp_pkg_kind kind, const char *server, const char *spec), void *ctx,
		 char *err, size_t errsize)
{
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL), *servers, *srv;
	const char *name;
	int rc = 0;

	servers = json_object_get(root, "mcpServers");
	if (!json_is_object(root) || !json_is_object(servers)) {
		snprintf(err, errsize, "want an object with an \"mcpServers\" object");
		json_decref(root);
		return -1;
	}
	json_object_foreach(servers, name, srv) {
		const char *cmd = json_string_value(json_object_get(srv, "command"));
		if (!cmd || json_object_get(srv, "url"))
			continue;
		if (strcmp(base(cmd), "npx") == 0)
			rc = npx_server(name, json_object_get(srv, "args"), visit, ctx);
		else if (strcmp(base(cmd), "uvx") == 0 || strcmp(base(cmd), "pipx") == 0)
			rc = visit(ctx, MCP_PKG_SKIP, name, "uvx and pipx are not in the image (Python packages are "
				   "not fetched: give it in .pi-packages if Debian has it)");
		if (rc)
			break;
	}
	json_decref(root);
	return rc;
}
