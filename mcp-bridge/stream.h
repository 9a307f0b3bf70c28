/* stream: a route of protocol = stream. Once its upstream is connected
 * (and its TLS handshake done), bytes go both ways as they come, nothing
 * parsed, checked or added; each side's end is passed on to the other as
 * a half-close, and the connection ends when both ends have been passed
 * on, or at once when either side fails. The one way an agent held to lo
 * reaches an address elsewhere (a database in the cluster): the operator
 * names that address and port as the route's upstream. Private to
 * mcp-bridge/; the loop (bridge.c) accepts, connects and closes. */
#ifndef WARD_STREAM_H
#define WARD_STREAM_H

#include "mcp-bridge/conn.h"

/* The buffers a stream needs, allocated at accept: 0, or -1 (no memory). */
int stream_alloc(struct conn *c);

/* An event of one side (upstream 0 or 1), or the upstream just ready
 * (ev = EPOLLOUT on it). Returns 0 while the stream goes on, 1 when it is
 * over: both ends passed on, or a side failed (c->req.why says which);
 * the caller closes it. */
int stream_event(struct conn *c, int upstream, unsigned ev);

#endif
