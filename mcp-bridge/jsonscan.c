#define _GNU_SOURCE
#include "mcp-bridge/jsonscan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

/* Deeper than jansson reads (JSON_PARSER_MAX_DEPTH): refused, as it was. */
#define JS_MAX_DEPTH 2048

/* What a value is to the filter, by where it stands. */
enum role { R_OTHER, R_BATCH, R_MSG, R_RESULT, R_LIST, R_ENTRY };

/* What the member whose value comes next is to the filter. */
enum key { K_OTHER, K_ID, K_RESULT, K_ERROR, K_LIST, K_NAME };

/* An object or array not closed yet. */
struct frame {
	unsigned char role, is_map, key, kind;
	size_t keys_at; /* a map: where its members' name hashes start in keys */
	size_t at;	/* R_MSG: its msg; R_LIST: its list; R_ENTRY: its entry */
	size_t key_end; /* a map: the offset after the name of the member being read */
	size_t after;	/* R_LIST: the offset after its last entry (or its '[') */
	int has_id, has_result;
};

struct scan {
	struct jsonscan *s;
	yajl_handle h;
	const char *text;
	size_t text_len;
	struct frame *st;
	size_t depth, st_cap;
	uint64_t *keys; /* the member names' hashes of every open map, innermost last */
	size_t n_keys, keys_cap;
	int nomem;
	size_t top_end; /* the offset after the top value, once it ended */
	int top_done;
	int finishing; /* yajl_complete_parse: its offsets are not the text's */
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *g;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(g = realloc(*p, c * size)))
		return -1;
	*p = g;
	*cap = c;
	return 0;
}

static size_t here(const struct scan *c)
{
	return yajl_get_bytes_consumed(c->h);
}

/* The offset of the first byte of a value after from: past blanks and the
 * one ',' or ':' before it. */
static size_t value_at(const char *text, size_t from)
{
	while (text[from] == ' ' || text[from] == '\t' || text[from] == '\n' || text[from] == '\r' ||
	       text[from] == ',' || text[from] == ':')
		from++;
	return from;
}

/* A value begins (at its first byte, for a list's entry): what it is to
 * the filter, by its parent. is_map, is_array: which container it opens. */
static int value_begins(struct scan *c, int is_map, int is_array, unsigned char *kind)
{
	struct jsonscan *s = c->s;
	struct frame *p = c->depth ? &c->st[c->depth - 1] : NULL;
	int role = R_OTHER;

	*kind = 0;
	if (!p || p->role == R_BATCH) {
		if (is_map) {
			if (grow((void **)&s->msgs, &s->msgs_cap, s->n_msgs + 1, sizeof *s->msgs) != 0)
				return -1;
			memset(&s->msgs[s->n_msgs++], 0, sizeof *s->msgs);
			role = R_MSG;
		} else if (is_array) { /* a batch in a batch: as the tree filter read it */
			role = R_BATCH;
		}
	} else if (p->role == R_MSG) {
		if (p->key == K_ID) {
			s->msgs[p->at].id_start = value_at(c->text, p->key_end);
			p->has_id = 1;
		}
		if (p->key == K_RESULT || p->key == K_ERROR)
			p->has_result = 1;
		if (p->key == K_RESULT && is_map)
			role = R_RESULT;
	} else if (p->role == R_RESULT && p->key == K_LIST && is_array) {
		role = R_LIST;
		*kind = p->kind;
	} else if (p->role == R_LIST) {
		struct js_entry *e;
		if (grow((void **)&s->entries, &s->entries_cap, s->n_entries + 1, sizeof *s->entries) != 0)
			return -1;
		e = &s->entries[s->n_entries++];
		memset(e, 0, sizeof *e);
		e->start = value_at(c->text, p->after);
		s->lists[p->at].n++;
		if (is_map) {
			role = R_ENTRY;
			*kind = p->kind;
		}
	}
	return role;
}

/* A value ended at off: its parent takes note (an id's end, an entry's). */
static void value_ended(struct scan *c, size_t off)
{
	struct frame *p = c->depth ? &c->st[c->depth - 1] : NULL;

	if (!p) {
		/* a number at the top ends only at the end of the text */
		c->top_end = c->finishing ? c->text_len : off;
		c->top_done = 1;
		return;
	}
	if (p->role == R_MSG && p->key == K_ID)
		c->s->msgs[p->at].id_end = off;
	if (p->role == R_LIST) {
		c->s->entries[c->s->n_entries - 1].end = off;
		p->after = off;
	}
}

static int scalar(struct scan *c)
{
	unsigned char kind;

	if (value_begins(c, 0, 0, &kind) < 0)
		return c->nomem = 1, 0;
	value_ended(c, here(c));
	return 1;
}

static int on_null(void *ctx)
{
	return scalar(ctx);
}

static int on_bool(void *ctx, int b)
{
	(void)b;
	return scalar(ctx);
}

