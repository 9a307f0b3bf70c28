#define _GNU_SOURCE
#include "mcp-bridge/mcpjson.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/envref.h"
#include "mcp-bridge/http.h"
#include "mcp-bridge/mcpcred.h"

static int fail(struct mcp_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct mcp_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof r->err, fmt, ap);
	va_end(ap);
	return -1;
}

/* A variable a header was taken from, noted once. 0, or -1 with r->err. */
static int note_var(struct mcp_result *r, const char *name)
{
	int i;

	for (i = 0; i < r->n_vars; i++)
		if (strcmp(r->vars[i], name) == 0)
			return 0;
	if (r->n_vars == MCP_MAX_VARS)
		return fail(r, "more than %d variables in header values", MCP_MAX_VARS);
	if (!(r->vars[r->n_vars] = strdup(name)))
		return fail(r, "out of memory");
	r->n_vars++;
	return 0;
}

/* A variable a header takes, noted for the env_pass check. */
static int note_cb(void *ctx, const char *name)
{
	return note_var(ctx, name);
}

/* pi-mcp-adapter's other spellings of a variable, $env:NAME and
 * {env:NAME} (NAME of letters, digits and _, as its \\w+), written as
 * ${NAME}: what the adapter would send, ward sends. A new string, or NULL
 * (out of memory). */
static char *adapter_spellings(const char *v)
{
	static const char word[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_";
	size_t n = strlen(v), o = 0, w;
	char *out = malloc(n + 1); /* each spelling is longer than the ${N} it becomes */

	if (!out)
		return NULL;
	while (*v) {
		if (strncmp(v, "$env:", 5) == 0 && (w = strspn(v + 5, word)) > 0) {
			o += (size_t)sprintf(out + o, "${%.*s}", (int)w, v + 5);
			v += 5 + w;
		} else if (strncmp(v, "{env:", 5) == 0 && (w = strspn(v + 5, word)) > 0 && v[5 + w] == '}') {
			o += (size_t)sprintf(out + o, "${%.*s}", (int)w, v + 5);
			v += 6 + w;
		} else {
			out[o++] = *v++;
		}
	}
	out[o] = '\0';
	return out;
}

/* ${NAME} from ward's own environment (common/envref.h): the host hands
 * secrets to ward, not to the agent. */
static char *interpolate(const char *given, struct mcp_result *r)
{
	const char *why = NULL;
	char err[256], *out, *v;

	if (given[0] == '!' && given[1] != '!') {
		/* pi-mcp-adapter runs "!command" for the value; ward runs nothing
		 * in the sandbox: whoever starts it ran the command on the host
		 * and passed what it printed by a name of the command's */
		char name[MCP_CMD_VAR_SIZE];
		const char *val;
		mcp_command_var(given + 1, name);
		if (!(val = getenv(name)) || !*val) {
			fail(r, "a header value is a !command: ward runs none in the sandbox, and %s (its output, "
			     "which ward-pi passes when it ran the command on the host) is not set", name);
			return NULL;
		}
		for (out = (char *)val; *out; out++)
			if (((unsigned char)*out < 0x20 && *out != '\t') || *out == 0x7f) {
				fail(r, "%s (a !command's output) holds a control character", name);
				return NULL;
			}
		if (note_var(r, name) != 0)
			return NULL;
		if (!(out = strdup(val)))
			fail(r, "out of memory");
		return out;
	}
	/* "!!": the adapter's escaped '!', a literal one */
	if (!(v = adapter_spellings(given[0] == '!' ? given + 1 : given))) {
		fail(r, "out of memory");
		return NULL;
	}
	if (envref_names(v, note_cb, r, &why) != 0) {
		if (why)
			fail(r, "%s in a header value", why);
		out = NULL;
	} else if (!(out = envref_expand(v, err, sizeof err))) {
		fail(r, "header value %s", err);
	}
	explicit_bzero(v, strlen(v));
	free(v);
	return out;
}

static int add_route(struct mcp_result *r, const char *server, unsigned port, const char *authority,
		     const char *target, const struct upstream *up, struct header *headers, int n_headers)
{
	struct mcp_route *nv = realloc(r->routes, (size_t)(r->n_routes + 1) * sizeof *nv);

	if (!nv)
		return -1;
	r->routes = nv;
	nv = &r->routes[r->n_routes];
	memset(nv, 0, sizeof *nv);
	if (asprintf(&nv->name, "mcp-%s", server) < 0) {
		nv->name = NULL;
		return -1;
	}
	nv->port = port;
	nv->host = strdup(authority);
	nv->path = strdup(target);
	if (!nv->host || !nv->path) {
		/* not counted: the headers stay the caller's to free */
		free(nv->name);
		free(nv->host);
		free(nv->path);
		return -1;
	}
	nv->headers = headers;
	nv->n_headers = n_headers;
	if (up) {
		nv->up = *up;
		nv->has_up = 1;
	}
	r->n_routes++;
	return 0;
}

static void free_lines(struct header *lines, int n)
{
	headers_free(lines, n);
}

static int server_name_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return 0;
	return 1;
}

