/* guardproc: the egress guard (egress/guard.c) as a service of PID 1:
 * prepared as root (its Landlock, its seccomp allowlist), forked before
 * the agent, restarted when it dies. PID 1 keeps the current agent's
 * listener, so a restarted guard serves the same agent: while no guard
 * runs, the agent's inet socket() calls wait in the kernel; they never
 * pass unguarded. */
#ifndef WARD_GUARDPROC_H
#define WARD_GUARDPROC_H

#include <stdint.h>
#include <sys/types.h>

#include "child/privdrop.h"
#include "landlock/landlock.h"
#include "seccomp/sysfilter.h"

struct guardproc {
	int active;		/* the agent's sockets go through it */
	struct confine confine; /* the agent's user, its own Landlock and seccomp */
	struct ll_ruleset ll;
	struct sc_filter sc;
	int ctl;		/* PID 1's end of the running guard's socket, or -1 */
	int listener;		/* the current agent's listener, or -1 */
	unsigned handed;	/* listeners received from agents' starts */
	int started;
	uint32_t port_range;	/* its sockets' ephemeral ports (init/sandbox/ephemeral.h), or 0 */
	struct guard_shared *shared; /* the last call it received (egress/guard.h), or NULL */
};

#define GUARD_READY_MS 5000

/* As root, before anything runs: agent: the agent's user; port_range:
 * what each socket's IP_LOCAL_PORT_RANGE is set to (0: left alone). 0, or
 * 3 after logging why. */
int guardproc_prepare(struct guardproc *g, const struct user_ids *agent, uint32_t port_range);

/* service_ops: forks it; reads its report. */
pid_t guardproc_spawn(struct guardproc *g, int *note_fd);
int guardproc_note(struct guardproc *g, int fd, pid_t pid);

/* The agent's child sent its listener: kept (the previous one closed) and
 * handed to the running guard. Takes fd. */
void guardproc_attach(struct guardproc *g, int fd);

int guardproc_fds(const struct guardproc *g, int *fds, int max);
void guardproc_free(struct guardproc *g);

#endif
