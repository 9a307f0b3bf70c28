/* Unit tests for mcp-bridge/cred.c (a login's file, the refresh request,
 * the token endpoint's answer, the file rewritten) and refresh.c's steps
 * on a real file: taken as it is when fresh, the lock waited for, the
 * request on its socket pair, the answer written back, a refusal kept. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mcp-bridge/cred.h"
#include "mcp-bridge/http.h"
#include "mcp-bridge/refresh.h"
#include "unit.h"

static int64_t wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define FILE_FMT "{\"openai\": {\"type\": \"api_key\", \"key\": \"k\"}, \"anthropic\": {\"type\": \"oauth\", " \
			      "\"access\": \"at-0\", \"refresh\": \"rt-0\", \"expires\": %lld, \"extra\": 1}}"

static void test_parse_file(void)
{
	struct cred_tokens t;
	char buf[512], why[300];

	snprintf(buf, sizeof buf, FILE_FMT, (long long)1796000000000LL);
	CHECK(cred_parse_file(buf, strlen(buf), "anthropic", &t, why, sizeof why) == 0);
	CHECK_STR(t.access, "at-0");
	CHECK_STR(t.refresh, "rt-0");
	CHECK(t.expires == (long long)1796000000000LL);
	/* bytes after the object (a writer stopped before its cut) are not read */
	strcat(buf, "\"access\": \"old tail\"}}");
	CHECK(cred_parse_file(buf, strlen(buf), "anthropic", &t, why, sizeof why) == 0);
	CHECK(cred_parse_file(buf, strlen(buf), "xai", &t, why, sizeof why) == -1 && strstr(why, "log in"));
	CHECK(cred_parse_file(buf, strlen(buf), "openai", &t, why, sizeof why) == -1 && strstr(why, "OAuth"));
	CHECK(cred_parse_file("[]", 2, "anthropic", &t, why, sizeof why) == -1);
	CHECK(cred_parse_file("{", 1, "anthropic", &t, why, sizeof why) == -1);
	/* a token with a line break or a blank would split the header line */
	snprintf(buf, sizeof buf, "{\"anthropic\": {\"type\": \"oauth\", \"access\": \"a\\r\\nX: y\", \"refresh\": \"r\", "
		 "\"expires\": 1}}");
	CHECK(cred_parse_file(buf, strlen(buf), "anthropic", &t, why, sizeof why) == -1);
	snprintf(buf, sizeof buf, "{\"anthropic\": {\"type\": \"oauth\", \"access\": \"a b\", \"refresh\": \"r\", "
		 "\"expires\": 1}}");
	CHECK(cred_parse_file(buf, strlen(buf), "anthropic", &t, why, sizeof why) == -1);
	snprintf(buf, sizeof buf, "{\"anthropic\": {\"type\": \"oauth\", \"access\": \"a\", \"refresh\": \"r\"}}");
	CHECK(cred_parse_file(buf, strlen(buf), "anthropic", &t, why, sizeof why) == -1);
}

static void test_request(void)
{
	struct cred_tokens t = { .access = "at", .refresh = "rt-\"quoted\"" };
	char out[1024];
	int n = cred_refresh_request(&t, "platform.claude.com", "/v1/oauth/token", "cid", out, sizeof out);

	CHECK(n > 0);
	CHECK(strncmp(out, "POST /v1/oauth/token HTTP/1.1\r\nHost: platform.claude.com\r\n", 58) == 0);
	CHECK(strstr(out, "{\"grant_type\":\"refresh_token\",\"client_id\":\"cid\",\"refresh_token\":\"rt-\\\"quoted\\\"\"}") != NULL);
	CHECK(cred_refresh_request(&t, "h", "/p", "c", out, 40) == -1);
}

