#define _GNU_SOURCE
#include "mcp-bridge/toolslist.h"

#include <http_parser.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One parse of the answer so far: status, the fields kept for the client,
 * the content type, the decoded body. */
struct parse {
	http_parser p;
	char *fields; /* "Name: value\r\n" lines kept, in order */
	size_t f_len, f_cap;
	char name[128];
	size_t name_len;
	int in_value, keep, failed;
	char ctype[64];
	size_t ct_len;
	int is_ctype;
	int encoded; /* a Content-Encoding other than identity: its body cannot be read */
	int is_cenc;
	char *body;
	size_t b_len, b_cap;
	int head_done, done;
};

static int grow(char **buf, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 1024;
	char *g;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(g = realloc(*buf, c)))
		return -1;
	*buf = g;
	*cap = c;
	return 0;
}

static int put(struct parse *ps, const char *s, size_t n)
{
	if (grow(&ps->fields, &ps->f_cap, ps->f_len + n + 1) != 0)
		return ps->failed = 1, -1;
	memcpy(ps->fields + ps->f_len, s, n);
	ps->f_len += n;
	return 0;
}

/* The fields the bridge writes itself, or that frame the body it replaces. */
static int dropped(const char *name)
{
	static const char *const drop[] = { "content-length", "transfer-encoding", "connection", "keep-alive",
					    "upgrade", "te", "trailer", "proxy-connection" };
	size_t i;

	for (i = 0; i < sizeof drop / sizeof *drop; i++)
		if (strcasecmp(name, drop[i]) == 0)
			return 1;
	return 0;
}

static void end_value(struct parse *ps)
{
	if (ps->in_value && ps->keep)
		put(ps, "\r\n", 2);
	ps->in_value = 0;
}

static int on_field(http_parser *p, const char *at, size_t n)
{
	struct parse *ps = p->data;

	if (ps->head_done)
		return 0; /* a chunked body's trailer: not the answer's fields */
	if (ps->in_value) {
		end_value(ps);
		ps->name_len = 0;
	}
	if (ps->name_len + n >= sizeof ps->name)
		return ps->failed = 1, -1;
	memcpy(ps->name + ps->name_len, at, n);
	ps->name_len += n;
	return 0;
}

static int on_value(http_parser *p, const char *at, size_t n)
{
	struct parse *ps = p->data;

	if (ps->head_done)
		return 0;
	if (!ps->in_value) {
		ps->name[ps->name_len] = '\0';
		ps->keep = !dropped(ps->name);
		ps->is_ctype = strcasecmp(ps->name, "content-type") == 0;
		ps->is_cenc = strcasecmp(ps->name, "content-encoding") == 0;
		if (ps->is_cenc && !(n == 8 && strncasecmp(at, "identity", 8) == 0))
			ps->encoded = 1;
		ps->in_value = 1;
		if (ps->keep && (put(ps, ps->name, ps->name_len) != 0 || put(ps, ": ", 2) != 0))
			return -1;
	}
	if (ps->is_ctype && ps->ct_len + n < sizeof ps->ctype) {
		memcpy(ps->ctype + ps->ct_len, at, n);
		ps->ct_len += n;
		ps->ctype[ps->ct_len] = '\0';
	}
	return ps->keep ? put(ps, at, n) : 0;
}

static int on_headers_complete(http_parser *p)
{
	struct parse *ps = p->data;

	end_value(ps);
	ps->head_done = 1;
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
	struct parse *ps = p->data;

	if (ps->b_len + n > TOOLSLIST_MAX || grow(&ps->body, &ps->b_cap, ps->b_len + n + 1) != 0)
		return ps->failed = 1, -1;
	memcpy(ps->body + ps->b_len, at, n);
	ps->b_len += n;
	return 0;
}

static int on_complete(http_parser *p)
{
	((struct parse *)p->data)->done = 1;
	http_parser_pause(p, 1); /* nothing after the answer is its */
	return 0;
}