/* An HTTP field name (RFC 9110 token): anything else would be refused by
 * the upstream on every request, not by ward at start. */
static int token(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return 0;
	return 1;
}

/* r->err (what interpolate() said) prefixed with the server's name. */
static int named(struct mcp_result *r, const char *name)
{
	char why[sizeof r->err];

	if (strcmp(r->err, "out of memory") == 0)
		return -1;
	snprintf(why, sizeof why, "%s", r->err);
	return fail(r, "server %s: %s", name, why);
}

/* A server's OAuth sign-in, when the route sends its token. */
struct sign_in {
	char *key, *host, *path;
	struct upstream up;
};

static void sign_in_free(struct sign_in *si)
{
	free(si->key);
	free(si->host);
	free(si->path);
	memset(si, 0, sizeof *si);
}

/* Pi sends a server without an Authorization header its OAuth sign-in
 * (mcp-auth.json): when the host's holds one, the bridge sends its token
 * and refreshes it at the token endpoint the sign-in found, reached where
 * its URL says, as a server's. si->key NULL: no sign-in (a server with an
 * oauth object then is left out: it needs one). 0, or -1 with r->err. */
static int sign_in(struct mcp_result *r, const char *name, json_t *srv, const char *url, const struct header *lines,
		   int n, const struct mcp_where *where, struct sign_in *si)
{
	char key[CRED_MAX_FIELD + 128], why[400], authority[256], target[4096];
	struct cred_tokens *t;
	int i, found = 0, tls = 0;

	memset(si, 0, sizeof *si);
	for (i = 0; i < n; i++)
		if (strcasecmp(lines[i].name, "Authorization") == 0)
			return 0;
	if (!where || !where->by_url || !where->auth) {
		if (!json_object_get(srv, "oauth"))
			return 0;
		return fail(r, "server %s: OAuth: %s", name, where && where->by_url
			    ? "no sign-in given ([mcp] auth names the host's mcp-auth.json; ward-pi gives it)"
			    : "[mcp] upstream serves every server: its daemon signs in");
	}
	if (!(t = malloc(sizeof *t)))
		return fail(r, "out of memory");
	found = mcpcred_find(where->auth, where->auth_len, name, url, key, sizeof key, t, why, sizeof why);
	if (found == 1 && mcp_url_split(t->token_url, authority, sizeof authority, target, sizeof target, &tls) != 0) {
		snprintf(why, sizeof why, "its sign-in's token endpoint is not a URL the bridge can pin");
		found = -1;
	}
	if (found == 1 && mcp_url_upstream(authority, tls, where, &si->up, why + 30, sizeof why - 30) != 0) {
		memcpy(why, "its sign-in's token endpoint: ", 30);
		found = -1;
	}
	/* plain http only to the host's loopback, by its relay */
	if (found == 1 && !tls && si->up.kind != UP_UNIX) {
		snprintf(why, sizeof why, "its sign-in's token endpoint is plain http off the host's loopback");
		found = -1;
	}
	explicit_bzero(t, sizeof *t);
	free(t);
	if (found < 0 || (found == 0 && json_object_get(srv, "oauth")))
		return fail(r, "server %s: OAuth: %s", name, why);
	if (found == 0)
		return 0;
	si->key = strdup(key);
	si->host = strdup(authority);
	si->path = strdup(target);
	if (!si->key || !si->host || !si->path) {
		sign_in_free(si);
		return fail(r, "out of memory");
	}
	return 0;
}

