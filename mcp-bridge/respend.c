#include "mcp-bridge/respend.h"

/* Answers that have no body whatever their head says (returning 1 tells
 * http-parser so): a HEAD's (its Content-Length is what a GET would have
 * had), an interim one, 204 and 304 (RFC 9112 6.3). Else one framed by a
 * length would wait for bytes that never come. */
static int on_headers(http_parser *p)
{
	const struct resp_end *e = p->data;

	return e->head_req || p->status_code < 200 || p->status_code == 204 || p->status_code == 304;
}

/* An interim answer (100 Continue, 103 Early Hints) ends without ending
 * the exchange; the final one stops the parser where it ends. */
static int on_complete(http_parser *p)
{
	struct resp_end *e = p->data;

	if (p->status_code < 200)
		return 0;
	e->done = 1;
	e->keep = http_should_keep_alive(p);
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings settings = {
	.on_headers_complete = on_headers,
	.on_message_complete = on_complete,
};

void resp_end_init(struct resp_end *e, int head_req)
{
	http_parser_init(&e->p, HTTP_RESPONSE);
	e->p.data = e;
	e->head_req = head_req;
	e->done = e->keep = e->failed = 0;
}

size_t resp_end_feed(struct resp_end *e, const char *buf, size_t n)
{
	size_t used;

	if (e->done)
		return 0;
	if (e->failed || !n)
		return n;
	used = http_parser_execute(&e->p, &settings, buf, n);
	if (e->done)
		return used;
	if (HTTP_PARSER_ERRNO(&e->p) != HPE_OK)
		e->failed = 1;
	return n;
}