static void test_answer(void)
{
	struct cred_tokens t = { .access = "at-0", .refresh = "rt-0" };
	char why[300];
	const char *ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
			 "{\"access_token\":\"at-1\",\"refresh_token\":\"rt-1\",\"expires_in\":3600}";
	const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			      "10\r\n{\"access_token\":\r\n1a\r\n\"at-2\",\"expires_in\":28800}\r\n0\r\n\r\n";
	const char *grant = "HTTP/1.1 400 Bad Request\r\nContent-Length: 74\r\n\r\n"
			    "{\"error\":\"invalid_grant\",\"error_description\":\"Refresh token not found...\"}";
	char bridge[512];

	/* the bridge's own refusal, as it writes it */
	http_refusal(502, "platform.claude.com: no such name", 0, bridge, sizeof bridge);

	CHECK(cred_parse_answer(ok, strlen(ok), 1000000, &t, why, sizeof why) == 0);
	CHECK_STR(t.access, "at-1");
	CHECK_STR(t.refresh, "rt-1");
	CHECK(t.expires == 1000000 + 3600000 - 300000);
	/* chunks, and a refresh token left out: the old one is kept */
	CHECK(cred_parse_answer(chunked, strlen(chunked), 0, &t, why, sizeof why) == 0);
	CHECK_STR(t.access, "at-2");
	CHECK_STR(t.refresh, "rt-1");
	CHECK(cred_parse_answer(grant, strlen(grant), 0, &t, why, sizeof why) == -1);
	CHECK(strstr(why, "invalid_grant") && strstr(why, "log in again"));
	CHECK_STR(t.access, "at-2");
	CHECK(cred_parse_answer(bridge, strlen(bridge), 0, &t, why, sizeof why) == -1);
	CHECK(strstr(why, "could not be reached") && strstr(why, "no such name"));
	CHECK(cred_parse_answer(ok, 40, 0, &t, why, sizeof why) == -1); /* cut short */
	{
		/* a short life: half of it, never stale on arrival */
		const char *brief = "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n{\"access_token\":\"at-3\",\"expires_in\":300}";
		CHECK(cred_parse_answer(brief, strlen(brief), 1000, &t, why, sizeof why) == 0 && t.expires == 1000 + 150000);
		/* the server's words: no line break reaches a log line */
		const char *forged = "HTTP/1.1 400 Bad Request\r\nContent-Length: 66\r\n\r\n"
				     "{\"error\":\"invalid_grant\",\"error_description\":\"x\\nward: forged\"}   ";
		CHECK(cred_parse_answer(forged, strlen(forged), 0, &t, why, sizeof why) == -1 && !strchr(why, '\n') &&
		      strstr(why, "x?ward: forged"));
	}
	CHECK(cred_parse_answer("garbage", 7, 0, &t, why, sizeof why) == -1);
}

static void test_update(void)
{
	struct cred_tokens t = { .access = "at-9", .refresh = "rt-9", .expires = 42 }, back;
	char buf[512], why[300], *text;
	size_t n;

	snprintf(buf, sizeof buf, FILE_FMT, (long long)1);
	text = cred_file_update(buf, strlen(buf), "anthropic", &t, &n);
	CHECK(text && n == strlen(text));
	CHECK(text && cred_parse_file(text, n, "anthropic", &back, why, sizeof why) == 0 && strcmp(back.access, "at-9") == 0 &&
	      strcmp(back.refresh, "rt-9") == 0 && back.expires == 42);
	/* the other entry, and the entry's other keys, as they were */
	CHECK(text && strstr(text, "\"key\": \"k\"") && strstr(text, "\"extra\": 1"));
	free(text);
	CHECK(cred_file_update("[]", 2, "anthropic", &t, &n) == NULL);
}

/* Whether another process finds the file's lock held (a record lock is
 * the process's own: only another can see it). */
