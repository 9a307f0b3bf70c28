/* toolslist: a route's tools/list answers with only the tools its rules
 * allow ([route NAME] tools, deny_tools: tools.h), so the agent never
 * learns a tool it may not call.
 *
 * The bridge keeps the upstream's whole answer to a request that lists
 * tools (TOOLSLIST_MAX at most) and hands it here each time more came:
 * the head and body as sent (Content-Length, chunked, or ended by the
 * close), parsed with http-parser. A JSON body is read strictly (tools.h)
 * and each JSON-RPC response in it with result.tools loses the tools the
 * rules refuse, and the pinned ones whose hash (tools_hash) is not their
 * pin's (pin_seen, the bridge's record of each pin, says which it saw); an SSE body (text/event-stream) the same, event by event,
 * and it is whole once an event holds a response (a server may keep the
 * stream open after it). The answer the client gets is the upstream's
 * status and fields with the rewritten body, its length, and
 * Connection: close. What cannot be read is not passed unjudged: a 2xx
 * JSON body that is no JSON, or an SSE event whose data is none, becomes a
 * JSON-RPC error or is dropped. An answer that is not 2xx passes as it is.
 *
 * Pure: bytes in, bytes out (fuzzed: fuzz_toolslist). */
#ifndef WARD_TOOLSLIST_H
#define WARD_TOOLSLIST_H

#include <stddef.h>

#include "mcp-bridge/tools.h"

#define TOOLSLIST_MAX ((size_t)8 << 20) /* an answer kept to be filtered, at most */

enum toolslist_state { TL_MORE, TL_DONE, TL_FAIL };

struct toolslist_out {
	char *resp; /* the whole answer for the client (malloc'd) */
	size_t len;
	int status;
	int removed; /* tools taken out */
	int changed; /* of them, pinned ones whose hash differs */
	char changed_name[TOOLS_NAME_MAX + 1]; /* the first of those */
	const char *why; /* TL_FAIL: what was wrong */
};

/* The upstream's answer so far (raw, len bytes; eof: its end came) judged
 * against r (pin_seen: r's pins as seen, updated; NULL: not kept): TL_MORE (not whole yet), TL_DONE with out (free out->resp),
 * or TL_FAIL with out->why (the client gets a 502). */
enum toolslist_state toolslist_try(const struct tool_rules *r, const char *route, const char *raw, size_t len,
				   int eof, unsigned char *pin_seen, struct toolslist_out *out);

#endif