/* One list of the "ward" field: an array of strings, each one rule. */
static int ward_list(struct mcp_result *r, const char *name, const char *key, json_t *v, char ***list, int *n,
		     int (*parse)(const char *, char ***, int *, const char **))
{
	/* one rule a string: nothing in it that would split it in two (a
	 * URI may hold a comma, a name may not) */
	const char *seps = parse == tools_parse_uris ? " \t" : " \t,";
	const char *why = NULL;
	json_t *e;
	size_t i;

	if (!json_is_array(v) || !json_array_size(v))
		return fail(r, "server %s: \"ward\": \"%s\" is a list of strings, one rule each", name, key);
	json_array_foreach(v, i, e)
		if (!json_is_string(e) || strcspn(json_string_value(e), seps) != strlen(json_string_value(e)) ||
		    parse(json_string_value(e), list, n, &why) != 0)
			return fail(r, "server %s: \"ward\": \"%s\": %s", name, key, why ? why : "expected one rule a string");
	return 0;
}

/* A server entry's "ward" field, the route's rules as [route] would give
 * them (tools.h): {"tools": [NAME...], "deny_tools": [NAME...], "pins":
 * {"TOOL": "sha256:HEX"}, "audit_args": BOOL, "resources": [URI-PREFIX...],
 * "deny_resources": [...], "prompts": [NAME...], "deny_prompts": [...]}.
 * Read here, and gone from the agent's copy. 0, or -1 with r->err. */
static int ward_field(struct mcp_result *r, const char *name, json_t *w, struct tool_rules *t)
{
	const char *key, *why = NULL;
	json_t *v, *e;
	char pin[TOOLS_NAME_MAX + 80];

	if (!json_is_object(w))
		return fail(r, "server %s: \"ward\" is an object of tools, deny_tools, pins, resources and prompts", name);
	json_object_foreach(w, key, v) {
		int rc = 0;
		if (strcmp(key, "tools") == 0)
			t->has_allow = 1, rc = ward_list(r, name, key, v, &t->allow, &t->n_allow, tools_parse);
		else if (strcmp(key, "deny_tools") == 0)
			rc = ward_list(r, name, key, v, &t->deny, &t->n_deny, tools_parse);
		else if (strcmp(key, "resources") == 0)
			t->has_res_allow = 1, rc = ward_list(r, name, key, v, &t->res_allow, &t->n_res_allow, tools_parse_uris);
		else if (strcmp(key, "deny_resources") == 0)
			rc = ward_list(r, name, key, v, &t->res_deny, &t->n_res_deny, tools_parse_uris);
		else if (strcmp(key, "prompts") == 0)
			t->has_pr_allow = 1, rc = ward_list(r, name, key, v, &t->pr_allow, &t->n_pr_allow, tools_parse_prompts);
		else if (strcmp(key, "deny_prompts") == 0)
			rc = ward_list(r, name, key, v, &t->pr_deny, &t->n_pr_deny, tools_parse_prompts);
		else if (strcmp(key, "audit_args") == 0 && json_is_boolean(v))
			t->audit_args = json_is_true(v);
		else if (strcmp(key, "pins") == 0 && json_is_object(v)) {
			const char *tool;
			json_object_foreach(v, tool, e) {
				if (!json_is_string(e) ||
				    snprintf(pin, sizeof pin, "%s=%s", tool, json_string_value(e)) >= (int)sizeof pin ||
				    tools_pin_parse(pin, t, &why) != 0)
					return fail(r, "server %s: \"ward\": \"pins\": %s: %s", name, tool,
						    why ? why : "expected \"sha256:HEX\"");
			}
		} else {
			return fail(r, "server %s: \"ward\": \"%s\": expected tools, deny_tools, resources, deny_resources, "
				    "prompts, deny_prompts (lists), pins (an object) or audit_args (true or false)", name, key);
		}
		if (rc != 0)
			return -1;
	}
	return 0;
}

