/* Unit tests for mcp-bridge/jsonscan.c (a JSON-RPC text read once with
 * yajl: where its ids and its lists' entries are) and the thinning
 * toolslist.c does with it: what is refused as a strict parser would
 * refuse it (a member twice at any depth, bad UTF-8, half a surrogate
 * pair, trailing bytes, too deep), and that the bytes a list keeps, and
 * every byte around it, go out as they came. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "mcp-bridge/jsonscan.h"
#include "mcp-bridge/toolslist.h"
#include "mcp-bridge/tools.h"
#include "unit.h"

static enum js_result scan(const char *text)
{
	struct jsonscan s;
	enum js_result rc = jsonscan_read(&s, text, strlen(text));

	jsonscan_free(&s);
	return rc;
}

static void test_strict(void)
{
	char deep[2 * 2049 + 1];

	CHECK(scan("{\"a\":1,\"b\":[1,2,{\"c\":\"\\ud83d\\ude00\"}]}") == JS_OK);
	CHECK(scan("[]") == JS_OK && scan(" {\"a\" : null } \n") == JS_OK);
	/* a member twice, at the top and deep down (a client keeps the last) */
	CHECK(scan("{\"a\":1,\"a\":2}") == JS_INVALID);
	CHECK(scan("{\"result\":{\"tools\":[{\"name\":\"x\",\"name\":\"y\"}]}}") == JS_INVALID);
	CHECK(scan("{\"a\":{\"b\":1},\"b\":{\"b\":1}}") == JS_OK); /* the same name in two objects */
	CHECK(scan("{\"a\":{\"x\":1,\"y\":{\"x\":2}},\"x\":3}") == JS_OK);
	/* the same name written two ways is the same name */
	CHECK(scan("{\"name\":1,\"n\\u0061me\":2}") == JS_INVALID);
	/* UTF-8 a strict decoder refuses */
	CHECK(scan("{\"a\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}") == JS_OK);
	CHECK(scan("{\"a\":\"\xc0\xaf\"}") == JS_INVALID);	  /* overlong '/' */
	CHECK(scan("{\"a\":\"\xe0\x80\xaf\"}") == JS_INVALID);  /* overlong, three bytes */
	CHECK(scan("{\"a\":\"\xed\xa0\x80\"}") == JS_INVALID);  /* a surrogate */
	CHECK(scan("{\"a\":\"\xf4\x90\x80\x80\"}") == JS_INVALID); /* past U+10FFFF */
	CHECK(scan("{\"a\":\"\xc3\"}") == JS_INVALID);	  /* cut short */
	CHECK(scan("{\"a\":\"\x80\"}") == JS_INVALID);
	/* half a surrogate pair in an escape */
	CHECK(scan("{\"a\":\"\\ud800\"}") == JS_INVALID);
	CHECK(scan("{\"a\":\"\\udc00\"}") == JS_INVALID);
	CHECK(scan("{\"a\":\"\\ud800\\u0041\"}") == JS_INVALID);
	CHECK(scan("{\"a\":\"\\\\ud800\"}") == JS_OK); /* a backslash, then text */
	/* a NUL, in a member's name or a value: a client in C cuts there */
	CHECK(scan("{\"result\":{\"tools\":[{\"name\\u0000\":\"evil\",\"name\":\"echo\"}]}}") == JS_INVALID);
	CHECK(scan("{\"tools\\u0000\":[],\"tools\":[]}") == JS_INVALID && scan("[\"a\\u0000\"]") == JS_INVALID);
	CHECK(scan("[\"a\\u0001\\\\u0000\"]") == JS_OK); /* \u0001, a backslash, text */
	/* one value, nothing after it, no comments */
	CHECK(scan("{} {}") == JS_INVALID && scan("{}x") == JS_INVALID && scan("") == JS_INVALID);
	CHECK(scan("{/*c*/}") == JS_INVALID && scan("{\"a\":1,}") == JS_INVALID);
	CHECK(scan("{} \"x") == JS_INVALID); /* a string cut short after the value: yajl's end */
	CHECK(scan("0") == JS_OK && scan(" -1.5e3 \n") == JS_OK && scan("1 2") == JS_INVALID);
	CHECK(scan("{\v}") == JS_INVALID && scan("[1,\f2]") == JS_INVALID); /* blanks to yajl, not to JSON */
	/* deeper than jansson reads */
	memset(deep, '[', 2049);
	memset(deep + 2049, ']', 2049);
	deep[2 * 2049] = '\0';
	CHECK(scan(deep) == JS_INVALID);
	deep[2048] = ' ';
	deep[2049] = ' ';
	CHECK(scan(deep) == JS_OK);
}

