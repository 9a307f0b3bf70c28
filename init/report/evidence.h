/* evidence: one JSON object with what is actually in force for the agent,
 * read back from the kernel (/proc/PID/status, /proc/PID/limits) next to
 * what ward built (Landlock ruleset, seccomp filter hash). */
#ifndef WARD_EVIDENCE_H
#define WARD_EVIDENCE_H

#include <jansson.h>
#include <sys/types.h>

#include "init/config/config.h"
#include "init/sandbox/runtime.h"
#include "init/supervise/supervise.h"

struct confine;
struct bridgeproc;

struct ephemeral;

struct evidence_src {
	const struct ward_config *cfg;
	const struct confine *confine; /* NULL: no privilege drop */
	const struct ll_ruleset *ll;   /* NULL: no Landlock */
	const struct sc_filter *sc;    /* NULL: no agent filter */
	const struct sc_filter *sc_init;
	int to_stderr;		       /* --evidence */
	const char *path;	       /* [ward] evidence, or NULL */
	int fd;			       /* path, opened while ward still held its capabilities */
	const struct bridgeproc *bridge; /* NULL: no bridge */
	const pid_t *bridge_pid;       /* the supervisor's, read at each start */
	const struct guardproc *guard;  /* the egress guard (inactive: ports only) */
	const struct ephemeral *eph;   /* the agent's sockets' ports, or NULL */
	int self_filter_loaded;	       /* PID 1's own filter (sc_init) is in force */
	int self_caps_kept;	       /* PID 1 could not drop its own capabilities */
	int unprivileged;	       /* ward started without root: one uid for all */
	const struct runtime_info *rt; /* the runtime (gVisor or not), its degradations */
	int egress_no_route;	       /* no guard (gVisor): the namespace has no route out */
};

/* Opens (creates) the evidence file and its directory now, while PID 1
 * may still write anywhere; later writes go through this descriptor.
 * Returns 0 or -errno. */
int evidence_open(struct evidence_src *e);

/* Builds the JSON text for the running agent (malloc'd) or NULL. */
char *evidence_json(const struct evidence_src *e, pid_t agent, const struct start_notes *notes);

/* start_hook: writes the evidence where it was asked for. */
void evidence_on_start(void *arg, pid_t agent, const struct start_notes *notes);

#endif
