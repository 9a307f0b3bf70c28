#define _GNU_SOURCE
#include "init/supervise/ttyrelay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"

/* One descriptor's interest in the set: 0 to leave it out (still in the
 * set, as epoll keeps it), or the events. */
static void want(struct tty_relay *t, int fd, struct event_source *src, unsigned events)
{
	struct epoll_event ev = { .events = events, .data.ptr = src };

	(void)epoll_ctl(t->epfd, EPOLL_CTL_MOD, fd, &ev);
}

static void sources(struct tty_relay *t, int on)
{
	if (t->sources_polled == on)
		return;
	want(t, t->master, &t->on_master, on ? EPOLLIN : 0);
	want(t, t->logr, &t->on_log, on ? EPOLLIN : 0);
	t->sources_polled = on;
}

/* As much of buf as the terminal takes now; the rest waits for room (the
 * sources stop while it is full, so the agent's writes wait, not PID 1). */
static void flush_out(struct tty_relay *t)
{
	size_t off = 0;

	while (!t->held && off < t->n_buf) {
		ssize_t w = write(t->out, t->buf + off, t->n_buf - off);
		if (w > 0)
			off += (size_t)w;
		else if (w < 0 && errno == EINTR)
			continue;
		else if (w < 0 && errno == EAGAIN)
			break;
		else {
			off = t->n_buf; /* the terminal is gone: nothing more to show */
			break;
		}
	}
	memmove(t->buf, t->buf + off, t->n_buf - off);
	t->n_buf -= off;
	if (t->epfd >= 0) {
		int wait_room = !t->held && t->n_buf > 0;
		if (wait_room != t->out_polled) {
			want(t, t->out, &t->on_out, wait_room ? EPOLLOUT : 0);
			t->out_polled = wait_room;
		}
		sources(t, t->n_buf < TTY_BUF_MAX);
	}
}

/* A source's bytes into buf (the agent's output, or ward's log lines). */
static void take(struct tty_relay *t, int fd)
{
	ssize_t n;

	if (t->n_buf >= TTY_BUF_MAX) {
		sources(t, 0);
		return;
	}
	n = read(fd, t->buf + t->n_buf, TTY_BUF_MAX - t->n_buf);
	if (n > 0)
		t->n_buf += (size_t)n;
	flush_out(t);
}

static void on_master(void *arg)
{
	struct tty_relay *t = arg;

	take(t, t->master);
}

static void on_log(void *arg)
{
	struct tty_relay *t = arg;

	take(t, t->logr);
}

static void on_out(void *arg)
{
	flush_out(arg);
}

/* Keys that stop or interrupt the agent: theirs even while a question is
 * up, so a question cannot take the person's terminal from them. */
static int control_key(char c)
{
	return c == 0x03 || c == 0x1c || c == 0x1a;
}

/* The person typed: to the agent, or to the question while one is up. */
static void on_in(void *arg)
{
	struct tty_relay *t = arg;
	char buf[4096];
	ssize_t n = read(t->in, buf, sizeof buf);

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			/* the terminal hung up: no more keys (the agent's pty stays) */
			(void)epoll_ctl(t->epfd, EPOLL_CTL_DEL, t->in, NULL);
		}
		return;
	}
	if (t->held && !(n == 1 && control_key(buf[0]))) {
		if (t->on_key)
			t->on_key(t->key_arg, buf, (size_t)n);
		return;
	}
	/* a pty's input queue that is full drops what does not fit: the
	 * agent is not reading, and the person's keys are few */
	if (write(t->master, buf, (size_t)n) < 0 && errno != EAGAIN)
		log_debug("terminal relay: %s", strerror(errno));
}

/* The log into a pipe the relay reads, so its lines are held with the
 * agent's output while a question is up. 0, or -1 (the log stays). */
static int log_through(struct tty_relay *t)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	t->logr = p[0];
	t->log_saved = log_fd();
	log_to_fd(p[1]);
	/* the screen is the agent's: with a copy of the log kept, its
	 * information lines (an audit line per request) go there alone */
	log_screen_max(LOG_WARN);
	return 0;
}

