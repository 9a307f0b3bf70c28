#define _GNU_SOURCE
#include "init/supervise/asktty.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/who.h"

/* *.PARENT for host (docs.python.org: *.python.org), or "" when the
 * parent is a single label (*.org would be refused as too wide). */
static const char *parent_scope(const char *host, char *buf, size_t size)
{
	const char *dot = strchr(host, '.');

	buf[0] = '\0';
	if (dot && strchr(dot + 1, '.'))
		snprintf(buf, size, "*%s", dot);
	return buf;
}

/* The row's text for q in at most cols columns: the whole sentence, or a
 * short one, or the host's end alone ("...evil.example.com:443"): what a
 * name says is at its end, which is never cut. */
static void row_text(const struct asktty *a, const struct asktty_question *q, unsigned cols, char *text, size_t size)
{
	char parent[UPSTREAM_NAME_MAX + 2], hostport[UPSTREAM_NAME_MAX + 16];
	size_t hp;

	parent_scope(q->host, parent, sizeof parent);
	snprintf(hostport, sizeof hostport, "%s:%u", q->host, q->port);
	if (a->confirming)
		snprintf(text, size, " ward: allow %s always (later sessions too)? y yes, any other key: back ", hostport);
	else
		snprintf(text, size, " ward: allow %s (%s)? o once, s session,%s%s%s a always, d deny, x deny all ",
			 hostport, q->http ? "http" : "https", parent[0] ? " w " : "", parent, parent[0] ? " session," : "");
	/* who asked, as the bridge relays PID 1's answer (a bridge taken over
	 * could show another pid and 40 printable bytes: it decides nothing),
	 * where the row has room for it */
	if (!a->confirming && q->pid > 0) {
		char with[1024];
		int n = snprintf(with, sizeof with, " ward: allow %s (%s) for pid %d (%s)? o once, s session,%s%s%s a always, "
			 "d deny, x deny all ", hostport, q->http ? "http" : "https", q->pid, q->cmd, parent[0] ? " w " : "",
			 parent, parent[0] ? " session," : "");
		if (n > 0 && (size_t)n < sizeof with && (size_t)n < cols && (size_t)n < size) {
			memcpy(text, with, (size_t)n + 1);
			return;
		}
	}
	if (strlen(text) < cols)
		return;
	snprintf(text, size, a->confirming ? " ward: allow %s always? y/n " : " ward: allow %s? o s a d x ", hostport);
	if (strlen(text) < cols)
		return;
	hp = strlen(hostport);
	if (cols > 8 && hp > cols - 5)
		snprintf(text, size, " ...%s", hostport + hp - (cols - 5));
	else
		snprintf(text, size, " %s", hostport);
	text[cols > 1 ? cols - 1 : 1] = '\0';
}

/* The question on the real terminal's last row, cut to its width; the
 * input waiting now flushed, and keys ignored for a second (see asktty.h).
 * What the agent may have left set is put back first, after the cursor is
 * saved (DECSC keeps the agent's, DECRC gives them back): attributes,
 * insert mode, origin mode, the character set, the line's width; the
 * colours are given as RGB, which a palette the agent changed does not
 * reach; and a bell. */
