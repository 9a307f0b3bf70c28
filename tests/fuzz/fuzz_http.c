/* libFuzzer target: the bridge's parsing of untrusted bytes: a request head
 * and body fed in arbitrary pieces against a route (some of a Content-Length
 * body passed on unparsed, as when spliced), the upstream head built
 * from it, the JSON-RPC method of the body; and a response head. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/http.h"
#include "mcp-bridge/respend.h"

static char *inject[] = { "Authorization: Bearer x" };
static const struct http_route exact = { "mcp", (1u << HTTP_POST) | (1u << HTTP_GET) | (1u << HTTP_DELETE),
					 "/mcp?agent=a1", "127.0.0.1:6767", inject, 1, 1, 0 };
static const struct http_route prefix = { "api", 1u << HTTP_POST, "/v1/", "h", NULL, 0, 0, 0 };

/* Where an answer ends does not depend on how its bytes were read: fed
 * whole or in two pieces (split where the first byte says), the same
 * bytes are the answer's, with the same verdict; never more than given. */
static void resp_ends(const uint8_t *data, size_t size)
{
	struct resp_end a, b;
	size_t whole, cut = size ? data[0] % (size + 1) : 0, first, second;

	resp_end_init(&a, size && (data[0] & 0x80));
	resp_end_init(&b, size && (data[0] & 0x80));
	whole = resp_end_feed(&a, (const char *)data, size);
	first = resp_end_feed(&b, (const char *)data, cut);
	second = resp_end_feed(&b, (const char *)data + cut, size - cut);
	if (whole > size || first > cut || second > size - cut)
		abort();
	if (a.done != b.done || (a.done && (a.keep != b.keep || whole != first + second)))
		abort();
	if (a.done && resp_end_feed(&a, (const char *)data, size) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_req q;
	char out[HTTP_MAX_HEAD + 512], m[64];
	size_t head, pos, ol;
	struct http_resp resp;

	if (size < 2)
		return 0;
	/* first byte: route and piece size; the rest: the bytes */
	http_req_init(&q, data[0] & 1 ? &prefix : &exact);
	data++;
	size--;
	head = http_head_end((const char *)data, size < HTTP_MAX_HEAD ? size : HTTP_MAX_HEAD);
	if (head) {
		ssize_t n = http_req_feed(&q, (const char *)data, head + (size - head) / 2);
		/* what the bridge relies on: an accepted head is all parsed,
		 * through the blank line it found (it copies from there on) */
		if (n >= 0 && (q.head_len != head || (size_t)n < head))
			abort();
		pos = head + (size - head) / 2;
		while (n >= 0 && !q.done && pos < size) {
			size_t piece = 1 + (data[pos] % 64);
			uint64_t left = http_req_body_left(&q);
			if (piece > size - pos)
				piece = size - pos;
			/* a piece's low bits 0: passed on unparsed, as the bridge
			 * splices a Content-Length body; the count must stay exact */
			if (left && (data[pos] & 3) == 0) {
				uint64_t before = q.body_bytes;
				http_req_body_skipped(&q, piece);
				if (q.body_bytes - before != (piece < left ? piece : left) ||
				    http_req_body_left(&q) != (piece < left ? left - piece : 0) ||
				    q.done != (piece >= left))
					abort();
			} else {
				n = http_req_feed(&q, (const char *)data + pos, piece);
			}
			pos += piece;
		}
		if (q.headers_done && !q.status)
			(void)http_req_upstream_head(&q, NULL, NULL, (int)(size & 1), out, sizeof out);
		if (q.done && http_req_rpc_method(&q, m, sizeof m))
			/* it goes into a log line */
			for (pos = 0; m[pos]; pos++)
				if ((unsigned char)m[pos] <= ' ' || (unsigned char)m[pos] >= 0x7f)
					abort();
	}
	(void)http_resp_head((const char *)data, size, 0, out, sizeof out, &ol, &resp);
	resp_ends(data, size);
	return 0;
}
