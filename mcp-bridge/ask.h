/* ask: the egress proxy's questions to an approver outside the sandbox
 * ([proxy] ask), and what the answers allowed for the rest of the session.
 *
 * A CONNECT or http:// request to a name no allow rule matches is held
 * while the approver is asked: one question per HOST:PORT at a time (a
 * second request for it waits for the same answer), at most ask_rate new
 * ones a minute. The approver listens on a unix socket (or vsock) of the
 * host's, which the bridge connects to at the first question; it speaks
 * JSON lines (docs/approver.md):
 *
 *   bridge:   {"type":"hello","protocol":1,"timeout_s":60}
 *   bridge:   {"type":"question","id":1,"host":"docs.python.org","port":443,
 *              "kind":"connect","time":"2026-12-07T05:01:02Z","timeout_s":60,
 *              "pid":42,"command":"curl https://docs.python.org/"}
 *   approver: {"id":1,"answer":"session","scope":"*.python.org"}
 *   bridge:   {"type":"settled","id":1,"answer":"timeout"}   (no answer came)
 *
 * answer: once (the requests waiting now), session (the scope, a name or
 * *.SUFFIX that covers the host, allowed until the bridge ends), always
 * (the same here; the approver keeps it for the next start), deny (refused,
 * and not asked again this session). No answer in ask_timeout, no approver,
 * an approver gone or talking nonsense: refused (fail closed). Approval
 * widens names only: an address literal is never asked, and an approved
 * name's answers are judged as any name's (private, loopback refused).
 * Each question, once settled, is one audit line. */
#ifndef WARD_ASK_H
#define WARD_ASK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/who.h"
#include "mcp-bridge/allow.h"
#include "mcp-bridge/upstream.h"

#define ASK_MAX_OPEN 128    /* questions open at once */
#define ASK_SESSION_MAX 256 /* names a session's answers allowed, or denied */
#define ASK_LINE_MAX 4096   /* an answer's line, at most */
#define ASK_SEND_MS 1000    /* a connect to the approver, at most */
#define ASK_RETRY_MS 2000   /* after a failed connect, questions are refused this long without one */

struct ask_question {
	uint64_t id; /* 0: the slot is free */
	char host[UPSTREAM_NAME_MAX + 2];
	unsigned port;
	uint64_t asked, deadline;
	pid_t pid;		/* the process that made the first request (common/who.h), or 0 */
	char cmd[WHO_CMD_MAX];	/* its command line, printable */
};

/* A question that ended: the requests that waited on it go on or not. */
struct ask_settled {
	uint64_t id;
	int allowed;
	char why[1024]; /* when not: what was refused and what would allow it */
};

struct ask_denied {
	char host[UPSTREAM_NAME_MAX + 2];
	unsigned port;
};

struct asker {
	const struct upstream *approver;
	unsigned timeout_s, rate;
	int epfd;
	uint64_t tag; /* the approver's socket in the loop's epoll set */
	int fd;	      /* connected to the approver; -1: not */
	int fixed;    /* the approver is a descriptor given (ward at its terminal): never connected again */
	int who_fd;   /* PID 1's "who asked?" pair (common/who.h), or -1: questions name no process */
	uint64_t retry_at; /* a connect failed: none tried again before then (ASK_RETRY_MS) */
	char in[ASK_LINE_MAX];
	size_t in_len;
	uint64_t next_id;
	struct ask_question open[ASK_MAX_OPEN];
	struct ask_settled done[ASK_MAX_OPEN];
	int n_done;
	uint64_t *recent; /* when the last `rate` questions were asked (a ring) */
	unsigned recent_i;
	struct allow_rule allowed[ASK_SESSION_MAX];
	int n_allowed;
	struct ask_denied denied[ASK_SESSION_MAX];
	int n_denied;
};

enum ask_verdict { ASK_DENIED, ASK_ALLOWED, ASK_NEEDED };

/* Ready, nothing connected. 0, or -1 (out of memory). */
int asker_init(struct asker *a, const struct upstream *approver, unsigned timeout_s, unsigned rate, int epfd,
	       uint64_t tag);

/* The approver is fd alone (ask = terminal: PID 1's socket pair; -1 when
 * ward has no terminal): never connected to, never again once it closes.
 * 0, or -1 (epoll_ctl). */
int asker_given(struct asker *a, int fd);

/* What this session's answers say of host:port (a name, not an address):
 * allowed, denied (why says so), or a question is needed. */
enum ask_verdict asker_judge(const struct asker *a, const char *host, unsigned port, char *why, size_t size);

/* Asks about host:port (kind: "connect" or "http"), or joins the question
 * open for it: 0 with *id, or -1 with why (refused now: no approver, too
 * many questions). client: the request's connection, whose process a new
 * question names (PID 1 is asked, who_fd), or -1. */
int asker_ask(struct asker *a, const char *host, unsigned port, const char *kind, int client, uint64_t now,
	      uint64_t *id, char *why, size_t size);

/* The last request waiting on question id went away: the question is
 * settled (answer "gone", one audit line) and the approver told, so the
 * person is not asked about what no one waits for. */
void asker_cancel(struct asker *a, uint64_t id, uint64_t now);

/* The approver's socket is readable: its answers read, questions settled. */
void asker_readable(struct asker *a, uint64_t now);

/* Questions past their time settled as refusals. */
void asker_expire(struct asker *a, uint64_t now);

/* Milliseconds to the next question's deadline, or -1 with none open. */
int asker_wait_ms(const struct asker *a, uint64_t now);

/* The next settled question into *s: 1, or 0 when there is none. */
int asker_next(struct asker *a, struct ask_settled *s);

/* Everything let go (the bridge ends). */
void asker_free(struct asker *a);

#endif
