#define _GNU_SOURCE
#include "mcp-bridge/refresh.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fds.h"
#include "common/log.h"

/* The wall clock, ms: what a credential's "expires" is counted in. */
static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The whole file, from offset 0 (a malloc'd copy, NUL-terminated). */
static char *read_all(int fd, size_t *len, char *why, size_t size)
{
	char *buf = fd_read_file(fd, CRED_MAX_FILE, len);

	if (!buf)
		snprintf(why, size, "%s", errno == EFBIG ? "it is over 256 KiB"
					  : errno == ENOMEM ? "out of memory" : "cannot read it");
	return buf;
}

static void drop(char *buf, size_t len)
{
	if (buf) {
		explicit_bzero(buf, len);
		free(buf);
	}
}

/* The tokens in use from now: their line, a new generation. */
static void take(struct cred_route *cr, const struct cred_tokens *t)
{
	if (&cr->t != t)
		cr->t = *t;
	snprintf(cr->line, sizeof cr->line, "Authorization: Bearer %s", cr->t.access);
	cr->gen++;
	cr->rejected = 0;
}

/* The file's lock: a POSIX record lock on the whole file, this process's.
 * Not flock: the bridge shares its open file with PID 1 (it was forked
 * with it), and a flock belongs to the open file, so a bridge that died
 * holding it would leave it held for as long as ward runs; a record lock
 * is let go when the process that took it ends. take: 1 to lock without
 * waiting, 0 to let go. 0, or -1 with errno (EAGAIN, EACCES: another holds
 * it). */
static int file_lock(int fd, int take)
{
	struct flock fl = { .l_type = take ? F_WRLCK : F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };

	return fcntl(fd, F_SETLK, &fl);
}

/* The refresh ended, why = NULL if it worked. */
static enum refresh_step finish(struct cred_route *cr, const char *why)
{
	if (cr->sock >= 0)
		close(cr->sock);
	cr->sock = -1;
	drop(cr->ans, cr->ans_len);
	cr->ans = NULL;
	cr->ans_len = 0;
	if (cr->holds) {
		/* only by its holder: another route of this process's may be
		 * waiting for it, and a no-op for one would free the other's */
		(void)file_lock(cr->fd, 0);
		cr->holds = 0;
		if (cr->held)
			*cr->held = 0;
	}
	cr->state = R_IDLE;
	if (why) {
		snprintf(cr->failed, sizeof cr->failed, "%s", why);
		cr->failed_at = now_ms();
		log_warn("bridge: credential %s (%s): %s", cr->path, cr->entry, why);
	} else {
		cr->failed[0] = '\0';
	}
	return REFRESH_DONE;
}

/* The request on a socket pair: ours reads the answer, the peer is the
 * token route's client as the loop serves it. */
static enum refresh_step ask(struct cred_route *cr, uint64_t now, int *peer)
{
	char req[CRED_MAX_TOKEN + 1024];
	int n = credfile_request(&cr->t, cr->token_host, cr->token_path, cr->client_id, req, sizeof req);
	int sp[2];
	ssize_t w;

	if (n < 0)
		return finish(cr, "the refresh request does not fit");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sp) != 0) {
		explicit_bzero(req, sizeof req);
		return finish(cr, "no socket for the refresh");
	}
	/* a few KiB into an empty socket buffer: written whole at once */
	w = write(sp[1], req, (size_t)n);
	explicit_bzero(req, sizeof req);
	if (w != n) {
		close(sp[0]);
		close(sp[1]);
		return finish(cr, "cannot write the refresh request");
	}
	cr->sock = sp[1];
	*peer = sp[0];
	cr->state = R_ASKING;
	/* the whole wait for the answer, however long the lock took: once
	 * sent, the request may retire the refresh token it carries */
	cr->deadline = now + REFRESH_WAIT_MS;
	return REFRESH_ASK;
}

