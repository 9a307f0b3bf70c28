/* libFuzzer target: the bridge's path check (mcp-bridge/pathcheck.c)
 * against reference readings of the same target. Whatever it lets
 * through must mean one path to every server behind a route:
 *   - decoded once and twice (RFC 3986 percent-decoding), the path has no
 *     dot segment (remove_dot_segments changes nothing) and as many '/';
 *   - read by the WHATWG URL rules (Node's new URL, Deno, Bun, Workers:
 *     '\' is a slash, ".", "%2e" are single dots, "..", ".%2e", "%2e.",
 *     "%2e%2e" double dots, '#' ends the path), no dot segment either;
 *   - a target under the prefix "/v1/" is under it in every reading.
 * Any target it lets through that breaks one of these aborts. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp-bridge/pathcheck.h"

static size_t ref_decode(const char *in, size_t n, char *out)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		if (in[i] == '%' && i + 2 < n && isxdigit((unsigned char)in[i + 1]) && isxdigit((unsigned char)in[i + 2])) {
			char h[3] = { in[i + 1], in[i + 2], 0 };
			out[o++] = (char)strtol(h, NULL, 16);
			i += 2;
		} else
			out[o++] = in[i];
	}
	return o;
}

/* RFC 3986's dot segments: "." or ".." between slashes (also as a
 * server that drops ";params" first sees them) */
static int rfc_has_dots(const char *p, size_t n)
{
	size_t i, seg = 0;

	for (i = 0; i <= n; i++) {
		if (i == n || p[i] == '/') {
			size_t len = i - seg;
			const char *semi = memchr(p + seg, ';', len);
			size_t name = semi ? (size_t)(semi - (p + seg)) : len;
			if ((len == 1 && p[seg] == '.') || (len == 2 && !memcmp(p + seg, "..", 2)) ||
			    (name == 1 && p[seg] == '.') || (name == 2 && !memcmp(p + seg, "..", 2)))
				return 1;
			seg = i + 1;
		}
	}
	return 0;
}

/* WHATWG's path state: '/' and '\' end a segment, '?' and '#' the path */
static int whatwg_has_dots(const char *p, size_t n)
{
	static const char *const dots[] = { ".", "%2e", "..", ".%2e", "%2e.", "%2e%2e" };
	size_t i, seg = 0, k;

	for (i = 0; i <= n; i++) {
		if (i == n || p[i] == '/' || p[i] == '\\' || p[i] == '?' || p[i] == '#') {
			for (k = 0; k < sizeof dots / sizeof dots[0]; k++)
				if (i - seg == strlen(dots[k]) && strncasecmp(p + seg, dots[k], i - seg) == 0)
					return 1;
			if (i < n && (p[i] == '?' || p[i] == '#'))
				break;
			seg = i + 1;
		}
	}
	return 0;
}

static size_t count(const char *p, size_t n, char c)
{
	size_t i, k = 0;
	for (i = 0; i < n; i++)
		k += p[i] == c;
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *t = (const char *)data;
	char *d1, *d2;
	size_t pn, n1, n2;
	const char *q;

	if (size > 4096 || path_refusal(t, size))
		return 0;
	q = memchr(t, '?', size);
	pn = q ? (size_t)(q - t) : size;
	d1 = malloc(pn + 1);
	d2 = malloc(pn + 1);
	n1 = ref_decode(t, pn, d1);
	n2 = ref_decode(d1, n1, d2);
	if (rfc_has_dots(t, pn) || rfc_has_dots(d1, n1) || rfc_has_dots(d2, n2))
		abort();
	if (whatwg_has_dots(t, size) || whatwg_has_dots(d1, n1) || whatwg_has_dots(d2, n2))
		abort();
	if (count(d1, n1, '/') != count(t, pn, '/') || count(d2, n2, '/') != count(t, pn, '/'))
		abort();
	if (memchr(t, '#', size) || memchr(t, '\\', size) || memchr(d1, '\\', n1) || memchr(d2, '\\', n2))
		abort();
	if (pn >= 4 && !memcmp(t, "/v1/", 4) && ((n1 < 4 || memcmp(d1, "/v1/", 4)) || (n2 < 4 || memcmp(d2, "/v1/", 4))))
		abort();
	free(d1);
	free(d2);
	return 0;
}
