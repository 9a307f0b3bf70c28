/* proxyreq: the request an agent sends the egress proxy: a CONNECT
 * HOST:PORT head, parsed with http-parser. Pure, for the fuzzer and the
 * tests. Absolute-form requests (GET http://...) are not carried: a plain
 * HTTP request could not be checked for its server name as a TLS tunnel
 * is, and everything an agent fetches is https. */
#ifndef WARD_PROXYREQ_H
#define WARD_PROXYREQ_H

#include <stddef.h>

#include "mcp-bridge/upstream.h"

struct proxy_req {
	char host[UPSTREAM_NAME_MAX + 2]; /* a DNS name as sent, or an address literal (IPv6 without brackets) */
	unsigned port;
	int status;	 /* a refusal's: 400 malformed, 405 not CONNECT */
	const char *why; /* a refusal's reason */
};

/* A whole head (through its blank line: http_head_end) into r. 0, or -1
 * with r->status and r->why. */
int proxyreq_parse(const char *head, size_t len, struct proxy_req *r);

#endif
