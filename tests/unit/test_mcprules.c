/* Unit tests for the resource and prompt rules of mcp-bridge/tools.c
 * (resources = URI-PREFIX, deny_resources, prompts, deny_prompts): how
 * each is parsed, what a request is judged, what lists keep
 * (mcp-bridge/toolslist.c), and what stays unjudged without them. */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdlib.h>

#include "mcp-bridge/mcpjson.h"
#include "mcp-bridge/tools.h"
#include "mcp-bridge/uri.h"
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

/* A URI a URL parser would read otherwise than written is no URI to judge
 * by prefix (found by a review: TEST://x, x/../y, %2e%2e, file://localhost/
 * all went past a deny rule, the servers' parsers reading them as it). */
static void test_plain(void)
{
	static const char *const plain[] = { "test://static-text", "file:///work/src/a.c", "urn:isbn:0451450523",
					     "https://api.example/v1/items?q=a%20b#frag", "test://template/{id}/data" };
	static const char *const odd[] = { "TEST://static/resource/2", "test://static/resource/x/../2",
					   "test://static/./x", "file:///work/%2e%2e/etc/passwd", "file:///work/%73ecret",
					   "file://localhost/etc/passwd", "file:////etc/passwd", "http:example.com/x",
					   "https://API.example/x", "test://a\\b", "test://a b", "test://a/%2F", "test://a/%zz",
					   "test://a/%2", "no-scheme", "1test://x", "test://a//b" };
	size_t i;

	for (i = 0; i < sizeof plain / sizeof *plain; i++)
		CHECK(uri_plain(plain[i], strlen(plain[i])));
	for (i = 0; i < sizeof odd / sizeof *odd; i++)
		if (uri_plain(odd[i], strlen(odd[i])))
			CHECK(!odd[i]); /* names the one that passed */
	/* a deny rule holds against each way of writing what it denies */
	struct tool_rules r = rules(NULL, "test://static/resource/2 file:///work/secret", NULL, NULL);
	CHECK(tools_resource_allowed(&r, "test://static/resource/3"));
	CHECK(!tools_resource_allowed(&r, "TEST://static/resource/2"));
	CHECK(!tools_resource_allowed(&r, "test://static/resource/x/../2"));
	CHECK(!tools_resource_allowed(&r, "file:///work/%73ecret"));
	tools_rules_free(&r);
	r = rules("file:///work/", NULL, NULL, NULL);
	CHECK(!tools_resource_allowed(&r, "file:///work/../secret"));
	CHECK(!tools_resource_allowed(&r, "file:///work/%2e%2e/secret"));
	tools_rules_free(&r);
	/* a rule itself in another form is refused when read */
	const char *why = NULL;
	CHECK(tools_parse_uris("FILE:///work/", &r.res_allow, &r.n_res_allow, &why) == -1 && strstr(why, "plain form"));
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
	CHECK(!tools_template_allowed(&r, "{scheme}://x"));	 /* could be anything: not judged, not listed */
	CHECK(!tools_template_allowed(&r, "file:///wo"));	 /* no variable: the one URI, not allowed */
	CHECK(tools_template_allowed(&r, "test://static-text")); /* no variable, allowed */
	CHECK(!tools_template_allowed(&r, "FILE:///work/{p}")); /* not plain */
	CHECK(tools_prompt_allowed(&r, "review_code"));
	CHECK(!tools_prompt_allowed(&r, "review_secret"));
	CHECK(!tools_prompt_allowed(&r, "summarise"));
	tools_rules_free(&r);
	/* an allow rule a deny rule covers gives nothing: file:///{x} has no URI to read */
	r = rules("file:///work/a", "file:///work/", NULL, NULL);
	CHECK(!tools_template_allowed(&r, "file:///{x}"));
	CHECK(!tools_template_allowed(&r, "file:///work/{x}"));
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
	/* a completion runs a prompt's or a template's completer: judged as them */
	CHECK(!judged(&r, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"completion/complete\",\"params\":{\"ref\":"
			  "{\"type\":\"ref/resource\",\"uri\":\"file:///secret/{name}\"},\"argument\":{\"name\":\"name\","
			  "\"value\":\"\"}}}", &out));
	CHECK(out.body && strstr(out.body, "resource 'file:///secret/{name}' is not allowed"));
	tools_result_free(&out);
	CHECK(!judged(&r, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"completion/complete\",\"params\":{\"ref\":"
			  "{\"type\":\"ref/prompt\",\"name\":\"secret_plan\"}}}", &out));
	tools_result_free(&out);
	CHECK(judged(&r, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"completion/complete\",\"params\":{\"ref\":"
			 "{\"type\":\"ref/resource\",\"uri\":\"test://static-{n}\"}}}", &out));
	tools_result_free(&out);
	CHECK(!judged(&r, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"completion/complete\",\"params\":{\"ref\":"
			  "{\"type\":\"ref/prompt\",\"name\":\"ok\",\"NAME\":\"secret\"}}}", &out));
	tools_result_free(&out);
	/* a URI in another form: refused, saying so */
	CHECK(!judged(&r, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"resources/read\",\"params\":{\"uri\":"
			  "\"TEST://static-text\"}}", &out));
	CHECK(out.body && strstr(out.body, "not in plain form"));
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
	/* the answer is bytes with a length, not a C string */
	body = o.resp ? memmem(o.resp, o.len, "\r\n\r\n", 4) : NULL;
	doc = body ? json_loadb(body + 4, o.len - (size_t)(body + 4 - o.resp), 0, NULL) : NULL;
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

/* A long SSE line in many small reads is looked through once (a review
 * found each read looked through it again from its start: minutes of the
 * bridge's time for one 8 MiB line in 64-byte records). */
static void test_long_line(void)
{
	static const struct tool_rules none = { 0 };
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {\"a\":\"";
	struct toolslist *t = toolslist_new(NULL, 0, 1);
	struct toolslist_out o;
	char piece[64];
	size_t i, n = 1 << 20;
	int bad = 0;

	memset(piece, 'x', sizeof piece);
	CHECK(t && toolslist_feed(t, &none, "mcp", head, sizeof head - 1, 0, NULL, &o) == TL_MORE);
	free(o.resp);
	for (i = 0; i < n / sizeof piece && !bad; i++) {
		bad |= toolslist_feed(t, &none, "mcp", piece, sizeof piece, 0, NULL, &o) != TL_MORE || o.len;
		free(o.resp);
	}
	CHECK(!bad);
	CHECK(toolslist_looked(t) <= n + 16);
	CHECK(toolslist_feed(t, &none, "mcp", "\"}\n\n", 4, 0, NULL, &o) == TL_MORE && o.len > n); /* the event, whole */
	free(o.resp);
	toolslist_free(t);
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
	test_plain();
	test_match();
	test_judge();
	test_lists();
	test_long_line();
	return unit_done("test_mcprules");
}
