/* ending: how the bridge's connections end (a refusal answered and
 * lingered over, a request dropped, an answer cut, a close, the audit line
 * each one leaves), apart from the loop that relays them (bridge.c).
 * Private to mcp-bridge/. */
#ifndef WARD_ENDING_H
#define WARD_ENDING_H

#include "mcp-bridge/conn.h"

/* The upstream stopped taking the request: the rest is dropped. */
void drop_request(struct conn *c);
/* A connection leaves C_RETRY (its retry count and timer). */
void leave_retry(struct loop *l, struct conn *c);
/* Its audit line, then both sockets closed; freed by reap_dead(). */
void close_conn(struct loop *l, struct conn *c);
void reap_dead(struct loop *l);
/* An error answer (status, why) and a lingering close. */
void refuse(struct loop *l, struct conn *c, int status, const char *why);
/* An answer the bridge gives itself (a judged route's JSON-RPC errors,
 * tools.h): status, a JSON body, then a lingering close. */
void answer_json(struct loop *l, struct conn *c, int status, const char *body, const char *why);
/* Bytes still in fd's send queue. */
unsigned unsent(int fd);
/* A cut answer: the client reset at once, or once it has been sent all. */
void abort_now(struct loop *l, struct conn *c);
void abort_client(struct loop *l, struct conn *c);
/* The answer is complete: the next request, or the close. */
void finish(struct loop *l, struct conn *c);
/* A client whose connection is kept: its request's audit line, then the
 * connection waits for the next request as a new one would. */
void next_request(struct loop *l, struct conn *c);
/* A kept client connection between requests: closed without a line. */
void close_idle(struct loop *l, struct conn *c);
/* After a refusal: the client's bytes read and dropped until DRAIN_MS. */
void drain(struct loop *l, struct conn *c);
/* Connections at their limit: the oldest idle ones closed. */
void evict_closed(struct loop *l);
/* A client refused before it has a connection: 503, no lingering. */
void turn_away(const struct bridge_route *r, int fd, int open, const char *why);

#endif
