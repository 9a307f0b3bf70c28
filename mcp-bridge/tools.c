#define _GNU_SOURCE
#include "mcp-bridge/tools.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <mbedtls/sha256.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/uri.h"
/* A rule: MCP's tool-name characters, 1 to TOOLS_NAME_MAX of them, and
 * '*' only at the end (a prefix). */
static int rule_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || n > TOOLS_NAME_MAX + 1 || (n == 1 && s[0] == '*'))
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (c == '*' && i == n - 1)
			continue;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

/* A URI prefix: in the plain form the judge asks of a URI, at most
 * TOOLS_URI_MAX bytes. */
static int uri_ok(const char *s, size_t n)
{
	return n && n <= TOOLS_URI_MAX && uri_plain(s, n);
}

/* The rules of one list (seps between them), each checked by ok. */
static int parse_list(const char *v, const char *seps, int (*ok)(const char *, size_t), const char *empty,
		      const char *bad, const char *many, char ***list, int *n, const char **why)
{
	const char *p = v;
	size_t len;

	p += strspn(p, seps);
	if (!*p)
		return *why = empty, -1;
	while (*p) {
		char **grown;
		len = strcspn(p, seps);
		if (!ok(p, len))
			return *why = bad, -1;
		if (*n >= TOOLS_MAX_RULES)
			return *why = many, -1;
		grown = realloc(*list, (size_t)(*n + 1) * sizeof *grown);
		if (!grown)
			return *why = "out of memory", -1;
		*list = grown;
		if (!((*list)[*n] = strndup(p, len)))
			return *why = "out of memory", -1;
		++*n;
		p += len;
		p += strspn(p, seps);
	}
	return 0;
}

int tools_parse(const char *v, char ***list, int *n, const char **why)
{
	return parse_list(v, " \t,", rule_ok, "expected tool names (exact, or a prefix ending in *)",
			  "expected tool names of A-Z a-z 0-9 _ - . (1-128), or a prefix of them ending in * (a * alone "
			  "would be every tool)", "more than 128 tool rules in this route", list, n, why);
}

int tools_parse_prompts(const char *v, char ***list, int *n, const char **why)
{
	return parse_list(v, " \t,", rule_ok, "expected prompt names (exact, or a prefix ending in *)",
			  "expected prompt names of A-Z a-z 0-9 _ - . (1-128), or a prefix of them ending in * (a * "
			  "alone would be every prompt)", "more than 128 prompt rules in this route", list, n, why);
}

int tools_parse_uris(const char *v, char ***list, int *n, const char **why)
{
	return parse_list(v, " \t", uri_ok, "expected URI prefixes (file:///work/ allows every URI that begins with it)",
			  "expected URI prefixes in plain form, like file:///work/ (1-1024 bytes of printable ASCII: a "
			  "lowercase scheme and host, no blank, quote or backslash, no . or .. segment or //, no escape of a "
			  "letter, digit, - . _ ~ or /; each allows every URI that begins with it)",
			  "more than 128 resource rules in this route", list, n, why);
}

int tools_pin_parse(const char *v, struct tool_rules *r, const char **why)
{
	const char *eq = strchr(v, '='), *h;
	struct tool_pin *grown;
	size_t i;

	if (!eq || !rule_ok(v, (size_t)(eq - v)) || eq[-1] == '*')
		return *why = "expected TOOL=sha256:HEX (a tool's exact name; ward --mcp-pins prints them)", -1;
	h = eq + 1;
	if (strncmp(h, "sha256:", 7) != 0 || strlen(h + 7) != 64 || strspn(h + 7, "0123456789abcdefABCDEF") != 64)
		return *why = "expected TOOL=sha256: and 64 hex digits (ward --mcp-pins prints them)", -1;
	if (r->n_pins >= TOOLS_MAX_PINS)
		return *why = "more than 256 pins in this route", -1;
	for (i = 0; i < (size_t)r->n_pins; i++)
		if (strlen(r->pins[i].name) == (size_t)(eq - v) && strncmp(r->pins[i].name, v, (size_t)(eq - v)) == 0)
			return *why = "this tool is pinned twice", -1;
	grown = realloc(r->pins, (size_t)(r->n_pins + 1) * sizeof *grown);
	if (!grown)
		return *why = "out of memory", -1;
	r->pins = grown;
	if (!(r->pins[r->n_pins].name = strndup(v, (size_t)(eq - v))))
		return *why = "out of memory", -1;
	for (i = 0; i < 32; i++) {
		char byte[3] = "00";
		memcpy(byte, h + 7 + 2 * i, 2);
		r->pins[r->n_pins].hash[i] = (unsigned char)strtoul(byte, NULL, 16);
	}
	r->n_pins++;
	return 0;
}