static int locked_elsewhere(const char *path)
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		int fd = open(path, O_RDWR);
		_exit(fd >= 0 && fcntl(fd, F_SETLK, &fl) != 0 ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

/* Another ward holding the file's lock until *release is written to:
 * its pid (the lock taken when this returns). */
static pid_t hold_lock(const char *path, int release[2])
{
	int ready[2];
	char c;
	pid_t pid;

	if (pipe(ready) != 0 || pipe(release) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		int fd = open(path, O_RDWR);
		if (fd < 0 || fcntl(fd, F_SETLKW, &fl) != 0 || write(ready[1], "x", 1) != 1)
			_exit(1);
		(void)read(release[0], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	return pid;
}

/* A login file in a temporary directory, its descriptor as PID 1 opens it. */
static int login_file(char *path, int64_t expires)
{
	char buf[512];
	int fd;

	strcpy(path, "/tmp/ward-cred-XXXXXX");
	fd = mkstemp(path);
	snprintf(buf, sizeof buf, FILE_FMT, (long long)expires);
	if (fd >= 0 && write(fd, buf, strlen(buf)) != (ssize_t)strlen(buf))
		return -1;
	return fd;
}

/* Two routes of one bridge on one file (MCP servers signed in in one
 * mcp-auth.json): one holds the file's lock at a time. A POSIX lock is
 * the process's, so without the shared flag the second would "take" it
 * while the first asks, and the first's letting go would free it. */
static void test_one_holder(void)
{
	static const char text[] = "{\"a\": {\"type\": \"oauth\", \"access\": \"at-a\", \"refresh\": \"rt-a\", \"expires\": 1}, "
				   "\"b\": {\"type\": \"oauth\", \"access\": \"at-b\", \"refresh\": \"rt-b\", \"expires\": 1}}";
	static const char ans[] = "HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n"
				  "{\"access_token\":\"at-1\",\"refresh_token\":\"rt-1\",\"expires_in\":3600}";
	char path[] = "/tmp/ward-cred-XXXXXX", got[2048];
	int held = 0, fd = mkstemp(path), fd2, pa = -1, pb = -1;
	struct cred_route a = { .path = "test", .entry = "a", .client_id = "cid", .token_host = "h", .token_path = "/t",
				.sock = -1, .held = &held };
	struct cred_route b = a;
	struct cred_tokens t;
	char why[300];
	ssize_t n;

	CHECK(fd >= 0 && write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
	fd2 = open(path, O_RDWR);
	a.fd = fd;
	b.fd = fd2;
	b.entry = "b";
	CHECK(refresh_start(&a, 1, &pa) == REFRESH_ASK && pa >= 0 && a.holds && held);
	/* b waits while a asks, its lock not taken, no request of its own */
	CHECK(refresh_start(&b, 2, &pb) == REFRESH_WAIT && pb == -1 && !b.holds);
	CHECK(refresh_due(&b) == 2 + REFRESH_LOCK_MS);
	CHECK(locked_elsewhere(path));
	CHECK(read(pa, got, sizeof got) > 0);
	CHECK(write(pa, ans, sizeof ans - 1) == (ssize_t)(sizeof ans - 1));
	close(pa);
	CHECK(refresh_readable(&a, 3) == REFRESH_DONE && !a.failed[0] && !a.holds && !held);
	/* then b, which finds its own entry still expired */
	CHECK(refresh_tick(&b, 2 + REFRESH_LOCK_MS, &pb) == REFRESH_ASK && pb >= 0 && b.holds && held);
	CHECK(locked_elsewhere(path));
	CHECK(read(pb, got, sizeof got) > 0);
	CHECK(write(pb, ans, sizeof ans - 1) == (ssize_t)(sizeof ans - 1));
	close(pb);
	CHECK(refresh_readable(&b, 4) == REFRESH_DONE && !b.failed[0] && !held && !locked_elsewhere(path));
	/* both entries written back, a's kept by b's write */
	n = pread(fd, got, sizeof got - 1, 0);
	got[n > 0 ? n : 0] = '\0';
	CHECK(cred_parse_file(got, (size_t)n, "a", &t, why, sizeof why) == 0 && strcmp(t.access, "at-1") == 0);
	CHECK(cred_parse_file(got, (size_t)n, "b", &t, why, sizeof why) == 0 && strcmp(t.access, "at-1") == 0);
	close(fd);
	close(fd2);
	unlink(path);
}

static void test_refresh_steps(void)
{
	struct cred_route cr = { .fd = -1, .path = "test", .entry = "anthropic", .client_id = "cid",
				 .token_host = "platform.claude.com", .token_path = "/v1/oauth/token", .sock = -1 };
	char path[64], got[2048], why[300];
	const char *line = NULL, *ans = "HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n"
					  "{\"access_token\":\"at-1\",\"refresh_token\":\"rt-1\",\"expires_in\":3600}";
	struct cred_tokens t;
	unsigned gen = 0;
	int peer = -1, release[2];
	pid_t holder;
	ssize_t n;

	/* fresh in the file: taken as it is, no request */
	cr.fd = login_file(path, wall() + 3600000);
	CHECK(cr.fd >= 0);
	CHECK(refresh_line(&cr, 1, &line, &gen) == 0); /* nothing read yet */
	CHECK(refresh_start(&cr, 1, &peer) == REFRESH_DONE && !cr.failed[0] && peer == -1);
	CHECK(refresh_line(&cr, 2, &line, &gen) == 1);
	CHECK_STR(line, "Authorization: Bearer at-0");
	/* the API answered 401 to it: the same token in the file is no use */
	refresh_rejected(&cr, gen, 3);
	CHECK(refresh_line(&cr, 3, &line, &gen) == 0);
	/* another ward holds the lock: wait, try again */
	holder = hold_lock(path, release);
	CHECK(holder > 0);
	CHECK(refresh_start(&cr, 10, &peer) == REFRESH_WAIT && refresh_due(&cr) == 10 + REFRESH_LOCK_MS);
	CHECK(refresh_tick(&cr, 20, &peer) == REFRESH_WAIT);
	/* it ends without letting go: its lock goes with it */
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	close(release[0]);
	close(release[1]);
	CHECK(refresh_tick(&cr, 10 + REFRESH_LOCK_MS, &peer) == REFRESH_ASK && peer >= 0);
	n = read(peer, got, sizeof got - 1);
	got[n > 0 ? n : 0] = '\0';
	CHECK(strstr(got, "POST /v1/oauth/token HTTP/1.1") && strstr(got, "\"refresh_token\":\"rt-0\""));
	/* the lock is held while it asks */
	CHECK(locked_elsewhere(path));
	CHECK(refresh_readable(&cr, 30) == REFRESH_WAIT); /* nothing yet */
	CHECK(write(peer, ans, strlen(ans)) == (ssize_t)strlen(ans));
	close(peer);
	CHECK(refresh_readable(&cr, 40) == REFRESH_DONE && !cr.failed[0]);
	CHECK(!locked_elsewhere(path)); /* let go */
	CHECK(refresh_line(&cr, 50, &line, &gen) == 1);
	CHECK_STR(line, "Authorization: Bearer at-1");
	/* written back */
	n = pread(cr.fd, got, sizeof got - 1, 0);
	got[n > 0 ? n : 0] = '\0';
	CHECK(cred_parse_file(got, (size_t)n, "anthropic", &t, why, sizeof why) == 0 && strcmp(t.refresh, "rt-1") == 0);
	CHECK(strstr(got, "\"openai\""));
	CHECK(!strstr(got, "at-0")); /* the old text is gone, not left as a tail */
	/* a 401 right after this bridge's own refresh: passed on, no other
	 * refresh (the agent can have the API answer 401 at will) */
	refresh_rejected(&cr, gen, 41);
	CHECK(refresh_line(&cr, 42, &line, &gen) == 1);
	/* a refusal: kept for REFRESH_FAILED_MS, then tried again */
	refresh_rejected(&cr, gen, 40 + REFRESH_401_MS);
	CHECK(refresh_start(&cr, 100, &peer) == REFRESH_ASK);
	CHECK(read(peer, got, sizeof got) > 0); /* the request taken, as the bridge's connection does */
	CHECK(write(peer, "HTTP/1.1 400 Bad Request\r\nContent-Length: 25\r\n\r\n{\"error\":\"invalid_grant\"}", 74) == 74);
	close(peer);
	CHECK(refresh_readable(&cr, 110) == REFRESH_DONE && strstr(cr.failed, "log in again"));
	cr.failed_at = 110;
	CHECK(refresh_line(&cr, 110 + REFRESH_FAILED_MS - 1, &line, &gen) == -1);
	CHECK(refresh_line(&cr, 110 + REFRESH_FAILED_MS, &line, &gen) == 0);
	/* the deadline: a token endpoint that has not answered in
	 * REFRESH_WAIT_MS: the waiters told, every request refused at once
	 * while its answer is still awaited; the answer, when it comes,
	 * taken (it may hold the only refresh token left) */
	CHECK(refresh_start(&cr, 1000, &peer) == REFRESH_ASK);
	CHECK(read(peer, got, sizeof got) > 0);
	CHECK(refresh_tick(&cr, 1000 + REFRESH_WAIT_MS, &peer) == REFRESH_DONE && strstr(cr.failed, "still awaited"));
	CHECK(cr.state == R_LATE && cr.sock >= 0);
	CHECK(refresh_line(&cr, 1000 + REFRESH_WAIT_MS + REFRESH_FAILED_MS + 1, &line, &gen) == -1);
	CHECK(refresh_due(&cr) == 1000 + REFRESH_WAIT_MS + REFRESH_LATE_MS);
	{
		static const char late[] = "HTTP/1.1 200 OK\r\nContent-Length: 70\r\n\r\n"
					   "{\"access_token\":\"at-late\",\"refresh_token\":\"rt-late\",\"expires_in\":3600}";
		CHECK(write(peer, late, sizeof late - 1) == (ssize_t)(sizeof late - 1));
	}
	close(peer);
	CHECK(refresh_readable(&cr, 1000 + REFRESH_WAIT_MS + 5000) == REFRESH_DONE && !cr.failed[0]);
	CHECK(cr.state == R_IDLE && strcmp(cr.t.refresh, "rt-late") == 0);
	got[pread(cr.fd, got, sizeof got - 1, 0) > 0 ? sizeof got - 1 : 0] = '\0';
	CHECK(strstr(got, "rt-late") != NULL); /* written back */
	/* one that never answers: given up after REFRESH_LATE_MS */
	refresh_rejected(&cr, cr.gen, 1000000); /* the API refused the late token: asked again */
	CHECK(refresh_start(&cr, 1000000, &peer) == REFRESH_ASK);
	CHECK(refresh_tick(&cr, 1000000 + REFRESH_WAIT_MS, &peer) == REFRESH_DONE && cr.state == R_LATE);
	CHECK(refresh_tick(&cr, 1000000 + REFRESH_WAIT_MS + REFRESH_LATE_MS, &peer) == REFRESH_DONE &&
	      cr.state == R_IDLE && strstr(cr.failed, "never answered"));
	close(peer);
	close(cr.fd);
	unlink(path);
}

static void test_extra_header(void)
{
	static const struct http_route r = { "m", 1u << HTTP_POST, "/v1/", "api.test", NULL, 0, 0, 0 };
	const char *in = "POST /v1/messages HTTP/1.1\r\nHost: x\r\nauthorization: Bearer placeholder\r\n"
			 "Content-Length: 0\r\n\r\n";
	struct http_req q;
	char out[1024];
	ssize_t n;

	http_req_init(&q, &r);
	CHECK(http_req_feed(&q, in, strlen(in)) == (ssize_t)strlen(in));
	n = http_req_upstream_head(&q, "Authorization: Bearer at-1", "x-api-key", 0, out, sizeof out);
	CHECK(n > 0);
	out[n > 0 ? n : 0] = '\0';
	CHECK(strstr(out, "Authorization: Bearer at-1\r\n") && !strstr(out, "placeholder"));
}

int main(void)
{
	test_parse_file();
	test_request();
	test_answer();
	test_update();
	test_refresh_steps();
	test_one_holder();
	test_extra_header();
	return unit_done("test_cred");
}
