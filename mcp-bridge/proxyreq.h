/* proxyreq: the request an agent sends the egress proxy, parsed with
 * http-parser: a CONNECT HOST:PORT head (a tunnel, TLS inside), or, when
 * [proxy] methods names the method, an absolute-form plain HTTP request
 * (GET http://HOST[:PORT]/PATH), which is rewritten to origin form for
 * the host and then checked and relayed as a route's request is (http.h).
 * Pure, for the fuzzer and the tests. */
#ifndef WARD_PROXYREQ_H
#define WARD_PROXYREQ_H

#include <stddef.h>

#include "mcp-bridge/upstream.h"

struct proxy_req {
	char host[UPSTREAM_NAME_MAX + 2]; /* a DNS name as sent, or an address literal (IPv6 without brackets) */
	unsigned port;
	int plain;	 /* an absolute-form http:// request, not a CONNECT */
	unsigned method; /* its http-parser method */
	/* where its URL is in the head, and its path (with the query) within
	 * the URL: path_n 0 when the URL has none ("http://host") */
	size_t url_off, url_n, path_off, path_n;
	int status;	 /* a refusal's: 400 malformed, 405 a method not in [proxy] methods */
	const char *why; /* a refusal's reason */
};

/* A whole head (through its blank line: http_head_end) into r; methods is
 * [proxy] methods' mask (1 << HTTP_CONNECT for tunnels, 1 << HTTP_GET...
 * for plain requests). 0, or -1 with r->status and r->why. */
int proxyreq_parse(const char *head, size_t len, unsigned methods, struct proxy_req *r);

/* A plain request's head, len bytes (with whatever followed it), rewritten
 * in place to origin form ("GET http://h/p?q HTTP/1.1" to "GET /p?q
 * HTTP/1.1"; "/" for a URL without a path). Returns the new length, never
 * more than len. */
size_t proxyreq_origin_form(char *head, size_t len, const struct proxy_req *r);

#endif