/* What one answer's filtering needs and finds. */
struct fctx {
	const struct tool_rules *r;
	unsigned char *seen; /* the pins' state, updated; or NULL */
	struct toolslist_out *out;
};

/* A pinned tool as listed: its hash against the pin (and the pin's
 * state set by it): whether it stays. */
static int pin_holds(struct fctx *f, json_t *t, const char *name)
{
	unsigned char h[32];
	int k = tools_pin_index(f->r, name), same;

	if (k < 0)
		return 1;
	same = tools_hash(t, h) == 0 && memcmp(h, f->r->pins[k].hash, 32) == 0;
	if (f->seen)
		f->seen[k] = same ? PIN_OK : PIN_CHANGED;
	if (!same && !f->out->changed++)
		snprintf(f->out->changed_name, sizeof f->out->changed_name, "%s", name);
	return same;
}

/* A JSON-RPC response's result.tools, less the tools the rules refuse and
 * the pinned ones whose hash differs: how many went. m may be a batch. */
static int filter_msg(struct fctx *f, json_t *m)
{
	json_t *res, *tools, *t, *name;
	size_t i;
	int removed = 0;

	if (json_is_array(m)) {
		for (i = 0; i < json_array_size(m); i++)
			removed += filter_msg(f, json_array_get(m, i));
		return removed;
	}
	res = json_is_object(m) ? json_object_get(m, "result") : NULL;
	tools = json_is_object(res) ? json_object_get(res, "tools") : NULL;
	if (!json_is_array(tools))
		return 0;
	for (i = json_array_size(tools); i-- > 0;) {
		t = json_array_get(tools, i);
		name = json_is_object(t) ? json_object_get(t, "name") : NULL;
		/* a tool with no name of its own cannot be allowed by one */
		if (!json_is_string(name) || strlen(json_string_value(name)) != json_string_length(name) ||
		    !tools_allowed(f->r, json_string_value(name)) || !pin_holds(f, t, json_string_value(name))) {
			json_array_remove(tools, i);
			removed++;
		}
	}
	return removed;
}

/* Whether m is (or a batch holds) a JSON-RPC response: an id, and a
 * result or an error. */
static int is_response(json_t *m)
{
	size_t i;

	if (json_is_array(m)) {
		for (i = 0; i < json_array_size(m); i++)
			if (is_response(json_array_get(m, i)))
				return 1;
		return 0;
	}
	return json_is_object(m) && json_object_get(m, "id") &&
	       (json_object_get(m, "result") || json_object_get(m, "error"));
}

static char *error_body(const char *route, const char *what)
{
	char msg[300];
	json_t *e;
	char *s;

	snprintf(msg, sizeof msg, "ward: route %s's server answered tools/list with %s: not passed unjudged", route,
		 what);
	e = json_pack("{s:s,s:n,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", "error", "code", -32603, "message", msg);
	s = e ? json_dumps(e, JSON_COMPACT) : NULL;
	json_decref(e);
	return s;
}

/* The JSON body, filtered: a new string, or NULL (out of memory). */
static char *filter_json(struct fctx *f, const char *route, const char *body, size_t len, int *removed)
{
	json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	char *s;

	if (!doc)
		return error_body(route, "a body that is not JSON a strict parser reads");
	*removed += filter_msg(f, doc);
	s = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return s;
}

/* One SSE event (its lines, each ended by \n, without the blank line that
 * ends it) onto out as one data line: its JSON, rewritten when it is a
 * response that lists tools; dropped when it has no data, or data that is
 * no JSON (its other fields, id and retry, mean nothing once the answer
 * ends). *resp: it held a response. */
