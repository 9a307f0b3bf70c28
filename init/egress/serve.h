/* serve: one notification of the agent's egress filter, received and
 * handed to its answer: socket() to the guard (guard.h), connect() and the
 * Fast Open sends to the address check (connects.h). */
#ifndef WARD_SERVE_H
#define WARD_SERVE_H

#include <stdint.h>

struct guard;

/* One notification waiting on listener (its readiness was seen: the call
 * does not block, see serve.c): received and answered. 0, or -errno when
 * none could be received (ENOENT: the caller died in between). */
int guard_serve(struct guard *g, int listener, uint64_t now);

#endif
