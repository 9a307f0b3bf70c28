/* denials: with log_level = debug, the agent's Landlock denials as the
 * kernel audits them (Landlock ABI >= 7, audit on, ward in the initial
 * namespaces, e.g. a VM's init or a host): PID 1 reads the audit log's
 * multicast group and logs each denial of the agent's domain with the
 * rule that would allow it. Elsewhere (a container) ward --explain PATH
 * answers the same question. */
#ifndef WARD_DENIALS_H
#define WARD_DENIALS_H

#include <sys/types.h>

#define DENIALS_DOMAINS 8
#define DENIALS_PENDING 8

/* The counters first and the buffers after them: a ward that never reads
 * the log touches one page of this, not three (a plain init's footprint). */
struct denials {
	int fd;
	int n_domains, next_domain;
	int n_pending;
	char domains[DENIALS_DOMAINS][32]; /* the agent's domains (one per start), a ring */
	char pending[DENIALS_PENDING][1024]; /* denials of a domain not described yet */
};

void denials_init(struct denials *d);

/* As root, before dropping capabilities (reading the log takes
 * CAP_AUDIT_READ). Returns the descriptor to poll, or -1 (logged at debug). */
int denials_open(struct denials *d);

/* The descriptor is readable: log the denials of the domains created by
 * the agents ward started (their pids, the most recent ones). */
void denials_read(struct denials *d, const pid_t *agents, int n_agents);

/* One record's text (type 1423 or 1424): the parser, for tests. */
void denials_record(struct denials *d, int type, const char *rec, const pid_t *agents, int n_agents);

void denials_close(struct denials *d);

#endif
