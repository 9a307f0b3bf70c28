/* toolslist: a route's tools/list answers with only the tools its rules
 * allow ([route NAME] tools, deny_tools: tools.h), so the agent never
 * learns a tool it may not call.
 *
 * The bridge hands the upstream's answer to a request with a body here as
 * it comes (toolslist_feed, each time more came): the head and body as
 * sent (Content-Length, chunked, or ended by the close), parsed with
 * http-parser as they come. A JSON body is kept whole (TOOLSLIST_MAX at
 * most), read once and strictly (jsonscan.h), and each JSON-RPC response
 * in it with result.tools loses the tools the rules refuse and the pinned
 * ones whose hash (tools_hash) is not their pin's (listthin.h; pin_seen,
 * the bridge's record of each pin, says which it saw), as bytes: every
 * other byte goes as it came. The client gets the upstream's status and
 * fields with the thinned body, its length, and Connection: close.
 *
 * An SSE body (text/event-stream) goes as it comes: the head at once
 * (ended by the close), then each event once it is whole, filtered the
 * same way and written as one "event: message" with its data lines; the
 * answer ends with the event that holds the response to the request (a
 * server may keep its stream open after it). So a server's own request inside the answer
 * (sampling, elicitation) and its progress reach the client while the
 * call runs. Only the last line and event not ended yet are kept.
 *
 * What cannot be read is not passed unjudged: a 2xx JSON body that is no
 * JSON becomes a JSON-RPC error; an SSE event whose data is none, or of
 * another type than message, is dropped. An answer that is not 2xx passes
 * as it is.
 *
 * Pure: bytes in, bytes out (fuzzed: fuzz_toolslist). */
#ifndef WARD_TOOLSLIST_H
#define WARD_TOOLSLIST_H

#include <stddef.h>
#include <stdint.h>

#include "mcp-bridge/tools.h"

#define TOOLSLIST_MAX ((size_t)8 << 20) /* an answer kept to be filtered, at most */

enum toolslist_state { TL_MORE, TL_DONE, TL_FAIL };

struct toolslist; /* one answer being filtered */

struct toolslist_out {
	char *resp; /* bytes for the client now (malloc'd; NULL when none) */
	size_t len;
	int status;
	int removed; /* tools taken out, by this call */
	int changed; /* of them, pinned ones whose hash differs */
	char changed_name[TOOLS_NAME_MAX + 1]; /* the first of those */
	const char *why; /* TL_FAIL: what was wrong */
};

/* A filter for one answer (NULL: out of memory); toolslist_free ends it.
 * ids: the request's ids (compact JSON, tools_result's want; copied): an
 * SSE answer ends once each has its response (a server may keep its
 * stream open after it; a response to another id, which a server may
 * slip in, does not end it), or at the close when there are none; any:
 * the first response ends it, whatever its id. */
struct toolslist *toolslist_new(char *const *ids, size_t n, int any);
void toolslist_free(struct toolslist *t);

/* The bytes of an SSE body t looked through for line ends so far: each
 * once, however the body came (a line in many reads is not looked through
 * again from its start at each). */
uint64_t toolslist_looked(const struct toolslist *t);

/* The next raw bytes of the answer (len may be 0; eof: its end came)
 * judged against r (pin_seen: r's pins as seen, updated; NULL: not kept):
 * out holds what the client gets now, in order after what earlier calls
 * gave (free out->resp). TL_MORE: more is to come; TL_DONE: the answer
 * ends with out; TL_FAIL: out->why, and nothing in out->resp (a 502 if
 * nothing went yet, else the client's connection is cut). */
enum toolslist_state toolslist_feed(struct toolslist *t, const struct tool_rules *r, const char *route,
				    const char *raw, size_t len, int eof, unsigned char *pin_seen,
				    struct toolslist_out *out);

#endif
