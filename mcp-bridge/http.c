#define _GNU_SOURCE
#include "mcp-bridge/http.h"
#include "mcp-bridge/pathcheck.h"

#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int req_refused(struct http_req *q, int status, const char *why)
{
	if (!q->status) {
		q->status = status;
		q->why = why;
	}
	http_parser_pause(&q->parser, 1);
	return 0;
}

static int on_url(http_parser *p, const char *at, size_t n)
{
	struct http_req *q = p->data;

	if (q->target.p)
		q->target.n += n; /* the head is contiguous: a continuation */
	else
		q->target = (struct span){ at, n };
	return 0;
}

static int on_field(http_parser *p, const char *at, size_t n)
{
	struct http_req *q = p->data;

	if (q->field_open) {
		q->fields[q->n_fields - 1].n += n;
		return 0;
	}
	if (q->n_fields >= HTTP_MAX_FIELDS)
		return req_refused(q, 431, "too many header fields");
	q->fields[q->n_fields] = (struct span){ at, n };
	q->values[q->n_fields] = (struct span){ at + n, 0 };
	q->n_fields++;
	q->field_open = 1;
	return 0;
}

static int on_value(http_parser *p, const char *at, size_t n)
{
	struct http_req *q = p->data;
	struct span *v = &q->values[q->n_fields - 1];

	if (q->field_open || !v->n)
		*v = (struct span){ at, v->n ? v->n + n : n };
	else
		v->n += n;
	q->field_open = 0;
	return 0;
}

static int field_is(const struct span *f, const char *name)
{
	return f->n == strlen(name) && strncasecmp(f->p, name, f->n) == 0;
}

static int span_eq(const struct span *s, const char *z)
{
	return s->n == strlen(z) && memcmp(s->p, z, s->n) == 0;
}

int http_target_ok(const char *t)
{
	size_t i, n = strlen(t);

	if (t[0] != '/')
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)t[i] <= ' ' || t[i] == 0x7f || t[i] == '#')
			return 0;
	return !path_refusal(t, n);
}

static int route_matches(const struct http_route *r, const struct span *t)
{
	size_t rl = strlen(r->path);

	if (!r->exact && rl && r->path[rl - 1] == '/')
		return t->n >= rl && memcmp(t->p, r->path, rl) == 0;
	return span_eq(t, r->path);
}

static int loopback_origin(const struct span *v)
{
	static const char *const ok[] = { "http://127.0.0.1", "http://localhost", "http://[::1]" };
	size_t i, l;

	for (i = 0; i < 3; i++) {
		l = strlen(ok[i]);
		if (v->n >= l && strncasecmp(v->p, ok[i], l) == 0 && (v->n == l || v->p[l] == ':'))
			return 1;
	}
	return 0;
}

/* RFC 9110 token characters: what a field name is made of. A name with a
 * blank ("Host :") or other bytes is read by some servers as the header
 * it resembles, while every check here would pass it by. */