static void test_where(void)
{
	const char *t = "[{\"jsonrpc\":\"2.0\", \"id\" : \"a\\\"b\" ,\"result\":{\"tools\":[ {\"name\":\"ech\\u006f\"} , 7,"
			"{\"x\":{\"name\":\"deep\"}},{\"name\":[\"nul\"]}]}},{\"method\":\"x\",\"id\":3},"
			"{\"id\":[1,{\"k\":2}],\"error\":{}},{\"result\":{\"prompts\":[]}}]";
	struct jsonscan s;

	CHECK(jsonscan_read(&s, t, strlen(t)) == JS_OK);
	CHECK(s.n_msgs == 4);
	CHECK(s.msgs[0].response && s.msgs[0].id_end - s.msgs[0].id_start == 6 &&
	      memcmp(t + s.msgs[0].id_start, "\"a\\\"b\"", 6) == 0);
	CHECK(!s.msgs[1].response); /* a request: an id, no result */
	CHECK(s.msgs[2].response && memcmp(t + s.msgs[2].id_start, "[1,{\"k\":2}]", s.msgs[2].id_end - s.msgs[2].id_start) == 0);
	CHECK(!s.msgs[3].response); /* a result, no id */
	CHECK(s.n_lists == 2 && s.lists[0].kind == JS_TOOLS && s.lists[0].n == 4 && s.lists[1].kind == JS_PROMPTS &&
	      s.lists[1].n == 0);
	CHECK(t[s.lists[0].open] == '[' && t[s.lists[0].close] == ']');
	/* each entry's bytes, and the name it goes by, decoded */
	CHECK(s.entries[0].has_name && strcmp(s.names + s.entries[0].name, "echo") == 0 &&
	      memcmp(t + s.entries[0].start, "{\"name\":\"ech\\u006f\"}", s.entries[0].end - s.entries[0].start) == 0);
	CHECK(!s.entries[1].has_name && s.entries[1].end - s.entries[1].start == 1 && t[s.entries[1].start] == '7');
	CHECK(!s.entries[2].has_name); /* a name deeper down is not the entry's */
	CHECK(!s.entries[3].has_name); /* a name that is no string */
	jsonscan_free(&s);
}

/* The body a JSON answer with body b gets, judged by r (malloc'd). */
static char *thinned(const struct tool_rules *r, const char *b, int *removed)
{
	static char *const id[] = { "1" };
	char head[128], *raw, *out;
	const char *body;
	struct toolslist *t = toolslist_new(id, 1, 0);
	struct toolslist_out o;
	size_t n;

	snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
		 strlen(b));
	if (asprintf(&raw, "%s%s", head, b) < 0 || !t || toolslist_feed(t, r, "mcp", raw, strlen(raw), 0, NULL, &o) != TL_DONE)
		abort();
	body = memmem(o.resp, o.len, "\r\n\r\n", 4) + 4;
	n = o.len - (size_t)(body - o.resp);
	out = strndup(body, n);
	*removed = o.removed;
	free(o.resp);
	free(raw);
	toolslist_free(t);
	return out;
}

