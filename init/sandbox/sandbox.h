/* sandbox: everything PID 1 prepares before the agent's first start, as
 * root, once: the agent user, the Landlock ruleset, the seccomp filters;
 * and PID 1's own confinement once the agent runs. */
#ifndef WARD_SANDBOX_H
#define WARD_SANDBOX_H

#include "init/supervise/bridgeproc.h"
#include "init/supervise/guardproc.h"
#include "init/config/config.h"
#include "init/report/evidence.h"
#include "init/sandbox/ephemeral.h"
#include "init/sandbox/runtime.h"
#include "child/privdrop.h"

struct sandbox {
	struct confine confine;
	int confining; /* confine is in force for the agent */
	struct ll_ruleset ll;
	struct sc_filter sc, sc_init;
	struct evidence_src ev;
	struct route_table routes; /* the bridge's: [route]s and mcp.json's servers */
	struct bridgeproc bridge;
	struct guardproc guard; /* the egress guard ([landlock] egress = loopback) */
	struct ephemeral eph;	/* the ports its sockets may be given by the kernel */
	int keep_audit_read; /* PID 1 reads the audit log for denials */
	int files_written;   /* private targets written ([file], [mcp]) */
	int unprivileged;    /* ward started without root: the agent, the bridge and ward share its uid */
	struct runtime_info rt; /* the runtime under ward (gVisor or not) */
};

/* An empty sandbox that sandbox_free() accepts. */
void sandbox_init(struct sandbox *sb);

/* Returns 0, or the exit status to stop with after logging why:
 * 2 for a config problem (an unknown user), 3 for a sandbox the kernel
 * or the runtime cannot put in force. check: for --check, which may run
 * unprivileged. */
int sandbox_prepare(struct sandbox *sb, const struct ward_config *cfg, int vm, int check);

/* The start failed before the agent was forked: removes the private
 * targets sandbox_prepare wrote. */
void sandbox_unwrite(struct sandbox *sb, const struct ward_config *cfg);

/* Prints what --check adds to the config: user, Landlock ABI, degradations. */
void sandbox_print(const struct sandbox *sb, const struct ward_config *cfg, FILE *out);

/* After the first start: PID 1 keeps only the capabilities supervision
 * needs and loads its own filter. Failures are logged, never fatal, and
 * recorded for the evidence (sb->ev), which is written after this. */
void sandbox_lock_pid1(struct sandbox *sb, const struct ward_config *cfg, int vm);

/* How the agent's egress is held: 0 by Landlock's ports alone, 1 the
 * guard as best effort, 2 the guard required ([landlock] mode). */
int sandbox_egress(const struct ward_config *cfg, int confining);

void sandbox_free(struct sandbox *sb);

#endif