static int token_char(unsigned char ch)
{
	return isalnum(ch) || (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static const char *field_irregular(const struct span *f, const struct span *v)
{
	size_t k;

	if (!f->n)
		return "an empty header name";
	for (k = 0; k < f->n; k++)
		if (!token_char((unsigned char)f->p[k]))
			return "a header name with a byte no name may have";
	for (k = 0; k < v->n; k++)
		if (((unsigned char)v->p[k] < ' ' && v->p[k] != '\t') || v->p[k] == 0x7f)
			return "a control byte in a header value";
	return NULL;
}

/* Every check on the head, before a byte of the body is looked at. */
static int on_headers_complete(http_parser *p)
{
	struct http_req *q = p->data;
	const struct http_route *r = q->route;
	int i, n_cl = 0, n_te = 0, host = 0;

	q->headers_done = 1;
	if (p->method == HTTP_CONNECT)
		return req_refused(q, 403, "CONNECT is not allowed");
	if (p->http_major != 1)
		return req_refused(q, 400, "only HTTP/1.x");
	for (i = 0; i < q->n_fields; i++) {
		const struct span *f = &q->fields[i], *v = &q->values[i];
		const char *bad = field_irregular(f, v);
		if (bad)
			return req_refused(q, 400, bad);
		if (field_is(f, "Content-Length"))
			n_cl++;
		else if (field_is(f, "Transfer-Encoding")) {
			n_te++;
			if (!(v->n == 7 && strncasecmp(v->p, "chunked", 7) == 0))
				return req_refused(q, 400, "Transfer-Encoding other than chunked");
		} else if (field_is(f, "Upgrade"))
			return req_refused(q, 403, "Upgrade is not allowed");
		else if (field_is(f, "Host"))
			host++;
		else if (field_is(f, "Expect") && v->n == 12 && strncasecmp(v->p, "100-continue", 12) == 0)
			q->expect_continue = 1;
		else if (field_is(f, "Origin") && !r->any_origin && !loopback_origin(v))
			return req_refused(q, 403, "Origin is not loopback");
	}
	if (n_cl > 1)
		return req_refused(q, 400, "repeated Content-Length");
	if (n_te > 1)
		return req_refused(q, 400, "repeated Transfer-Encoding");
	if (n_cl && n_te)
		return req_refused(q, 400, "Content-Length with Transfer-Encoding");
	if (n_te && p->http_minor == 0)
		return req_refused(q, 400, "Transfer-Encoding in an HTTP/1.0 request");
	if (host != 1)
		return req_refused(q, 400, host ? "repeated Host" : "no Host");
	if (!q->target.n || q->target.p[0] != '/')
		return req_refused(q, 400, "the target must be a path (no absolute form)");
	/* http-parser lets a tab, a form feed and bytes above 0x7e through:
	 * none belongs in a target, and they would reach the upstream and
	 * the audit line (where a tab starts a new field) as they are */
	for (size_t k = 0; k < q->target.n; k++) {
		unsigned char ch = (unsigned char)q->target.p[k];
		if (ch <= ' ' || ch >= 0x7f)
			return req_refused(q, 400, "control, blank or non-ASCII byte in the target");
	}
	{
		const char *why = path_refusal(q->target.p, q->target.n);
		if (why)
			return req_refused(q, 400, why);
	}
	if (!route_matches(r, &q->target))
		return req_refused(q, 404, "no route for this path");
	/* the mask has 32 bits: methods past them (UNLINK, SOURCE) are never allowed */
	if (p->method >= 32 || !(r->methods & (1u << p->method)))
		return req_refused(q, 405, "method not allowed on this route");
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
	struct http_req *q = p->data;
	size_t take;

	q->body_bytes += n;
	if (q->whole_max && !q->whole_over) {
		if (n > q->whole_max - q->whole_len) {
			q->whole_over = 1;
		} else {
			if (q->whole_len + n > q->whole_cap) {
				size_t cap = q->whole_cap ? q->whole_cap : 4096;
				char *grown;
				while (cap < q->whole_len + n)
					cap *= 2;
				if (cap > q->whole_max)
					cap = q->whole_max;
				if (!(grown = realloc(q->whole, cap))) {
					q->whole_over = 1; /* judged as too large: refused, never passed */
					goto peek;
				}
				q->whole = grown;
				q->whole_cap = cap;
			}
			memcpy(q->whole + q->whole_len, at, n);
			q->whole_len += n;
		}
	}
peek:
	/* JSON's blanks before the body's first byte are not kept: a body
	 * padded with thousands of them still has its method named */
	while (!q->peek_len && n && (*at == ' ' || *at == '\t' || *at == '\r' || *at == '\n'))
		at++, n--;
	take = n < HTTP_PEEK - q->peek_len ? n : HTTP_PEEK - q->peek_len;
	memcpy(q->peek + q->peek_len, at, take);
	q->peek_len += take;
	q->peek_short |= take < n;
	return 0;
}

static int on_message_complete(http_parser *p)
{
	struct http_req *q = p->data;

	q->done = 1;
	http_parser_pause(p, 1); /* nothing after this request is ours */
	return 0;
}

void http_req_init(struct http_req *q, const struct http_route *r)
{
	memset(q, 0, sizeof *q);
	q->route = r;
	http_parser_init(&q->parser, HTTP_REQUEST);
	q->parser.data = q;
	http_parser_settings_init(&q->settings);
	q->settings.on_url = on_url;
	q->settings.on_header_field = on_field;
	q->settings.on_header_value = on_value;
	q->settings.on_headers_complete = on_headers_complete;
	q->settings.on_body = on_body;
	q->settings.on_message_complete = on_message_complete;
}

void http_req_keep_body(struct http_req *q, size_t max)
{
	q->whole_max = max;
}

/* A Content-Type's parameters (after its first ';'): a charset of UTF-8
 * alone. NULL, or why not. */
static const char *charset_only(const char *p, size_t n)
{
	while (n) {
		size_t k = 0, len = 0, at;
		const char *v;
		while (k < n && (p[k] == ' ' || p[k] == '\t'))
			k++;
		at = k;
		while (k < n && p[k] != ';')
			k++;
		len = k - at;
		while (len && (p[at + len - 1] == ' ' || p[at + len - 1] == '\t'))
			len--;
		if (len < 8 || strncasecmp(p + at, "charset=", 8) != 0)
			return "a judged body's Content-Type takes a charset alone";
		v = p + at + 8;
		len -= 8;
		if (len >= 2 && v[0] == '"' && v[len - 1] == '"')
			v++, len -= 2;
		if (!((len == 5 && strncasecmp(v, "utf-8", 5) == 0) || (len == 4 && strncasecmp(v, "utf8", 4) == 0)))
			return "a judged body is UTF-8 (charset=utf-8, or none): the judge reads no other";
		p += k < n ? k + 1 : k;
		n -= k < n ? k + 1 : k;
	}
	return NULL;
}

const char *http_req_json_only(const struct http_req *q)
{
	const char *why;
	int i, types = 0;

	for (i = 0; i < q->n_fields; i++) {
		const struct span *v = &q->values[i];
		if (field_is(&q->fields[i], "content-encoding") && !(v->n == 8 && strncasecmp(v->p, "identity", 8) == 0))
			return "a body with a Content-Encoding cannot be judged (send it as it is)";
		if (field_is(&q->fields[i], "content-type")) {
			const char *p = v->p, *end = v->p + v->n, *semi = memchr(p, ';', v->n);
			size_t type = (size_t)((semi ? semi : end) - p);
			while (type && (p[type - 1] == ' ' || p[type - 1] == '\t'))
				type--;
			if (++types > 1 || type != 16 || strncasecmp(p, "application/json", 16) != 0)
				return "a judged body is application/json (one Content-Type)";
			/* its parameters: a charset, and only UTF-8's */
			if (semi && (why = charset_only(semi + 1, (size_t)(end - semi - 1))))
				return why;
		}
	}
	return NULL;
}

void http_req_free_body(struct http_req *q)
{
	free(q->whole);
	q->whole = NULL;
	q->whole_len = q->whole_cap = q->whole_max = 0;
	q->whole_over = 0;
}

size_t http_head_end(const char *buf, size_t len)
{
	const char *e = memmem(buf, len, "\r\n\r\n", 4);
	return e ? (size_t)(e - buf) + 4 : 0;
}

/* Lines end in CRLF only, and none continues the one before (obs-fold).
 * http-parser takes a bare LF (or CR) as a line end and joins folded lines by
 * leaving the CRLF out of the value it reports, so either would make its
 * view of the head differ from the bytes the bridge forwards. head is up
 * to and with the blank line. */
static const char *head_irregular(const char *head, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (head[i] == '\r' && (i + 1 == len || head[i + 1] != '\n'))
			return "a bare CR in the head";
		if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r'))
			return "a line ends in a bare LF";
		if (head[i] == '\n' && i + 1 < len && (head[i + 1] == ' ' || head[i + 1] == '\t'))
			return "a folded header line (obs-fold)";
	}
	return NULL;
}

/* A chunked body as RFC 9112 writes it, byte for byte. http-parser is
 * lenient where upstream parsers differ (a bare LF in a chunk extension,
 * any two bytes in place of the CRLF after chunk data, trailer lines it
 * does not check), and the bridge forwards the body as it came: an upstream
 * that read those bytes otherwise would see another body, or a second
 * request. Chunk extensions may hold visible ASCII, blanks and tabs; a
 * trailer section is refused (no client of the bridge sends one, and some
 * upstreams merge trailers into the head). */
enum { CK_SIZE, CK_SIZE_WS, CK_EXT, CK_SIZE_LF, CK_DATA, CK_DATA_CR, CK_DATA_LF, CK_LAST, CK_LAST_LF, CK_DONE };

/* the largest chunk taken: an upstream that reads the size into 32 bits
 * would otherwise see another length */
#define CHUNK_MAX 0x7fffffffu

static const char *chunk_check(struct http_req *q, const char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char b = (unsigned char)p[i];

		switch (q->ck.state) {
		case CK_SIZE:
			if (isxdigit(b) && q->ck.digits < 16) {
				q->ck.left = q->ck.left * 16 + (uint64_t)(isdigit(b) ? b - '0' : (b | 0x20) - 'a' + 10);
				q->ck.digits++;
				if (q->ck.left > CHUNK_MAX)
					return "a chunk larger than 2 GiB";
			} else if (q->ck.digits && b == ';') {
				q->ck.state = CK_EXT;
			} else if (q->ck.digits && (b == ' ' || b == '\t')) {
				q->ck.state = CK_SIZE_WS;
			} else if (q->ck.digits && b == '\r') {
				q->ck.state = CK_SIZE_LF;
			} else {
				return "a malformed chunk size";
			}
			break;
		case CK_SIZE_WS:
			/* blanks after the size lead to an extension or the line end */
			if (b == ';')
				q->ck.state = CK_EXT;
			else if (b == '\r')
				q->ck.state = CK_SIZE_LF;
			else if (b != ' ' && b != '\t')
				return "a malformed chunk size";
			break;
		case CK_EXT:
			if (b == '\r')
				q->ck.state = CK_SIZE_LF;
			else if ((b < 0x20 && b != '\t') || b >= 0x7f)
				return "a control or non-ASCII byte in a chunk extension";
			break;
		case CK_SIZE_LF:
			if (b != '\n')
				return "a chunk size line not ended by CRLF";
			q->ck.state = q->ck.left ? CK_DATA : CK_LAST;
			break;
		case CK_DATA: {
			size_t take = n - i < q->ck.left ? n - i : (size_t)q->ck.left;
			q->ck.left -= take;
			i += take;
			if (!q->ck.left)
				q->ck.state = CK_DATA_CR;
			continue;
		}
		case CK_DATA_CR:
		case CK_DATA_LF:
			if (b != (q->ck.state == CK_DATA_CR ? '\r' : '\n'))
				return "chunk data not followed by CRLF";
			if (q->ck.state == CK_DATA_LF)
				q->ck.digits = 0;
			q->ck.state = q->ck.state == CK_DATA_CR ? CK_DATA_LF : CK_SIZE;
			break;
		case CK_LAST:
			if (b != '\r')
				return "a trailer section after the last chunk (not accepted)";
			q->ck.state = CK_LAST_LF;
			break;
		case CK_LAST_LF:
			if (b != '\n')
				return "the chunked body not ended by CRLF";
			q->ck.state = CK_DONE;
			break;
		default:
			return "bytes after the end of the chunked body";
		}
		i++;
	}
	return NULL;
}

