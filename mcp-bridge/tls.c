#define _GNU_SOURCE
#include "mcp-bridge/tls.h"

#include <errno.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/platform_time.h>
#include <mbedtls/sha256.h>
#include <mbedtls/ssl_internal.h> /* mbedtls_ssl_flush_output */
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int tls_parse_pin(const char *s, unsigned char out[32])
{
	int i;

	if (strncmp(s, "sha256:", 7) != 0 || strlen(s + 7) != 64)
		return -1;
	for (i = 0; i < 32; i++) {
		int hi = hexval(s[7 + (size_t)i * 2]), lo = hexval(s[8 + (size_t)i * 2]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

int tls_route_init(struct tls_route *t, const char *name, const char *ca, const char *pin, char *err,
		   size_t errsize)
{
	char msg[128];
	int rc;

	memset(t, 0, sizeof *t);
	mbedtls_entropy_init(&t->entropy);
	mbedtls_ctr_drbg_init(&t->drbg);
	mbedtls_ssl_config_init(&t->conf);
	mbedtls_x509_crt_init(&t->ca);
	mbedtls_ssl_session_init(&t->session);
	snprintf(t->name, sizeof t->name, "%s", name);
	if (pin) {
		if (tls_parse_pin(pin, t->pin) != 0) {
			snprintf(err, errsize, "tls_pin: want sha256: and 64 hex digits");
			return -1;
		}
		t->has_pin = 1;
	}
	if ((rc = mbedtls_ctr_drbg_seed(&t->drbg, mbedtls_entropy_func, &t->entropy,
					(const unsigned char *)"ward-bridge", 11)) != 0 ||
	    (rc = mbedtls_ssl_config_defaults(&t->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
					      MBEDTLS_SSL_PRESET_DEFAULT)) != 0) {
		mbedtls_strerror(rc, msg, sizeof msg);
		snprintf(err, errsize, "tls: %s", msg);
		return -1;
	}
	if (!t->has_pin) {
		rc = mbedtls_x509_crt_parse_file(&t->ca, ca ? ca : TLS_DEFAULT_CA);
		if (rc < 0) {
			mbedtls_strerror(rc, msg, sizeof msg);
			snprintf(err, errsize, "tls_ca %s: %s", ca ? ca : TLS_DEFAULT_CA, msg);
			return -1;
		}
		mbedtls_ssl_conf_ca_chain(&t->conf, &t->ca, NULL);
		mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
	} else {
		/* the pin is the whole trust decision, checked after the handshake */
		mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_OPTIONAL);
	}
	mbedtls_ssl_conf_min_version(&t->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_rng(&t->conf, mbedtls_ctr_drbg_random, &t->drbg);
	mbedtls_ssl_conf_session_tickets(&t->conf, MBEDTLS_SSL_SESSION_TICKETS_ENABLED);
	return 0;
}

int tls_route_reseed(struct tls_route *t)
{
	return mbedtls_ctr_drbg_reseed(&t->drbg, (const unsigned char *)"fork", 4) == 0 ? 0 : -1;
}

void tls_route_free(struct tls_route *t)
{
	mbedtls_ssl_session_free(&t->session);
	mbedtls_x509_crt_free(&t->ca);
	mbedtls_ssl_config_free(&t->conf);
	mbedtls_ctr_drbg_free(&t->drbg);
	mbedtls_entropy_free(&t->entropy);
}

static int bio_send(void *ctx, const unsigned char *buf, size_t len)
{
	ssize_t n = send(*(int *)ctx, buf, len, MSG_NOSIGNAL);

	if (n >= 0)
		return (int)n;
	return errno == EAGAIN || errno == EINTR ? MBEDTLS_ERR_SSL_WANT_WRITE : MBEDTLS_ERR_NET_SEND_FAILED;
}

static int bio_recv(void *ctx, unsigned char *buf, size_t len)
{
	ssize_t n = recv(*(int *)ctx, buf, len, 0);

	if (n >= 0)
		return (int)n;
	return errno == EAGAIN || errno == EINTR ? MBEDTLS_ERR_SSL_WANT_READ : MBEDTLS_ERR_NET_RECV_FAILED;
}

static void forget_session(struct tls_route *t)
{
	mbedtls_ssl_session_free(&t->session);
	mbedtls_ssl_session_init(&t->session);
	t->has_session = 0;
}

int tls_conn_start(struct tls_conn *c, struct tls_route *t, int fd)
{
	memset(c, 0, sizeof *c); /* nothing waits, nothing is pending */
	mbedtls_ssl_init(&c->ssl);
	c->fd = fd;
	c->route = t;
	if (mbedtls_ssl_setup(&c->ssl, &t->conf) != 0 || mbedtls_ssl_set_hostname(&c->ssl, t->name) != 0)
		return -1;
	/* a session the server no longer takes costs nothing: it answers
	 * with a full handshake, verified as any other. One older than
	 * TLS_SESSION_MAX_S is not offered: the certificate and the roots are
	 * checked again at least that often. */
	if (t->has_session && mbedtls_time(NULL) - t->session.start > TLS_SESSION_MAX_S)
		forget_session(t);
	if (t->has_session && mbedtls_ssl_set_session(&c->ssl, &t->session) != 0)
		forget_session(t); /* (no memory for a copy) a full handshake */
	mbedtls_ssl_set_bio(&c->ssl, &c->fd, bio_send, bio_recv, NULL);
	return 0;
}

/* Records in *want what the call that returned rc waits for (0 if it did
 * not block); 1 if it would block. */
static int blocked(unsigned *want, int rc)
{
	*want = rc == MBEDTLS_ERR_SSL_WANT_READ ? EPOLLIN : rc == MBEDTLS_ERR_SSL_WANT_WRITE ? EPOLLOUT : 0;
	return *want != 0;
}

/* Why a handshake failed, in words that say what to do. A server that
 * speaks only TLS 1.3 answers mbedTLS 2.28's TLS 1.2 hello with a
 * protocol_version alert. */
static const char *handshake_failure(const struct tls_conn *c, int rc)
{
	if (rc == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED)
		return "upstream certificate not trusted (or not for the route's host name)";
	if (rc == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE && c->ssl.in_msg &&
	    c->ssl.in_msg[1] == MBEDTLS_SSL_ALERT_MSG_PROTOCOL_VERSION)
		return "the upstream speaks only TLS 1.3, and this build's mbedTLS 2.28 speaks TLS 1.2";
	if (rc == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE && c->ssl.in_msg &&
	    c->ssl.in_msg[1] == MBEDTLS_SSL_ALERT_MSG_HANDSHAKE_FAILURE)
		return "TLS handshake with the upstream failed (no cipher suite or version in common)";
	return "TLS handshake with the upstream failed";
}

/* The session of a handshake that passed every check, kept for the
 * route's next connection (a resumed one keeps the peer's certificate, so
 * a pin is checked against it as before). Without room for it, the route
 * goes on with full handshakes. */
static void keep_session(struct tls_conn *c)
{
	struct tls_route *t = c->route;

	forget_session(t);
	t->has_session = mbedtls_ssl_get_session(&c->ssl, &t->session) == 0;
}

int tls_handshake(struct tls_conn *c, const char **why)
{
	int rc = mbedtls_ssl_handshake(&c->ssl);

	if (blocked(&c->want_hs, rc))
		return 1;
	if (rc != 0) {
		*why = handshake_failure(c, rc);
		return -1;
	}
	if (c->route->has_pin) {
		const mbedtls_x509_crt *peer = mbedtls_ssl_get_peer_cert(&c->ssl);
		unsigned char h[32];

		if (!peer || mbedtls_sha256_ret(peer->raw.p, peer->raw.len, h, 0) != 0 ||
		    memcmp(h, c->route->pin, 32) != 0) {
			*why = "upstream certificate does not match tls_pin";
			return -1;
		}
	}
	keep_session(c);
	return 0;
}

ssize_t tls_read(struct tls_conn *c, void *buf, size_t len)
{
	int rc = mbedtls_ssl_read(&c->ssl, buf, len);

	if (blocked(&c->want_rd, rc))
		return -1;
	if (rc > 0)
		return rc;
	/* mbedTLS 2.28 reads the TCP stream's end without close_notify as 0 */
	if (rc == 0 || rc == MBEDTLS_ERR_SSL_CONN_EOF)
		return -3;
	return rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY ? 0 : -2;
}

ssize_t tls_write(struct tls_conn *c, const void *buf, size_t len)
{
	int rc;

	/* A write that blocked is repeated with exactly its length: given a
	 * longer one, mbedTLS 2.28 sends the record it holds and reports the
	 * new length as written, and the bytes between were lost. One record
	 * (16 KiB) at a time. */
	if (c->wr_pending) {
		if (len < c->wr_pending)
			return -2; /* the caller's bytes changed under a blocked write */
		len = c->wr_pending;
		/* A read that had to answer (a HelloRequest refused with an
		 * alert) flushes what is waiting instead: the record went, and
		 * writing it again would send those bytes twice. */
		if (c->ssl.out_left == 0) {
			c->wr_pending = 0;
			return (ssize_t)len;
		}
	} else {
		/* A record of mbedTLS's own that a read left waiting goes
		 * first: mbedtls_ssl_write would flush it and report the
		 * caller's bytes as written. */
		if (c->ssl.out_left) {
			rc = mbedtls_ssl_flush_output(&c->ssl);
			if (blocked(&c->want_wr, rc))
				return -1;
			if (rc != 0)
				return -2;
		}
		if (len > 16384)
			len = 16384;
	}
	rc = mbedtls_ssl_write(&c->ssl, buf, len);
	if (blocked(&c->want_wr, rc)) {
		c->wr_pending = len;
		return -1;
	}
	c->wr_pending = 0;
	return rc >= 0 ? rc : -2;
}

size_t tls_pending(struct tls_conn *c)
{
	return mbedtls_ssl_get_bytes_avail(&c->ssl);
}

void tls_close_notify(struct tls_conn *c)
{
	/* best effort: a blocked alert is not retried (the TCP FIN follows) */
	(void)mbedtls_ssl_close_notify(&c->ssl);
}

void tls_conn_free(struct tls_conn *c)
{
	mbedtls_ssl_free(&c->ssl);
}
