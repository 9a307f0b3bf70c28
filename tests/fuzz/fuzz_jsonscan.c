/* libFuzzer target: mcp-bridge/jsonscan.c against jansson, the strict
 * parser the filter read with before it (and what clients' parsers are
 * held to). The input is a JSON-RPC text, the body of a tools/list answer.
 * - jsonscan reads what jansson reads (JSON_REJECT_DUPLICATES, any value
 *   at the top; but for a NUL byte, where jansson stops reading), and
 *   jansson reads what jsonscan reads, but for what jansson cannot hold
 *   (a number too large for it);
 * - the body toolslist.c sends, read by jansson, is what jansson's tree of
 *   the input is once the refused tools and prompts are taken out of it:
 *   thinning the bytes changes nothing else. */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/jsonscan.h"
#include "mcp-bridge/toolslist.h"

static char *allow[] = { "echo", "add*" }, *deny[] = { "add_secret*" }, *pr_deny[] = { "p*" };
static const struct tool_rules rules = { .allow = allow,
					 .n_allow = 2,
					 .has_allow = 1,
					 .deny = deny,
					 .n_deny = 1,
					 .pr_deny = pr_deny,
					 .n_pr_deny = 1 };

/* The entries of list (an array) that the rules keep, as the filter did
 * on jansson's tree: an object with a string named key the rules allow. */
static void thin_tree(json_t *list, const char *key, int (*keep)(const struct tool_rules *, const char *))
{
	size_t i;
	json_t *e, *v;

	for (i = json_is_array(list) ? json_array_size(list) : 0; i-- > 0;) {
		e = json_array_get(list, i);
		v = json_is_object(e) ? json_object_get(e, key) : NULL;
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v) ||
		    !keep(&rules, json_string_value(v)))
			json_array_remove(list, i);
	}
}

static void filter_tree(json_t *m)
{
	json_t *res;
	size_t i;

	if (json_is_array(m)) {
		for (i = 0; i < json_array_size(m); i++)
			filter_tree(json_array_get(m, i));
		return;
	}
	res = json_is_object(m) ? json_object_get(m, "result") : NULL;
	if (!json_is_object(res))
		return;
	thin_tree(json_object_get(res, "tools"), "name", tools_allowed);
	thin_tree(json_object_get(res, "prompts"), "name", tools_prompt_allowed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jsonscan s;
	enum js_result rc = jsonscan_read(&s, (const char *)data, size);
	json_error_t err;
	json_t *tree = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
				 &err), *got;
	static char *const id[] = { "1" };
	struct toolslist *t;
	struct toolslist_out o;
	char *raw;
	const char *body;
	int n;

	jsonscan_free(&s);
	if (rc == JS_NOMEM)
		abort();
	if (tree && rc != JS_OK && !memchr(data, '\0', size))
		abort(); /* jansson reads it, jsonscan refused it (jansson stops at a NUL byte: no JSON has one) */
	if (!tree && rc == JS_OK && !strstr(err.text, "too big") && !strstr(err.text, "overflow"))
		abort(); /* jsonscan read what jansson refuses */
	if (!tree || rc != JS_OK) {
		json_decref(tree);
		return 0;
	}
	/* the filter's answer, read by jansson: the input's tree, thinned */
	n = asprintf(&raw, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n", size);
	if (n < 0 || !(raw = realloc(raw, (size_t)n + size)) || !(t = toolslist_new(id, 1, 0)))
		abort();
	memcpy(raw + n, data, size);
	if (toolslist_feed(t, &rules, "fuzz", raw, (size_t)n + size, 0, NULL, &o) != TL_DONE ||
	    !(body = memmem(o.resp, o.len, "\r\n\r\n", 4)))
		abort();
	body += 4;
	got = json_loadb(body, o.len - (size_t)(body - o.resp), JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
			 NULL);
	filter_tree(tree);
	if (!got || !json_equal(got, tree))
		abort();
	json_decref(got);
	json_decref(tree);
	free(o.resp);
	free(raw);
	toolslist_free(t);
	return 0;
}
