/* libFuzzer target: a route's answer from its server to a request with a
 * body (mcp-bridge/toolslist.c), as bytes from the upstream, fed whole and
 * fed in pieces (the first byte picks their size, the end or not, and the
 * ids the answer waits for).
 * - fed in pieces, the client gets byte for byte what it gets fed whole;
 * - a JSON answer is well-formed HTTP with a length that is its body's;
 *   an SSE one ends its head with the close; no tool in either is one the
 *   rules refuse. */
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

/* The answer fed in pieces of step bytes (0: whole): what the client got
 * (malloc'd, *len), and the state it ended in. */
static enum toolslist_state run(const struct tool_rules *r, const uint8_t *data, size_t size, size_t step, int eof,
				int ids, char **got, size_t *len)
{
	static char *const want[] = { "1", "\"a\"" };
	/* the request's ids (1 and "a"), none (the close ends it), or any response */
	struct toolslist *t = toolslist_new(ids == 1 ? want : NULL, ids == 1 ? 2 : 0, ids == 2);
	enum toolslist_state st = TL_MORE;
	struct toolslist_out o;
	size_t at = 0;

	*got = NULL;
	*len = 0;
	if (!t)
		abort();
	while (st == TL_MORE) {
		size_t n = step && size - at > step ? step : size - at;
		int last = at + n == size;
		st = toolslist_feed(t, r, "fuzz", (const char *)data + at, n, last && eof, NULL, &o);
		if (o.len) {
			*got = realloc(*got, *len + o.len);
			if (!*got)
				abort();
			memcpy(*got + *len, o.resp, o.len);
			*len += o.len;
		}
		free(o.resp);
		at += n;
		if (last)
			break;
	}
	toolslist_free(t);
	return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *allow[] = { "echo", "add" }, *deny[] = { "add_secret*" };
	static const struct tool_rules r = { allow, 2, 1, deny, 1, NULL, 0, 0, NULL, 0, 0, NULL, 0, NULL, 0, 0, NULL, 0 };
	static const char end_of_head[] = "\r\nConnection: close\r\n\r\n";
	enum toolslist_state whole, pieces;
	char *a, *b;
	const char *body, *p;
	size_t alen, blen, clen = 0, step;
	int eof, sse, ids, status;
	json_t *doc;

	if (size < 1)
		return 0;
	step = data[0] % 17 + 1;
	eof = data[0] & 0x80;
	ids = (data[0] >> 5) % 3;
	data++, size--;
	whole = run(&r, data, size, 0, eof, ids, &a, &alen);
	pieces = run(&r, data, size, step, eof, ids, &b, &blen);
	/* the same bytes, however they came; a failure may come at another
	 * read, after the same bytes went */
	if (whole != TL_FAIL && pieces != TL_FAIL && (whole != pieces || alen != blen || (alen && memcmp(a, b, alen))))
		abort();
	free(b);
	if (whole != TL_DONE || !alen) {
		free(a);
		return 0;
	}
	body = memmem(a, alen, end_of_head, sizeof end_of_head - 1);
	if (!body)
		abort();
	body += sizeof end_of_head - 1;
	sse = memmem(a, (size_t)(body - a), "\r\nContent-Length: ", 18) == NULL;
	if (!sse) {
		p = memmem(a, (size_t)(body - a), "\r\nContent-Length: ", 18);
		for (p += 18; *p >= '0' && *p <= '9'; p++)
			clen = clen * 10 + (size_t)(*p - '0');
		if (clen != alen - (size_t)(body - a))
			abort();
	}
	status = alen > 9 ? atoi(a + 9) : 0;
	if (status >= 200 && status <= 299) {
		doc = sse ? NULL : json_loadb(body, clen, JSON_REJECT_DUPLICATES, NULL);
		if (doc) { /* a JSON answer */
			no_refused(&r, doc);
			json_decref(doc);
		} else { /* SSE (or a body that is none): each data line as JSON, none refused */
			const char *d = body, *end = a + alen;
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
	free(a);
	return 0;
}