int tools_pin_file(const char *path, struct tool_rules *r, const char **why)
{
	static char msg[200];
	char line[512];
	FILE *f;
	int n = 0;

	if (path[0] != '/')
		return *why = "expected the absolute path of a file of pins (ward --mcp-pins prints them)", -1;
	f = fopen(path, "re");
	if (!f) {
		snprintf(msg, sizeof msg, "cannot read %s: %s", path, strerror(errno));
		return *why = msg, -1;
	}
	while (fgets(line, sizeof line, f)) {
		char *p = line + strspn(line, " \t"), *e = p + strcspn(p, "\r\n");
		n++;
		*e = '\0';
		if (!*p || *p == '#')
			continue;
		if (strncmp(p, "pin", 3) == 0 && p[3 + strspn(p + 3, " \t")] == '=') {
			p += 3;
			p += strspn(p, " \t") + 1;
			p += strspn(p, " \t");
		}
		if (tools_pin_parse(p, r, why) != 0) {
			snprintf(msg, sizeof msg, "%s:%d: %s", path, n, *why);
			fclose(f);
			return *why = msg, -1;
		}
	}
	fclose(f);
	return 0;
}

int tools_pin_index(const struct tool_rules *r, const char *name)
{
	int i;

	for (i = 0; i < r->n_pins; i++)
		if (strcmp(r->pins[i].name, name) == 0)
			return i;
	return -1;
}

int tools_hash(const void *tool, unsigned char out[32])
{
	static const char *const keys[] = { "name", "description", "inputSchema" };
	json_t *t = (json_t *)tool, *o = json_object(), *v;
	char *s;
	size_t i;
	int rc;

	if (!o || !json_is_object(t)) {
		json_decref(o);
		return -1;
	}
	for (i = 0; i < 3; i++)
		if ((v = json_object_get(t, keys[i])))
			json_object_set(o, keys[i], v);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (!s)
		return -1;
	rc = mbedtls_sha256_ret((const unsigned char *)s, strlen(s), out, 0) == 0 ? 0 : -1;
	free(s);
	return rc;
}

static int rule_matches(const char *rule, const char *name)
{
	size_t n = strlen(rule);

	if (n && rule[n - 1] == '*')
		return strncmp(rule, name, n - 1) == 0;
	return strcmp(rule, name) == 0;
}

/* A deny list, then an allow list when it is set (each rule matched by
 * match): whether name passes. */
static int passes(char **allow, int n_allow, int has_allow, char **deny, int n_deny, const char *name,
		  int (*match)(const char *, const char *))
{
	int i;

	for (i = 0; i < n_deny; i++)
		if (match(deny[i], name))
			return 0;
	if (!has_allow)
		return 1;
	for (i = 0; i < n_allow; i++)
		if (match(allow[i], name))
			return 1;
	return 0;
}

static int prefix_of(const char *prefix, const char *s)
{
	return strncmp(prefix, s, strlen(prefix)) == 0;
}

int tools_any(const struct tool_rules *r)
{
	return r->has_allow || r->n_deny || r->n_pins || r->audit_args || r->has_res_allow || r->n_res_deny ||
	       r->has_pr_allow || r->n_pr_deny;
}

int tools_allowed(const struct tool_rules *r, const char *name)
{
	return passes(r->allow, r->n_allow, r->has_allow, r->deny, r->n_deny, name, rule_matches);
}

int tools_resource_allowed(const struct tool_rules *r, const char *uri)
{
	/* a URI a server would read otherwise than written cannot be
	 * judged by its prefix */
	return uri_plain(uri, strlen(uri)) &&
	       passes(r->res_allow, r->n_res_allow, r->has_res_allow, r->res_deny, r->n_res_deny, uri, prefix_of);
}

/* Whether a deny rule is a prefix of s (its first n bytes): every URI that
 * begins with them is denied. */
