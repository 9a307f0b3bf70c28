/* http: one HTTP/1.1 request from an untrusted client, parsed with
 * http-parser and checked against a route; the response head from the
 * upstream, rewritten to close. Pure functions over buffers (fuzzable). */
#ifndef WARD_HTTP_H
#define WARD_HTTP_H

#include <http_parser.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HTTP_MAX_HEAD 16384 /* request or response head, bytes */
#define HTTP_MAX_FIELDS 64
#define HTTP_PEEK 4096 /* body bytes kept to name the JSON-RPC method(s) */
/* A client connection kept after an answer waits this long (s) for its
 * next request's head, and says so (Keep-Alive: timeout=), so that a
 * client lets it go first (undici and Node's agent a second before). */
#define BRIDGE_CLIENT_IDLE_S 5
/* What a route allows when it names no methods ([route] methods, [mcp]) */
#define HTTP_DEFAULT_METHODS ((1u << HTTP_POST) | (1u << HTTP_GET) | (1u << HTTP_DELETE))

/* What a route allows and adds (see [route NAME] in ward.conf(5)). */
struct http_route {
	const char *name;
	unsigned methods;    /* bit (1 << HTTP_GET) ... */
	const char *path;    /* exact target (path?query), or a prefix ending in '/' */
	const char *host;    /* Host sent upstream */
	char *const *inject; /* "Name: value" lines added upstream */
	int n_inject;
	int exact; /* path is exact even if it ends in '/' (a route made from mcp.json) */
	int any_origin; /* Origin not held to loopback: the egress proxy's plain requests, whose
			 * client is the agent, not a browser on the host */
};

struct span {
	const char *p;
	size_t n;
};

struct http_req {
	http_parser parser;
	http_parser_settings settings;
	int status;	      /* 0, or the refusal status (400, 403, 404, 405, 431) */
	const char *why;      /* the refusal, for the log and the JSON body */
	const struct http_route *route;
	struct span target, fields[HTTP_MAX_FIELDS], values[HTTP_MAX_FIELDS];
	int n_fields;
	int field_open;	      /* the last callback was a field name */
	int headers_done, done;
	int expect_continue;  /* Expect: 100-continue: the client waits for a 100 before its body */
	struct {	      /* the chunked body, checked strictly beside http-parser */
		int state, digits;
		uint64_t left;
	} ck;
	size_t head_len;      /* bytes of the head */
	uint64_t body_bytes;
	char peek[HTTP_PEEK]; /* the body's start, after its leading blanks */
	size_t peek_len;
	int peek_short;	      /* more of the body came than peek holds */
	/* the whole body, decoded (a judged route's: tools.h), when whole_max
	 * is set: grown as it comes, up to whole_max (past it: whole_over) */
	char *whole;
	size_t whole_len, whole_cap, whole_max;
	int whole_over;
};

/* Starts a request on route r. */
void http_req_init(struct http_req *q, const struct http_route *r);

/* Feeds client bytes. The first call must hold the whole head (see
 * http_head_end()). Returns how many bytes belong to this request (head
 * included on the first call); q->done is set at its end; -1 on a refusal
 * (q->status) or a framing error (q->status 400). Bytes after the end are
 * not this request's: they are never forwarded. */
ssize_t http_req_feed(struct http_req *q, const char *data, size_t len);

/* Bytes of a Content-Length body still to come: 0 before the head is
 * parsed, once the request is done, and for a chunked body (which is
 * always parsed). */
uint64_t http_req_body_left(const struct http_req *q);

/* n (<= http_req_body_left()) of those bytes were passed on without being
 * fed (spliced): counted, and the request is done when none are left. */
void http_req_body_skipped(struct http_req *q, uint64_t n);

/* Length of the head in buf (through the blank line), 0 if not complete. */
size_t http_head_end(const char *buf, size_t len);

/* 1 if t is a target the bridge would let through: origin-form, no blank,
 * control byte or fragment, none of the paths it refuses (dot segments,
 * encoded dots and separators, backslashes). Routes are checked with it. */
int http_target_ok(const char *t);

/* Headers the bridge writes itself, which a route's configured headers may
 * not set: framing (Content-Length, Transfer-Encoding), Host, and the
 * hop-by-hop ones. 1 if NAME (len bytes) is one. */
int http_header_reserved(const char *name, size_t len);

/* The head to send upstream: request line, the client's headers except
 * Host, Connection and hop-by-hop ones and those the route injects, then
 * Host, the injected lines, extra (a "Name: value" line set now, such as
 * a credential's Authorization, or NULL; the client's header of that name
 * is dropped too), "Connection: close", or with keep "Connection:
 * keep-alive" (the bridge's own connection, kept for the route's next
 * request: pool.h). drop: a header name the client's request loses besides
 * (NULL: none). Returns its length, or -1 if it does not fit. */
ssize_t http_req_upstream_head(const struct http_req *q, const char *extra, const char *drop, int keep, char *out,
			       size_t size);

/* Keeps the whole decoded body from now on, up to max bytes (tools.h). */
void http_req_keep_body(struct http_req *q, size_t max);

/* Whether the body is what a judge reads as JSON (tools.h): no
 * Content-Encoding but identity, and a Content-Type (if any, one) of
 * application/json whose charset (if any) is UTF-8, as jansson reads it; a
 * server that decoded another charset (the MCP SDK's does) could read a
 * call where the judge read none. NULL, or why not. */
const char *http_req_json_only(const struct http_req *q);

/* The kept body let go. */
void http_req_free_body(struct http_req *q);

/* The JSON-RPC method of the body, for the audit line: each method of a
 * batch, comma-separated; "?" for a body it cannot tell (not JSON, no
 * method, longer than HTTP_PEEK after its leading blanks); NULL with no
 * body. */
const char *http_req_rpc_method(const struct http_req *q, char *buf, size_t size);

/* What the bridge learns from a response head. */
struct http_resp {
	int status;
	int framed; /* the body's end is known (Content-Length, chunked, or no
		     * body by status); 0: the connection's close ends it */
	unsigned keep_s; /* Keep-Alive: timeout=N, N (at most 3600); 0: not said */
};

/* A response head from upstream: rewritten into out with "Connection:
 * close" (the upstream's Connection and Keep-Alive dropped), however many
 * fields it has; with keep, "Connection: keep-alive" and the bridge's own
 * "Keep-Alive: timeout=N" (BRIDGE_CLIENT_IDLE_S) instead: the client's
 * connection carries its next request. Returns the head length consumed
 * from in, 0 if incomplete, -1 if malformed or too long for out. */
ssize_t http_resp_head(const char *in, size_t len, int keep, char *out, size_t size, size_t *out_len,
		       struct http_resp *r);

/* A complete refusal response with a short JSON body. */
int http_refusal(int status, const char *why, unsigned allow_methods, char *out, size_t size);

/* "POST GET DELETE" -> method bits; -1 if a name is unknown. */
int http_methods(const char *s, unsigned *bits);

#endif