ssize_t http_req_feed(struct http_req *q, const char *data, size_t len)
{
	size_t body_from = q->headers_done ? 0 : (size_t)-1;
	const char *bad;
	size_t n;
	enum http_errno e;
	int head_now = !q->headers_done;

	if (q->done)
		return 0;
	if (head_now) {
		/* http-parser skips blank lines before the request line, which
		 * would put its head past the blank line found here: the
		 * client's own head would be forwarded as body */
		if (len && (data[0] == '\r' || data[0] == '\n')) {
			q->status = 400;
			q->why = "a blank line before the request line";
			return -1;
		}
		q->head_len = http_head_end(data, len);
		if (!q->head_len) {
			q->status = 400;
			q->why = "incomplete head";
			return -1;
		}
		if ((q->why = head_irregular(data, q->head_len)) != NULL) {
			q->status = 400;
			return -1;
		}
	}
	n = http_parser_execute(&q->parser, &q->settings, data, len);
	if (q->status)
		return -1;
	if (head_now && q->headers_done && n < q->head_len) {
		/* the parser ended the head before the blank line we found */
		q->status = 400;
		q->why = "malformed head";
		return -1;
	}
	if (head_now && q->headers_done)
		body_from = q->head_len;
	if (body_from <= n && (q->parser.flags & F_CHUNKED)) {
		if ((bad = chunk_check(q, data + body_from, n - body_from)) != NULL ||
		    (q->done && q->ck.state != CK_DONE)) {
			q->status = 400;
			q->why = bad ? bad : "the chunked body ended where its framing does not";
			return -1;
		}
	}
	e = HTTP_PARSER_ERRNO(&q->parser);
	if (e == HPE_PAUSED && q->done)
		return (ssize_t)n;
	if (e != HPE_OK) {
		q->status = 400;
		q->why = http_errno_description(e);
		return -1;
	}
	return (ssize_t)n;
}

