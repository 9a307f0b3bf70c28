/* ttyrelay: the agent's terminal is a pty of PID 1's, relayed to and from
 * PID 1's own ([proxy] ask = terminal). The agent gets the pty's far side
 * as its controlling terminal and fds 0-2; PID 1 copies the real
 * terminal's keys to it and its output to the real terminal. So PID 1
 * owns a line of the real screen the agent cannot write to, and reads keys
 * the agent cannot send: what it writes to its own terminal reaches PID 1
 * as output, never as input, and its TIOCSTI (where the kernel still has
 * it) pushes into its own pty. While a question is up (asktty.h) the
 * agent's output is held and the keys go to the question instead (but
 * Ctrl-C, Ctrl-\ and Ctrl-Z, which still reach the agent).
 *
 * ward's own log lines (PID 1's and the bridge's) come through the relay
 * too, from a pipe: held with the agent's while a question is up, so no
 * line scrolls the question away. Output goes to the real terminal by a
 * private non-blocking descriptor and a buffer: a terminal that stops
 * reading stops the agent's output (its writes wait), never PID 1.
 *
 * The real terminal is put in raw mode for the relay (the agent's pty
 * does the line discipline the agent asks for) and back as it was at the
 * end. A resize of the real terminal (SIGWINCH to PID 1) is passed on as
 * the pty's size, which signals the agent's foreground group. */
#ifndef WARD_TTYRELAY_H
#define WARD_TTYRELAY_H

#include <stddef.h>
#include <termios.h>

#include "init/supervise/events.h"

#define TTY_BUF_MAX ((size_t)256 * 1024) /* output not yet on the terminal (held, or waiting for room) */

struct tty_relay {
	int active;
	int in;		   /* the real terminal's keys: PID 1's 0 */
	int out;	   /* the real terminal, a private non-blocking descriptor of PID 1's 1 */
	int master, slave; /* the agent's pty; slave is each agent start's terminal */
	int logr;	   /* ward's log lines, the read end of the pipe the log writes to */
	int log_saved;	   /* where the log went before (put back at the end) */
	struct termios saved;
	int saved_ok;
	int epfd;
	int held;	   /* a question is up: output held, keys to on_key */
	char *buf;	   /* output for the real terminal, in order */
	size_t n_buf;
	int sources_polled; /* master and logr in the epoll set (out of it while buf is full) */
	int out_polled;	    /* out in the set, for room (EPOLLOUT) */
	unsigned short rows, cols;
	void (*on_key)(void *arg, const char *buf, size_t n);
	void *key_arg;
	struct event_source on_in, on_master, on_log, on_out;
};

/* Opens the pty when fds 0 and 1 are a terminal, its size and modes the
 * real one's, puts the real one in raw mode and the log through the
 * relay: 1 (relaying), 0 (no terminal: nothing to do), -1 (failed,
 * logged). Before the agent and the bridge. */
int tty_relay_open(struct tty_relay *t);

/* Its descriptors into the loop's epoll set. 0 or -1. */
int tty_relay_bind(struct tty_relay *t, int epfd);

/* The real terminal's size passed on to the pty (SIGWINCH). */
void tty_relay_resize(struct tty_relay *t);

/* A question goes up (1: the agent's output and ward's log held, keys to
 * on_key; the pty a row shorter, so the agent draws above the question's
 * row) or down (0: the held output sent, the pty's size back, which makes
 * a TUI draw itself whole). */
void tty_relay_hold(struct tty_relay *t, int on);

/* PID 1's own bytes (the question's row) to the real terminal, now,
 * ahead of what is held: waits up to a second for room. */
void tty_relay_write(struct tty_relay *t, const char *s, size_t n);

/* Its descriptors, for the list PID 1 keeps. */
int tty_relay_fds(const struct tty_relay *t, int *fds, int max);

/* What is left sent (a second at most), the log back where it went, the
 * real terminal back in the modes it had. */
void tty_relay_close(struct tty_relay *t);

#endif