static int on_number(void *ctx, const char *n, size_t len)
{
	(void)n;
	(void)len;
	return scalar(ctx);
}

static int on_string(void *ctx, const unsigned char *str, size_t len)
{
	struct scan *c = ctx;
	struct jsonscan *s = c->s;
	struct frame *p = c->depth ? &c->st[c->depth - 1] : NULL;

	/* an entry's name: kept, decoded, unless a NUL in it would cut it */
	if (p && p->role == R_ENTRY && p->key == K_NAME && !memchr(str, '\0', len)) {
		struct js_entry *e = &s->entries[p->at];
		if (grow((void **)&s->names, &s->names_cap, s->names_len + len + 1, 1) != 0)
			return c->nomem = 1, 0;
		memcpy(s->names + s->names_len, str, len);
		s->names[s->names_len + len] = '\0';
		e->name = s->names_len;
		e->name_len = len;
		e->has_name = 1;
		s->names_len += len + 1;
	}
	return scalar(c);
}

static int open_value(struct scan *c, int is_map)
{
	struct jsonscan *s = c->s;
	struct frame *f;
	unsigned char kind;
	int role = value_begins(c, is_map, !is_map, &kind);

	if (role < 0)
		return c->nomem = 1, 0;
	if (c->depth == JS_MAX_DEPTH)
		return 0;
	if (grow((void **)&c->st, &c->st_cap, c->depth + 1, sizeof *c->st) != 0)
		return c->nomem = 1, 0;
	f = &c->st[c->depth++];
	memset(f, 0, sizeof *f);
	f->role = (unsigned char)role;
	f->is_map = (unsigned char)is_map;
	f->kind = kind;
	f->keys_at = c->n_keys;
	if (role == R_MSG)
		f->at = s->n_msgs - 1;
	else if (role == R_ENTRY)
		f->at = s->n_entries - 1;
	else if (role == R_LIST) {
		if (grow((void **)&s->lists, &s->lists_cap, s->n_lists + 1, sizeof *s->lists) != 0)
			return c->nomem = 1, 0;
		f->at = s->n_lists++;
		s->lists[f->at] = (struct js_list){ .kind = kind, .open = here(c) - 1, .first = s->n_entries };
		f->after = here(c);
	}
	return 1;
}

static int on_start_map(void *ctx)
{
	return open_value(ctx, 1);
}

static int on_start_array(void *ctx)
{
	return open_value(ctx, 0);
}

/* FNV-1a: equal names hash equal; two names that only collide are taken
 * for the same (the text is refused: never a name let through twice). */
static uint64_t hash(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	while (n--)
		h = (h ^ *p++) * 1099511628211ULL;
	return h;
}

static const char *const list_key[] = { [JS_TOOLS] = "tools",
					[JS_RESOURCES] = "resources",
					[JS_TEMPLATES] = "resourceTemplates",
					[JS_PROMPTS] = "prompts" };
static const char *const name_key[] = { [JS_TOOLS] = "name",
					[JS_RESOURCES] = "uri",
					[JS_TEMPLATES] = "uriTemplate",
					[JS_PROMPTS] = "name" };

static int is(const unsigned char *k, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(k, word, n) == 0;
}

static int on_key(void *ctx, const unsigned char *k, size_t n)
{
	struct scan *c = ctx;
	struct frame *f = &c->st[c->depth - 1];
	unsigned i;

	if (grow((void **)&c->keys, &c->keys_cap, c->n_keys + 1, sizeof *c->keys) != 0)
		return c->nomem = 1, 0;
	c->keys[c->n_keys++] = hash(k, n);
	f->key = K_OTHER;
	f->key_end = here(c);
	if (f->role == R_MSG)
		f->key = is(k, n, "id") ? K_ID : is(k, n, "result") ? K_RESULT : is(k, n, "error") ? K_ERROR : K_OTHER;
	else if (f->role == R_RESULT) {
		for (i = 0; i < sizeof list_key / sizeof *list_key; i++)
			if (is(k, n, list_key[i]))
				f->key = K_LIST, f->kind = (unsigned char)i;
	} else if (f->role == R_ENTRY && is(k, n, name_key[f->kind]))
		f->key = K_NAME;
	return 1;
}