static int denied_all(const struct tool_rules *r, const char *s, size_t n)
{
	int i;

	for (i = 0; i < r->n_res_deny; i++)
		if (strlen(r->res_deny[i]) <= n && strncmp(r->res_deny[i], s, strlen(r->res_deny[i])) == 0)
			return 1;
	return 0;
}

int tools_template_allowed(const struct tool_rules *r, const char *tmpl)
{
	size_t lit = strcspn(tmpl, "{");
	int i;

	/* no variable: the one URI it is */
	if (!tmpl[lit])
		return tools_resource_allowed(r, tmpl);
	/* every URI it gives begins with its text up to the first '{' */
	if (!uri_plain(tmpl, lit) || denied_all(r, tmpl, lit))
		return 0;
	if (!r->has_res_allow)
		return 1;
	/* some may be allowed: a rule the text begins with, or one that
	 * begins with the text, unless a deny rule covers the longer of the
	 * two (every URI both begin with) */
	for (i = 0; i < r->n_res_allow; i++) {
		const char *a = r->res_allow[i];
		size_t n = strlen(a);
		if (strncmp(a, tmpl, n < lit ? n : lit) == 0 && !(n > lit ? denied_all(r, a, n) : 0))
			return 1;
	}
	return 0;
}

int tools_prompt_allowed(const struct tool_rules *r, const char *name)
{
	return passes(r->pr_allow, r->n_pr_allow, r->has_pr_allow, r->pr_deny, r->n_pr_deny, name, rule_matches);
}

static void put_list(char *buf, size_t size, size_t *at, const char *key, char **list, int n)
{
	int i, w;

	w = snprintf(buf + *at, size - *at, "%s%s =", *at ? "; " : "", key);
	*at += w > 0 && (size_t)w < size - *at ? (size_t)w : 0;
	for (i = 0; i < n; i++) {
		w = snprintf(buf + *at, size - *at, " %s", list[i]);
		if (w < 0 || (size_t)w >= size - *at)
			return;
		*at += (size_t)w;
	}
}

void tools_describe(const struct tool_rules *r, char *buf, size_t size)
{
	size_t at = 0;

	if (!size)
		return;
	buf[0] = '\0';
	if (r->has_allow)
		put_list(buf, size, &at, "tools", r->allow, r->n_allow);
	if (r->n_deny)
		put_list(buf, size, &at, "deny_tools", r->deny, r->n_deny);
	if (r->has_res_allow)
		put_list(buf, size, &at, "resources", r->res_allow, r->n_res_allow);
	if (r->n_res_deny)
		put_list(buf, size, &at, "deny_resources", r->res_deny, r->n_res_deny);
	if (r->has_pr_allow)
		put_list(buf, size, &at, "prompts", r->pr_allow, r->n_pr_allow);
	if (r->n_pr_deny)
		put_list(buf, size, &at, "deny_prompts", r->pr_deny, r->n_pr_deny);
	if (r->audit_args) {
		int w = snprintf(buf + at, size - at, "%saudit_args = yes", at ? "; " : "");
		if (w < 0 || (size_t)w >= size - at)
			return;
		at += (size_t)w;
	}
	for (int i = 0; i < r->n_pins; i++) {
		int w = snprintf(buf + at, size - at, "%spin = %s=sha256:%02x%02x%02x%02x...", at ? "; " : "", r->pins[i].name,
				 r->pins[i].hash[0], r->pins[i].hash[1], r->pins[i].hash[2], r->pins[i].hash[3]);
		if (w < 0 || (size_t)w >= size - at)
			return;
		at += (size_t)w;
	}
}

/* s as the audit line may show it: printable ASCII, no space or quote,
 * cut to size. */
static void printable(const char *s, char *out, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++) {
		unsigned char c = (unsigned char)s[i];
		out[i] = s[i];
		if (c <= ' ' || c >= 0x7f || c == '"' || c == '=')
			out[i] = '?';
	}
	out[i] = '\0';
}

