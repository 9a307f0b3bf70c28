/* uri: the plain form of a URI, the one form a resource rule judges by
 * prefix (uri.h). */
#include "mcp-bridge/uri.h"

#include <ctype.h>
#include <string.h>

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int uri_plain(const char *u, size_t n)
{
	static const char *const special[] = { "http", "https", "ws", "wss", "ftp", "file" };
	size_t i, k, sl = 0, auth, end;
	int spec = 0;

	/* printable ASCII, no blank, quote or backslash (a URL parser takes
	 * \ for /, and drops tabs and line breaks) */
	for (i = 0; i < n; i++)
		if ((unsigned char)u[i] <= ' ' || (unsigned char)u[i] >= 0x7f || u[i] == '"' || u[i] == '\\')
			return 0;
	/* a scheme in lowercase (a parser lowers it) */
	while (sl < n && ((u[sl] >= 'a' && u[sl] <= 'z') || (sl && ((u[sl] >= '0' && u[sl] <= '9') || u[sl] == '+' ||
								  u[sl] == '-' || u[sl] == '.'))))
		sl++;
	if (!sl || sl >= n || u[sl] != ':')
		return 0;
	for (k = 0; k < sizeof special / sizeof *special; k++)
		spec |= strlen(special[k]) == sl && strncmp(u, special[k], sl) == 0;
	/* an escape of a letter, digit, - . _ ~ / or \ is read as that
	 * character by a parser that normalises: not written so here */
	for (i = sl; i < n; i++)
		if (u[i] == '%') {
			int v = i + 2 < n ? hexval(u[i + 1]) * 16 + hexval(u[i + 2]) : -1;
			if (v < 0 || hexval(u[i + 1]) < 0 || hexval(u[i + 2]) < 0 || isalnum(v) || strchr("-._~/\\", v))
				return 0;
		}
	auth = sl + 1;
	if (n - auth >= 2 && u[auth] == '/' && u[auth + 1] == '/') {
		/* an authority in lowercase (a parser lowers a host), and none
		 * for file: (file://localhost/ is file:///) */
		for (end = auth + 2; end < n && u[end] != '/' && u[end] != '?' && u[end] != '#'; end++)
			if (u[end] >= 'A' && u[end] <= 'Z')
				return 0;
		if (sl == 4 && strncmp(u, "file", 4) == 0 && end != auth + 2)
			return 0;
	} else if (spec) {
		return 0; /* http:x is read as http://x */
	} else {
		end = auth;
	}
	/* the path: no empty segment (//) and no . or .. segment, which a
	 * parser resolves */
	for (i = end; i < n && u[i] != '?' && u[i] != '#'; i++) {
		size_t seg = i + 1, e = seg;
		if (u[i] != '/')
			continue;
		while (e < n && u[e] != '/' && u[e] != '?' && u[e] != '#')
			e++;
		if ((e < n && u[e] == '/' && e == seg) || (e - seg == 1 && u[seg] == '.') ||
		    (e - seg == 2 && u[seg] == '.' && u[seg + 1] == '.'))
			return 0;
	}
	return 1;
}

