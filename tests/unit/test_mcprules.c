/* Unit tests for the resource and prompt rules of mcp-bridge/tools.c
 * (resources = URI-PREFIX, deny_resources, prompts, deny_prompts): how
 * each is parsed, what a request is judged, what lists keep
 * (mcp-bridge/toolslist.c), and what stays unjudged without them. */
#include <jansson.h>
#include <stdlib.h>

#include "mcp-bridge/mcpjson.h"
#include "mcp-bridge/tools.h"
#include "mcp-bridge/toolslist.h"
#include "unit.h"

static struct tool_rules rules(const char *res, const char *deny_res, const char *prompts, const char *deny_prompts)
{
	struct tool_rules r = { 0 };
	const char *why = NULL;

	if (res) {
		r.has_res_allow = 1;
		CHECK(tools_parse_uris(res, &r.res_allow, &r.n_res_allow, &why) == 0);
	}
	if (deny_res)
		CHECK(tools_parse_uris(deny_res, &r.res_deny, &r.n_res_deny, &why) == 0);
	if (prompts) {
		r.has_pr_allow = 1;
		CHECK(tools_parse_prompts(prompts, &r.pr_allow, &r.n_pr_allow, &why) == 0);
	}
	if (deny_prompts)
		CHECK(tools_parse_prompts(deny_prompts, &r.pr_deny, &r.n_pr_deny, &why) == 0);
	return r;
}

static void test_parse(void)
{
	struct tool_rules r = { 0 };
	const char *why = NULL;

	CHECK(tools_parse_uris("file:///work/ test://a,b", &r.res_allow, &r.n_res_allow, &why) == 0);
	CHECK(r.n_res_allow == 2 && strcmp(r.res_allow[1], "test://a,b") == 0); /* a comma is a URI's */
	CHECK(tools_parse_uris("no-scheme", &r.res_deny, &r.n_res_deny, &why) == -1 && strstr(why, "scheme"));
	CHECK(tools_parse_uris("   ", &r.res_deny, &r.n_res_deny, &why) == -1);
	CHECK(tools_parse_uris("test://\"quoted\"", &r.res_deny, &r.n_res_deny, &why) == -1);
	CHECK(tools_parse_prompts("review*, summarise", &r.pr_allow, &r.n_pr_allow, &why) == 0 && r.n_pr_allow == 2);
	CHECK(tools_parse_prompts("*", &r.pr_deny, &r.n_pr_deny, &why) == -1 && strstr(why, "prompt"));
	CHECK(!tools_any(&(struct tool_rules){ 0 }));
	r.has_res_allow = r.has_pr_allow = 1;
	CHECK(tools_any(&r));
	tools_rules_free(&r);
}

static void test_match(void)
{
	struct tool_rules r = rules("test://static- file:///work/", "file:///work/.git/", "review*", "review_secret");

	CHECK(tools_resource_allowed(&r, "test://static-text"));
	CHECK(tools_resource_allowed(&r, "file:///work/src/a.c"));
	CHECK(!tools_resource_allowed(&r, "file:///work/.git/config")); /* deny wins */
	CHECK(!tools_resource_allowed(&r, "file:///etc/passwd"));
	CHECK(!tools_resource_allowed(&r, "test://static")); /* shorter than the prefix */
	/* a template stays while some URI it gives may be read */
	CHECK(tools_template_allowed(&r, "file:///work/{path}"));
	CHECK(tools_template_allowed(&r, "file:///{path}"));	   /* file:///work/x is one of them */
	CHECK(!tools_template_allowed(&r, "file:///work/.git/{p}")); /* every one denied */
	CHECK(!tools_template_allowed(&r, "db://{table}"));
	CHECK(tools_template_allowed(&r, "{scheme}://x")); /* could be anything */
	CHECK(tools_prompt_allowed(&r, "review_code"));
	CHECK(!tools_prompt_allowed(&r, "review_secret"));
	CHECK(!tools_prompt_allowed(&r, "summarise"));
	tools_rules_free(&r);
	/* deny lists alone: the rest allowed */
	r = rules(NULL, "secret://", NULL, "leak");
	CHECK(tools_resource_allowed(&r, "test://anything") && !tools_resource_allowed(&r, "secret://key"));
	CHECK(tools_prompt_allowed(&r, "other") && !tools_prompt_allowed(&r, "leak"));
	tools_rules_free(&r);
}

static int judged(const struct tool_rules *r, const char *body, struct tools_result *out)
{
	CHECK(tools_judge(r, "mcp", body, strlen(body), NULL, out) == 0);
	return out->verdict == TOOLS_PASS;
}