/* src into dst, cut to fit. */
static void copy_cut(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* One JSON-RPC error object for id (a request's, or null). */
static json_t *rpc_error(json_t *id, int code, const char *msg)
{
	return json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", "code", code,
			 "message", msg);
}

/* What one message is: a call of a tool (whose name, when allowed, is
 * *name), refused (why), or something else. */
/* refused: MSG_CALL_REFUSED and after */
enum judged_msg {
	MSG_OTHER,
	MSG_CALL_OK,
	MSG_CALL_REFUSED,
	MSG_CALL_MALFORMED,
	MSG_CALL_CHANGED,
	MSG_CALL_UNLISTED,
	MSG_AMBIGUOUS,
	MSG_RES_REFUSED,    /* a resource the rules do not let it read */
	MSG_PROMPT_REFUSED, /* a prompt they do not let it get */
	MSG_NAMELESS	    /* a resources/read or prompts/get without its uri or name */
};

/* Whether key is what a case-folding parser takes for want (Go's
 * encoding/json: ASCII case, U+017F for s, U+212A for k), though it is
 * not want itself. */
static int folds_to(const char *key, const char *want)
{
	const unsigned char *k = (const unsigned char *)key;
	unsigned char c;

	if (strcmp(key, want) == 0)
		return 0;
	for (; *want; want++) {
		if (k[0] == 0xc5 && k[1] == 0xbf) {
			c = 's';
			k += 2;
		} else if (k[0] == 0xe2 && k[1] == 0x84 && k[2] == 0xaa) {
			c = 'k';
			k += 3;
		} else if (!*k) {
			return 0;
		} else {
			c = (unsigned char)tolower(*k++);
		}
		if (c != (unsigned char)*want)
			return 0;
	}
	return !*k;
}

/* Whether o has a key a case-folding parser would take for one of names
 * (and, the last one winning there, read where the judge read another). */
static int ambiguous(json_t *o, const char *const *names)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(o, key, v)
		for (i = 0; names[i]; i++)
			if (folds_to(key, names[i]))
				return 1;
	return 0;
}

/* The string params.KEY of m: 0 and *out, or -1 (missing, not a string,
 * or with a NUL, which the rules' C strings would cut). */
static int param_string(json_t *m, const char *key, const char **out)
{
	json_t *params = json_object_get(m, "params"), *v = json_is_object(params) ? json_object_get(params, key) : NULL;

	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
		return -1;
	*out = json_string_value(v);
	return 0;
}

/* A resource or prompt request (resources/read, resources/subscribe,
 * resources/unsubscribe, prompts/get) on a route whose rules name them:
 * judged by its URI or name. MSG_OTHER for any other method. */
static enum judged_msg judge_reach(const struct tool_rules *r, json_t *m, const char *method, const char **name,
				   const char **kind)
{
	int res_rules = r->has_res_allow || r->n_res_deny, pr_rules = r->has_pr_allow || r->n_pr_deny;
	int res = strcmp(method, "resources/read") == 0 || strcmp(method, "resources/subscribe") == 0 ||
		  strcmp(method, "resources/unsubscribe") == 0;

	if (res && res_rules) {
		*kind = "resource";
		if (param_string(m, "uri", name) != 0)
			return MSG_NAMELESS;
		return tools_resource_allowed(r, *name) ? MSG_CALL_OK : MSG_RES_REFUSED;
	}
	if (strcmp(method, "prompts/get") == 0 && pr_rules) {
		*kind = "prompt";
		if (param_string(m, "name", name) != 0)
			return MSG_NAMELESS;
		return tools_prompt_allowed(r, *name) ? MSG_CALL_OK : MSG_PROMPT_REFUSED;
	}
	/* a completion runs the argument completer of a prompt or a
	 * resource template, which may tell what it holds (the file names
	 * under a path): judged as the prompt or the template */
	if (strcmp(method, "completion/complete") == 0 && (res_rules || pr_rules)) {
		json_t *params = json_object_get(m, "params");
		json_t *ref = json_is_object(params) ? json_object_get(params, "ref") : NULL;
		json_t *type = json_is_object(ref) ? json_object_get(ref, "type") : NULL;
		const char *t = json_is_string(type) ? json_string_value(type) : "";
		json_t *v = strcmp(t, "ref/prompt") == 0 ? json_object_get(ref, "name")
			  : strcmp(t, "ref/resource") == 0 ? json_object_get(ref, "uri") : NULL;
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
			*kind = "prompt";
			return MSG_NAMELESS;
		}
		*name = json_string_value(v);
		if (t[4] == 'p') {
			*kind = "prompt";
			return !pr_rules || tools_prompt_allowed(r, *name) ? MSG_CALL_OK : MSG_PROMPT_REFUSED;
		}
		*kind = "resource";
		return !res_rules || tools_template_allowed(r, *name) ? MSG_CALL_OK : MSG_RES_REFUSED;
	}
	return MSG_OTHER;
}

