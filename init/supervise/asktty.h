/* asktty: PID 1 as the proxy's approver at its own terminal ([proxy] ask
 * = terminal). The bridge asks over a socket pair PID 1 made for it
 * (ask.h's JSON lines: nothing the agent can open); each question is drawn
 * on the real terminal's last row, which the agent's pty does not reach
 * while it is up (ttyrelay.h), and answered by one key the person types:
 *
 *   o once   s this session   w *.PARENT this session   a always (then y)
 *   d deny   x deny, and ask nothing more this session
 *
 * A key counts only when it came alone in one read, a second or more
 * after the question was drawn (the input waiting then was flushed): a
 * terminal's answer to a query (a cursor report, a title) comes as an
 * escape sequence of several bytes, and a key the person was typing for
 * the agent when the question came up (the agent sees the typing, and may
 * time its question) falls in that second. The row is drawn with every
 * attribute the agent could have left set put back (colours of its own,
 * no hidden text, no other character set), the host's end shown whole.
 * One question at a time, the rest queued (ASKTTY_QUEUE); a question the
 * bridge settled (its time ran out) is taken down.
 * `always` is also appended to [proxy] ask_store, one HOST:PORT or
 * *.SUFFIX:PORT a line, for whoever starts the next session (ward-pi). */
#ifndef WARD_ASKTTY_H
#define WARD_ASKTTY_H

#include <stdint.h>

#include "init/supervise/events.h"
#include "init/supervise/ttyrelay.h"
#include "mcp-bridge/upstream.h"

#define ASKTTY_QUEUE 128 /* as many as the bridge has open (ask.h) */
#define ASKTTY_ARM_MS 1000 /* keys after a question is drawn that count for nothing */
#define ASKTTY_CMD_SHOWN 40 /* of the asking process's command line, at most */

struct asktty_question {
	uint64_t id;
	char host[UPSTREAM_NAME_MAX + 1];
	unsigned port;
	int http; /* a plain http:// request, not a tunnel */
	int pid;  /* the agent's process that asked (common/who.h), or 0 */
	char cmd[ASKTTY_CMD_SHOWN + 1]; /* its command line's start, printable */
};

struct asktty {
	struct tty_relay *tty;
	int fd; /* PID 1's end of the bridge's socket pair; -1: none */
	int epfd;
	int store; /* ask_store, appended to; -1: none */
	char in[4096];
	size_t in_len;
	struct asktty_question q[ASKTTY_QUEUE]; /* q[0] is on the screen */
	int n;
	uint64_t armed_at; /* keys count from then on */
	int confirming;	   /* `a` pressed: always needs a `y` */
	int stopped;	   /* `x` pressed: every question is denied, none drawn */
	struct event_source src;
};

/* Ready to take a bridge's socket, drawing on tty; store: an open
 * ask_store or -1. */
void asktty_init(struct asktty *a, struct tty_relay *tty, int epfd, int store);

/* A (re)started bridge's socket: the last one's questions are gone with
 * it. fd is taken (closed here when replaced or at the end). */
void asktty_attach(struct asktty *a, int fd);

/* Its descriptors, for the list PID 1 keeps. */
int asktty_fds(const struct asktty *a, int *fds, int max);

void asktty_close(struct asktty *a);

#endif
