/* refresh: a route's OAuth credential in the bridge's loop. The route's
 * requests carry "Authorization: Bearer ACCESS" from the credential file
 * the host gave (PID 1 opened it read-write; the agent has no path to
 * it). When the access token is about to expire, or the provider answered
 * 401 to it, the first request to need it starts a refresh and every
 * request meanwhile waits for it:
 *   1. the file's lock (a POSIX write lock on the whole file: every ward
 *      sharing the file takes it, each session's bridge; let go when its
 *      holder ends), tried again every REFRESH_LOCK_MS while another holds
 *      it;
 *   2. the file read again: another session's bridge may have refreshed
 *      already, and its tokens are taken as they are (one refresh for all);
 *   3. otherwise the refresh request, through the route's token route
 *      (TLS by name like any route's; it has no listener, so only this
 *      code is its client): one round trip;
 *   4. the new tokens written back to the file, the lock let go, the
 *      waiting requests sent on with the new token, or answered 502 with
 *      what the provider said (a refused refresh token: log in again).
 * State is the route's own (struct cred_route); nothing here blocks. */
#ifndef WARD_REFRESH_H
#define WARD_REFRESH_H

#include <stdint.h>

#include "mcp-bridge/credfile.h"

#define REFRESH_LOCK_MS 50	 /* the lock tried again, while another holds it */
#define REFRESH_WAIT_MS 30000	 /* the whole refresh, lock included */
#define REFRESH_FAILED_MS 5000	 /* a refresh that failed is not tried again sooner */
/* A 401 this soon after this bridge's own refresh is passed on and starts
 * no other: the agent can have the API answer 401 at will (a request the
 * subscription does not cover), and must not spend the login's refreshes. */
#define REFRESH_401_MS 60000
/* A token endpoint that has not answered in REFRESH_WAIT_MS: the requests
 * that waited get 502, and so does every request at once while it is
 * still awaited (R_LATE), for this long at most. The refresh itself goes
 * on, the file's lock held: the request it sent may have retired the
 * refresh token it carried, and the answer holds the only new one. */
#define REFRESH_LATE_MS 600000

enum refresh_state { R_IDLE, R_LOCKING, R_ASKING, R_LATE };

struct cred_route {
	/* set by PID 1 */
	int fd;		       /* the credential file, read-write */
	const char *path;      /* its path, for messages */
	enum cred_format format; /* Pi's auth.json, or its mcp-auth.json (an MCP server's sign-in) */
	const char *entry;     /* its entry: the provider's name, or the server's key */
	const char *client_id; /* the provider's OAuth client */
	const char *token_host, *token_path;
	int token_route;       /* index of the route to the token endpoint */
	/* shared by the routes of one file in this bridge (the MCP servers
	 * signed in in one mcp-auth.json): whether one of them holds the
	 * file's lock. A POSIX lock is the process's: a second route would
	 * take it too, and the first one's letting go would free the
	 * second's. One route at a time holds it, the others wait. */
	int *held;
	int holds;	       /* this route holds it */
	/* the bridge's */
	struct cred_tokens t;
	unsigned gen;	       /* which access token: a 401 to an older one says nothing */
	int rejected;	       /* the provider answered 401 to gen's token */
	uint64_t refreshed_at; /* this bridge's last refresh at the endpoint (0: none) */
	int unsaved;	       /* the tokens in use could not be written back: they, not the file's, are the newest */
	char line[CRED_MAX_TOKEN + 32]; /* "Authorization: Bearer ACCESS" */
	enum refresh_state state;
	int sock;	       /* the refresh's client end, while asking */
	char *ans;	       /* what came back on it */
	size_t ans_len;
	uint64_t deadline, next_try;
	char failed[512];      /* the last refresh's failure, for requests within REFRESH_FAILED_MS */
	uint64_t failed_at;
};

/* What a step of the refresh asks of the loop. */
enum refresh_step {
	REFRESH_WAIT, /* nothing yet: the lock is tried again, or the answer awaited */
	REFRESH_ASK,  /* *peer: the token route's client end, for the loop to serve as a connection */
	REFRESH_DONE, /* ended: its waiting requests go on (cr->failed empty) or get 502 */
};

/* The header line for a request now, with the token's generation: 1; 0
 * while a refresh is under way or must start (refresh_start); -1 if the
 * last refresh failed within REFRESH_FAILED_MS, or its answer is late
 * (cr->failed says why). */
int refresh_line(struct cred_route *cr, uint64_t now, const char **line, unsigned *gen);

/* Starts the refresh (state R_IDLE); *peer as for REFRESH_ASK. */
enum refresh_step refresh_start(struct cred_route *cr, uint64_t now, int *peer);

/* The lock tried again, or the deadline passed. */
enum refresh_step refresh_tick(struct cred_route *cr, uint64_t now, int *peer);

/* The refresh's socket is readable. */
enum refresh_step refresh_readable(struct cred_route *cr, uint64_t now);

/* The loop could not serve the token route's connection. */
enum refresh_step refresh_abandon(struct cred_route *cr, const char *why);

/* The provider answered 401 to a request that carried gen's token, now. */
void refresh_rejected(struct cred_route *cr, unsigned gen, uint64_t now);

/* When the loop must call refresh_tick next (0: not waiting on time). */
uint64_t refresh_due(const struct cred_route *cr);

#endif
