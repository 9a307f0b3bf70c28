#define _GNU_SOURCE
#include "init/supervise/ttyrelay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/log.h"

/* All of buf to fd (a terminal: PID 1 waits as any writer to it would). */
static void write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the terminal is gone: nothing more to show */
		buf += w;
		n -= (size_t)w;
	}
}

static void master_poll(struct tty_relay *t, int on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.ptr = &t->on_master };

	if (t->master_polled == on)
		return;
	if (epoll_ctl(t->epfd, EPOLL_CTL_MOD, t->master, &ev) == 0)
		t->master_polled = on;
}

/* The agent wrote: to the real terminal, or held while a question is up
 * (until the hold is full: then the agent waits on its writes). */
static void on_master(void *arg)
{
	struct tty_relay *t = arg;
	char buf[16384];
	ssize_t n;

	if (t->held) {
		if (t->n_hold >= TTY_HOLD_MAX) {
			master_poll(t, 0);
			return;
		}
		n = read(t->master, t->hold + t->n_hold, TTY_HOLD_MAX - t->n_hold);
		if (n > 0)
			t->n_hold += (size_t)n;
		return;
	}
	n = read(t->master, buf, sizeof buf);
	if (n > 0)
		write_all(t->out, buf, (size_t)n);
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
	if (t->held) {
		if (t->on_key)
			t->on_key(t->key_arg, buf, (size_t)n);
		return;
	}
	/* a pty's input queue that is full drops what does not fit: the
	 * agent is not reading, and the person's keys are few */
	if (write(t->master, buf, (size_t)n) < 0 && errno != EAGAIN)
		log_debug("terminal relay: %s", strerror(errno));
}

int tty_relay_open(struct tty_relay *t)
{
	struct winsize ws = { 0 };
	struct termios raw;
	char name[64];

	memset(t, 0, sizeof *t);
	t->in = STDIN_FILENO;
	t->out = STDOUT_FILENO;
	t->master = t->slave = t->epfd = -1;
	if (!isatty(t->in) || !isatty(t->out))
		return 0;
	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->master < 0 || grantpt(t->master) != 0 || unlockpt(t->master) != 0 ||
	    ptsname_r(t->master, name, sizeof name) != 0 ||
	    (t->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		log_error("[proxy] ask = terminal: cannot open a pty for the agent: %s", strerror(errno));
		return -1;
	}
	t->hold = malloc(TTY_HOLD_MAX);
	if (!t->hold) {
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
	t->active = 1;
	return 1;
}

int tty_relay_bind(struct tty_relay *t, int epfd)
{
	t->epfd = epfd;
	t->on_in = (struct event_source){ &t->in, on_in, t };
	t->on_master = (struct event_source){ &t->master, on_master, t };
	if (event_add(epfd, &t->on_in) != 0 || event_add(epfd, &t->on_master) != 0)
		return -1;
	t->master_polled = 1;
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
	if (!on) {
		/* what the agent wrote meanwhile, then its full size: the
		 * change makes a TUI draw itself whole, over the question's row */
		write_all(t->out, t->hold, t->n_hold);
		t->n_hold = 0;
		master_poll(t, 1);
	} else if (ws.ws_row > 1) {
		ws.ws_row--;
	}
	(void)ioctl(t->master, TIOCSWINSZ, &ws);
}

void tty_relay_write(struct tty_relay *t, const char *s, size_t n)
{
	if (t->active)
		write_all(t->out, s, n);
}

int tty_relay_fds(const struct tty_relay *t, int *fds, int max)
{
	int n = 0;

	if (t->active && n < max)
		fds[n++] = t->master;
	if (t->active && n < max)
		fds[n++] = t->slave;
	return n;
}

void tty_relay_close(struct tty_relay *t)
{
	if (t->saved_ok)
		(void)tcsetattr(t->in, TCSANOW, &t->saved);
	t->saved_ok = 0;
	if (t->master >= 0)
		close(t->master);
	if (t->slave >= 0)
		close(t->slave);
	t->master = t->slave = -1;
	free(t->hold);
	t->hold = NULL;
	t->active = 0;
}