static enum judged_msg judge_one(const struct tool_rules *r, json_t *m, const char **name, const char **kind,
				 int *lists, const unsigned char *pin_seen)
{
	json_t *method;
	int k;

	static const char *const msg_keys[] = { "jsonrpc", "id", "method", "params", NULL };
	static const char *const param_keys[] = { "name", "arguments", "uri", "ref", NULL };
	static const char *const ref_keys[] = { "type", "name", "uri", NULL };
	json_t *params;

	*name = NULL;
	*kind = "tool";
	params = json_is_object(m) ? json_object_get(m, "params") : NULL;
	if (json_is_object(m) &&
	    (ambiguous(m, msg_keys) || (json_is_object(params) && ambiguous(params, param_keys)) ||
	     (json_is_object(params) && json_is_object(json_object_get(params, "ref")) &&
	      ambiguous(json_object_get(params, "ref"), ref_keys))))
		return MSG_AMBIGUOUS;
	if (!json_is_object(m) || !json_is_string(method = json_object_get(m, "method")))
		return MSG_OTHER;
	if (strcmp(json_string_value(method), "tools/list") == 0)
		*lists = 1;
	if (strcmp(json_string_value(method), "tools/call") != 0)
		return judge_reach(r, m, json_string_value(method), name, kind);
	/* a name with a NUL in it is no name (JSON_ALLOW_NUL is not set: it
	 * cannot get here, but the rules compare C strings) */
	if (param_string(m, "name", name) != 0)
		return MSG_CALL_MALFORMED;
	if (!tools_allowed(r, *name))
		return MSG_CALL_REFUSED;
	/* a pinned tool: only as the server listed it with its pinned hash */
	k = tools_pin_index(r, *name);
	if (k >= 0 && (!pin_seen || pin_seen[k] != PIN_OK))
		return pin_seen && pin_seen[k] == PIN_CHANGED ? MSG_CALL_CHANGED : MSG_CALL_UNLISTED;
	return MSG_CALL_OK;
}

static void refusal_text(const struct tool_rules *r, const char *route, enum judged_msg j, const char *name,
			 char *buf, size_t size)
{
	char rules[300], shown[TOOLS_NAME_MAX + 1];

	tools_describe(r, rules, sizeof rules);
	if (j == MSG_AMBIGUOUS) {
		snprintf(buf, size, "ward: a key of this message differs from one MCP names (jsonrpc, id, method, params, "
			 "name, arguments) only in case, or by a letter some parsers fold into s or k: a server may read it as "
			 "that key; not sent to the server of route %s", route);
		return;
	}
	if (j == MSG_CALL_MALFORMED) {
		snprintf(buf, size, "ward: a tools/call without a tool's name (params.name) is not sent to the server of "
			 "route %s", route);
		return;
	}
	if (j == MSG_NAMELESS) {
		snprintf(buf, size, "ward: route %s judges the resources and prompts it is asked for, and this request has "
			 "no uri or name (params.uri, params.name, or a completion's params.ref): not sent to the server",
			 route);
		return;
	}
	printable(name, shown, sizeof shown);
	if (j == MSG_CALL_CHANGED) {
		snprintf(buf, size, "ward: the tool '%s' changed since it was pinned on route %s ([route %s] pin): its "
			 "description or input schema is not the one reviewed; the call was not sent to the server (ward "
			 "--mcp-pins prints its hash now)", shown, route, route);
		return;
	}
	if (j == MSG_CALL_UNLISTED) {
		snprintf(buf, size, "ward: the tool '%s' is pinned on route %s and the server has not listed it with its "
			 "pinned description this session: list the tools first; the call was not sent to the server",
			 shown, route);
		return;
	}
	if (j == MSG_RES_REFUSED && !uri_plain(name, strlen(name))) {
		snprintf(buf, size, "ward: the resource URI '%s' is not in plain form (a lowercase scheme and host, no . or .. "
			 "segment, //, backslash or blank, no escape of a letter, digit or /): route %s judges a URI as written, "
			 "and a server would read this one otherwise; the request was not sent to the server", shown, route);
		return;
	}
	snprintf(buf, size, "ward: the %s '%s' is not allowed on route %s ([route %s] %s); the %s was not sent to the "
		 "server", j == MSG_RES_REFUSED ? "resource" : j == MSG_PROMPT_REFUSED ? "prompt" : "tool", shown, route,
		 route, rules, j == MSG_CALL_REFUSED ? "call" : "request");
}

