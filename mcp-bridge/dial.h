/* dial: the upstream socket of a route that names its upstream by DNS name
 * (tcp:NAME:PORT, tls:NAME:PORT), or of a proxy tunnel to a name (its
 * resolver entry is c->name_i either way): the name's addresses tried in turn, a
 * lookup waited for when they are stale, and one more lookup when every
 * address failed (the name may have moved). Routes by address connect in
 * bridge.c. Private to mcp-bridge/. */
#ifndef WARD_DIAL_H
#define WARD_DIAL_H

#include "mcp-bridge/conn.h"

#define DIAL_WAIT (-1) /* a lookup is in flight: the connection waits (C_RESOLVING) */
#define DIAL_FAILED (-2) /* no address to try: c->why says why */

#define NAME_TRY_MS 3000 /* one address's connect, while others are left to try */

/* The first socket for the connection's request, from a fresh answer, or
 * DIAL_WAIT / DIAL_FAILED. */
int dial_start(struct loop *l, struct conn *c);

/* After a lookup the connection waited for has ended: its answer's first
 * address, or DIAL_FAILED (the lookup failed). */
int dial_answered(struct loop *l, struct conn *c);

/* The address being connected failed (why: for the log): the next one, or
 * a lookup, or DIAL_FAILED. */
int dial_next(struct loop *l, struct conn *c, const char *why);

/* Where the connection goes, for messages ("tls:api.example.com:443", or
 * a tunnel's "HOST:PORT"), and the name it is looked up by ("" for an
 * address). */
const char *dial_desc(const struct conn *c);
const char *dial_name(const struct conn *c);

/* Whether addresses are left after the one being connected. */
int dial_more(const struct loop *l, const struct conn *c);

#endif
