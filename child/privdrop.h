/* privdrop: in the agent's child, between fork and exec: become the agent
 * user, hold no capability, gain none, and enter Landlock and seccomp.
 * Every step is read back from the kernel; a return code is not proof
 * (libcap-ng reports success under runc when the bounding set stays). */
#ifndef WARD_PRIVDROP_H
#define WARD_PRIVDROP_H

#include <stdint.h>

#include "landlock/landlock.h"
#include "seccomp/sysfilter.h"
#include "common/users.h"

struct confine {
	int enabled; /* [agent] user is set */
	struct user_ids user;
	const struct ll_ruleset *ll; /* NULL: no Landlock */
	const struct sc_filter *sc;  /* NULL: no seccomp */
	int egress;		     /* 1: inet sockets through the egress guard; 2: and
				      * it is required (no start without it) */
	uint32_t port_range;	     /* the guard's sockets' own ephemeral ports (lo | hi << 16,
				      * init/sandbox/ephemeral.h), or 0: the namespace's */
};

/* Is cap in this thread's effective set, as capget(2) says? */
int cap_effective(int cap);

/* Both report failures and notes as records on errfd (common/record.h)
 * and return 0, or -1 after reporting a failure.
 * First: become the agent user with no capability left (as root). */
int privdrop_credentials(const struct confine *c, int errfd);

/* A service's child (the bridge), after closing what it does
 * not serve with: nothing of PID 1's left, no environment (wiped: /proc
 * shows its strings), /dev/null for stdin, stdout and, unless the log is
 * there, stderr (not the agent's RPC channel), SIGPIPE ignored, a session
 * of its own. 0, or -1. */
int privdrop_detach(void);

/* Then, after chdir as that user: no_new_privs, Landlock, seccomp. */
int privdrop_lock(const struct confine *c, int errfd);

#endif