/* Moves every secret of one HTTP server into a route and points its URL at
 * the bridge. */
static int bridge_server(struct mcp_result *r, const char *name, json_t *srv, unsigned port,
			 const struct mcp_where *where)
{
	json_t *url = json_object_get(srv, "url"), *headers = json_object_get(srv, "headers");
	json_t *type = json_object_get(srv, "type");
	char authority[256], target[4096], why[400], *local = NULL;
	struct header *lines = NULL;
	struct upstream up;
	struct sign_in si;
	struct tool_rules rules = { 0 }; /* its "ward" field's (ward_field) */
	const char *key;
	json_t *val;
	int n = 0, tls = 0;

	if (json_is_string(type) && strcmp(json_string_value(type), "sse") == 0)
		return fail(r, "server %s: legacy SSE cannot be bridged (two paths); use streamable HTTP", name);
	/* pi-mcp-adapter's OAuth keeps its tokens in the host's keyring */
	if (json_is_string(json_object_get(srv, "auth")) &&
	    strcmp(json_string_value(json_object_get(srv, "auth")), "oauth") == 0)
		return fail(r, "server %s: pi-mcp-adapter's OAuth keeps its tokens in the host's keyring, out of "
			    "ward's reach; sign in with Pi's own /mcp (mcp-auth.json), or give a bearer token or a "
			    "header", name);
	/* pi-mcp-adapter's per-request headers from a command: it would run
	 * in the agent's sandbox, and what it prints would be the agent's */
	if (json_object_get(srv, "requestHeadersCommand"))
		return fail(r, "server %s: requestHeadersCommand cannot be bridged (it would run as the agent, and "
			    "its headers would be the agent's); give a bearer token or a header", name);
	/* a header map under a key no client reads stays in the agent's copy */
	json_object_foreach(srv, key, val)
		if (strcasecmp(key, "headers") == 0 && strcmp(key, "headers") != 0)
			return fail(r, "server %s: \"%s\": write headers, lower case (ward would leave it in the "
				    "agent's copy, unsent)", name, key);
	if (mcp_url_split(json_string_value(url), authority, sizeof authority, target, sizeof target, &tls) != 0)
		/* the URL itself is not repeated: it may carry a password or a token */
		return fail(r, "server %s: its url cannot be bridged (want http[s]://host[:port]/path[?query], "
			    "no user, no fragment)", name);
	if (where && where->by_url && mcp_url_upstream(authority, tls, where, &up, why, sizeof why) != 0)
		return fail(r, "server %s: %s", name, why);
	if (headers && !json_is_object(headers))
		return fail(r, "server %s: headers must be an object", name);
	lines = calloc(json_object_size(headers) + 2, sizeof *lines);
	if (!lines)
		return fail(r, "out of memory");
	json_object_foreach(headers, key, val) {
		char *v;
		if (!token(key)) {
			free_lines(lines, n);
			return fail(r, "server %s: a header name is not an HTTP token", name);
		}
		if (!json_is_string(val)) {
			free_lines(lines, n);
			return fail(r, "server %s: header %s: want a string value", name, key);
		}
		if (http_header_reserved(key, strlen(key))) {
			free_lines(lines, n);
			return fail(r, "server %s: header %s: the bridge writes it itself", name, key);
		}
		v = interpolate(json_string_value(val), r);
		if (!v || header_set(&lines[n], key, strlen(key), v, NULL) != 0) {
			if (v)
				explicit_bzero(v, strlen(v));
			free(v);
			free_lines(lines, n);
			return v ? fail(r, "out of memory") : named(r, name);
		}
		explicit_bzero(v, strlen(v));
		free(v);
		n++;
	}
	/* pi-mcp-adapter's own token fields become the same header */
	if (json_is_string(json_object_get(srv, "bearerToken")) || json_is_string(json_object_get(srv, "bearerTokenEnv"))) {
		char *tok = NULL;
		if (json_is_string(json_object_get(srv, "bearerToken"))) {
			tok = interpolate(json_string_value(json_object_get(srv, "bearerToken")), r);
			if (!tok) {
				free_lines(lines, n);
				return named(r, name);
			}
		} else {
			const char *var = json_string_value(json_object_get(srv, "bearerTokenEnv"));
			const char *env = getenv(var);
			if (env && note_var(r, var) != 0) {
				free_lines(lines, n);
				return -1;
			}
			if (!env || !(tok = strdup(env))) {
				free_lines(lines, n);
				return env ? fail(r, "out of memory")
					   : fail(r, "server %s: bearerTokenEnv names a variable ward's environment "
						  "lacks", name);
			}
		}
		const char *bad = NULL;
		for (int i = 0; i < n; i++)
			if (strcasecmp(lines[i].name, "Authorization") == 0)
				bad = "an Authorization header and a bearer token: say one";
		if (strpbrk(tok, "\r\n"))
			bad = "the bearer token holds a line break";
		char *bearer = NULL;
		int made = !bad && asprintf(&bearer, "Bearer %s", tok) >= 0 &&
			   header_set(&lines[n], "Authorization", 13, bearer, NULL) == 0;
		if (bearer)
			explicit_bzero(bearer, strlen(bearer));
		free(bearer);
		explicit_bzero(tok, strlen(tok));
		free(tok);
		if (bad) {
			free_lines(lines, n);
			return fail(r, "server %s: %s", name, bad);
		}
		if (made)
			n++;
	}
	if (json_object_get(srv, "ward") && ward_field(r, name, json_object_get(srv, "ward"), &rules) != 0) {
		free_lines(lines, n);
		tools_rules_free(&rules);
		return -1;
	}
	if (sign_in(r, name, srv, json_string_value(url), lines, n, where, &si) != 0) {
		free_lines(lines, n);
		tools_rules_free(&rules);
		return -1;
	}
	if (add_route(r, name, port, authority, target, where && where->by_url ? &up : NULL, lines, n) != 0) {
		free_lines(lines, n);
		sign_in_free(&si);
		tools_rules_free(&rules);
		return fail(r, "out of memory");
	}
	r->routes[r->n_routes - 1].oauth_key = si.key;
	r->routes[r->n_routes - 1].token_host = si.host;
	r->routes[r->n_routes - 1].token_path = si.path;
	r->routes[r->n_routes - 1].token_up = si.up;
	r->routes[r->n_routes - 1].tools = rules; /* the route owns them now */
	if (asprintf(&local, "http://127.0.0.1:%u%s", port, target) < 0)
		return fail(r, "out of memory");
	json_object_set_new(srv, "url", json_string(local));
	free(local);
	json_object_del(srv, "headers");
	json_object_del(srv, "bearerToken");
	json_object_del(srv, "bearerTokenEnv");
	/* an OAuth client of mcp.json (its secret too) is the bridge's
	 * business when there is a sign-in, and no one's otherwise */
	json_object_del(srv, "oauth");
	/* a URL server's env has no process to go to: the agent gets none of it */
	json_object_del(srv, "env");
	json_object_del(srv, "ward"); /* the bridge's rules, not the agent's business */
	return 0;
}

