/* Unit tests for mcp-bridge/tls.c against an mbedTLS server in the same
 * process. Both ends talk through byte queues the test controls instead of
 * sockets, so a write blocks exactly where a case needs it to: the cases
 * are the ones a socket cannot set up on demand (a server that asks to
 * renegotiate while the bridge's record is half sent; an alert a read
 * could not send; plaintext mbedTLS holds back from a short read). The
 * client side is configured by tls_route_init() with a pin, as a
 * `tls_pin` route is. */
#include <mbedtls/certs.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_time.h>
#include <mbedtls/sha256.h>
#include <mbedtls/ssl_cache.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "mcp-bridge/tls.h"
#include "unit.h"

/* One direction of the transport. cap: bytes it may hold; a send finding
 * no room blocks (WANT_WRITE), as a full socket buffer does. */
struct queue {
	unsigned char *b;
	size_t len, cap;
};

#define QMAX ((size_t)4 << 20)

/* client -> server, server -> client */
static struct queue c2s, s2c;

static int q_send(struct queue *q, const unsigned char *buf, size_t len)
{
	size_t room = q->cap > q->len ? q->cap - q->len : 0;

	if (room == 0)
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	if (len > room)
		len = room;
	memcpy(q->b + q->len, buf, len);
	q->len += len;
	return (int)len;
}

static int q_recv(struct queue *q, unsigned char *buf, size_t len)
{

	if (q->len == 0)
		return MBEDTLS_ERR_SSL_WANT_READ;
	if (len > q->len)
		len = q->len;
	memcpy(buf, q->b, len);
	memmove(q->b, q->b + len, q->len - len);
	q->len -= len;
	return (int)len;
}

static mbedtls_ssl_config sconf;
static mbedtls_x509_crt scrt;
static mbedtls_pk_context skey;
static mbedtls_entropy_context sentropy;
static mbedtls_ctr_drbg_context sdrbg;
static struct tls_route route;
/* the server's session cache, and how many sessions it gave back */
static mbedtls_ssl_cache_context scache;
static int resumed;

static int cache_get(void *ctx, mbedtls_ssl_session *session)
{
	int rc = mbedtls_ssl_cache_get(ctx, session);

	resumed += rc == 0;
	return rc;
}

/* The server's configuration, and the client's route pinned to its
 * certificate. 0, or -1. */
static char route_pin[7 + 65];

/* The route as setup() made it, with nothing kept. */
static void route_again(void)
{
	char err[200];

	tls_route_free(&route);
	if (tls_route_init(&route, "localhost", NULL, route_pin, err, sizeof err) != 0)
		fprintf(stderr, "tls_route_init: %s\n", err);
}

static int setup(void)
{
	unsigned char h[32];
	char pin[7 + 65], err[200];
	int i;

	c2s.b = malloc(QMAX);
	s2c.b = malloc(QMAX);
	if (!c2s.b || !s2c.b)
		return -1;
	mbedtls_ssl_config_init(&sconf);
	mbedtls_x509_crt_init(&scrt);
	mbedtls_pk_init(&skey);
	mbedtls_entropy_init(&sentropy);
	mbedtls_ctr_drbg_init(&sdrbg);
	if (mbedtls_ctr_drbg_seed(&sdrbg, mbedtls_entropy_func, &sentropy, (const unsigned char *)"srv", 3) != 0 ||
	    mbedtls_x509_crt_parse(&scrt, (const unsigned char *)mbedtls_test_srv_crt, mbedtls_test_srv_crt_len) != 0 ||
	    mbedtls_pk_parse_key(&skey, (const unsigned char *)mbedtls_test_srv_key, mbedtls_test_srv_key_len, NULL,
				 0) != 0 ||
	    mbedtls_ssl_config_defaults(&sconf, MBEDTLS_SSL_IS_SERVER, MBEDTLS_SSL_TRANSPORT_STREAM,
					MBEDTLS_SSL_PRESET_DEFAULT) != 0 ||
	    mbedtls_ssl_conf_own_cert(&sconf, &scrt, &skey) != 0)
		return -1;
	mbedtls_ssl_conf_rng(&sconf, mbedtls_ctr_drbg_random, &sdrbg);
	/* the server may ask to renegotiate, and goes on taking application
	 * data however long the client takes to answer */
	mbedtls_ssl_conf_renegotiation(&sconf, MBEDTLS_SSL_RENEGOTIATION_ENABLED);
	mbedtls_ssl_conf_renegotiation_enforced(&sconf, MBEDTLS_SSL_RENEGOTIATION_NOT_ENFORCED);
	mbedtls_ssl_cache_init(&scache);
	mbedtls_ssl_conf_session_cache(&sconf, &scache, cache_get, mbedtls_ssl_cache_set);

	if (mbedtls_sha256_ret(scrt.raw.p, scrt.raw.len, h, 0) != 0)
		return -1;
	memcpy(pin, "sha256:", 7);
	for (i = 0; i < 32; i++)
		snprintf(pin + 7 + i * 2, 3, "%02x", h[i]);
	memcpy(route_pin, pin, sizeof route_pin);
	if (tls_route_init(&route, "localhost", NULL, pin, err, sizeof err) != 0) {
		fprintf(stderr, "tls_route_init: %s\n", err);
		return -1;
	}
	return 0;
}