uint64_t http_req_body_left(const struct http_req *q)
{
	const http_parser *p = &q->parser;

	if (!q->headers_done || q->done || q->status || (p->flags & F_CHUNKED) || p->uses_transfer_encoding ||
	    !(p->flags & F_CONTENTLENGTH) || p->content_length == UINT64_MAX)
		return 0;
	return p->content_length;
}

void http_req_body_skipped(struct http_req *q, uint64_t n)
{
	uint64_t left = http_req_body_left(q);

	if (n > left)
		n = left;
	q->parser.content_length -= n;
	q->body_bytes += n;
	if (q->parser.content_length == 0 && n)
		q->done = 1;
}

/* Headers with which a server or a proxy behind the bridge would take
 * another method or another path than the one the route pinned, or
 * believe the request came from elsewhere: not forwarded. */
static int retargets(const struct span *f)
{
	static const char *const names[] = { "X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override",
					      "X-Original-URL", "X-Rewrite-URL", "Forwarded", "X-Real-IP" };
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (field_is(f, names[i]))
			return 1;
	return f->n >= 12 && strncasecmp(f->p, "X-Forwarded-", 12) == 0;
}

static int hop_by_hop(const struct span *f)
{
	static const char *const names[] = { "Host", "Connection", "Keep-Alive", "Proxy-Connection",
					      "TE", "Trailer", "Expect", "Proxy-Authorization" };
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (field_is(f, names[i]))
			return 1;
	return 0;
}