/* The server r->err names is left out: noted, removed from the copy. */
static void skip(struct mcp_result *r, json_t *servers, const char *name)
{
	if (r->n_skipped < MCP_MAX_SKIPPED) {
		_Static_assert(sizeof r->skipped[0].why == sizeof r->err, "a skip keeps err whole");
		memcpy(r->skipped[r->n_skipped].why, r->err, sizeof r->err);
		r->skipped[r->n_skipped].why[sizeof r->err - 1] = '\0';
	}
	r->n_skipped++;
	r->err[0] = '\0';
	json_object_del(servers, name); /* (name is the key's: last) */
}

int mcp_rewrite(const char *text, size_t len, unsigned first_port, const struct mcp_where *where,
		struct mcp_result *r)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr), *servers, *srv;
	const char *name;
	void *next;
	unsigned port = first_port;

	memset(r, 0, sizeof *r);
	if (!root) {
		/* jansson's text goes on to quote the input near the error,
		 * which may be a secret: only what is wrong and where */
		char *near = strstr(jerr.text, " near ");
		if (near)
			*near = '\0';
		return fail(r, "line %d column %d: %s", jerr.line, jerr.column, jerr.text);
	}
	servers = json_object_get(root, "mcpServers");
	if (!json_is_object(root) || !json_is_object(servers)) {
		fail(r, "want an object with an \"mcpServers\" object");
		json_decref(root); /* after: the message names its keys */
		return -1;
	}
	json_object_foreach_safe(servers, next, name, srv) {
		if (!server_name_ok(name)) {
			/* not repeated: it may hold a line break */
			fail(r, "a server name is not 1-64 letters, digits, _ and -");
			json_decref(root); /* after: the message names its keys */
			return -1;
		}
		if (!json_is_object(srv)) {
			fail(r, "server %s: not an object", name);
			json_decref(root); /* after: the message names its keys */
			return -1;
		}
		if (json_is_string(json_object_get(srv, "url"))) {
			if (port > 65535) {
				fail(r, "too many servers for the port range");
				json_decref(root); /* after: the message names its keys */
				return -1;
			}
			if (bridge_server(r, name, srv, port, where) != 0) {
				if (strcmp(r->err, "out of memory") == 0) {
					json_decref(root);
					return -1;
				}
				skip(r, servers, name);
				continue;
			}
			port++;
		} else if (json_object_get(srv, "socket")) {
			fail(r, "server %s: a host unix socket cannot be reached from the sandbox; give it a url", name);
			skip(r, servers, name);
		} else if (!json_is_string(json_object_get(srv, "command"))) {
			fail(r, "server %s: neither url nor command", name);
			skip(r, servers, name);
		} else if (json_object_get(srv, "ward")) {
			/* its rules could not be held: the agent itself runs a
			 * stdio server, and the bridge never sees its messages */
			fail(r, "server %s: \"ward\" rules hold only for a url server (the bridge judges what goes to it); a "
			     "stdio server runs inside the sandbox, where nothing could hold them: give it a url, or drop "
			     "its \"ward\"", name);
			skip(r, servers, name);
		}
		/* stdio servers run inside the sandbox: passed through as they are */
	}
	r->text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return r->text ? 0 : fail(r, "out of memory");
}

void mcp_routes_free(struct mcp_route *v, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].host);
		free(v[i].path);
		free(v[i].oauth_key);
		free(v[i].token_host);
		free(v[i].token_path);
		headers_free(v[i].headers, v[i].n_headers);
		tools_rules_free(&v[i].tools);
	}
	free(v);
}

void mcp_result_free(struct mcp_result *r)
{
	int i;

	for (i = 0; i < r->n_vars; i++)
		free(r->vars[i]);
	r->n_vars = 0;
	mcp_routes_free(r->routes, r->n_routes);
	free(r->text);
	r->routes = NULL;
	r->text = NULL;
	r->n_routes = 0;
	r->n_skipped = 0;
}