static void test_thin(void)
{
	static char *allow[] = { "keep*" };
	struct tool_rules r = { 0 };
	int removed;
	char *o;

	r.allow = allow;
	r.n_allow = 1;
	r.has_allow = 1;
	/* nothing refused: every byte as it came, spaces and all */
	o = thinned(&r, "{ \"id\" : 1 ,\n \"result\" : { \"tools\" : [ {\"name\":\"keep1\"} ] , \"n\": 1e-7 } }", &removed);
	CHECK(removed == 0 && strcmp(o, "{ \"id\" : 1 ,\n \"result\" : { \"tools\" : [ {\"name\":\"keep1\"} ] , \"n\": 1e-7 } }") == 0);
	free(o);
	/* the first, a middle and the last refused */
	o = thinned(&r, "{\"id\":1,\"result\":{\"tools\":[ {\"name\":\"no1\"} , {\"name\":\"keep1\", \"d\":\"x\"},{\"name\":\"no2\"},\n"
			"{\"name\":\"keep2\"} ,{\"name\":\"no3\"} ],\"nextCursor\":\"c\"}}", &removed);
	CHECK(removed == 3 && strcmp(o, "{\"id\":1,\"result\":{\"tools\":[{\"name\":\"keep1\", \"d\":\"x\"},{\"name\":\"keep2\"}],"
					"\"nextCursor\":\"c\"}}") == 0);
	free(o);
	/* all refused; an entry with no name, or none that is a string */
	o = thinned(&r, "{\"id\":1,\"result\":{\"tools\":[{\"name\":\"no\"},{\"title\":\"keep\"},{\"name\":7},\"keep\"]}}",
		    &removed);
	CHECK(removed == 4 && strcmp(o, "{\"id\":1,\"result\":{\"tools\":[]}}") == 0);
	free(o);
	/* a batch: each response's list thinned; a "tools" elsewhere is not a list of tools */
	o = thinned(&r, "[{\"id\":1,\"result\":{\"tools\":[{\"name\":\"no\"},{\"name\":\"keep\"}]}},"
			"{\"id\":2,\"result\":{\"other\":{\"tools\":[{\"name\":\"no\"}]}}},"
			"{\"id\":3,\"result\":{\"tools\":[{\"name\":\"keep\\u0031\"},{\"name\":\"no\"}]}}]", &removed);
	CHECK(removed == 2 && strcmp(o, "[{\"id\":1,\"result\":{\"tools\":[{\"name\":\"keep\"}]}},"
					"{\"id\":2,\"result\":{\"other\":{\"tools\":[{\"name\":\"no\"}]}}},"
					"{\"id\":3,\"result\":{\"tools\":[{\"name\":\"keep\\u0031\"}]}}]") == 0);
	free(o);
	/* a name that is allowed only as a parser that skips the check of
	 * its bytes would read it: the answer is refused whole */
	o = thinned(&r, "{\"id\":1,\"result\":{\"tools\":[{\"name\":\"keep\xc0\xaf\"}]}}", &removed);
	CHECK(strstr(o, "not JSON a strict parser reads") && !strstr(o, "keep"));
	free(o);
	o = thinned(&r, "{\"id\":1,\"result\":{\"tools\":[{\"name\":\"no\"},{\"name\":\"keep\"}],\"tools\":[{\"name\":\"no\"}]}}",
		    &removed);
	CHECK(strstr(o, "not JSON a strict parser reads") && !strstr(o, "\"no\""));
	free(o);
}

/* An SSE event whose JSON is in two data lines: thinned, and written in
 * as many (the client joins them with \n: the same text). */
static void test_sse_lines(void)
{
	static char *allow[] = { "keep*" };
	static char *const id[] = { "1" };
	static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
				     "event: message\r\ndata: {\"id\":1,\r\ndata: \"result\":{\"tools\":[{\"name\":\"no\"},"
				     "{\"name\":\"keep\"}]}}\r\n\r\n";
	struct tool_rules r = { 0 };
	struct toolslist *t = toolslist_new(id, 1, 0);
	struct toolslist_out o;

	r.allow = allow;
	r.n_allow = 1;
	r.has_allow = 1;
	CHECK(t && toolslist_feed(t, &r, "mcp", answer, sizeof answer - 1, 0, NULL, &o) == TL_DONE && o.removed == 1);
	CHECK(o.resp && memmem(o.resp, o.len, "\r\n\r\nevent: message\ndata: {\"id\":1,\ndata: \"result\":{\"tools\":"
				   "[{\"name\":\"keep\"}]}}\n\n", 79) && o.resp[o.len - 1] == '\n');
	free(o.resp);
	toolslist_free(t);
}

int main(void)
{
	test_sse_lines();
	test_strict();
	test_where();
	test_thin();
	return unit_done("test_jsonscan");
}
