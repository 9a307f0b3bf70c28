/* libFuzzer target: the judge of a request body on a route with tool rules
 * (mcp-bridge/tools.c), against rules that allow echo and add and deny
 * add_secret*, allow resources under test://static- but not
 * test://static-secret, and deny prompts leak*. What it passes, a strict
 * parser (jansson, duplicates refused) reads as JSON holding no call of a
 * tool, read of a resource or get of a prompt the rules refuse, at any
 * place a server would look (the body, or a batch's elements); what it
 * refuses is answered with JSON. It never forwards what it would refuse. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/tools.h"

static int refused_call(const struct tool_rules *r, json_t *m)
{
	json_t *method = json_object_get(m, "method"), *params, *name, *uri;
	const char *mv;

	if (!json_is_string(method))
		return 0;
	mv = json_string_value(method);
	params = json_object_get(m, "params");
	name = json_is_object(params) ? json_object_get(params, "name") : NULL;
	uri = json_is_object(params) ? json_object_get(params, "uri") : NULL;
	if (strcmp(mv, "tools/call") == 0)
		return !json_is_string(name) || !tools_allowed(r, json_string_value(name));
	if (strcmp(mv, "prompts/get") == 0)
		return !json_is_string(name) || !tools_prompt_allowed(r, json_string_value(name));
	if (strcmp(mv, "resources/read") == 0 || strcmp(mv, "resources/subscribe") == 0 ||
	    strcmp(mv, "resources/unsubscribe") == 0)
		return !json_is_string(uri) || !tools_resource_allowed(r, json_string_value(uri));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *allow[] = { "echo", "add" }, *deny[] = { "add_secret*" };
	static char *res[] = { "test://static-" }, *res_deny[] = { "test://static-secret" }, *pr_deny[] = { "leak*" };
	static const struct tool_rules quiet = { allow, 2, 1, deny, 1, NULL, 0, 0, res, 1, 1, res_deny, 1, NULL, 0, 0,
						 pr_deny, 1 },
					told = { allow, 2, 1, deny, 1, NULL, 0, 1, res, 1, 1, res_deny, 1, NULL, 0, 0,
						 pr_deny, 1 };
	const struct tool_rules *rp = size & 1 ? &told : &quiet;
	struct tools_result out;
	json_t *doc, *ans;
	size_t i;

	if (tools_judge(rp, "fuzz", (const char *)data, size, NULL, &out) != 0)
		return 0; /* out of memory */
	/* audit_args: nothing in the arguments shown can pass for a field of
	 * ward's log line (no '=', no blank, no ": ") */
	if (out.args && (strchr(out.args, '=') || strchr(out.args, ' ') || strstr(out.args, ": ")))
		abort();
	if (out.verdict == TOOLS_PASS) {
		doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
		if (!doc)
			abort(); /* passed what a strict parser cannot read */
		if (json_is_array(doc)) {
			for (i = 0; i < json_array_size(doc); i++)
				if (json_is_object(json_array_get(doc, i)) && refused_call(rp, json_array_get(doc, i)))
					abort();
		} else if (json_is_object(doc) && refused_call(rp, doc)) {
			abort();
		}
		json_decref(doc);
		if (out.body)
			abort();
	} else {
		ans = out.body ? json_loads(out.body, 0, NULL) : NULL;
		if (!ans || (out.status != 200 && out.status != 400 && out.status != 403))
			abort(); /* an answer is JSON, with a status the bridge sends */
		json_decref(ans);
	}
	tools_result_free(&out);
	return 0;
}