static int filter_event(struct fctx *f, const char *ev, size_t n, char **out, size_t *olen,
			size_t *ocap, int *removed, int *resp)
{
	char *data = NULL, *s = NULL;
	size_t d_len = 0, d_cap = 0, i = 0;
	int has_data = 0;
	json_t *doc;

	/* data: lines joined by \n (the SSE rule); other lines kept */
	while (i < n) {
		const char *nl = memchr(ev + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - ev) : n;
		/* an event of another type than message: a client drops it */
		if (e - i >= 6 && memcmp(ev + i, "event:", 6) == 0) {
			size_t v = i + 6 + (e > i + 6 && ev[i + 6] == ' ');
			if (!(e - v == 7 && memcmp(ev + v, "message", 7) == 0)) {
				free(data);
				return 0;
			}
		}
		if (e - i >= 5 && memcmp(ev + i, "data:", 5) == 0) {
			size_t v = i + 5 + (e > i + 5 && ev[i + 5] == ' ');
			if (grow(&data, &d_cap, d_len + (e - v) + 2) != 0)
				goto oom;
			if (has_data)
				data[d_len++] = '\n';
			memcpy(data + d_len, ev + v, e - v);
			d_len += e - v;
			has_data = 1;
		}
		i = e + 1;
	}
	if (!has_data) { /* a comment, an id, a retry: nothing for an answer that ends here */
		free(data);
		return 0;
	}
	doc = json_loadb(data, d_len, JSON_REJECT_DUPLICATES, NULL);
	free(data);
	data = NULL;
	if (!doc)
		return 0; /* an event whose data is no JSON-RPC: dropped, never passed unjudged */
	*resp |= is_response(doc);
	*removed += filter_msg(f, doc);
	s = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!s || grow(out, ocap, *olen + strlen(s) + 32) != 0)
		goto oom;
	*olen += (size_t)sprintf(*out + *olen, "event: message\ndata: %s\n\n", s);
	free(s);
	return 0;
oom:
	free(data);
	free(s);
	return -1;
}

/* The SSE body so far, filtered event by event: lines end with \r\n, \n
 * or \r, and an empty one ends an event; an event not ended yet is left
 * out (at the stream's end the SSE rule drops it too). *resp: a response
 * was among them. A new string in *out, or -1. */
static int filter_sse(struct fctx *f, const char *body, size_t len, char **out, size_t *olen,
		      int *removed, int *resp)
{
	char *ev = NULL;
	size_t i = 0, cap = 0, ev_len = 0, ev_cap = 0;

	*out = NULL;
	*olen = 0;
	if (grow(out, &cap, 64) != 0)
		return -1;
	while (i < len) {
		size_t e = i, next;
		while (e < len && body[e] != '\n' && body[e] != '\r')
			e++;
		if (e == len)
			break; /* a line not ended yet */
		next = e + 1 + (body[e] == '\r' && e + 1 < len && body[e + 1] == '\n');
		if (body[e] == '\r' && e + 1 == len)
			break; /* a \r that may be half of \r\n */
		if (e == i) { /* an empty line: the event ends */
			if (ev_len && filter_event(f, ev, ev_len, out, olen, &cap, removed, resp) != 0)
				goto oom;
			ev_len = 0;
		} else {
			if (grow(&ev, &ev_cap, ev_len + (e - i) + 1) != 0)
				goto oom;
			memcpy(ev + ev_len, body + i, e - i);
			ev_len += e - i;
			ev[ev_len++] = '\n';
		}
		i = next;
	}
	free(ev);
	return 0;
oom:
	free(ev);
	return -1;
}

static const char *reason(int status)
{
	return status == 200 ? "OK" : status == 202 ? "Accepted" : "Answer";
}