/* One end of the transport: the queue it sends into and the one it
 * receives from. The client sends into c2s, the server into s2c. */
struct end {
	struct queue *out, *in;
};

static struct end cli_end = { &c2s, &s2c }, srv_end = { &s2c, &c2s };

static int end_send(void *ctx, const unsigned char *buf, size_t len)
{
	return q_send(((struct end *)ctx)->out, buf, len);
}

static int end_recv(void *ctx, unsigned char *buf, size_t len)
{
	return q_recv(((struct end *)ctx)->in, buf, len);
}

/* Both ends of a fresh connection over empty queues, before the
 * handshake: 0, or -1. Either way both are initialised, for close_pair. */
static int open_pair(struct tls_conn *c, mbedtls_ssl_context *s, struct tls_route *r)
{
	int bad;

	c2s.len = s2c.len = 0;
	c2s.cap = s2c.cap = QMAX;
	mbedtls_ssl_init(s);
	bad = mbedtls_ssl_setup(s, &sconf) != 0;
	bad |= tls_conn_start(c, r, -1) != 0;
	mbedtls_ssl_set_bio(&c->ssl, &cli_end, end_send, end_recv, NULL);
	mbedtls_ssl_set_bio(s, &srv_end, end_send, end_recv, NULL);
	return bad ? -1 : 0;
}

/* A fresh connection, handshake done: 0, or -1. */
static int connect_pair(struct tls_conn *c, mbedtls_ssl_context *s)
{
	int cdone = 0, sdone = 0, rounds = 0;
	const char *why = NULL;

	if (open_pair(c, s, &route) != 0)
		return -1;
	while (!(cdone && sdone) && rounds++ < 100) {
		int r;

		if (!cdone) {
			r = tls_handshake(c, &why);
			if (r < 0) {
				fprintf(stderr, "client handshake: %s\n", why);
				return -1;
			}
			cdone = r == 0;
		}
		if (!sdone) {
			r = mbedtls_ssl_handshake(s);
			if (r != 0 && r != MBEDTLS_ERR_SSL_WANT_READ && r != MBEDTLS_ERR_SSL_WANT_WRITE)
				return -1;
			sdone = r == 0;
		}
	}
	return cdone && sdone ? 0 : -1;
}

static void close_pair(struct tls_conn *c, mbedtls_ssl_context *s)
{
	tls_conn_free(c);
	mbedtls_ssl_free(s);
}

static void pattern(unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 7 + i / 251);
}

/* Everything the server can read now, appended at got + *n. A record it
 * takes and ignores (a warning alert) is answered WANT_READ with more
 * input waiting behind it. */
static void server_drain(mbedtls_ssl_context *s, unsigned char *got, size_t *n, size_t max)
{
	int r;

	do {
		while (*n < max && (r = mbedtls_ssl_read(s, got + *n, max - *n)) > 0)
			*n += (size_t)r;
	} while (*n < max && r == MBEDTLS_ERR_SSL_WANT_READ && (c2s.len > 0 || mbedtls_ssl_check_pending(s)));
}

/* Writes buf[*off..n) until done or blocked; the bridge's way: a blocked
 * write is called again from the same offset. 0 done, 1 blocked, -1
 * error. */
static int client_write(struct tls_conn *c, const unsigned char *buf, size_t *off, size_t n)
{
	while (*off < n) {
		ssize_t w = tls_write(c, buf + *off, n - *off);
		if (w == -1)
			return 1;
		if (w <= 0)
			return -1;
		*off += (size_t)w;
	}
	return 0;
}

#define BODY ((size_t)256 * 1024)

/* a request body each byte of which tells its place, and what the server
 * received of it (room for a copy too many) */
static unsigned char big[BODY], big_got[BODY + 65536];

/* A connection for a test, or a failed check: 0, or -1. */
static int start(struct tls_conn *c, mbedtls_ssl_context *s)
{
	if (connect_pair(c, s) == 0)
		return 0;
	CHECK(!"connection set up");
	close_pair(c, s);
	return -1;
}

