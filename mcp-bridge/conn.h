/* conn: one client connection of the bridge and its upstream, the loop
 * that holds them, and the primitives the loop (bridge.c) builds on: I/O
 * to the upstream, plain or TLS; what each side is polled for; the audit
 * line. Private to mcp-bridge/; nothing here decides what is relayed. */
#ifndef WARD_CONN_H
#define WARD_CONN_H

#include <stdint.h>
#include <sys/types.h>

#include "mcp-bridge/resolve.h"
#include "mcp-bridge/respend.h"
#include "mcp-bridge/route.h"

/* Relay buffers, allocated with the first request. Request heads, chunked
 * and small bodies go through user space (their framing is checked); a
 * Content-Length body of SPLICE_MIN or more is spliced, client -> pipe ->
 * upstream, kernel to kernel (its length is all that frames it).
 * Responses are copied through a buffer of RESP_BUF, grown to BULK_BUF for
 * a bulk body (past BULK_AFTER bytes, and a read filled the buffer: the
 * upstream sends faster than it is taken; SSE events never do), for at
 * most BULK_MAX connections at once. Splicing responses was measured
 * slower: a splice into a TCP socket sends the pipe's pages as 4 KiB
 * fragments, which cost more than a copy into the socket's own 32 KiB ones
 * (1 GiB from a unix upstream, kernel 6.18: the bridge 0.41 s of CPU
 * spliced, 0.29 s copied; the client reading it 0.22 s against 0.12 s). */
#define REQ_BUF ((size_t)256 * 1024)
#define RESP_BUF ((size_t)64 * 1024)
/* the response buffer's first size: what is read (RESP_BUF) plus room for
 * the rewritten head to be longer than the upstream's */
#define RESP_CAP (RESP_BUF + HTTP_MAX_HEAD + 64)
#define BULK_BUF ((size_t)256 * 1024)
#define BULK_MAX 64
#define BULK_AFTER ((uint64_t)1024 * 1024)
#define PIPE_BIG ((size_t)1024 * 1024)
#define SPLICE_MIN ((uint64_t)64 * 1024)
/* a judged route's request body (tools.h), as sent and decoded: at most
 * this much (the rewritten head and it stay in c2u whole), or 413 */
#define JUDGED_BODY_MAX (REQ_BUF - HTTP_MAX_HEAD - 1024)
/* C_RESOLVING: waiting for a lookup of the upstream's name (dial.h).
 * C_STREAM: a stream route's connection, its upstream ready (stream.c).
 * C_RETRY: a unix upstream's backlog was full (connect: EAGAIN); tried
 * again every RETRY_MS, up to RETRY_MAX times, then 502. C_ABORT: a cut
 * answer, relayed; the client is reset once it has been sent all of it. */
/* C_HELLO: a proxy tunnel told 200, its client's TLS ClientHello awaited
 * (tunnel.h). */
/* C_CRED: its head is in, waiting for its route's credential (refresh.h).
 * C_ASK: a proxy request whose host no rule allows, held while the person
 * is asked (ask.h). */
/* C_BODY: a judged route's request (tools.h) read whole before anything
 * of it is sent. */
enum conn_state { C_HEAD, C_BODY, C_CRED, C_ASK, C_RESOLVING, C_RETRY, C_CONNECTING, C_HANDSHAKE, C_RELAY, C_DRAIN, C_ABORT, C_STREAM, C_HELLO };
#define RETRY_MS 10
#define RETRY_MAX 200
#define ACCEPT_PAUSE_MS 100 /* listeners rest when no client can be accepted */
#define ABORT_POLL_MS 10    /* how often a cut answer's socket is asked if it has sent all */

#define CONNECT_MS 10000	/* to connect to the upstream, TLS handshake included */
#define REPLAY_WINDOW_MS 1000	/* a kept connection closed this soon after a request was sent on it: sent again */
#define DRAIN_MS 2000		/* lingering close after a refusal */
#define CUT_WAIT_MS 10000	/* an upstream that stopped reading the request has this long to answer */
#define DRAIN_MAX (1 << 20)	/* bytes discarded at most */

/* One client connection and, once its head is accepted, its upstream. The
 * buffers are fixed: memory per connection is bounded. */
