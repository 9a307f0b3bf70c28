#define _GNU_SOURCE
#include "mcp-bridge/toolslist.h"

#include "mcp-bridge/jsonscan.h"
#include "mcp-bridge/listthin.h"

#include <http_parser.h>
#include <jansson.h>
#include <stdint.h>
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
	char cenc[16]; /* the Content-Encoding being read (its first bytes) */
	size_t ce_len;
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
	/* a Content-Encoding is told whole, however its value came */
	if (ps->in_value && ps->is_cenc && !(ps->ce_len == 8 && strncasecmp(ps->cenc, "identity", 8) == 0))
		ps->encoded = 1;
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
		ps->ce_len = 0;
		ps->in_value = 1;
		if (ps->keep && (put(ps, ps->name, ps->name_len) != 0 || put(ps, ": ", 2) != 0))
			return -1;
	}
	/* the first bytes of each, however the value came in pieces */
	if (ps->is_ctype) {
		size_t k = n < sizeof ps->ctype - 1 - ps->ct_len ? n : sizeof ps->ctype - 1 - ps->ct_len;
		memcpy(ps->ctype + ps->ct_len, at, k);
		ps->ct_len += k;
		ps->ctype[ps->ct_len] = '\0';
	}
	if (ps->is_cenc) {
		size_t k = n < sizeof ps->cenc - ps->ce_len ? n : sizeof ps->cenc - ps->ce_len;
		memcpy(ps->cenc + ps->ce_len, at, k);
		ps->ce_len += k;
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

/* One answer being filtered: its HTTP parse (fed as the bytes come), and
 * for an SSE body the event being gathered and what is left of the body
 * not split into lines yet. */
struct toolslist {
	struct parse ps;
	int head_sent; /* an SSE answer's head went to the client */
	char *ev;      /* the lines of the event not ended yet, each ended by \n */
	size_t ev_len, ev_cap;
	char **want;	    /* the request's ids (compact JSON) still to be answered */
	size_t n_want;
	int any;	    /* no ids: the first response ends the answer */
	size_t scanned;	    /* bytes of the body's first line looked through for its end */
	uint64_t looked;    /* bytes looked through for line ends in all (toolslist_looked) */
	int resp;	    /* the answer ended with an event's response */
};

static char *error_body(const char *route, const char *what)
{
	char msg[300];
	json_t *e;
	char *s;

	snprintf(msg, sizeof msg, "ward: route %s's server answered with %s: not passed unjudged", route,
		 what);
	e = json_pack("{s:s,s:n,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", "error", "code", -32603, "message", msg);
	s = e ? json_dumps(e, JSON_COMPACT) : NULL;
	json_decref(e);
	return s;
}

/* The JSON body, filtered: a new string (*olen its length), or NULL (out
 * of memory). */
static char *filter_json(struct listthin *f, const char *route, const char *body, size_t len, size_t *olen)
{
	struct jsonscan s;
	enum js_result rc = jsonscan_read(&s, body, len);
	char *o = NULL;

	if (rc == JS_OK && (o = malloc(len + 1)) && listthin(f, body, len, &s, o, olen) != 0) {
		free(o);
		o = NULL;
	}
	jsonscan_free(&s);
	if (rc == JS_INVALID && (o = error_body(route, "a body that is not JSON a strict parser reads")))
		*olen = strlen(o);
	return o;
}

/* The responses text (read into s) is or holds: each takes its id off
 * what the answer waits for; with no ids to wait for (any), the first
 * ends it. Sets t->resp once the answer ends. -1: out of memory. */
static int answered(struct toolslist *t, const char *text, const struct jsonscan *s)
{
	size_t i, k;
	json_t *id;
	char *c;

	for (i = 0; i < s->n_msgs; i++) {
		const struct js_msg *m = &s->msgs[i];
		if (!m->response)
			continue;
		if (t->any) {
			t->resp = 1;
			continue;
		}
		if (!t->n_want)
			continue; /* nothing waited for: the close ends the answer */
		/* the id as the request's was kept: compact, as jansson writes it */
		if (!(id = json_loadb(text + m->id_start, m->id_end - m->id_start, JSON_DECODE_ANY, NULL)))
			continue; /* one jansson cannot read (a number too large): no request's */
		c = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
		json_decref(id);
		if (!c)
			return -1;
		for (k = 0; k < t->n_want; k++)
			if (strcmp(t->want[k], c) == 0) {
				free(t->want[k]);
				t->want[k] = t->want[--t->n_want];
				t->resp = !t->n_want;
				break;
			}
		free(c);
	}
	return 0;
}

/* One SSE event (its lines, each ended by \n, without the blank line that
 * ends it) onto out as one event of type message: its JSON, less what the
 * rules refuse when it is a response that lists tools, in a data line for
 * each of its lines (the client joins them with \n: the same text);
 * dropped when it has no data, or data that is no JSON a strict parser
 * reads (its other fields, id and retry, mean nothing once the answer
 * ends). Its responses may end the answer (answered). */
static int filter_event(struct listthin *f, struct toolslist *t, const char *ev, size_t n, char **out, size_t *olen,
			size_t *ocap)
{
	char *joined = NULL, *o = NULL;
	const char *data = NULL;
	size_t d_len = 0, d_cap = 0, o_len = 0, i = 0, lines = 0;
	struct jsonscan s;
	enum js_result rc;
	int ok = -1;

	/* data: lines joined by \n (the SSE rule); one alone is read where it is */
	while (i < n) {
		const char *nl = memchr(ev + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - ev) : n;
		/* an event of another type than message: a client drops it */
		if (e - i >= 6 && memcmp(ev + i, "event:", 6) == 0) {
			size_t v = i + 6 + (e > i + 6 && ev[i + 6] == ' ');
			if (!(e - v == 7 && memcmp(ev + v, "message", 7) == 0)) {
				free(joined);
				return 0;
			}
		}
		if (e - i >= 5 && memcmp(ev + i, "data:", 5) == 0) {
			size_t v = i + 5 + (e > i + 5 && ev[i + 5] == ' ');
			if (!lines++) {
				data = ev + v;
				d_len = e - v;
			} else {
				if (lines == 2) { /* a second: the first copied to be joined */
					if (grow(&joined, &d_cap, d_len + 1) != 0)
						goto end;
					memcpy(joined, data, d_len);
				}
				if (grow(&joined, &d_cap, d_len + (e - v) + 2) != 0)
					goto end;
				joined[d_len++] = '\n';
				memcpy(joined + d_len, ev + v, e - v);
				d_len += e - v;
				data = joined;
			}
		}
		i = e + 1;
	}
	if (!lines) /* a comment, an id, a retry: nothing for an answer that ends here */
		return 0;
	rc = jsonscan_read(&s, data, d_len);
	if (rc == JS_INVALID) {
		jsonscan_free(&s);
		free(joined);
		return 0; /* an event whose data is no JSON-RPC: dropped, never passed unjudged */
	}
	if (rc == JS_OK && answered(t, data, &s) == 0 &&
	    grow(out, ocap, *olen + d_len + 32 + (lines > 1 ? 6 * d_len : 0)) == 0) {
		*olen += (size_t)sprintf(*out + *olen, "event: message\n");
		if (lines == 1) { /* no \n in it: thinned straight into its line */
			memcpy(*out + *olen, "data: ", 6);
			ok = listthin(f, data, d_len, &s, *out + *olen + 6, &o_len);
			*olen += ok == 0 ? 6 + o_len : 0;
		} else if ((o = malloc(d_len + 1)) && (ok = listthin(f, data, d_len, &s, o, &o_len)) == 0) {
			for (i = 0; i <= o_len;) { /* a line each */
				const char *nl = memchr(o + i, '\n', o_len - i);
				size_t e = nl ? (size_t)(nl - o) : o_len;
				memcpy(*out + *olen, "data: ", 6);
				memcpy(*out + *olen + 6, o + i, e - i);
				*olen += 6 + (e - i);
				(*out)[(*olen)++] = '\n';
				i = e + 1;
			}
			*olen -= 1; /* the last line's \n: written below */
		}
		if (ok == 0) {
			(*out)[(*olen)++] = '\n';
			(*out)[(*olen)++] = '\n';
		}
	}
	jsonscan_free(&s);
end:
	free(joined);
	free(o);
	return ok;
}

struct toolslist *toolslist_new(char *const *ids, size_t n, int any)
{
	struct toolslist *t = calloc(1, sizeof *t);
	size_t i;

	if (!t || (n && !(t->want = calloc(n, sizeof *t->want)))) {
		free(t);
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!(t->want[t->n_want++] = strdup(ids[i]))) {
			toolslist_free(t);
			return NULL;
		}
	t->any = any;
	http_parser_init(&t->ps.p, HTTP_RESPONSE);
	t->ps.p.data = &t->ps;
	return t;
}

uint64_t toolslist_looked(const struct toolslist *t)
{
	return t->looked;
}

void toolslist_free(struct toolslist *t)
{
	if (!t)
		return;
	while (t->n_want)
		free(t->want[--t->n_want]);
	free(t->want);
	free(t->ps.fields);
	free(t->ps.body);
	free(t->ev);
	free(t);
}

/* The SSE body's lines that came whole, filtered event by event onto out
 * (lines end with \r\n, \n or \r, and an empty one ends an event); what
 * they were is taken off the body, so a long stream holds only its last
 * line and event. -1: out of memory or an event past TOOLSLIST_MAX. */
static int filter_sse(struct listthin *f, struct toolslist *t, int eof, char **out, size_t *olen, size_t *ocap)
{
	struct parse *ps = &t->ps;
	const char *body = ps->body ? ps->body : "";
	size_t i = 0, len = ps->b_len, from = t->scanned;

	t->scanned = 0;
	/* up to the event that ends the answer, whatever came after it in
	 * the same read: how the bytes were cut does not change the answer */
	while (i < len && !t->resp) {
		/* a line looked through before for its end is not again: a
		 * long line in many small reads costs its length, once */
		size_t start = i + from, e, next;
		const char *nl = memchr(body + start, '\n', len - start), *cr;
		from = 0;
		e = nl ? (size_t)(nl - body) : len;
		if ((cr = memchr(body + start, '\r', e - start)))
			e = (size_t)(cr - body);
		t->looked += e - start;
		if (e == len || (body[e] == '\r' && e + 1 == len && !eof)) {
			/* a line not ended yet, or a \r that may be half of \r\n */
			t->scanned = e - i;
			break;
		}
		next = e + 1 + (body[e] == '\r' && e + 1 < len && body[e + 1] == '\n');
		if (e == i) { /* an empty line: the event ends */
			if (t->ev_len && filter_event(f, t, t->ev, t->ev_len, out, olen, ocap))
				return -1;
			t->ev_len = 0;
		} else {
			if (t->ev_len + (e - i) + 1 > TOOLSLIST_MAX || grow(&t->ev, &t->ev_cap, t->ev_len + (e - i) + 1))
				return -1;
			memcpy(t->ev + t->ev_len, body + i, e - i);
			t->ev_len += e - i;
			t->ev[t->ev_len++] = '\n';
		}
		i = next;
	}
	if (i && ps->body) /* what was taken, off the body */
		memmove(ps->body, body + i, len - i);
	ps->b_len = len - i;
	return 0;
}

static const char *reason(int status)
{
	return status == 200 ? "OK" : status == 202 ? "Accepted" : "Answer";
}

/* The answer's status line and kept fields, then the bridge's framing:
 * a length when the body is known whole, else the close ends it. */
static int put_head(const struct parse *ps, int status, const size_t *length, char **out, size_t *olen,
		    size_t *ocap)
{
	if (grow(out, ocap, *olen + ps->f_len + 128) != 0)
		return -1;
	*olen += (size_t)sprintf(*out + *olen, "HTTP/1.1 %d %s\r\n", status, reason(status));
	memcpy(*out + *olen, ps->fields ? ps->fields : "", ps->f_len);
	*olen += ps->f_len;
	if (length)
		*olen += (size_t)sprintf(*out + *olen, "Content-Length: %zu\r\n", *length);
	*olen += (size_t)sprintf(*out + *olen, "Connection: close\r\n\r\n");
	return 0;
}

/* Parses what came: an interim answer (100 Continue, 103 Early Hints) is
 * not the answer, the one after it is; the close ends a body only it
 * frames. -1: malformed, or past what is kept. */
static int parse_more(struct parse *ps, const char *raw, size_t len, int eof)
{
	static const http_parser_settings settings = { .on_header_field = on_field,
						       .on_header_value = on_value,
						       .on_headers_complete = on_headers_complete,
						       .on_body = on_body,
						       .on_message_complete = on_complete };
	size_t used;

	while (!ps->done) {
		used = http_parser_execute(&ps->p, &settings, raw, len);
		if (ps->done && ps->p.status_code >= 100 && ps->p.status_code < 200 && used <= len) {
			free(ps->fields);
			free(ps->body);
			memset(ps, 0, sizeof *ps);
			http_parser_init(&ps->p, HTTP_RESPONSE);
			ps->p.data = ps;
			raw += used;
			len -= used;
			continue;
		}
		break;
	}
	if (!ps->done && HTTP_PARSER_ERRNO(&ps->p) == HPE_OK && eof)
		http_parser_execute(&ps->p, &settings, NULL, 0);
	return ps->failed || (HTTP_PARSER_ERRNO(&ps->p) != HPE_OK && HTTP_PARSER_ERRNO(&ps->p) != HPE_PAUSED) ? -1 : 0;
}

enum toolslist_state toolslist_feed(struct toolslist *t, const struct tool_rules *r, const char *route,
				    const char *raw, size_t len, int eof, unsigned char *pin_seen,
				    struct toolslist_out *out)
{
	struct parse *ps = &t->ps;
	enum toolslist_state st = TL_MORE;
	char *body = NULL;
	size_t blen = 0, cap = 0;
	int sse;
	struct listthin f;

	memset(out, 0, sizeof *out);
	f = (struct listthin){ .r = r,
				 .pin_seen = pin_seen,
				 .removed = &out->removed,
				 .changed = &out->changed,
				 .changed_name = out->changed_name,
				 .changed_size = sizeof out->changed_name };
	if (parse_more(ps, raw, len, eof) != 0) {
		out->why = ps->failed ? "the server's answer is too large to filter (8 MiB at most)"
				      : "the server's answer is malformed HTTP";
		return TL_FAIL;
	}
	if (!ps->head_done) {
		if (eof)
			out->why = "the server closed before its answer's head", st = TL_FAIL;
		return st;
	}
	out->status = ps->p.status_code;
	sse = strncasecmp(ps->ctype, "text/event-stream", 17) == 0;
	if (ps->encoded && out->status >= 200 && out->status <= 299) {
		out->why = "the server's answer has a Content-Encoding: it cannot be filtered";
		return TL_FAIL;
	}
	if (out->status >= 200 && out->status <= 299 && sse) {
		/* an SSE answer goes as it comes, event by event, each judged
		 * whole: a server's request in it (sampling, elicitation) or
		 * its progress reaches the client before the response, which
		 * ends the answer (the stream may stay open after it) */
		if (!t->head_sent && put_head(ps, out->status, NULL, &out->resp, &out->len, &cap) != 0)
			goto oom;
		t->head_sent = 1;
		if (filter_sse(&f, t, eof || ps->done, &out->resp, &out->len, &cap) != 0) {
			free(out->resp); /* TL_FAIL gives nothing: what came of this read is not sent */
			out->resp = NULL;
			out->len = 0;
			out->why = "an event of the server's answer is too large to filter (8 MiB at most)";
			return TL_FAIL;
		}
		return t->resp || ps->done || eof ? TL_DONE : TL_MORE;
	}
	if (!ps->done && !eof)
		return TL_MORE; /* a body that is judged (or passed) whole */
	if (out->status < 200 || out->status > 299 || ps->b_len == 0) {
		/* not 2xx: as it is; 202 Accepted, 204: nothing in it */
		body = malloc(ps->b_len + 1);
		if (body)
			memcpy(body, ps->body ? ps->body : "", ps->b_len), blen = ps->b_len;
	} else {
		body = filter_json(&f, route, ps->body ? ps->body : "", ps->b_len, &blen);
	}
	if (!body || put_head(ps, out->status, &blen, &out->resp, &out->len, &cap) != 0 ||
	    grow(&out->resp, &cap, out->len + blen + 1) != 0)
		goto oom;
	memcpy(out->resp + out->len, body, blen);
	out->len += blen;
	free(body);
	return TL_DONE;
oom:
	free(body);
	free(out->resp);
	out->resp = NULL;
	out->len = 0;
	out->why = "out of memory";
	return TL_FAIL;
}
