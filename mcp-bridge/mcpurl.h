/* mcpurl: an mcp.json server's URL, read (the authority and the exact
 * target the route pins) and, by URL, where its requests go: by name over
 * TLS or TCP, or the host's loopback by its relay socket. Pure. */
#ifndef WARD_MCPURL_H
#define WARD_MCPURL_H

#include <stddef.h>

#include "mcp-bridge/upstream.h"

/* Where the servers' requests go: NULL, every one to [mcp] upstream (a
 * daemon's single endpoint, which serves them all); by_url, each where
 * its URL says: https://NAME[:PORT] by name over TLS, http://NAME[:PORT]
 * over TCP, and the host's loopback (127.0.0.1, localhost, 0.0.0.0: inside
 * the sandbox that would be the agent's own) to the relay socket
 * LOOPBACK/PORT.sock that whoever starts ward provides for that port
 * alone (NULL: such a server is left out). */
struct mcp_where {
	int by_url;
	const char *loopback;
	/* the host's mcp-auth.json as read (NULL: none given): a server
	 * without an Authorization header that has a sign-in there gets a
	 * route whose bridge sends and refreshes its token (mcpcred.h) */
	const char *auth;
	size_t auth_len;
};

/* http[s]://HOST[:PORT]/PATH?QUERY -> the authority (the Host the server
 * checks) and the target, exactly as a client's request will carry it;
 * *tls for https. 0, or -1 (a URL the bridge cannot pin: no user, no
 * fragment, no byte a URL parser would percent-encode, no path the bridge
 * refuses). */
int mcp_url_split(const char *url, char *authority, size_t asize, char *target, size_t tsize, int *tls);

/* The upstream of a server by its URL's authority (where->by_url): a name
 * mcp.json gave is looked up in DNS only (up->dns_only). 0, or -1 with err
 * (why it cannot be reached so: a loopback other than 127.0.0.1, https
 * there, no relay, an IPv6 address, one the bridge never connects to). */
int mcp_url_upstream(const char *authority, int tls, const struct mcp_where *where, struct upstream *up, char *err,
		     size_t errsize);

#endif
