/* libFuzzer target: a route's tools/list answer from its server
 * (mcp-bridge/toolslist.c), as bytes from the upstream, with its end or
 * not. A whole answer is well-formed HTTP with a length that is its
 * body's, and no tool in it (JSON or SSE) is one the rules refuse. */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/toolslist.h"

static void no_refused(const struct tool_rules *r, json_t *m)
{
	json_t *res, *tools, *t, *name;
	size_t i;

	if (json_is_array(m)) {
		for (i = 0; i < json_array_size(m); i++)
			no_refused(r, json_array_get(m, i));
		return;
	}
	res = json_is_object(m) ? json_object_get(m, "result") : NULL;
	tools = json_is_object(res) ? json_object_get(res, "tools") : NULL;
	for (i = 0; json_is_array(tools) && i < json_array_size(tools); i++) {
		t = json_array_get(tools, i);
		name = json_is_object(t) ? json_object_get(t, "name") : NULL;
		if (!json_is_string(name) || !tools_allowed(r, json_string_value(name)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *allow[] = { "echo", "add" }, *deny[] = { "add_secret*" };
	static const struct tool_rules r = { allow, 2, 1, deny, 1, NULL, 0, 0 };
	struct toolslist_out o;
	const char *body, *p;
	size_t clen = 0;
	json_t *doc;

	if (toolslist_try(&r, "fuzz", (const char *)data, size, size & 1, NULL, &o) != TL_DONE)
		return 0;
	/* the head ends with the bridge's own length and close */
	static const char end_of_head[] = "\r\nConnection: close\r\n\r\n";
	body = memmem(o.resp, o.len, end_of_head, sizeof end_of_head - 1);
	if (!body)
		abort();
	for (p = body; p > o.resp && memcmp(p, "\r\nContent-Length: ", 18) != 0; p--)
		;
	if (p == o.resp)
		abort();
	for (p += 18; p < body && *p >= '0' && *p <= '9'; p++)
		clen = clen * 10 + (size_t)(*p - '0');
	if (p != body || clen != o.len - (size_t)(body + sizeof end_of_head - 1 - o.resp))
		abort();
	body += sizeof end_of_head - 1;
	if (o.status >= 200 && o.status <= 299) {
		doc = json_loadb(body, clen, JSON_REJECT_DUPLICATES, NULL);
		if (doc) { /* a JSON answer */
			no_refused(&r, doc);
			json_decref(doc);
		} else { /* SSE: each data line (a line that begins with data:) as JSON, none refused */
			const char *d = body, *end = body + clen;
			while (d < end) {
				const char *nl = memchr(d, '\n', (size_t)(end - d)), *e = nl ? nl : end;
				if (e - d >= 5 && memcmp(d, "data:", 5) == 0) {
					const char *v = d + 5 + (e > d + 5 && d[5] == ' ');
					doc = json_loadb(v, (size_t)(e - v), 0, NULL);
					if (doc) {
						no_refused(&r, doc);
						json_decref(doc);
					}
				}
				d = e + 1;
			}
		}
	}
	free(o.resp);
	return 0;
}
