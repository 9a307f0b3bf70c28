/* refusals: what PID 1 says when the guard refuses the agent a
 * destination. One warning line in ward's log (at most REFUSALS_LOG_BURST
 * per REFUSALS_WINDOW_MS, the rest counted), and one line in the agent's
 * own file ([agent] refusals), which the agent may read but not write, so
 * that it can tell why its connect failed and what the person could allow
 * instead of retrying: when, what was refused, the rule, the setting that
 * would allow it. Never a secret: the destination the agent itself named,
 * its own process, the rule. The file takes at most REFUSALS_FILE_BURST
 * lines per window and REFUSALS_FILE_MAX bytes in all; what is left out
 * is counted on the next line written. */
#ifndef WARD_REFUSALS_H
#define WARD_REFUSALS_H

#include <stdint.h>
#include <sys/types.h>

#define REFUSALS_WINDOW_MS 10000
#define REFUSALS_LOG_BURST 10
#define REFUSALS_FILE_BURST 200
#define REFUSALS_FILE_MAX (1u << 20)

struct refusals {
	int fd;			/* the agent's file, opened for appending, or -1 */
	uint64_t window;	/* the current window began (ms) */
	unsigned log_n, file_n; /* lines in this window */
	unsigned long log_dropped, file_dropped;
	unsigned long file_bytes;
};

/* One refused destination. */
struct refusal {
	const char *call;	 /* "connect", "fast open" */
	int family;		 /* AF_INET or AF_INET6 (a v4-mapped address as AF_INET) */
	unsigned char addr[16];	 /* network order */
	unsigned port;
	int err;		 /* the errno answered */
	pid_t pid;		 /* the caller, in ward's pid namespace */
};

void refusals_init(struct refusals *r);

/* Said once: in the log and, when open, the agent's file. */
void refusals_note(struct refusals *r, const struct refusal *f, uint64_t now);

/* The counts of a window that is over, in the log. */
void refusals_tick(struct refusals *r, uint64_t now);

/* The agent's line for f, without its time and newline (for tests). */
int refusals_format(char *buf, size_t size, const struct refusal *f, const char *comm);

void refusals_free(struct refusals *r);

#endif