static int cmp_hash(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int close_value(struct scan *c)
{
	struct frame *f = &c->st[c->depth - 1];
	size_t i, n = c->n_keys - f->keys_at;

	if (f->is_map && n > 1) { /* a member named twice: the text is refused */
		uint64_t *k = c->keys + f->keys_at;
		qsort(k, n, sizeof *k, cmp_hash);
		for (i = 1; i < n; i++)
			if (k[i] == k[i - 1])
				return 0;
	}
	c->n_keys = f->keys_at;
	if (f->role == R_MSG)
		c->s->msgs[f->at].response = f->has_id && f->has_result;
	if (f->role == R_LIST)
		c->s->lists[f->at].close = here(c) - 1;
	c->depth--;
	value_ended(c, here(c));
	return 1;
}

static int on_end(void *ctx)
{
	return close_value(ctx);
}

static const yajl_callbacks callbacks = {
	.yajl_null = on_null,
	.yajl_boolean = on_bool,
	.yajl_number = on_number,
	.yajl_string = on_string,
	.yajl_start_map = on_start_map,
	.yajl_map_key = on_key,
	.yajl_end_map = on_end,
	.yajl_start_array = on_start_array,
	.yajl_end_array = on_end,
};

enum js_result jsonscan_read(struct jsonscan *s, const char *text, size_t len)
{
	struct scan c = { .s = s, .text = text, .text_len = len };
	int ok;

	memset(s, 0, sizeof *s);
	if (!(c.h = yajl_alloc(&callbacks, NULL, &c)))
		return JS_NOMEM;
	/* the strict text check below is stricter than yajl's own */
	yajl_config(c.h, yajl_dont_validate_strings, 1);
	ok = yajl_parse(c.h, (const unsigned char *)text, len) == yajl_status_ok;
	c.finishing = 1;
	ok = ok && yajl_complete_parse(c.h) == yajl_status_ok && c.top_done;
	/* yajl takes a token cut short after the value for its end ("{} \"x"):
	 * nothing but blanks may follow it */
	for (; ok && c.top_end < len; c.top_end++)
		ok = text[c.top_end] == ' ' || text[c.top_end] == '\t' || text[c.top_end] == '\r' ||
		     text[c.top_end] == '\n';
	yajl_free(c.h);
	free(c.st);
	free(c.keys);
	if (c.nomem)
		return JS_NOMEM;
	return ok && jsonscan_strict_text(text, len) ? JS_OK : JS_INVALID;
}

void jsonscan_free(struct jsonscan *s)
{
	free(s->msgs);
	free(s->lists);
	free(s->entries);
	free(s->names);
	memset(s, 0, sizeof *s);
}

static unsigned hex4(const unsigned char *p)
{
	unsigned v = 0, i, d;

	for (i = 0; i < 4; i++) {
		d = p[i];
		v = v << 4 | (d <= '9' ? d - '0' : (d | 0x20) - 'a' + 10);
	}
	return v;
}

/* The length of the UTF-8 sequence at p (Unicode's table 3-7: no overlong
 * form, no surrogate, nothing past U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0], lo = 0x80, hi = 0xBF;
	size_t n, i;

	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
	else
		return 0;
	if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

/* Whether a byte of the word v is c (each byte of v below 0x80). */
#define ONES 0x0101010101010101ULL
#define HAS(v, c) ((((v) ^ ONES * (unsigned char)(c)) - ONES) & ~((v) ^ ONES * (unsigned char)(c)) & ONES * 0x80)

int jsonscan_strict_text(const char *text, size_t len)
{
	const unsigned char *p = (const unsigned char *)text, *end = p + len;
	int in = 0;
	size_t n;

	while (p < end) {
		/* eight plain ASCII bytes at a time: none of them a quote, a
		 * backslash, a byte past 0x7F or a blank only yajl takes */
		while (end - p >= 8) {
			uint64_t v, m;
			memcpy(&v, p, 8);
			m = (v & ONES * 0x80) | HAS(v, '"') | HAS(v, '\\') | HAS(v, '\v') | HAS(v, '\f');
			if (m) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
				/* on to the first that is one (its mark, the lowest, is exact) */
				p += (unsigned)__builtin_ctzll(m) / 8;
#endif
				break;
			}
			p += 8;
		}
		if (p == end)
			break;
		if (*p < 0x80) {
			if (*p == '"') {
				in = !in;
			} else if (!in && (*p == '\v' || *p == '\f')) {
				return 0; /* blanks to yajl, not to JSON */
			} else if (*p == '\\' && in) {
				unsigned u;
				if (end - p < 2)
					return 0;
				if (p[1] != 'u') {
					p += 2;
					continue;
				}
				if (end - p < 6)
					return 0;
				u = hex4(p + 2);
				if (u == 0)
					return 0; /* a NUL: where a C client would cut a name */
				if (u >= 0xDC00 && u <= 0xDFFF)
					return 0; /* the second half alone */
				if (u >= 0xD800 && u <= 0xDBFF) {
					/* the first half: the second must follow */
					if (end - p < 12 || p[6] != '\\' || p[7] != 'u')
						return 0;
					u = hex4(p + 8);
					if (u < 0xDC00 || u > 0xDFFF)
						return 0;
					p += 12;
					continue;
				}
				p += 6;
				continue;
			}
			p++;
			continue;
		}
		if (!(n = utf8_len(p, end)))
			return 0;
		p += n;
	}
	return 1;
}
