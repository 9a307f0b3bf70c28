/* uri: whether a resource's URI is in plain form, the form the bridge's
 * resource rules ([route] resources, deny_resources: tools.h) judge by
 * prefix. A URI is judged as it is written; a server's URL parser
 * (WHATWG's, Node's new URL, pydantic's) may read another form as a
 * different URI (TEST://x as test://x, x/../y as y, %2e%2e as ..,
 * file://localhost/ as file:///), so only the form such a parser leaves as
 * it is gets judged, and any other is refused.
 *
 * Pure (fuzzed through fuzz_tools, tested in test_mcprules). */
#ifndef WARD_URI_H
#define WARD_URI_H

#include <stddef.h>

/* Whether uri (its first n bytes) is plain: printable ASCII with no blank,
 * quote or backslash; a lowercase scheme and authority ("//" after the
 * scheme for http, https, ws, wss, ftp and file; no host for file); no
 * empty, "." or ".." path segment; no escape (%XX) of a letter, digit,
 * "-._~", "/" or "\\". 1 or 0. */
int uri_plain(const char *uri, size_t n);

#endif
