#define _GNU_SOURCE
#include "mcp-bridge/stream.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>

/* Each direction has one buffer of RESP_BUF: what was read and not yet
 * written stops further reads from that side (backpressure). */
int stream_alloc(struct conn *c)
{
	c->c2u = malloc(RESP_BUF);
	c->u2c = malloc(RESP_BUF);
	return c->c2u && c->u2c ? 0 : -1;
}

/* A failed side ends the stream: its why is the audit line's. */
static int failed(struct conn *c, const char *why)
{
	if (!c->req.why)
		c->req.why = why;
	return 1;
}

/* client -> buffer; 0, or 1 when the client failed */
static int read_client(struct conn *c)
{
	ssize_t n;

	if (c->client_eof || c->c2u_len == RESP_BUF)
		return 0;
	n = recv(c->cfd, c->c2u + c->c2u_len, RESP_BUF - c->c2u_len, 0);
	if (n == 0)
		c->client_eof = 1;
	else if (n > 0)
		c->c2u_len += (size_t)n, c->bytes_in += (uint64_t)n;
	else if (errno != EAGAIN && errno != EINTR)
		return failed(c, "client reset the connection");
	return 0;
}

/* upstream -> buffer, plain or TLS (whose decrypted bytes no socket
 * event announces: read on while it holds some and there is room) */
static int read_upstream(struct conn *c)
{
	while (!c->up_eof && c->u2c_len < RESP_BUF) {
		ssize_t n = conn_recv(c, c->u2c + c->u2c_len, RESP_BUF - c->u2c_len);
		if (n == 0 || n == -3) {
			/* -3: a TLS stream that just stopped; a stream has no
			 * framing to say whether that cut it, so it is an end */
			c->up_eof = 1;
		} else if (n == -1) {
			return 0;
		} else if (n < 0) {
			return failed(c, "upstream reset the connection");
		} else {
			c->u2c_len += (size_t)n;
			if (!c->tls || !tls_pending(c->tls))
				return 0;
		}
	}
	return 0;
}

/* buffer -> client */
static int write_client(struct conn *c)
{
	while (c->u2c_off < c->u2c_len) {
		ssize_t n = send(c->cfd, c->u2c + c->u2c_off, c->u2c_len - c->u2c_off, MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : failed(c, "client went away");
		c->u2c_off += (size_t)n;
		c->bytes_out += (uint64_t)n;
	}
	c->u2c_off = c->u2c_len = 0;
	return 0;
}

/* Each side's end, passed on once all it sent before is written: the
 * other side reads an end and may still answer (a half-close). */
static void pass_ends(struct conn *c)
{
	if (c->client_eof && !c->shut_up && c->c2u_len == 0) {
		if (c->tls)
			tls_close_notify(c->tls);
		(void)shutdown(c->ufd, SHUT_WR);
		c->shut_up = 1;
	}
	if (c->up_eof && !c->shut_client && c->u2c_len == 0) {
		(void)shutdown(c->cfd, SHUT_WR);
		c->shut_client = 1;
	}
}

int stream_event(struct conn *c, int upstream, unsigned ev)
{
	/* a client that reset or closed both ways reads nothing more */
	if (!upstream && (ev & EPOLLERR))
		return failed(c, "client reset the connection");
	if (upstream) {
		if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) || (c->tls && (ev & c->tls->want_rd)))
			if (read_upstream(c))
				return 1;
	} else if (ev & (EPOLLIN | EPOLLHUP)) {
		if (read_client(c))
			return 1;
	}
	/* whatever either buffer holds goes out now: the event that filled
	 * it is the only one that will tell */
	if (conn_flush(c) < 0)
		return failed(c, "upstream reset the connection");
	if (write_client(c))
		return 1;
	/* TLS: plaintext mbedTLS decrypted and kept back when the buffer
	 * was full; no socket event will announce it, so it is read as soon
	 * as there is room (each pass takes some of it: the loop ends) */
	while (c->tls && !c->up_eof && c->u2c_len < RESP_BUF && tls_pending(c->tls))
		if (read_upstream(c) || write_client(c))
			return 1;
	pass_ends(c);
	return c->shut_up && c->shut_client;
}