/* The new tokens into the file, over the old text, then cut to length. */
static int write_back(struct cred_route *cr, const struct cred_tokens *t, char *why, size_t size)
{
	size_t len = 0, out_len = 0, off = 0;
	char *buf = read_all(cr->fd, &len, why, size), *text;

	if (!buf)
		return -1;
	text = credfile_update(buf, len, cr->entry, t, &out_len);
	drop(buf, len);
	if (!text)
		return snprintf(why, size, "it is no longer a credential file"), -1;
	/* as long as the old text, blanks after the new: a writer stopped
	 * before the cut leaves a whole JSON file (Pi reads it too) */
	if (out_len < len) {
		char *padded = realloc(text, len);
		if (!padded) {
			drop(text, out_len);
			return snprintf(why, size, "out of memory"), -1;
		}
		text = padded;
		memset(text + out_len, ' ', len - out_len);
	}
	while (off < (out_len < len ? len : out_len)) {
		ssize_t n = pwrite(cr->fd, text + off, (out_len < len ? len : out_len) - off, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	drop(text, out_len < len ? len : out_len);
	if (off < (out_len < len ? len : out_len) || ftruncate(cr->fd, (off_t)out_len) != 0 || fsync(cr->fd) != 0)
		return snprintf(why, size, "cannot write it: %s", strerror(errno)), -1;
	return 0;
}

/* An MCP sign-in's token endpoint as the file names it now is the one
 * whose route the bridge built at start: its refresh token goes nowhere
 * else. */
static int same_endpoint(const struct cred_route *cr, const struct cred_tokens *t)
{
	size_t hl = strlen(cr->token_host);
	const char *rest = strstr(t->token_url, "://");

	if (t->format != CRED_MCP)
		return 1;
	return rest && strncasecmp(rest + 3, cr->token_host, hl) == 0 && strcmp(rest + 3 + hl, cr->token_path) == 0;
}

/* The lock, then the file: tokens another bridge refreshed are taken as
 * they are; else this one asks, holding the lock until it has written. */
static enum refresh_step try_lock(struct cred_route *cr, uint64_t now, int *peer)
{
	struct cred_tokens t;
	char why[300], msg[400];
	size_t len = 0;
	char *buf;
	int stale;

	if ((cr->held && *cr->held && !cr->holds) || file_lock(cr->fd, 1) != 0) {
		/* another route of this bridge's holds it, or another ward */
		if ((cr->held && *cr->held && !cr->holds) || errno == EAGAIN || errno == EACCES || errno == EINTR) {
			cr->next_try = now + REFRESH_LOCK_MS;
			return REFRESH_WAIT;
		}
		snprintf(msg, sizeof msg, "cannot lock it: %s", strerror(errno));
		return finish(cr, msg);
	}
	cr->holds = 1;
	if (cr->held)
		*cr->held = 1;
	if (cr->unsaved) {
		/* the file holds tokens the provider may have retired: ours
		 * are the newest; written now if the file takes them */
		t = cr->t;
		if (write_back(cr, &t, why, sizeof why) == 0)
			cr->unsaved = 0;
	} else {
		buf = read_all(cr->fd, &len, why, sizeof why);
		if (!buf || credfile_parse(cr->format, buf, len, cr->entry, &t, why, sizeof why) != 0) {
			drop(buf, len);
			snprintf(msg, sizeof msg, "%s", why);
			return finish(cr, msg);
		}
		drop(buf, len);
		if (!same_endpoint(cr, &t)) {
			explicit_bzero(&t, sizeof t);
			return finish(cr, "the sign-in's token endpoint is not the one it had when ward started (signed in "
				      "again elsewhere?): start a new session");
		}
	}
	/* the one the provider refused, still in the file: no one refreshed */
	stale = cr->rejected && strcmp(t.access, cr->t.access) == 0;
	if (credfile_fresh(&t, wall_ms()) && !stale) {
		take(cr, &t);
		explicit_bzero(&t, sizeof t);
		return finish(cr, NULL);
	}
	cr->t = t; /* the file's refresh token is the newest */
	explicit_bzero(&t, sizeof t);
	return ask(cr, now, peer);
}

int refresh_line(struct cred_route *cr, uint64_t now, const char **line, unsigned *gen)
{
	if (cr->state == R_IDLE && !cr->rejected && credfile_fresh(&cr->t, wall_ms())) {
		*line = cr->line;
		*gen = cr->gen;
		return 1;
	}
	if (cr->state == R_IDLE && cr->failed[0] && now - cr->failed_at < REFRESH_FAILED_MS)
		return -1;
	if (cr->state == R_LATE)
		return -1;
	return 0;
}

enum refresh_step refresh_start(struct cred_route *cr, uint64_t now, int *peer)
{
	cr->sock = -1;
	cr->state = R_LOCKING;
	cr->deadline = now + REFRESH_WAIT_MS;
	return try_lock(cr, now, peer);
}

enum refresh_step refresh_tick(struct cred_route *cr, uint64_t now, int *peer)
{
	if (cr->state == R_IDLE)
		return REFRESH_WAIT;
	if (now >= cr->deadline && cr->state == R_ASKING) {
		/* the waiters are told now; the answer is still read when it
		 * comes (its socket stays open, the lock held) */
		snprintf(cr->failed, sizeof cr->failed, "the token endpoint has not answered within 30 s; its answer is "
			 "still awaited (a request after it comes goes through)");
		cr->failed_at = now;
		cr->state = R_LATE;
		cr->deadline = now + REFRESH_LATE_MS;
		log_warn("bridge: credential %s (%s): %s", cr->path, cr->entry, cr->failed);
		return REFRESH_DONE;
	}
	if (now >= cr->deadline)
		return finish(cr, cr->state == R_LOCKING ? "another ward held the credential's lock for 30 s"
			      : "the token endpoint never answered the refresh (10 min): if the next one is refused, "
				"log in again");
	if (cr->state == R_LOCKING && now >= cr->next_try)
		return try_lock(cr, now, peer);
	return REFRESH_WAIT;
}

enum refresh_step refresh_readable(struct cred_route *cr, uint64_t now)
{
	struct cred_tokens t = cr->t;
	char why[400], msg[600];

	if (cr->state != R_ASKING && cr->state != R_LATE)
		return REFRESH_WAIT;
	if (!cr->ans && !(cr->ans = malloc(CRED_MAX_ANSWER)))
		return finish(cr, "out of memory");
	for (;;) {
		ssize_t n = read(cr->sock, cr->ans + cr->ans_len, CRED_MAX_ANSWER - cr->ans_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return REFRESH_WAIT;
		if (n < 0)
			return finish(cr, "the refresh's connection failed");
		if (n == 0)
			break;
		cr->ans_len += (size_t)n;
		if (cr->ans_len == CRED_MAX_ANSWER)
			return finish(cr, "the token endpoint's answer is over 64 KiB");
	}
	if (credfile_answer(cr->ans, cr->ans_len, wall_ms(), &t, why, sizeof why) != 0) {
		explicit_bzero(&t, sizeof t);
		return finish(cr, why);
	}
	/* the new tokens are used even if the file cannot keep them; the
	 * person is told, since the next start would have only the old */
	cr->unsaved = write_back(cr, &t, why, sizeof why) != 0;
	if (cr->unsaved) {
		snprintf(msg, sizeof msg, "refreshed, but %s: tried again at the next refresh; if ward ends first, "
			 "the next start needs a new login", why);
		log_warn("bridge: credential %s (%s): %s", cr->path, cr->entry, msg);
	}
	cr->refreshed_at = now;
	take(cr, &t);
	explicit_bzero(&t, sizeof t);
	log_info("bridge: credential %s (%s): access token refreshed", cr->path, cr->entry);
	return finish(cr, NULL);
}

enum refresh_step refresh_abandon(struct cred_route *cr, const char *why)
{
	return finish(cr, why);
}

void refresh_rejected(struct cred_route *cr, unsigned gen, uint64_t now)
{
	if (cr->refreshed_at && now - cr->refreshed_at < REFRESH_401_MS) {
		log_info("bridge: credential %s (%s): the provider answered 401 to a token this bridge refreshed "
			 "less than a minute ago: passed on, not refreshed again", cr->path, cr->entry);
		return;
	}
	if (gen == cr->gen && cr->t.access[0]) {
		cr->rejected = 1;
		log_info("bridge: credential %s (%s): the provider answered 401: refreshed before the next request",
			 cr->path, cr->entry);
	}
}

uint64_t refresh_due(const struct cred_route *cr)
{
	if (cr->state == R_IDLE)
		return 0;
	if (cr->state == R_LOCKING && cr->next_try < cr->deadline)
		return cr->next_try;
	return cr->deadline;
}