/* The call the audit line names: the first, or the first refused one
 * (refused set) in place of an allowed one. */
/* Whether the quote at s[i] follows an even run of backslashes (its own,
 * not escaped). */
static int escaped_backslash(const char *s, size_t i)
{
	size_t k = 0;

	while (k < i && s[i - 1 - k] == '\\')
		k++;
	return k % 2 == 0;
}

/* The arguments as an audit line may show them: JSON, ASCII alone, cut to
 * TOOLS_ARGS_SHOWN bytes, and with '=', ':' and blanks within its strings
 * written as JSON's \u escapes: still the same JSON, and nothing in it can pass for a field
 * of ward's log (ward --denials reads it back). */
static char *args_text(json_t *args)
{
	char *s = args ? json_dumps(args, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY) : NULL, *out;
	size_t i, n = 0;
	int in_string = 0;

	if (!s)
		return NULL;
	out = malloc(6 * TOOLS_ARGS_SHOWN + 8);
	for (i = 0; out && s[i] && n < 6 * TOOLS_ARGS_SHOWN; i++) {
		/* within a string (after its escapes): '=', ':' and blanks
		 * escaped; outside one, compact JSON has only its ':' */
		if (s[i] == '"' && (i == 0 || s[i - 1] != '\\' || escaped_backslash(s, i)))
			in_string = !in_string;
		if (in_string && (s[i] == '=' || s[i] == ':' || s[i] == ' ' || s[i] == '\t'))
			n += (size_t)sprintf(out + n, "\\u%04x", (unsigned char)s[i]);
		else
			out[n++] = s[i];
		if (n >= TOOLS_ARGS_SHOWN && s[i + 1]) {
			n += (size_t)sprintf(out + n, "...");
			break;
		}
	}
	if (out)
		out[n] = '\0';
	free(s);
	return out;
}

static void note_call(struct tools_result *out, json_t *m, const char *name, const char *kind, int refused)
{
	json_t *id = json_object_get(m, "id");
	char *s;

	if (!name || (out->tool[0] && (!refused || out->refused_noted)))
		return;
	out->refused_noted = refused;
	if (out->want_args) {
		free(out->args);
		out->args = args_text(json_object_get(json_object_get(m, "params"), "arguments"));
	}
	printable(name, out->tool, sizeof out->tool);
	out->kind = kind;
	out->id[0] = '\0';
	if (json_is_string(id))
		printable(json_string_value(id), out->id, sizeof out->id);
	else if (id && (s = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT))) {
		printable(s, out->id, sizeof out->id);
		free(s);
	}
}

static int answer(struct tools_result *out, int status, json_t *body)
{
	out->verdict = TOOLS_REFUSE;
	out->status = status;
	out->body = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	return out->body ? 0 : -1;
}

/* The ids of the body's requests (each message with a method and an id),
 * as compact JSON: the answer's SSE stream ends once each has its response
 * (toolslist.h). Past TOOLS_WANT_MAX none are kept. -1: out of memory. */
static int note_ids(struct tools_result *out, json_t *doc)
{
	size_t i, n = json_is_array(doc) ? json_array_size(doc) : 1;

	for (i = 0; i < n; i++) {
		json_t *m = json_is_array(doc) ? json_array_get(doc, i) : doc, *id;
		char *s, **g;
		if (!json_is_object(m) || !json_is_string(json_object_get(m, "method")) ||
		    !(id = json_object_get(m, "id")) || json_is_null(id))
			continue;
		if (out->n_want == TOOLS_WANT_MAX) {
			tools_ids_free(out);
			return 0;
		}
		if (!(s = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT)) ||
		    !(g = realloc(out->want, (out->n_want + 1) * sizeof *g))) {
			free(s);
			tools_ids_free(out);
			return -1;
		}
		out->want = g;
		out->want[out->n_want++] = s;
	}
	return 0;
}

void tools_ids_free(struct tools_result *out)
{
	size_t i;

	for (i = 0; i < out->n_want; i++)
		free(out->want[i]);
	free(out->want);
	out->want = NULL;
	out->n_want = 0;
}

