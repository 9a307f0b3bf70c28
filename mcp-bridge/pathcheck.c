/* pathcheck: whether a request target means the same path to every server
 * that might stand behind a route. A prefix route pins "/v1/"; a server
 * that decodes the path once, twice, or by the WHATWG URL rules (Node's
 * new URL, Deno, Bun, Workers: "%2e" is a dot there, "\" a slash, "#"
 * ends the path) must see no other path than the one the bridge checked.
 *
 * The raw target first: no '#', no '\', every '%' followed by two hex
 * digits ("%u002e" and a bare "%" are refused: some decoders read them,
 * others not). Then the path (before the first '?') is decoded again and
 * again until nothing changes, and every stage, the raw one included, is
 * judged alike: no dot segment ("." or "..", also with ";params", which
 * servers that strip them before normalising take as dots), and the same
 * count of '/', ';' and '?' as the raw path (an encoded separator that a
 * decoder turns real), no NUL, '\' or '#', and a decoded stage valid
 * UTF-8 (an overlong '.' such as %c0%ae or a five-byte %f8%80%80%80%ae is
 * a dot to a lax decoder). A path still changing after PATH_MAX_DECODES
 * rounds is refused: nobody encodes a path that often for a good reason. */
#include "mcp-bridge/pathcheck.h"

#include <ctype.h>
#include <string.h>

#define PATH_CAP 8192 /* a head is at most 16 KiB; a path past this is refused */

static int hexval(unsigned char c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* one round of percent-decoding; returns the new length (a '%' not
 * followed by two hex digits stays as it is: a decoded stage may hold one) */
static size_t decode_once(const char *in, size_t n, char *out)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		if (in[i] == '%' && i + 2 < n && hexval((unsigned char)in[i + 1]) >= 0 &&
		    hexval((unsigned char)in[i + 2]) >= 0) {
			out[o++] = (char)(hexval((unsigned char)in[i + 1]) * 16 + hexval((unsigned char)in[i + 2]));
			i += 2;
		} else
			out[o++] = in[i];
	}
	return o;
}

/* well-formed UTF-8: no overlong form, no surrogate, nothing past U+10FFFF */
static int utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned c = s[i], need, min, cp;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, min = 0x80, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, min = 0x800, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, min = 0x10000, cp = c & 0x07;
		else
			return 0;
		if (i + need >= n)
			return 0;
		for (unsigned k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}

struct shape {
	size_t slashes, semis, queries;
};

static struct shape shape_of(const char *p, size_t n)
{
	struct shape s = { 0, 0, 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		s.slashes += p[i] == '/';
		s.semis += p[i] == ';';
		s.queries += p[i] == '?';
	}
	return s;
}

/* a dot segment, also with ";params" */
static int has_dot_segment(const char *p, size_t n)
{
	size_t i, seg = 0, name = (size_t)-1;

	for (i = 0; i <= n; i++) {
		if (i == n || p[i] == '/') {
			size_t len = (name != (size_t)-1 ? name : i) - seg;
			if ((len == 1 && p[seg] == '.') || (len == 2 && p[seg] == '.' && p[seg + 1] == '.'))
				return 1;
			seg = i + 1;
			name = (size_t)-1;
		} else if (p[i] == ';' && name == (size_t)-1)
			name = i;
	}
	return 0;
}

const char *path_refusal(const char *p, size_t n)
{
	static __thread char buf[2][PATH_CAP];
	size_t i, pn, len;
	struct shape raw;
	int stage, cur = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '#')
			return "a fragment ('#') in the target";
		if (c == '\\')
			return "a backslash in the target";
		if (c == '%' && (i + 2 >= n || hexval((unsigned char)p[i + 1]) < 0 || hexval((unsigned char)p[i + 2]) < 0))
			return "a '%' not followed by two hex digits";
	}
	pn = (size_t)((const char *)memchr(p, '?', n) ? (const char *)memchr(p, '?', n) - p : (ptrdiff_t)n);
	if (pn > PATH_CAP)
		return "a path too long to judge";
	raw = shape_of(p, pn);
	memcpy(buf[0], p, pn);
	len = pn;
	for (stage = 0;; stage++) {
		const char *s = buf[cur];
		struct shape now = shape_of(s, len);
		size_t next;
		if (has_dot_segment(s, len))
			return stage ? "a dot segment once decoded" : "a dot segment in the path";
		if (stage) {
			if (memchr(s, '\0', len) || memchr(s, '\\', len) || memchr(s, '#', len))
				return "an encoded NUL, backslash or '#' in the path";
			if (now.slashes != raw.slashes || now.semis != raw.semis || now.queries != raw.queries)
				return "an encoded separator ('/', ';' or '?') in the path";
			if (!utf8_valid((const unsigned char *)s, len))
				return "invalid or overlong UTF-8 in the decoded path";
		}
		next = decode_once(s, len, buf[!cur]);
		if (next == len && memcmp(buf[!cur], s, len) == 0)
			return NULL; /* nothing left to decode */
		if (stage == PATH_MAX_DECODES)
			return "a path encoded more times than any server decodes";
		cur = !cur;
		len = next;
	}
}
