/* respend: where an upstream's answer ends, read from its bytes as they
 * are relayed (http-parser), so that the connection it came on can carry
 * the next request (pool.h) instead of being closed. Pure: no I/O. Private
 * to mcp-bridge/. */
#ifndef WARD_RESPEND_H
#define WARD_RESPEND_H

#include <stddef.h>

#include <http_parser.h>

struct resp_end {
	http_parser p;
	int head_req; /* the request was HEAD: its answer has no body, whatever its head says */
	int done;     /* the final answer (not a 1xx) ended */
	int keep;     /* ...and its upstream keeps the connection open after it */
	int failed;   /* the bytes are not an HTTP answer: only the close ends it */
};

void resp_end_init(struct resp_end *e, int head_req);

/* Bytes read from the upstream, in order. Returns how many of them are
 * the answer's: all until its end; once e->done, none. Bytes past the end
 * are not part of any answer (a connection that sent them is not kept). */
size_t resp_end_feed(struct resp_end *e, const char *buf, size_t n);

#endif