/* The server asks to renegotiate while a request record is half sent.
 * The bridge refuses (renegotiation is off); mbedTLS 2.28, asked to send
 * that refusal, flushes the waiting record instead. The write that
 * blocked is then called again with the same bytes and must count them as
 * sent: writing them again would hand the upstream a second copy. */
static void test_renegotiation_while_write_blocked(void)
{
	struct tls_conn c;
	mbedtls_ssl_context s;
	unsigned char rbuf[64];
	size_t off = 0, n = 0;

	if (start(&c, &s) != 0)
		return;
	/* room for one record and a part of the next */
	c2s.cap = 16384 + 5000;
	CHECK(client_write(&c, big, &off, BODY) == 1);
	CHECK(c.wr_pending > 0 && c.ssl.out_left > 0); /* a record half sent */
	CHECK(mbedtls_ssl_renegotiate(&s) == 0);       /* HelloRequest sent */
	CHECK(s2c.len > 0);
	server_drain(&s, big_got, &n, BODY + 65536);
	c2s.cap = QMAX;
	/* the read answers the HelloRequest: the half-sent record goes out */
	CHECK(tls_read(&c, rbuf, sizeof rbuf) == -1);
	CHECK(c.ssl.out_left == 0);
	CHECK(client_write(&c, big, &off, BODY) == 0);
	server_drain(&s, big_got, &n, BODY + 65536);
	CHECK(n == BODY); /* not one byte twice */
	CHECK(n >= BODY && memcmp(big_got, big, BODY) == 0);
	close_pair(&c, &s);
}

/* A read that answers the server (the refusal of a HelloRequest) cannot
 * send its alert: the transport is full. The next write must send the
 * alert and then the caller's bytes; mbedtls_ssl_write alone would flush
 * the alert and report the caller's bytes as written. */
static void test_alert_waiting_before_write(void)
{
	struct tls_conn c;
	mbedtls_ssl_context s;
	unsigned char msg[3000], got[4096], rbuf[64];
	size_t off = 0, n = 0;

	if (start(&c, &s) != 0)
		return;
	pattern(msg, sizeof msg);
	CHECK(mbedtls_ssl_renegotiate(&s) == 0);
	c2s.cap = c2s.len; /* no room */
	CHECK(tls_read(&c, rbuf, sizeof rbuf) == -1);
	CHECK(c.ssl.out_left > 0 && c.want_rd == EPOLLOUT); /* the alert waits */
	CHECK(client_write(&c, msg, &off, sizeof msg) == 1 && off == 0);
	c2s.cap = QMAX;
	CHECK(client_write(&c, msg, &off, sizeof msg) == 0);
	server_drain(&s, got, &n, sizeof got);
	CHECK(n == sizeof msg && memcmp(got, msg, sizeof msg) == 0);
	close_pair(&c, &s);
}

/* A write that blocked may be called again with more bytes behind it
 * (the bridge's buffer filled meanwhile): exactly the blocked length is
 * written. Called with fewer, the caller's bytes changed: an error. */
static void test_blocked_write_length(void)
{
	struct tls_conn c;
	mbedtls_ssl_context s;
	size_t n = 0;
	ssize_t w;

	if (start(&c, &s) != 0)
		return;
	c2s.cap = c2s.len + 10;
	CHECK(tls_write(&c, big, 100) == -1 && c.wr_pending == 100);
	c2s.cap = QMAX;
	w = tls_write(&c, big, 5000);
	CHECK(w == 100 && c.wr_pending == 0);
	w = tls_write(&c, big + 100, BODY - 100); /* one record at most */
	CHECK(w == 16384);
	server_drain(&s, big_got, &n, BODY);
	CHECK(n == 100 + 16384 && memcmp(big_got, big, n) == 0);
	c2s.cap = c2s.len + 10;
	CHECK(tls_write(&c, big, 500) == -1 && c.wr_pending == 500);
	CHECK(tls_write(&c, big, 499) == -2);
	close_pair(&c, &s);
}

/* A read shorter than the record leaves the rest decrypted inside
 * mbedTLS, with nothing left on the transport to announce it: tls_pending
 * says how much, and reads return it without new input. The bridge reads
 * on while it is not 0. */
static void test_pending_after_short_read(void)
{
	struct tls_conn c;
	mbedtls_ssl_context s;
	unsigned char msg[10000], got[10000];
	size_t n = 0;
	ssize_t r;

	if (start(&c, &s) != 0)
		return;
	pattern(msg, sizeof msg);
	CHECK(mbedtls_ssl_write(&s, msg, sizeof msg) == (int)sizeof msg);
	CHECK(tls_read(&c, got, 1000) == 1000);
	CHECK(s2c.len == 0 && tls_pending(&c) == sizeof msg - 1000);
	n = 1000;
	while (n < sizeof msg && (r = tls_read(&c, got + n, 4000)) > 0)
		n += (size_t)r;
	CHECK(n == sizeof msg && tls_pending(&c) == 0 && memcmp(got, msg, sizeof msg) == 0);
	CHECK(tls_read(&c, got, 10) == -1 && c.want_rd == EPOLLIN);
	/* close_notify is the end (0); a transport that just ends is -3 */
	CHECK(mbedtls_ssl_close_notify(&s) == 0);
	CHECK(tls_read(&c, got, 10) == 0);
	close_pair(&c, &s);
}