static void test_judge(void)
{
	struct tool_rules r = rules("test://static-", NULL, NULL, "secret*");
	struct tools_result out;

	CHECK(judged(&r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"test://static-text\"}}",
		     &out));
	CHECK_STR(out.kind, "resource");
	CHECK_STR(out.tool, "test://static-text");
	tools_result_free(&out);
	CHECK(!judged(&r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"test://watched\"}}",
		      &out));
	CHECK(out.status == 200 && strstr(out.body, "-32602") && strstr(out.body, "resource 'test://watched' is not allowed") &&
	      strstr(out.body, "resources = test://static-"));
	tools_result_free(&out);
	CHECK(!judged(&r, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{\"name\":\"secret_plan\"}}", &out));
	CHECK(strstr(out.body, "prompt 'secret_plan' is not allowed") && strstr(out.body, "deny_prompts = secret*"));
	CHECK_STR(out.kind, "prompt");
	tools_result_free(&out);
	/* without its uri: not judged by a guess */
	CHECK(!judged(&r, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{}}", &out));
	CHECK(strstr(out.body, "no uri or name") != NULL);
	tools_result_free(&out);
	/* a key that folds into uri (a case-insensitive server) */
	CHECK(!judged(&r, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":\"test://static-a\","
			  "\"URI\":\"test://watched\"}}", &out));
	tools_result_free(&out);
	/* a batch with one refused: refused whole */
	CHECK(!judged(&r, "[{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"prompts/get\",\"params\":{\"name\":\"ok\"}},"
			  "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"prompts/get\",\"params\":{\"name\":\"secret\"}}]", &out));
	tools_result_free(&out);
	tools_rules_free(&r);
	/* a route with tool rules alone does not judge resources */
	r = (struct tool_rules){ 0 };
	r.has_allow = 1;
	CHECK(tools_parse("echo", &r.allow, &r.n_allow, &(const char *){ NULL }) == 0);
	CHECK(judged(&r, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\",\"params\":{\"uri\":\"x://y\"}}", &out));
	tools_result_free(&out);
	tools_rules_free(&r);
}

static void test_lists(void)
{
	struct tool_rules r = rules("test://static-", NULL, NULL, "test_prompt_with_image");
	static char *const id[] = { "1" };
	const char *answer =
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resources\":[{\"uri\":\"test://static-text\"},{\"uri\":\"test://w\"},"
		"{\"name\":\"no uri\"}],\"resourceTemplates\":[{\"uriTemplate\":\"test://static-{n}\"},"
		"{\"uriTemplate\":\"test://template/{id}/data\"}],\"prompts\":[{\"name\":\"a\"},{\"name\":\"test_prompt_with_image\"}],"
		"\"tools\":[{\"name\":\"t\"}]}}]";
	struct toolslist *t = toolslist_new(id, 1, 0);
	struct toolslist_out o;
	const char *body;
	json_t *doc, *res;

	CHECK(t && toolslist_feed(t, &r, "mcp", answer, strlen(answer), 1, NULL, &o) == TL_DONE);
	CHECK(o.removed == 4);
	body = o.resp ? strstr(o.resp, "\r\n\r\n") : NULL;
	doc = body ? json_loads(body + 4, 0, NULL) : NULL;
	res = json_object_get(json_array_get(doc, 0), "result");
	CHECK(json_array_size(json_object_get(res, "resources")) == 1 &&
	      strcmp(json_string_value(json_object_get(json_array_get(json_object_get(res, "resources"), 0), "uri")),
		     "test://static-text") == 0);
	CHECK(json_array_size(json_object_get(res, "resourceTemplates")) == 1);
	CHECK(json_array_size(json_object_get(res, "prompts")) == 1);
	CHECK(json_array_size(json_object_get(res, "tools")) == 1); /* no tool rules: every tool stays */
	json_decref(doc);
	free(o.resp);
	toolslist_free(t);
	tools_rules_free(&r);
}

/* The host's mcp.json: a server's "ward" field gives the same rules, and
 * the agent's copy has none of it. */
static void test_mcpjson(void)
{
	struct mcp_result r;
	const char *ok = "{\"mcpServers\":{\"s\":{\"url\":\"http://127.0.0.1:9/mcp\",\"ward\":{\"resources\":"
			 "[\"file:///work/\"],\"deny_resources\":[\"file:///work/.git/\"],\"prompts\":[\"review*\"],"
			 "\"deny_prompts\":[\"review_secret\"]}}}}";
	const char *bad = "{\"mcpServers\":{\"s\":{\"url\":\"http://127.0.0.1:9/mcp\",\"ward\":{\"resources\":"
			  "[\"no-scheme\"]}}}}";

	CHECK(mcp_rewrite(ok, strlen(ok), 7800, NULL, &r) == 0);
	CHECK(r.n_routes == 1 && tools_any(&r.routes[0].tools) && tools_resource_allowed(&r.routes[0].tools, "file:///work/a") &&
	      !tools_resource_allowed(&r.routes[0].tools, "file:///work/.git/HEAD") &&
	      tools_prompt_allowed(&r.routes[0].tools, "review_x") && !tools_prompt_allowed(&r.routes[0].tools, "review_secret"));
	CHECK(r.text && !strstr(r.text, "ward") && !strstr(r.text, "review"));
	mcp_result_free(&r);
	/* a rule that is wrong: the server is left out (none of it reaches
	 * the agent), saying why */
	CHECK(mcp_rewrite(bad, strlen(bad), 7800, NULL, &r) == 0 && r.n_routes == 0 && r.n_skipped == 1 &&
	      strstr(r.skipped[0].why, "\"resources\"") && strstr(r.skipped[0].why, "scheme"));
	mcp_result_free(&r);
	/* rules on a stdio server could not be held (the agent runs it):
	 * the server is left out, saying so, and the others kept */
	const char *stdio = "{\"mcpServers\":{\"local\":{\"command\":\"mcp-fs\",\"ward\":{\"tools\":[\"read\"]}},"
			    "\"plain\":{\"command\":\"mcp-echo\"}}}";
	CHECK(mcp_rewrite(stdio, strlen(stdio), 7800, NULL, &r) == 0 && r.n_skipped == 1 &&
	      strstr(r.skipped[0].why, "server local") && strstr(r.skipped[0].why, "stdio") && r.text &&
	      !strstr(r.text, "mcp-fs") && strstr(r.text, "mcp-echo"));
	mcp_result_free(&r);
}

int main(void)
{
	test_mcpjson();
	test_parse();
	test_match();
	test_judge();
	test_lists();
	return unit_done("test_mcprules");
}