int http_header_reserved(const char *name, size_t len)
{
	static const char *const own[] = { "Content-Length", "Transfer-Encoding", "Upgrade" };
	const struct span f = { name, len };
	size_t i;

	for (i = 0; i < sizeof own / sizeof own[0]; i++)
		if (field_is(&f, own[i]))
			return 1;
	return hop_by_hop(&f);
}

static int injected(const struct http_route *r, const struct span *f)
{
	int i;

	for (i = 0; i < r->n_inject; i++) {
		const char *colon = strchr(r->inject[i], ':');
		if (colon && f->n == (size_t)(colon - r->inject[i]) &&
		    strncasecmp(f->p, r->inject[i], f->n) == 0)
			return 1;
	}
	return 0;
}

/* Whether f is the header that line ("Name: value") sets. */
static int named_by(const char *line, const struct span *f)
{
	const char *colon = line ? strchr(line, ':') : NULL;

	return colon && f->n == (size_t)(colon - line) && strncasecmp(f->p, line, f->n) == 0;
}

ssize_t http_req_upstream_head(const struct http_req *q, const char *extra, const char *drop, int keep, char *out,
			       size_t size)
{
	const struct http_route *r = q->route;
	size_t n = 0;
	int i, w;

#define PUT(...)                                                                  \
	do {                                                                      \
		w = snprintf(out + n, n < size ? size - n : 0, __VA_ARGS__);      \
		if (w < 0 || (size_t)w >= size - n)                               \
			return -1;                                                \
		n += (size_t)w;                                                   \
	} while (0)

	PUT("%s %.*s HTTP/%u.%u\r\n", http_method_str(q->parser.method), (int)q->target.n, q->target.p,
	    q->parser.http_major, q->parser.http_minor);
	for (i = 0; i < q->n_fields; i++) {
		if (hop_by_hop(&q->fields[i]) || retargets(&q->fields[i]) || injected(r, &q->fields[i]) ||
		    named_by(extra, &q->fields[i]) || (drop && field_is(&q->fields[i], drop)))
			continue;
		PUT("%.*s: %.*s\r\n", (int)q->fields[i].n, q->fields[i].p, (int)q->values[i].n, q->values[i].p);
	}
	if (r->host)
		PUT("Host: %s\r\n", r->host);
	for (i = 0; i < r->n_inject; i++)
		PUT("%s\r\n", r->inject[i]);
	if (extra)
		PUT("%s\r\n", extra);
	PUT("Connection: %s\r\n\r\n", keep ? "keep-alive" : "close");
#undef PUT
	return (ssize_t)n;
}