struct conn {
	int cfd, ufd;
	const struct bridge_route *route;
	enum conn_state state;
	struct http_req req;
	char *head; /* the client's head while it arrives */
	size_t head_len;
	char *c2u; /* to upstream: rewritten head, then body bytes */
	size_t c2u_len, c2u_off;
	char *u2c; /* to the client: rewritten response head, then bytes */
	size_t u2c_len, u2c_off;
	int req_done, client_eof, up_eof, resp_head_done, status, dead;
	int client_fin;	      /* the client closed its side after its request (EPOLLRDHUP) */
	int req_cut;	      /* the upstream stopped taking the request before its end */
	int audited;	      /* its audit line is written (when its answer was complete) */
	size_t u2c_room;      /* how much of u2c is read into: RESP_BUF, or BULK_BUF */
	int filled;	      /* the last read from upstream filled u2c */
	size_t resp_scan;     /* bytes of u2c searched for the response head's end */
	int resp_framed;      /* the response's end is known without the upstream's close */
	int cut;	      /* the answer ended uncleanly: the client gets a reset, not an end */
	unsigned events[2];   /* what the client [0] and upstream [1] are polled for */
	int up_polled;	      /* ufd is in the epoll set */
	int rpipe_r, rpipe_w; /* request body: client -> pipe -> upstream, spliced */
	size_t in_rpipe;
	int retries;	      /* connects refused with EAGAIN so far */
	struct tls_conn *tls; /* a tls: upstream */
	/* an upstream by name (dial.c): the next of its addresses to try, the
	 * one being connected, whether this request had a lookup of its own */
	int addr_i, looked_up;
	struct name_addr addr;
	int name_i;	    /* its name's resolver entry: the route's index, or a tunnel's (resolver_hold) */
	struct tunnel *tun; /* a connection to the egress proxy (tunnel.h) */
	unsigned cred_gen;  /* the credential's token generation it was sent with */
	uint64_t ask_id;    /* C_ASK: the question it waits on */
	char *held;	    /* C_BODY: the body's bytes as the client sent them, after the head's */
	size_t held_len;
	char tool[TOOLS_NAME_MAX + 1]; /* a judged tools/call's tool, its id, and whether it was refused */
	const char *tool_kind; /* what tool names: "tool", "resource" or "prompt" (static) */
	char rpc_id[40];
	int tool_refused;
	int list_filter;	/* its answer is kept whole and filtered (toolslist.h) */
	int lists_tools;	/* it asked for tools/list (its audit line says how many were hidden) */
	char *tool_args;	/* audit_args: the call's arguments as its audit line shows them, or NULL */
	int tools_hidden;	/* tools taken out of that answer */
	struct toolslist *tl;	/* the filter its answer goes through (list_filter) */
	size_t head_used;   /* bytes of head that are the request's (head, then body), once checked */
	char why[1024]; /* a refusal's reason that is not a constant */
	int shut_up, shut_client; /* a stream: the end passed on to each side */
	int client_unpolled;	  /* a stream: the client is done both ways, out of the set */
	/* reads of plaintext mbedTLS kept back, which no socket event
	 * announces; whether the read in progress is one, and whether the
	 * last read that returned bytes was (a debug line says) */
	unsigned kept_reads;
	int kept_now, kept_last;
	uint64_t bytes_in, bytes_out, started, deadline, drained;
	uint64_t stalled_since; /* request bytes held that the upstream takes none of (0: not) */
	/* an upstream connection that may carry the next request (pool.h):
	 * whether this request asked to keep it (keepable), where its answer
	 * ends (rend), the server's own idle limit (Keep-Alive timeout=, s; 0:
	 * none said); whether it came from the pool (reused), whether this
	 * request was sent again on a new one (replayed), and the request's
	 * length while c2u holds all of it (whole: 0 if it does not) */
	int keepable, reused, replayed;
	int got_bytes;	   /* a byte came from the upstream (an interim answer's too) */
	uint64_t up_born;  /* its upstream connection's connect (kept ones keep theirs) */
	uint64_t sent_at;  /* the request went on a kept connection (replay's window) */
	/* the client's connection kept for its next request (ending.c's
	 * next_request): whether the answer's head told it so (client_keep),
	 * whether it sent bytes past its request (extra_in: then it is not),
	 * and how many requests it had answered before this one (served) */
	int client_keep, extra_in;
	unsigned served;
	struct resp_end rend;
	unsigned keep_s;
	size_t whole;
	struct conn *next;
};

struct pool;
struct asker;

struct loop {
	int epfd, n_conns, max_conns, n_retrying, n_bulk;
	int spare; /* a descriptor held back, given up to turn a client away when none are left */
	const struct bridge_routes *routes;
	struct resolver *res; /* the routes' names (resolve.h) */
	uint64_t paused_until; /* listeners out of the set until then (0: polled) */
	uint64_t pause_logged;
	int n_aborting; /* connections in C_ABORT */
	unsigned n_tunnels; /* connections to the egress proxy */
	unsigned char **pin_seen; /* per route: what this session saw of its pins (tools.h), or NULL */
	struct conn *conns;
	struct conn *dead; /* closed in this batch of events, freed after it */
	struct pool *pools; /* each route's kept upstream connections (pool.h); NULL: none kept */
	struct asker *ask;  /* the proxy's questions to the person (ask.h); NULL: [proxy] ask unset */
	int n_kept;
};

/* Upstream I/O, plain or TLS: > 0 bytes, 0 end, -1 would block, -2 error,
 * -3 (TLS) the stream ended without close_notify. */
ssize_t conn_send(struct conn *c, const char *buf, size_t len);
ssize_t conn_recv(struct conn *c, char *buf, size_t len);

/* Sends what is held for the upstream (buffer, then spliced pipe): 0 (all
 * sent, or it would block), -1 the upstream failed. */
int conn_flush(struct conn *c);

/* epoll_ctl for one side (upstream 0 or 1), skipped when nothing changes;
 * an upstream wanted for nothing leaves the set. */
void conn_watch(struct loop *l, struct conn *c, int upstream, int op, unsigned events);

/* What each side should be polled for now (backpressure: read only when
 * there is room to keep what is read). */
void conn_rearm(struct loop *l, struct conn *c);

/* The upstream socket is done with (closing it takes it out of the set). */
void conn_close_upstream(struct conn *c);

/* Its TLS context, if any, freed and forgotten (after its socket is). */
void conn_free_tls(struct conn *c);

/* The request body's pipe, closed and forgotten. */
void conn_close_rpipe(struct conn *c);

/* The request's target for a log line, at most CONN_TARGET_TEXT - 1
 * bytes, a blank, control or non-ASCII byte written as '?'; "-" for none. */
#define CONN_TARGET_TEXT 201
const char *conn_target_text(const struct conn *c, char *target);

/* A route's connection's audit line (and with log_level = debug, its TLS
 * line); a tunnel's is tunnel_audit's. */
void conn_audit(const struct conn *c);

#endif
