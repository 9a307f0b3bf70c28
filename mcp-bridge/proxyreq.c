#define _GNU_SOURCE
#include "mcp-bridge/proxyreq.h"

#include <http_parser.h>
#include <string.h>

#include "mcp-bridge/allow.h"

/* The request target as http-parser hands it over, in pieces. */
struct target {
	char buf[UPSTREAM_NAME_MAX + 16];
	size_t n;
	int overflow;
};

static int on_url(http_parser *p, const char *at, size_t len)
{
	struct target *t = p->data;

	if (len > sizeof t->buf - 1 - t->n) {
		t->overflow = 1;
		return 1;
	}
	memcpy(t->buf + t->n, at, len);
	t->n += len;
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	(void)p;
	return 2; /* no body: the tunnel's bytes follow */
}

static int refuse(struct proxy_req *r, int status, const char *why)
{
	r->status = status;
	r->why = why;
	return -1;
}

/* A bare LF or CR, or a folded line: parsers differ on them (http.c
 * refuses them for the same reason). */
static int irregular(const char *h, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((h[i] == '\r' && (i + 1 == len || h[i + 1] != '\n')) || (h[i] == '\n' && (!i || h[i - 1] != '\r')) ||
		    (h[i] == '\n' && i + 1 < len && (h[i + 1] == ' ' || h[i + 1] == '\t')))
			return 1;
	return 0;
}

int proxyreq_parse(const char *head, size_t len, struct proxy_req *r)
{
	struct http_parser_url u;
	http_parser_settings s;
	http_parser p;
	struct target t;
	size_t hl;
	int family;
	unsigned char b[16];

	memset(r, 0, sizeof *r);
	memset(&t, 0, sizeof t);
	if (!len || head[0] == '\r' || head[0] == '\n' || irregular(head, len))
		return refuse(r, 400, "a malformed request head");
	http_parser_init(&p, HTTP_REQUEST);
	p.data = &t;
	http_parser_settings_init(&s);
	s.on_url = on_url;
	s.on_headers_complete = on_headers_complete;
	(void)http_parser_execute(&p, &s, head, len);
	if (t.overflow)
		return refuse(r, 400, "a request target longer than a host name and port");
	/* on_headers_complete's 2 ends the parse at the blank line, upgraded */
	if (HTTP_PARSER_ERRNO(&p) != HPE_OK || !p.upgrade)
		return refuse(r, 400, "a malformed request head");
	if (p.method != HTTP_CONNECT)
		return refuse(r, 405, "only CONNECT is carried (https through a tunnel); an absolute-form http:// "
				      "request is not");
	t.buf[t.n] = '\0';
	if (http_parser_parse_url(t.buf, t.n, 1, &u) != 0 || !(u.field_set & (1 << UF_HOST)) ||
	    !(u.field_set & (1 << UF_PORT)) || u.port == 0)
		return refuse(r, 400, "CONNECT needs HOST:PORT");
	hl = u.field_data[UF_HOST].len;
	if (!hl || hl >= sizeof r->host)
		return refuse(r, 400, "CONNECT needs HOST:PORT");
	memcpy(r->host, t.buf + u.field_data[UF_HOST].off, hl);
	r->host[hl] = '\0';
	r->port = u.port;
	/* an address, or a DNS name; nothing else reaches the rules or a log */
	if (!allow_literal(r->host, &family, b) && !upstream_name_ok(r->host, hl))
		return refuse(r, 400, "the CONNECT host is neither a DNS name nor an address");
	return 0;
}
