/* runtime: what the runtime under ward is, where it changes what ward can
 * put in force. Today one case: gVisor (runsc), whose own kernel (the
 * Sentry) stands between the agent and the host's, and which has no
 * Landlock and no seccomp user notification (so no egress guard). Read
 * once by PID 1 before the sandbox is built; the config is not changed,
 * each layer asks what it needs (sandbox.c). */
#ifndef WARD_RUNTIME_H
#define WARD_RUNTIME_H

#include <stddef.h>

#define RUNTIME_MAX_NOTES 4

struct runtime_info {
	int gvisor;	    /* the kernel ward runs on is gVisor's */
	const char *name;   /* "gVisor", or "linux" */
	/* degradations the runtime brought, one line each (the evidence's) */
	char notes[RUNTIME_MAX_NOTES][320];
	int n_notes;
};

/* Detects the runtime: gVisor reports its own fixed uname (release 4.4.0,
 * version "#1 SMP Sun Jan 10 15:06:54 PST 2016"), which no Linux build
 * carries. */
void runtime_detect(struct runtime_info *rt);

/* Whether this network namespace has a way out: a route that is not the
 * loopback's, or an interface that is up with an address and is not the
 * loopback. 1 with its device in dev, 0 none (only lo: the runtime's "no
 * network"), -1 if the kernel's tables cannot be read (dev says which). */
int runtime_route_out(char *dev, size_t size);

/* A degradation, for the log and the evidence. */
void runtime_note(struct runtime_info *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