static void draw(struct asktty *a)
{
	char line[1200], text[700];
	unsigned cols = a->tty->cols ? a->tty->cols : 80, rows = a->tty->rows ? (unsigned)a->tty->rows : 24u;
	int n;

	row_text(a, &a->q[0], cols, text, sizeof text);
	n = snprintf(line, sizeof line,
		     "\0337\033[0m\033[4l\033[?6l\033(B\017\033[%u;1H\033#5\033[2K"
		     "\033[1;38;2;0;0;0;48;2;255;215;0m%s\033[0m\a",
		     rows, text);
	if (n > 0)
		tty_relay_write(a->tty, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
	(void)tcflush(a->tty->in, TCIFLUSH);
	a->armed_at = now_ms() + ASKTTY_ARM_MS;
}

/* The question's row cleared and the cursor back where the agent left it. */
static void erase(struct asktty *a)
{
	char line[64];
	int n = snprintf(line, sizeof line, "\033[0m\033[%u;1H\033[2K\0338", a->tty->rows ? (unsigned)a->tty->rows : 24u);

	tty_relay_write(a->tty, line, (size_t)n);
}

/* q[i] leaves the queue; the next goes up, or the agent's screen comes back. */
static void drop(struct asktty *a, int i)
{
	int shown = i == 0;

	memmove(&a->q[i], &a->q[i + 1], (size_t)(a->n - i - 1) * sizeof a->q[0]);
	a->n--;
	if (!shown)
		return;
	a->confirming = 0;
	if (!a->tty->held)
		return; /* never drawn (after x, none is) */
	erase(a);
	if (a->n && !a->stopped) {
		draw(a);
		return;
	}
	if (!a->n)
		tty_relay_hold(a->tty, 0);
}

static void show_first(struct asktty *a)
{
	tty_relay_hold(a->tty, 1);
	draw(a);
}

static void answer(struct asktty *a, const char *word, const char *scope)
{
	const struct asktty_question *q = &a->q[0];
	json_t *j = scope ? json_pack("{s:I,s:s,s:s}", "id", (json_int_t)q->id, "answer", word, "scope", scope)
			  : json_pack("{s:I,s:s}", "id", (json_int_t)q->id, "answer", word);
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	if (s) {
		size_t n = strlen(s);
		s[n] = '\n';
		if (send(a->fd, s, n + 1, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)(n + 1))
			log_warn("[proxy] ask = terminal: the answer did not reach the bridge");
		free(s);
	}
	/* the next session starts with it allowed (ward-pi reads the file) */
	if (a->store >= 0 && strcmp(word, "always") == 0 && dprintf(a->store, "%s:%u\n", scope, q->port) < 0)
		log_warn("[proxy] ask_store: %s", strerror(errno));
	drop(a, 0);
}

/* x: this question and every one after denied, none drawn again. */
static void stop_asking(struct asktty *a)
{
	a->stopped = 1;
	while (a->n)
		answer(a, "deny", NULL);
}

/* A key while a question is up: one byte alone in its read, a second or
 * more after the question was drawn, or nothing. */
static void on_key(void *arg, const char *buf, size_t n)
{
	struct asktty *a = arg;
	char parent[UPSTREAM_NAME_MAX + 2];

	if (!a->n || n != 1 || now_ms() < a->armed_at)
		return;
	if (a->confirming) {
		a->confirming = 0;
		if (buf[0] == 'y' || buf[0] == 'Y') {
			answer(a, "always", a->q[0].host);
		} else {
			erase(a); /* the cursor back first: draw saves it again */
			draw(a);
		}
		return;
	}
	switch (buf[0]) {
	case 'o': case 'O':
		answer(a, "once", NULL);
		break;
	case 's': case 'S':
		answer(a, "session", a->q[0].host);
		break;
	case 'w': case 'W':
		if (parent_scope(a->q[0].host, parent, sizeof parent)[0])
			answer(a, "session", parent);
		break;
	case 'a': case 'A':
		a->confirming = 1;
		erase(a); /* the cursor back first: draw saves it again */
		draw(a);
		break;
	case 'd': case 'D': case 'n': case 'N':
		answer(a, "deny", NULL);
		break;
	case 'x': case 'X':
		stop_asking(a);
		break;
	default:
		break;
	}
}

/* The process the question names (pid, command), if it names one: the
 * command's start, printable ASCII alone (the bridge's line is read as the
 * agent's would be: the agent chose its command line). */
static void asking_process(json_t *j, struct asktty_question *q)
{
	json_t *pid = json_object_get(j, "pid"), *cmd = json_object_get(j, "command");
	size_t n;

	q->pid = 0;
	q->cmd[0] = '\0';
	if (!json_is_integer(pid) || json_integer_value(pid) <= 1 || json_integer_value(pid) > INT32_MAX ||
	    !json_is_string(cmd))
		return;
	q->pid = (int)json_integer_value(pid);
	n = json_string_length(cmd);
	memcpy(q->cmd, json_string_value(cmd), n < ASKTTY_CMD_SHOWN ? n : ASKTTY_CMD_SHOWN);
	who_printable(q->cmd, n < ASKTTY_CMD_SHOWN ? n : ASKTTY_CMD_SHOWN, sizeof q->cmd);
}

/* One line of the bridge's: a question queued (drawn if it is the first),
 * a settled one taken down. Anything else is dropped: the bridge talks to
 * the agent all day, and what it sends is checked as the agent's would be. */
static void take_line(struct asktty *a, const char *s, size_t len)
{
	json_t *j = json_loadb(s, len, JSON_REJECT_DUPLICATES, NULL), *id, *host, *port, *kind, *type;
	const char *h, *t;

	if (!j || !json_is_object(j) || !json_is_string(type = json_object_get(j, "type")) ||
	    !json_is_integer(id = json_object_get(j, "id")) || json_integer_value(id) <= 0) {
		json_decref(j);
		return;
	}
	t = json_string_value(type);
	if (strcmp(t, "settled") == 0) {
		int i;
		for (i = 0; i < a->n; i++)
			if (a->q[i].id == (uint64_t)json_integer_value(id)) {
				drop(a, i);
				break;
			}
	} else if (strcmp(t, "question") == 0 && json_is_string(host = json_object_get(j, "host")) &&
		   json_is_integer(port = json_object_get(j, "port")) && json_is_string(kind = json_object_get(j, "kind")) &&
		   json_integer_value(port) > 0 && json_integer_value(port) <= 65535 && a->n < ASKTTY_QUEUE &&
		   (h = json_string_value(host)) && strlen(h) <= UPSTREAM_NAME_MAX && upstream_name_ok(h, strlen(h))) {
		struct asktty_question *q = &a->q[a->n++];
		q->id = (uint64_t)json_integer_value(id);
		snprintf(q->host, sizeof q->host, "%s", h);
		q->port = (unsigned)json_integer_value(port);
		q->http = strcmp(json_string_value(kind), "http") == 0;
		asking_process(j, q);
		if (a->stopped)
			answer(a, "deny", NULL); /* x was pressed: nothing more is asked */
		else if (a->n == 1)
			show_first(a);
	}
	json_decref(j);
}

/* The bridge's end is gone (it died; a restart brings another): what it
 * asked is moot. */
static void detach(struct asktty *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	a->in_len = 0;
	if (a->n) {
		a->n = 1;
		drop(a, 0);
	}
}

static void on_bridge(void *arg)
{
	struct asktty *a = arg;
	ssize_t n = recv(a->fd, a->in + a->in_len, sizeof a->in - a->in_len, MSG_DONTWAIT);
	char *nl;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		detach(a);
		return;
	}
	a->in_len += (size_t)n;
	while ((nl = memchr(a->in, '\n', a->in_len))) {
		size_t len = (size_t)(nl - a->in);
		take_line(a, a->in, len);
		memmove(a->in, nl + 1, a->in_len - len - 1);
		a->in_len -= len + 1;
	}
	if (a->in_len == sizeof a->in)
		a->in_len = 0; /* no line is this long: dropped */
}

void asktty_init(struct asktty *a, struct tty_relay *tty, int epfd, int store)
{
	memset(a, 0, sizeof *a);
	a->tty = tty;
	a->epfd = epfd;
	a->fd = -1;
	a->store = store;
	a->src = (struct event_source){ &a->fd, on_bridge, a };
	tty->on_key = on_key;
	tty->key_arg = a;
}

void asktty_attach(struct asktty *a, int fd)
{
	detach(a);
	a->fd = fd;
	if (event_add(a->epfd, &a->src) != 0) {
		log_warn("[proxy] ask = terminal: epoll_ctl: %s", strerror(errno));
		detach(a);
	}
}

int asktty_fds(const struct asktty *a, int *fds, int max)
{
	int n = 0;

	if (a->fd >= 0 && n < max)
		fds[n++] = a->fd;
	if (a->store >= 0 && n < max)
		fds[n++] = a->store;
	return n;
}

void asktty_close(struct asktty *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	if (a->store >= 0)
		close(a->store);
	a->store = -1;
}