/* The pin is the whole trust decision: a route pinned to another
 * certificate fails the handshake with a reason. */
static void test_wrong_pin(void)
{
	struct tls_route other;
	struct tls_conn c;
	mbedtls_ssl_context s;
	char err[200];
	const char *why = NULL;
	int r = 1, rounds = 0;

	if (tls_route_init(&other, "localhost", NULL,
			   "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", err,
			   sizeof err) != 0) {
		CHECK(!"route");
		return;
	}
	CHECK(open_pair(&c, &s, &other) == 0);
	while (r == 1 && rounds++ < 100) {
		r = tls_handshake(&c, &why);
		(void)mbedtls_ssl_handshake(&s);
	}
	CHECK(r == -1);
	CHECK_STR(why, "upstream certificate does not match tls_pin");
	CHECK(other.has_session == 0); /* a refused handshake keeps nothing */
	close_pair(&c, &s);
	tls_route_free(&other);
}

/* Runs both sides' handshakes until neither blocks: the client's result. */
static int handshake_both(struct tls_conn *c, mbedtls_ssl_context *s, const char **why)
{
	int r = 1, rounds = 0;

	while (r == 1 && rounds++ < 100) {
		r = tls_handshake(c, why);
		(void)mbedtls_ssl_handshake(s);
	}
	return r;
}

/* A route keeps the session of a verified handshake and offers it next
 * time: the server resumes it. A resumed session is still held to the
 * route's pin: one that came from another certificate's handshake fails. */
static void test_resumption(void)
{
	struct tls_route other;
	struct tls_conn c;
	mbedtls_ssl_context s;
	const char *why = NULL;
	char err[200];
	int before;

	/* the shared route made new: nothing kept from the tests before */
	route_again();
	CHECK(route.has_session == 0);
	CHECK(connect_pair(&c, &s) == 0);
	CHECK(route.has_session == 1);
	close_pair(&c, &s);
	before = resumed;
	CHECK(connect_pair(&c, &s) == 0);
	CHECK(resumed == before + 1);
	close_pair(&c, &s);
	/* a session older than TLS_SESSION_MAX_S is not offered: a full
	 * handshake, its certificate checked again */
	route.session.start = mbedtls_time(NULL) - TLS_SESSION_MAX_S - 1;
	before = resumed;
	CHECK(connect_pair(&c, &s) == 0);
	CHECK(resumed == before && route.has_session == 1);
	close_pair(&c, &s);

	if (tls_route_init(&other, "localhost", NULL,
			   "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", err,
			   sizeof err) != 0) {
		CHECK(!"route");
		return;
	}
	{
		/* the good route's session planted in the wrongly pinned one */
		unsigned char buf[4096];
		size_t n = 0;

		CHECK(mbedtls_ssl_session_save(&route.session, buf, sizeof buf, &n) == 0);
		mbedtls_ssl_session_init(&other.session);
		CHECK(mbedtls_ssl_session_load(&other.session, buf, n) == 0);
		other.has_session = 1;
	}
	before = resumed;
	CHECK(open_pair(&c, &s, &other) == 0);
	CHECK(handshake_both(&c, &s, &why) == -1);
	CHECK(resumed == before + 1);
	CHECK_STR(why, "upstream certificate does not match tls_pin");
	close_pair(&c, &s);
	tls_route_free(&other);
}

int main(void)
{
	pattern(big, BODY);
	if (setup() != 0) {
		fprintf(stderr, "test_tls: the test server could not be set up\n");
		return 1;
	}
	test_renegotiation_while_write_blocked();
	test_alert_waiting_before_write();
	test_blocked_write_length();
	test_pending_after_short_read();
	test_wrong_pin();
	test_resumption();
	tls_route_free(&route);
	mbedtls_ssl_cache_free(&scache);
	mbedtls_ssl_config_free(&sconf);
	mbedtls_x509_crt_free(&scrt);
	mbedtls_pk_free(&skey);
	mbedtls_ctr_drbg_free(&sdrbg);
	mbedtls_entropy_free(&sentropy);
	free(c2s.b);
	free(s2c.b);
	return unit_done("test_tls");
}