/* one request's method, for a log line: nothing that could end or forge one */
static void put_method(char *buf, size_t size, size_t *at, const json_t *req)
{
	const json_t *m = json_is_object(req) ? json_object_get(req, "method") : NULL;
	const char *v = json_is_string(m) ? json_string_value(m) : "?";
	size_t i;

	if (*at && *at + 1 < size)
		buf[(*at)++] = ',';
	for (i = 0; v[i] && *at + 1 < size; i++) {
		unsigned char ch = (unsigned char)v[i];
		if (ch <= ' ' || ch >= 0x7f || ch == ',')
			buf[(*at)++] = '?';
		else
			buf[(*at)++] = v[i];
	}
	buf[*at] = '\0';
}

const char *http_req_rpc_method(const struct http_req *q, char *buf, size_t size)
{
	json_t *o;
	size_t at = 0, i;

	if (!q->body_bytes)
		return NULL; /* no body: no JSON-RPC to name */
	snprintf(buf, size, "?");
	if (q->peek_short)
		return buf; /* longer than the bytes kept: it cannot tell */
	o = json_loadb(q->peek, q->peek_len, 0, NULL);
	buf[0] = '\0';
	if (json_is_array(o) && json_array_size(o)) /* a batch: each method, in order */
		for (i = 0; i < json_array_size(o); i++)
			put_method(buf, size, &at, json_array_get(o, i));
	else
		put_method(buf, size, &at, o);
	json_decref(o);
	return buf;
}

/* The response head is rewritten as http-parser reports it, field by
 * field: no count of fields is imposed (the head's 16 KiB bound it). */
struct resp_ctx {
	struct span field, value;
	int have, open, overflow;
	unsigned keep_s;
	char *out;
	size_t size, n;
};

/* Keep-Alive's timeout=N (RFC 2068's form: "timeout=5, max=100"), at most
 * 3600; 0 if it says none. */
static unsigned keep_timeout(const struct span *v)
{
	const char *p = v->p, *end = v->p + v->n;
	unsigned t = 0;

	for (; p + 8 <= end; p++) {
		if (strncasecmp(p, "timeout=", 8) != 0 || (p > v->p && p[-1] != ' ' && p[-1] != ','))
			continue;
		for (p += 8; p < end && *p >= '0' && *p <= '9'; p++)
			t = t >= 3600 ? 3600 : t * 10 + (unsigned)(*p - '0');
		return t > 3600 ? 3600 : t;
	}
	return 0;
}

/* Writes the field the parser has finished, unless it is one the bridge
 * replaces (Connection) or drops (Keep-Alive). */
static void r_emit(struct resp_ctx *c)
{
	int w;

	if (!c->have || c->overflow)
		return;
	c->have = 0;
	if (field_is(&c->field, "Keep-Alive"))
		c->keep_s = keep_timeout(&c->value);
	if (field_is(&c->field, "Connection") || field_is(&c->field, "Keep-Alive"))
		return;
	w = snprintf(c->out + c->n, c->size - c->n, "%.*s: %.*s\r\n", (int)c->field.n, c->field.p,
		     (int)c->value.n, c->value.p);
	if (w < 0 || (size_t)w >= c->size - c->n)
		c->overflow = 1;
	else
		c->n += (size_t)w;
}

static int r_field(http_parser *p, const char *at, size_t n)
{
	struct resp_ctx *c = p->data;

	if (c->open) {
		c->field.n += n;
		return 0;
	}
	r_emit(c);
	c->field = (struct span){ at, n };
	c->value = (struct span){ at + n, 0 };
	c->have = c->open = 1;
	return c->overflow;
}

static int r_value(http_parser *p, const char *at, size_t n)
{
	struct resp_ctx *c = p->data;
	struct span *v = &c->value;

	if (c->open || !v->n)
		*v = (struct span){ at, v->n ? v->n + n : n };
	else
		v->n += n;
	c->open = 0;
	return 0;
}

static int r_headers_complete(http_parser *p)
{
	r_emit(p->data);
	http_parser_pause(p, 1);
	return 0;
}

ssize_t http_resp_head(const char *in, size_t len, int keep, char *out, size_t size, size_t *out_len,
		       struct http_resp *r)
{
	http_parser p;
	http_parser_settings s;
	struct resp_ctx c;
	size_t head = http_head_end(in, len < HTTP_MAX_HEAD ? len : HTTP_MAX_HEAD);
	const char *eol;
	int w;

