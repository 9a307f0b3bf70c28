#define _GNU_SOURCE
#include "mcp-bridge/ask.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "mcp-bridge/who.h"

/* What the person outside can set to let host:port through without a
 * question, for a refusal's words. */
static const char *how_to_allow(const char *host, unsigned port, char *buf, size_t size)
{
	if (port == 443)
		snprintf(buf, size, "allow = %s in [proxy] (ward-pi --allow %s) lets it through without asking", host,
			 host);
	else
		snprintf(buf, size, "allow = %s:%u in [proxy] (ward-pi --allow %s:%u) lets it through without asking",
			 host, port, host, port);
	return buf;
}

int asker_init(struct asker *a, const struct upstream *approver, unsigned timeout_s, unsigned rate, int epfd,
	       uint64_t tag)
{
	memset(a, 0, sizeof *a);
	a->approver = approver;
	a->timeout_s = timeout_s;
	a->rate = rate;
	a->epfd = epfd;
	a->tag = tag;
	a->fd = a->who_fd = -1;
	a->next_id = 1;
	a->recent = calloc(rate ? rate : 1, sizeof *a->recent);
	return a->recent ? 0 : -1;
}

void asker_free(struct asker *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	free(a->recent);
	a->recent = NULL;
}

enum ask_verdict asker_judge(const struct asker *a, const char *host, unsigned port, char *why, size_t size)
{
	char how[600];
	int i;

	for (i = 0; i < a->n_denied; i++)
		if (a->denied[i].port == port && strcmp(a->denied[i].host, host) == 0) {
			snprintf(why, size, "%s:%u refused: the person denied it when asked ([proxy] ask); it is not "
				 "asked again this session; %s", host, port, how_to_allow(host, port, how, sizeof how));
			return ASK_DENIED;
		}
	return allow_match(a->allowed, a->n_allowed, host, port) ? ASK_ALLOWED : ASK_NEEDED;
}

/* One line to the approver, whole or not at all (a line is small, and a
 * socket's buffer empty unless the approver stopped reading). */
static int send_line(struct asker *a, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t n;
	ssize_t w;

	json_decref(msg);
	if (!s)
		return -1;
	n = strlen(s);
	s[n] = '\n'; /* json_dumps's NUL, replaced: the line is sent without one */
	w = send(a->fd, s, n + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	free(s);
	return w == (ssize_t)(n + 1) ? 0 : -1;
}

/* A question ended: its audit line, and its waiters' verdict queued. */
/* The command line as the audit line shows it: letters, digits and
 * " ._/-" only, the rest '_'. The agent chose it, and a log line is read
 * back by `ward --denials`: no '=', ':' or quote of its can pass for a
 * field of ward's. */
static void log_safe(const char *cmd, char *out, size_t size)
{
	size_t i;

	for (i = 0; cmd[i] && i + 1 < size; i++)
		out[i] = isalnum((unsigned char)cmd[i]) || strchr(" ._/-", cmd[i]) ? cmd[i] : '_';
	out[i] = '\0';
}

static void settle(struct asker *a, struct ask_question *q, int allowed, const char *answer, const char *scope,
		   const char *why, uint64_t now)
{
	char by[WHO_CMD_MAX + 40] = "", cmd[WHO_CMD_MAX];

	if (q->pid > 0) {
		log_safe(q->cmd, cmd, sizeof cmd);
		snprintf(by, sizeof by, " pid=%d cmd=\"%s\"", (int)q->pid, cmd);
	}
	log_info("bridge: route=proxy ask=%s:%u id=%llu answer=%s%s%s ms=%llu%s%s%s", q->host, q->port,
		 (unsigned long long)q->id, answer, scope ? " scope=" : "", scope ? scope : "",
		 (unsigned long long)(now - q->asked), by, why && !allowed ? " reason=" : "", why && !allowed ? why : "");
	if (a->n_done < ASK_MAX_OPEN) {
		struct ask_settled *s = &a->done[a->n_done++];
		s->id = q->id;
		s->allowed = allowed;
		snprintf(s->why, sizeof s->why, "%s", why ? why : "");
	}
	q->id = 0;
}

/* The approver is gone (or broke the protocol): every open question is a
 * refusal saying so, and the next question connects again. */
static void approver_gone(struct asker *a, const char *what, uint64_t now)
{
	char why[1024], how[600];
	int i;

	if (a->fd >= 0) {
		close(a->fd); /* out of the epoll set with it */
		a->fd = -1;
		log_warn("bridge: proxy: the approver %s: %s", a->approver->desc, what);
	}
	a->in_len = 0;
	for (i = 0; i < ASK_MAX_OPEN; i++) {
		struct ask_question *q = &a->open[i];
		if (!q->id)
			continue;
		snprintf(why, sizeof why, "%s:%u refused: the approver outside the sandbox %s before it answered; %s",
			 q->host, q->port, what, how_to_allow(q->host, q->port, how, sizeof how));
		settle(a, q, 0, "none", NULL, why, now);
	}
}

/* The hello, first of all on a new connection. */
static int hello(struct asker *a)
{
	return send_line(a, json_pack("{s:s,s:i,s:i}", "type", "hello", "protocol", 1, "timeout_s", (int)a->timeout_s));
}

int asker_given(struct asker *a, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = a->tag };

	a->fixed = 1;
	a->fd = fd;
	if (fd < 0)
		return 0;
	if (epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
		return -1;
	(void)hello(a);
	return 0;
}

/* Connected to the approver (at the first question, or again after it
 * went): 0, or -1 with errno. A unix socket's connect is immediate; one
 * over vsock has ASK_SEND_MS. */
static int approver_connect(struct asker *a)
{
	const struct upstream *u = a->approver;
	struct timeval tv = { .tv_sec = ASK_SEND_MS / 1000, .tv_usec = (suseconds_t)(ASK_SEND_MS % 1000) * 1000 };
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = a->tag };
	int fd = socket(u->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), e;

	if (fd < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (const struct sockaddr *)&u->addr, u->len) != 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0 || epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	a->fd = fd;
	a->in_len = 0;
	if (hello(a) != 0) {
		e = errno;
		close(fd);
		a->fd = -1;
		errno = e ? e : EPIPE;
		return -1;
	}
	return 0;
}