enum toolslist_state toolslist_try(const struct tool_rules *r, const char *route, const char *raw, size_t len,
				   int eof, unsigned char *pin_seen, struct toolslist_out *out)
{
	static const http_parser_settings settings = { .on_header_field = on_field,
						       .on_header_value = on_value,
						       .on_headers_complete = on_headers_complete,
						       .on_body = on_body,
						       .on_message_complete = on_complete };
	struct parse ps;
	enum toolslist_state st = TL_MORE;
	char *body = NULL;
	size_t blen = 0, used;
	int sse, resp = 0;
	struct fctx f;

	memset(out, 0, sizeof *out);
	f = (struct fctx){ r, pin_seen, out };
again:
	memset(&ps, 0, sizeof ps);
	http_parser_init(&ps.p, HTTP_RESPONSE);
	ps.p.data = &ps;
	used = http_parser_execute(&ps.p, &settings, raw, len);
	/* an interim answer (100 Continue, 103 Early Hints) is not the
	 * answer: the one after it is */
	if (ps.done && ps.p.status_code >= 100 && ps.p.status_code < 200 && used > 0 && used <= len) {
		free(ps.fields);
		free(ps.body);
		raw += used;
		len -= used;
		goto again;
	}
	if (!ps.done && HTTP_PARSER_ERRNO(&ps.p) == HPE_OK && used == len && eof)
		http_parser_execute(&ps.p, &settings, NULL, 0); /* the close ends a body only it frames */
	if (ps.failed || (HTTP_PARSER_ERRNO(&ps.p) != HPE_OK && HTTP_PARSER_ERRNO(&ps.p) != HPE_PAUSED)) {
		out->why = ps.failed ? "the server's answer is too large to filter (8 MiB at most)"
				     : "the server's answer is malformed HTTP";
		st = TL_FAIL;
		goto done;
	}
	if (!ps.head_done) {
		if (eof)
			out->why = "the server closed before its tools/list answer's head", st = TL_FAIL;
		goto done;
	}
	out->status = ps.p.status_code;
	sse = strncasecmp(ps.ctype, "text/event-stream", 17) == 0;
	if (ps.encoded && out->status >= 200 && out->status <= 299) {
		out->why = "the server's answer has a Content-Encoding: it cannot be filtered";
		st = TL_FAIL;
		goto done;
	}
	if (out->status >= 200 && out->status <= 299 && !sse && (ps.done || eof) && ps.b_len == 0) {
		body = malloc(1); /* 202 Accepted, 204: nothing in it */
		blen = 0;
	} else if (out->status < 200 || out->status > 299) {
		if (!ps.done && !eof)
			goto done;
		body = malloc(ps.b_len + 1);
		if (body)
			memcpy(body, ps.body ? ps.body : "", ps.b_len), blen = ps.b_len;
	} else if (sse) {
		if (filter_sse(&f, ps.body ? ps.body : "", ps.b_len, &body, &blen, &out->removed, &resp) != 0) {
			out->why = "out of memory", st = TL_FAIL;
			goto done;
		}
		/* whole once it holds the response: the stream may stay open */
		if (!resp && !ps.done && !eof)
			goto done;
	} else {
		if (!ps.done && !eof)
			goto done;
		body = filter_json(&f, route, ps.body ? ps.body : "", ps.b_len, &out->removed);
		blen = body ? strlen(body) : 0;
	}
	if (!body) {
		out->why = "out of memory", st = TL_FAIL;
		goto done;
	}
	out->resp = malloc(ps.f_len + blen + 128);
	if (!out->resp) {
		out->why = "out of memory", st = TL_FAIL;
		goto done;
	}
	out->len = (size_t)sprintf(out->resp, "HTTP/1.1 %d %s\r\n", out->status, reason(out->status));
	memcpy(out->resp + out->len, ps.fields ? ps.fields : "", ps.f_len);
	out->len += ps.f_len;
	out->len += (size_t)sprintf(out->resp + out->len, "Content-Length: %zu\r\nConnection: close\r\n\r\n", blen);
	memcpy(out->resp + out->len, body, blen);
	out->len += blen;
	st = TL_DONE;
done:
	free(body);
	free(ps.fields);
	free(ps.body);
	return st;
}