	if (!head)
		return len >= HTTP_MAX_HEAD ? -1 : 0;
	/* http-parser skips a blank line before the status line; the line
	 * copied out below would be that blank one */
	if (head_irregular(in, head) || in[0] == '\r' || in[0] == '\n')
		return -1;
	eol = memmem(in, head, "\r\n", 2);
	w = snprintf(out, size, "%.*s\r\n", (int)(eol - in), in);
	if (w < 0 || (size_t)w >= size)
		return -1;
	memset(&c, 0, sizeof c);
	c.out = out;
	c.size = size;
	c.n = (size_t)w;
	http_parser_init(&p, HTTP_RESPONSE);
	p.data = &c;
	http_parser_settings_init(&s);
	s.on_header_field = r_field;
	s.on_header_value = r_value;
	s.on_headers_complete = r_headers_complete;
	http_parser_execute(&p, &s, in, head);
	if (c.overflow || HTTP_PARSER_ERRNO(&p) != HPE_PAUSED)
		return -1;
	r->status = (int)p.status_code;
	r->keep_s = c.keep_s;
	/* its end is known without the connection's close: a length, chunks,
	 * or a status that has no body */
	r->framed = (p.flags & F_CHUNKED) || p.content_length != ULLONG_MAX || r->status < 200 ||
		    r->status == 204 || r->status == 304;
	if (keep)
		w = snprintf(out + c.n, size - c.n, "Connection: keep-alive\r\nKeep-Alive: timeout=%d\r\n\r\n",
			     BRIDGE_CLIENT_IDLE_S);
	else
		w = snprintf(out + c.n, size - c.n, "Connection: close\r\n\r\n");
	if (w < 0 || (size_t)w >= size - c.n)
		return -1;
	*out_len = c.n + (size_t)w;
	return (ssize_t)head;
}

int http_refusal(int status, const char *why, unsigned allow, char *out, size_t size)
{
	char body[1280], allow_hdr[128] = "";
	const char *reason = status == 400 ? "Bad Request" : status == 403 ? "Forbidden" : status == 404 ? "Not Found"
			   : status == 405 ? "Method Not Allowed" : status == 408 ? "Request Timeout"
			   : status == 413 ? "Content Too Large" : status == 431 ? "Request Header Fields Too Large"
			   : status == 502 ? "Bad Gateway" : status == 503 ? "Service Unavailable" : "Error";
	json_t *o = json_pack("{s:s,s:i,s:s}", "error", "ward-bridge", "status", status, "reason", why);
	size_t bl = json_dumpb(o, body, sizeof body - 1, JSON_COMPACT);
	int m;

	json_decref(o);
	if (bl == 0 || bl >= sizeof body - 1)
		bl = (size_t)snprintf(body, sizeof body, "{\"error\":\"ward-bridge\",\"status\":%d}", status);
	body[bl] = '\0';
	if (status == 405 && allow) {
		size_t n = (size_t)snprintf(allow_hdr, sizeof allow_hdr, "Allow:");
		for (m = 0; m < 32 && n < sizeof allow_hdr - 16; m++)
			if (allow & (1u << m))
				n += (size_t)snprintf(allow_hdr + n, sizeof allow_hdr - n, " %s,",
						      http_method_str((enum http_method)m));
		if (allow_hdr[n - 1] == ',')
			allow_hdr[n - 1] = '\0';
		strncat(allow_hdr, "\r\n", sizeof allow_hdr - strlen(allow_hdr) - 1);
	}
	return snprintf(out, size,
			"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n%s"
			"Connection: close\r\n\r\n%s",
			status, reason, bl, allow_hdr, body);
}

int http_methods(const char *s, unsigned *bits)
{
	*bits = 0;
	while (*s) {
		size_t len = strcspn(s, " \t,");
		int m, found = 0;
		/* the route keeps a 32-bit mask: http-parser's methods 32 and
		 * up (UNLINK, SOURCE) cannot be routed */
		for (m = 0; m < 32 && len; m++) {
			const char *name = http_method_str((enum http_method)m);
			if (strlen(name) == len && strncasecmp(name, s, len) == 0 && m != HTTP_CONNECT) {
				*bits |= 1u << m;
				found = 1;
				break;
			}
		}
		if (len && !found)
			return -1;
		s += len;
		s += strspn(s, " \t,");
	}
	return *bits ? 0 : -1;
}
