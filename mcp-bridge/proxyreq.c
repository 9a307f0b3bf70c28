#define _GNU_SOURCE
#include "mcp-bridge/proxyreq.h"

#include <http_parser.h>
#include <string.h>
#include <strings.h>

#include "mcp-bridge/allow.h"

/* Where the request target is in the head: http-parser hands it over in
 * pieces, contiguous in the one buffer it parses. */
struct target {
	const char *head;
	size_t off, n;
	int seen;
};

static int on_url(http_parser *p, const char *at, size_t len)
{
	struct target *t = p->data;

	if (!t->seen)
		t->off = (size_t)(at - t->head);
	t->seen = 1;
	t->n += len;
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	(void)p;
	return 2; /* no body: the tunnel's bytes follow */
}

static int proxy_refused(struct proxy_req *r, int status, const char *why)
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

/* The host (and port) of a URL, checked: an address, or a DNS name. */
static int take_host(struct proxy_req *r, const char *url, const struct http_parser_url *u, unsigned port)
{
	size_t hl = u->field_data[UF_HOST].len;
	int family;
	unsigned char b[16];

	if (!(u->field_set & (1 << UF_HOST)) || !hl || hl >= sizeof r->host)
		return -1;
	memcpy(r->host, url + u->field_data[UF_HOST].off, hl);
	r->host[hl] = '\0';
	r->port = port;
	/* an address, or a DNS name; nothing else reaches the rules or a log */
	return allow_literal(r->host, &family, b) || upstream_name_ok(r->host, hl) ? 0 : -1;
}

/* CONNECT HOST:PORT. */
static int connect_target(struct proxy_req *r, const char *url, size_t n)
{
	struct http_parser_url u;

	http_parser_url_init(&u);
	if (http_parser_parse_url(url, n, 1, &u) != 0 || !(u.field_set & (1 << UF_PORT)) || u.port == 0)
		return proxy_refused(r, 400, "CONNECT needs HOST:PORT");
	if (take_host(r, url, &u, u.port) != 0)
		return proxy_refused(r, 400, "the CONNECT host is neither a DNS name nor an address");
	return 0;
}

/* http://HOST[:PORT][/PATH][?QUERY]: nothing else (no other scheme, no
 * user, no fragment). */
static int absolute_target(struct proxy_req *r, const char *url, size_t n)
{
	struct http_parser_url u;
	size_t end;

	http_parser_url_init(&u);
	if (!n || url[0] == '/')
		return proxy_refused(r, 400, "a request to a proxy names its URL (http://HOST/PATH), not only a path");
	if (http_parser_parse_url(url, n, 0, &u) != 0 || !(u.field_set & (1 << UF_SCHEMA)))
		return proxy_refused(r, 400, "a malformed request URL");
	if (u.field_data[UF_SCHEMA].len != 4 || strncasecmp(url + u.field_data[UF_SCHEMA].off, "http", 4) != 0)
		return proxy_refused(r, 400, "only http:// URLs are requested of the proxy (https goes through CONNECT)");
	if (u.field_set & (1 << UF_USERINFO))
		return proxy_refused(r, 400, "a user in the URL");
	/* http-parser marks no fragment for a bare '#' at the end */
	if ((u.field_set & (1 << UF_FRAGMENT)) || memchr(url, '#', n))
		return proxy_refused(r, 400, "a fragment in the URL");
	if ((u.field_set & (1 << UF_PORT)) && u.port == 0)
		return proxy_refused(r, 400, "port 0 in the URL");
	if (take_host(r, url, &u, (u.field_set & (1 << UF_PORT)) ? u.port : 80) != 0)
		return proxy_refused(r, 400, "the URL's host is neither a DNS name nor an address");
	/* the path and query, through the URL's end */
	if (u.field_set & (1 << UF_PATH))
		r->path_off = u.field_data[UF_PATH].off;
	else if (u.field_set & (1 << UF_QUERY))
		r->path_off = (size_t)u.field_data[UF_QUERY].off - 1; /* its '?' */
	else
		r->path_off = n;
	end = n;
	r->path_n = end - r->path_off;
	r->plain = 1;
	return 0;
}

int proxyreq_parse(const char *head, size_t len, unsigned methods, struct proxy_req *r)
{
	http_parser_settings s;
	http_parser p;
	struct target t;

	memset(r, 0, sizeof *r);
	memset(&t, 0, sizeof t);
	t.head = head;
	if (!len || head[0] == '\r' || head[0] == '\n' || irregular(head, len))
		return proxy_refused(r, 400, "a malformed request head");
	http_parser_init(&p, HTTP_REQUEST);
	p.data = &t;
	http_parser_settings_init(&s);
	s.on_url = on_url;
	s.on_headers_complete = on_headers_complete;
	(void)http_parser_execute(&p, &s, head, len);
	/* on_headers_complete's 2 ends the parse at the blank line, upgraded */
	if (HTTP_PARSER_ERRNO(&p) != HPE_OK || !p.upgrade || !t.seen || t.off + t.n > len)
		return proxy_refused(r, 400, "a malformed request head");
	r->method = p.method;
	if (p.method >= 32 || !(methods & (1u << p.method)))
		return proxy_refused(r, 405, p.method == HTTP_CONNECT ? "CONNECT is not among [proxy] methods"
					: "the method is not among [proxy] methods (CONNECT alone unless it names more)");
	r->url_off = t.off;
	r->url_n = t.n;
	if (p.method == HTTP_CONNECT)
		return connect_target(r, head + t.off, t.n);
	return absolute_target(r, head + t.off, t.n);
}

size_t proxyreq_origin_form(char *head, size_t len, const struct proxy_req *r)
{
	/* [0, url_off) the method and its blank; then the path; then from the
	 * URL's end on (" HTTP/1.1\r\n..."). "http://" alone is longer than
	 * the "/" added for a URL without a path: it never grows. */
	size_t at = r->url_off, after = r->url_off + r->url_n;

	if (!r->path_n || head[r->url_off + r->path_off] == '?')
		head[at++] = '/';
	memmove(head + at, head + r->url_off + r->path_off, r->path_n);
	at += r->path_n;
	memmove(head + at, head + after, len - after);
	return at + len - after;
}