/* The question's line to the approver: with the process that asked, when
 * PID 1 named one. */
static json_t *question_line(const struct asker *a, const struct ask_question *q, const char *kind, const char *when)
{
	json_t *j = json_pack("{s:s,s:I,s:s,s:i,s:s,s:s,s:i}", "type", "question", "id", (json_int_t)q->id, "host",
			      q->host, "port", (int)q->port, "kind", kind, "time", when, "timeout_s", (int)a->timeout_s);

	if (j && q->pid > 0) {
		json_object_set_new(j, "pid", json_integer(q->pid));
		json_object_set_new(j, "command", json_string(q->cmd)); /* printable ASCII: valid UTF-8 */
	}
	return j;
}

/* The process behind client, asked of PID 1 (common/who.h): q->pid 0 when
 * none is named. */
static void who_asked(const struct asker *a, int client, struct ask_question *q)
{
	struct who_ans w;

	q->pid = 0;
	q->cmd[0] = '\0';
	if (a->who_fd < 0 || client < 0 || who_ask(a->who_fd, client, &w) != 0 || w.pid <= 0)
		return;
	q->pid = w.pid;
	snprintf(q->cmd, sizeof q->cmd, "%s", w.cmd);
}

int asker_ask(struct asker *a, const char *host, unsigned port, const char *kind, int client, uint64_t now,
	      uint64_t *id, char *why, size_t size)
{
	struct ask_question *q = NULL;
	char how[600], when[32];
	struct tm tm;
	time_t t = time(NULL);
	int i;

	/* one question per HOST:PORT at a time: the next request waits for
	 * the same answer */
	for (i = 0; i < ASK_MAX_OPEN; i++)
		if (a->open[i].id && a->open[i].port == port && strcmp(a->open[i].host, host) == 0) {
			*id = a->open[i].id;
			return 0;
		}
	/* the oldest of the last `rate` questions less than a minute ago:
	 * an agent that makes the proxy ask in a loop floods nobody */
	if (a->recent[a->recent_i] && now - a->recent[a->recent_i] < 60000) {
		snprintf(why, size, "%s:%u refused: %u questions to the person in the last minute already "
			 "([proxy] ask_rate); %s", host, port, a->rate, how_to_allow(host, port, how, sizeof how));
		return -1;
	}
	for (i = 0; i < ASK_MAX_OPEN && !q; i++)
		if (!a->open[i].id)
			q = &a->open[i];
	if (!q) {
		snprintf(why, size, "%s:%u refused: %d questions to the person are open already; %s", host, port,
			 ASK_MAX_OPEN, how_to_allow(host, port, how, sizeof how));
		return -1;
	}
	if (a->fd < 0 && a->fixed) {
		snprintf(why, size, "%s:%u refused: no one to ask ([proxy] ask = terminal, and ward has no terminal, "
			 "or its end is gone); %s", host, port, how_to_allow(host, port, how, sizeof how));
		return -1;
	}
	if (a->fd < 0 && now < a->retry_at) {
		snprintf(why, size, "%s:%u refused: no approver to ask ([proxy] ask = %s could not be reached a moment "
			 "ago); %s", host, port, a->approver->desc, how_to_allow(host, port, how, sizeof how));
		return -1;
	}
	if (a->fd < 0 && approver_connect(a) != 0) {
		/* a connect may wait (vsock): counted as a question, and none
		 * tried again for a while */
		a->retry_at = now + ASK_RETRY_MS;
		a->recent[a->recent_i] = now;
		a->recent_i = (a->recent_i + 1) % a->rate;
		snprintf(why, size, "%s:%u refused: no approver to ask ([proxy] ask = %s: %s); %s", host, port,
			 a->approver->desc, strerror(errno), how_to_allow(host, port, how, sizeof how));
		return -1;
	}
	q->id = a->next_id++;
	snprintf(q->host, sizeof q->host, "%s", host);
	q->port = port;
	q->asked = now;
	q->deadline = now + (uint64_t)a->timeout_s * 1000;
	who_asked(a, client, q);
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (send_line(a, question_line(a, q, kind, when)) != 0) {
		q->id = 0;
		approver_gone(a, "stopped reading its questions", now);
		snprintf(why, size, "%s:%u refused: the approver (%s) did not take the question; %s", host, port,
			 a->approver->desc, how_to_allow(host, port, how, sizeof how));
		return -1;
	}
	a->recent[a->recent_i] = now;
	a->recent_i = (a->recent_i + 1) % a->rate;
	*id = q->id;
	return 0;
}