int tty_relay_open(struct tty_relay *t)
{
	struct winsize ws = { 0 };
	struct termios raw;
	char name[64];

	memset(t, 0, sizeof *t);
	t->in = STDIN_FILENO;
	t->out = t->master = t->slave = t->epfd = t->logr = t->log_saved = -1;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return 0;
	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->master < 0 || grantpt(t->master) != 0 || unlockpt(t->master) != 0 ||
	    ptsname_r(t->master, name, sizeof name) != 0 ||
	    (t->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 ||
	    /* a description of its own: non-blocking without touching fd 1's */
	    (t->out = open("/proc/self/fd/1", O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		log_error("[proxy] ask = terminal: cannot open a pty for the agent: %s", strerror(errno));
		return -1;
	}
	t->buf = malloc(TTY_BUF_MAX);
	if (!t->buf) {
		log_error("out of memory");
		return -1;
	}
	/* the agent's terminal starts as the real one is: its modes and size */
	if (tcgetattr(t->in, &t->saved) == 0) {
		t->saved_ok = 1;
		(void)tcsetattr(t->slave, TCSANOW, &t->saved);
		raw = t->saved;
		cfmakeraw(&raw);
		/* ward's own lines (its log) still end a line on the screen */
		raw.c_oflag |= OPOST | ONLCR;
		(void)tcsetattr(t->in, TCSANOW, &raw);
	}
	if (ioctl(t->in, TIOCGWINSZ, &ws) == 0) {
		t->rows = ws.ws_row;
		t->cols = ws.ws_col;
		(void)ioctl(t->master, TIOCSWINSZ, &ws);
	}
	(void)fcntl(t->master, F_SETFL, fcntl(t->master, F_GETFL) | O_NONBLOCK);
	if (log_through(t) != 0)
		log_warn("[proxy] ask = terminal: pipe: %s: ward's own lines may cover a question", strerror(errno));
	t->active = 1;
	return 1;
}

int tty_relay_bind(struct tty_relay *t, int epfd)
{
	t->epfd = epfd;
	t->on_in = (struct event_source){ &t->in, on_in, t };
	t->on_master = (struct event_source){ &t->master, on_master, t };
	t->on_log = (struct event_source){ &t->logr, on_log, t };
	t->on_out = (struct event_source){ &t->out, on_out, t };
	if (event_add(epfd, &t->on_in) != 0 || event_add(epfd, &t->on_master) != 0 ||
	    (t->logr >= 0 && event_add(epfd, &t->on_log) != 0))
		return -1;
	/* out is in the set for EPOLLOUT only while it has no room */
	{
		struct epoll_event ev = { .events = 0, .data.ptr = &t->on_out };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, t->out, &ev) != 0)
			return -1;
	}
	t->sources_polled = 1;
	return 0;
}

void tty_relay_resize(struct tty_relay *t)
{
	struct winsize ws = { 0 };

	if (!t->active || ioctl(t->in, TIOCGWINSZ, &ws) != 0)
		return;
	t->rows = ws.ws_row;
	t->cols = ws.ws_col;
	/* a question's row stays the real terminal's last */
	if (t->held && ws.ws_row > 1)
		ws.ws_row--;
	(void)ioctl(t->master, TIOCSWINSZ, &ws);
}

void tty_relay_hold(struct tty_relay *t, int on)
{
	struct winsize ws = { 0 };

	if (!t->active || t->held == on)
		return;
	t->held = on;
	(void)ioctl(t->in, TIOCGWINSZ, &ws);
	t->rows = ws.ws_row;
	t->cols = ws.ws_col;
	if (on && ws.ws_row > 1)
		ws.ws_row--;
	/* down: what was held goes out, then the full size, whose change makes
	 * a TUI draw itself whole over the question's row */
	if (!on)
		flush_out(t);
	(void)ioctl(t->master, TIOCSWINSZ, &ws);
}

void tty_relay_write(struct tty_relay *t, const char *s, size_t n)
{
	uint64_t end = now_ms() + 1000;

	while (t->active && n) {
		ssize_t w = write(t->out, s, n);
		if (w > 0) {
			s += w;
			n -= (size_t)w;
		} else if (w < 0 && errno == EAGAIN && now_ms() < end) {
			struct pollfd p = { .fd = t->out, .events = POLLOUT };
			(void)poll(&p, 1, 100);
		} else if (!(w < 0 && errno == EINTR)) {
			return;
		}
	}
}

int tty_relay_fds(const struct tty_relay *t, int *fds, int max)
{
	const int all[] = { t->master, t->slave, t->out, t->logr, t->log_saved };
	int n = 0, i;

	for (i = 0; t->active && i < 5 && n < max; i++)
		if (all[i] >= 0)
			fds[n++] = all[i];
	return n;
}

void tty_relay_close(struct tty_relay *t)
{
	if (t->active) {
		/* the agent's last lines and ward's: what the pty and the log
		 * pipe still hold, then all of it out (a second at most) */
		t->held = 0;
		while (t->n_buf < TTY_BUF_MAX) {
			ssize_t n = read(t->master, t->buf + t->n_buf, TTY_BUF_MAX - t->n_buf);
			if (n <= 0)
				break;
			t->n_buf += (size_t)n;
		}
		while (t->logr >= 0 && t->n_buf < TTY_BUF_MAX) {
			ssize_t n = read(t->logr, t->buf + t->n_buf, TTY_BUF_MAX - t->n_buf);
			if (n <= 0)
				break;
			t->n_buf += (size_t)n;
		}
		tty_relay_write(t, t->buf, t->n_buf);
		t->n_buf = 0;
	}
	if (t->logr >= 0 && t->log_saved >= 0) {
		int pipe_w = log_fd();
		log_to_fd(t->log_saved);
		log_screen_max(LOG_DEBUG);
		close(pipe_w);
		t->log_saved = -1;
	}
	if (t->saved_ok)
		(void)tcsetattr(t->in, TCSANOW, &t->saved);
	t->saved_ok = 0;
	if (t->master >= 0)
		close(t->master);
	if (t->slave >= 0)
		close(t->slave);
	if (t->out >= 0)
		close(t->out);
	if (t->logr >= 0)
		close(t->logr);
	t->master = t->slave = t->out = t->logr = -1;
	free(t->buf);
	t->buf = NULL;
	t->active = 0;
}