int tools_judge(const struct tool_rules *r, const char *route, const char *body, size_t len,
		const unsigned char *pin_seen, struct tools_result *out)
{
	json_error_t err;
	json_t *doc, *m, *errs;
	const char *name, *kind;
	enum judged_msg j;
	char msg[646]; /* "ward: " and a why */
	size_t i, n;
	int refused = 0;

	memset(out, 0, sizeof *out);
	out->verdict = TOOLS_PASS;
	out->want_args = r->audit_args;
	doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &err);
	if (!doc) {
		/* where, not what: jansson's text quotes the body, which may
		 * hold the arguments */
		snprintf(out->why, sizeof out->why, "the body is not JSON a strict parser reads (line %d, column %d)",
			 err.line, err.column);
		snprintf(msg, sizeof msg, "ward: route %s judges each tool call, and this body is not JSON a strict parser "
			 "reads (line %d, column %d): not sent to the server", route, err.line, err.column);
		return answer(out, 400, rpc_error(NULL, -32700, msg));
	}
	if (note_ids(out, doc) != 0) {
		json_decref(doc);
		return -1;
	}
	if (!json_is_array(doc)) {
		j = judge_one(r, doc, &name, &kind, &out->lists, pin_seen);
		note_call(out, doc, name, kind, j >= MSG_CALL_REFUSED);
		if (j == MSG_OTHER || j == MSG_CALL_OK) {
			json_decref(doc);
			return 0;
		}
		refusal_text(r, route, j, name, msg, sizeof msg);
		copy_cut(out->why, sizeof out->why, msg + strlen("ward: "));
		/* a notification has no id to answer: the HTTP status says it */
		if (!json_object_get(doc, "id")) {
			m = rpc_error(NULL, -32602, msg);
			json_decref(doc);
			return answer(out, 403, m);
		}
		m = rpc_error(json_object_get(doc, "id"), -32602, msg);
		json_decref(doc);
		return answer(out, 200, m);
	}
	/* a batch: judged whole */
	n = json_array_size(doc);
	for (i = 0; i < n; i++) {
		j = judge_one(r, json_array_get(doc, i), &name, &kind, &out->lists, pin_seen);
		note_call(out, json_array_get(doc, i), name, kind, j >= MSG_CALL_REFUSED);
		if (j >= MSG_CALL_REFUSED) {
			if (!refused)
				refusal_text(r, route, j, name, out->why, sizeof out->why);
			refused = 1;
		}
	}
	if (!refused) {
		json_decref(doc);
		return 0;
	}
	errs = json_array();
	for (i = 0; errs && i < n; i++) {
		json_t *e = json_array_get(doc, i), *id = json_is_object(e) ? json_object_get(e, "id") : NULL;
		if (!id)
			continue; /* a notification (or no message): nothing to answer */
		j = judge_one(r, e, &name, &kind, &out->lists, pin_seen);
		if (j >= MSG_CALL_REFUSED)
			refusal_text(r, route, j, name, msg, sizeof msg);
		else
			snprintf(msg, sizeof msg, "ward: not sent: this batch holds a tool call route %s does not allow, and "
				 "a batch is sent whole or not at all", route);
		json_array_append_new(errs, rpc_error(id, -32602, msg));
	}
	memmove(out->why, out->why + (strncmp(out->why, "ward: ", 6) == 0 ? 6 : 0), sizeof out->why - 6);
	json_decref(doc);
	if (errs && !json_array_size(errs)) {
		json_decref(errs);
		snprintf(msg, 7, "ward: ");
		copy_cut(msg + 6, sizeof msg - 6, out->why);
		return answer(out, 403, rpc_error(NULL, -32602, msg));
	}
	return answer(out, 200, errs);
}

void tools_result_free(struct tools_result *out)
{
	tools_ids_free(out);
	free(out->body);
	free(out->args);
	out->body = out->args = NULL;
}

/* One list of rules and the strings in it. */
static void free_list(char **v, int n)
{
	while (n > 0)
		free(v[--n]);
	free(v);
}

void tools_rules_free(struct tool_rules *r)
{
	int i;

	for (i = 0; i < r->n_pins; i++)
		free(r->pins[i].name);
	free(r->pins);
	free_list(r->allow, r->n_allow);
	free_list(r->deny, r->n_deny);
	free_list(r->res_allow, r->n_res_allow);
	free_list(r->res_deny, r->n_res_deny);
	free_list(r->pr_allow, r->n_pr_allow);
	free_list(r->pr_deny, r->n_pr_deny);
	memset(r, 0, sizeof *r);
}