static struct ask_question *open_question(struct asker *a, json_int_t id)
{
	int i;

	for (i = 0; id > 0 && i < ASK_MAX_OPEN; i++)
		if (a->open[i].id == (uint64_t)id)
			return &a->open[i];
	return NULL;
}

/* session and always: the scope (the host when none is said), a name or
 * *.SUFFIX on the question's port that covers the host, kept for the
 * session. 0, or -1 when it does not cover it. */
static int remember(struct asker *a, const struct ask_question *q, const char *scope)
{
	struct allow_rule r;
	char text[UPSTREAM_NAME_MAX + 16];
	const char *why;

	if (strchr(scope, ':'))
		return -1; /* a port of its own: the question's is the one approved */
	snprintf(text, sizeof text, "%s:%u", scope, q->port);
	if (allow_parse(text, strlen(text), &r, &why) != 0 || r.kind == ALLOW_NET || !allow_match(&r, 1, q->host, q->port))
		return -1;
	if (a->n_allowed < ASK_SESSION_MAX && !allow_match(a->allowed, a->n_allowed, q->host, q->port))
		a->allowed[a->n_allowed++] = r;
	return 0;
}

/* One answer's line. 0, or -1 when it is not an answer (the approver is
 * then taken for broken). */
static int answer_line(struct asker *a, const char *line, size_t len, uint64_t now)
{
	json_error_t err;
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err), *jid, *jans, *jscope;
	struct ask_question *q;
	const char *ans, *scope = NULL;
	char why[1024], how[600];

	if (!j || !json_is_object(j) || !json_is_integer(jid = json_object_get(j, "id")) ||
	    !json_is_string(jans = json_object_get(j, "answer")) ||
	    ((jscope = json_object_get(j, "scope")) && !json_is_string(jscope))) {
		json_decref(j);
		return -1;
	}
	ans = json_string_value(jans);
	scope = jscope ? json_string_value(jscope) : NULL;
	q = open_question(a, json_integer_value(jid));
	if (!q) {
		/* settled already (its time ran out) or never asked */
		log_warn("bridge: proxy: the approver answered question %lld, which is not open",
			 (long long)json_integer_value(jid));
		json_decref(j);
		return 0;
	}
	if (strcmp(ans, "once") == 0) {
		settle(a, q, 1, "once", NULL, NULL, now);
	} else if (strcmp(ans, "session") == 0 || strcmp(ans, "always") == 0) {
		char host[UPSTREAM_NAME_MAX + 2];
		snprintf(host, sizeof host, "%s", q->host);
		if (remember(a, q, scope ? scope : host) == 0) {
			settle(a, q, 1, ans, scope ? scope : host, NULL, now);
		} else {
			snprintf(why, sizeof why, "%s:%u refused: the approver's scope (%.100s) does not cover it; %s",
				 q->host, q->port, scope, how_to_allow(q->host, q->port, how, sizeof how));
			settle(a, q, 0, "bad-scope", NULL, why, now);
		}
	} else if (strcmp(ans, "deny") == 0) {
		if (a->n_denied < ASK_SESSION_MAX) {
			memcpy(a->denied[a->n_denied].host, q->host, sizeof q->host); /* same size */
			a->denied[a->n_denied++].port = q->port;
		}
		snprintf(why, sizeof why, "%s:%u refused: the person denied it when asked ([proxy] ask); it is not "
			 "asked again this session; %s", q->host, q->port, how_to_allow(q->host, q->port, how, sizeof how));
		settle(a, q, 0, "deny", NULL, why, now);
	} else {
		json_decref(j);
		return -1;
	}
	json_decref(j);
	return 0;
}

void asker_readable(struct asker *a, uint64_t now)
{
	for (;;) {
		ssize_t n;
		char *nl;

		if (a->fd < 0)
			return;
		n = recv(a->fd, a->in + a->in_len, sizeof a->in - a->in_len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			approver_gone(a, n == 0 ? "closed its connection" : "reset its connection", now);
			return;
		}
		a->in_len += (size_t)n;
		while ((nl = memchr(a->in, '\n', a->in_len))) {
			size_t len = (size_t)(nl - a->in);
			if (answer_line(a, a->in, len, now) != 0) {
				approver_gone(a, "sent a line that is not an answer (docs/approver.md)", now);
				return;
			}
			memmove(a->in, nl + 1, a->in_len - len - 1);
			a->in_len -= len + 1;
		}
		if (a->in_len == sizeof a->in) {
			approver_gone(a, "sent a line longer than 4096 bytes", now);
			return;
		}
	}
}

void asker_expire(struct asker *a, uint64_t now)
{
	char why[1024], how[600];
	int i;

	for (i = 0; i < ASK_MAX_OPEN; i++) {
		struct ask_question *q = &a->open[i];
		uint64_t id = q->id;
		if (!id || now < q->deadline)
			continue;
		snprintf(why, sizeof why, "%s:%u refused: no answer from the person in %u s ([proxy] ask_timeout); %s",
			 q->host, q->port, a->timeout_s, how_to_allow(q->host, q->port, how, sizeof how));
		settle(a, q, 0, "timeout", NULL, why, now);
		/* the approver may take its question down */
		if (a->fd >= 0 && send_line(a, json_pack("{s:s,s:I,s:s}", "type", "settled", "id", (json_int_t)id, "answer",
						       "timeout")) != 0)
			approver_gone(a, "stopped reading", now);
	}
}

void asker_cancel(struct asker *a, uint64_t id, uint64_t now)
{
	struct ask_question *q = open_question(a, (json_int_t)id);
	int queued = a->n_done;

	if (!q)
		return;
	settle(a, q, 0, "gone", NULL, "the client went away while the person was asked", now);
	/* nothing waits for its verdict: taken off the queue again */
	if (a->n_done > queued)
		a->n_done--;
	if (a->fd >= 0 && send_line(a, json_pack("{s:s,s:I,s:s}", "type", "settled", "id", (json_int_t)id, "answer",
					       "gone")) != 0)
		approver_gone(a, "stopped reading", now);
}

int asker_wait_ms(const struct asker *a, uint64_t now)
{
	uint64_t next = 0;
	int i;

	for (i = 0; i < ASK_MAX_OPEN; i++)
		if (a->open[i].id && (!next || a->open[i].deadline < next))
			next = a->open[i].deadline;
	if (!next)
		return -1;
	return next <= now ? 0 : next - now > 60000 ? 60000 : (int)(next - now);
}

int asker_next(struct asker *a, struct ask_settled *s)
{
	if (!a->n_done)
		return 0;
	*s = a->done[0];
	memmove(a->done, a->done + 1, (size_t)(a->n_done - 1) * sizeof *a->done);
	a->n_done--;
	return 1;
}
