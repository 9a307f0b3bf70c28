/* tls: the bridge's TLS client side for tls:IP:PORT upstreams (mbedTLS
 * 2.28), verified against CA roots or a pinned SHA-256 of the peer's
 * certificate. Everything that reads files happens in tls_route_init(),
 * in PID 1, before the bridge gives up its file access. */
#ifndef WARD_TLS_H
#define WARD_TLS_H

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <sys/types.h>

#define TLS_DEFAULT_CA "/etc/ssl/certs/ca-certificates.crt"
/* A kept session is offered for this long after its full handshake. */
#define TLS_SESSION_MAX_S 3600

struct tls_route {
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
	mbedtls_ssl_config conf;
	mbedtls_x509_crt ca;
	unsigned char pin[32];
	int has_pin;
	char name[256]; /* SNI and the name checked in the certificate */
	/* The last session this route's server gave, verified: the next
	 * connection offers it (a ticket or a session id), and a server that
	 * takes it skips the certificate and the key exchange, about half a
	 * connection's cost on loopback. Only this route's connections see it. */
	mbedtls_ssl_session session;
	int has_session;
};

struct tls_conn {
	mbedtls_ssl_context ssl;
	int fd;
	struct tls_route *route; /* its session kept there after a handshake */
	/* What the handshake, a read and a write wait for on the socket when
	 * they could not go on: EPOLLIN or EPOLLOUT (0: not blocked). A TLS
	 * read may need the socket writable and a write readable; the loop
	 * polls for just that, not for every readiness, which it would spin on. */
	unsigned want_hs, want_rd, want_wr;
	/* the length of a write that blocked: mbedTLS must be called again
	 * with the same bytes and length (more may have arrived behind them) */
	size_t wr_pending;
};

/* ca: a PEM bundle (NULL: the default); pin: "sha256:HEX" or NULL. */
int tls_route_init(struct tls_route *t, const char *name, const char *ca, const char *pin, char *err,
		   size_t errsize);
/* In a newly forked bridge: the generator was seeded once in PID 1, and
 * every bridge forked from it would draw the same bytes (client randoms,
 * ephemeral keys). 0, or -1. */
int tls_route_reseed(struct tls_route *t);

void tls_route_free(struct tls_route *t);

/* "sha256:" + 64 hex digits -> 32 bytes. */
int tls_parse_pin(const char *s, unsigned char out[32]);

/* Offers the route's last session, if it has one. */
int tls_conn_start(struct tls_conn *c, struct tls_route *t, int fd);
/* 0 done (the session then kept in the route for the next connection),
 * 1 call again when the socket is ready, -1 failed (why set). */
int tls_handshake(struct tls_conn *c, const char **why);
/* > 0 bytes, 0 end of stream (close_notify), -1 would block, -2 error,
 * -3 the TCP stream ended without close_notify (an end, or a cut). */
ssize_t tls_read(struct tls_conn *c, void *buf, size_t len);
ssize_t tls_write(struct tls_conn *c, const void *buf, size_t len);
/* Plaintext already decrypted and waiting. */
size_t tls_pending(struct tls_conn *c);
/* The end of what this side sends: a close_notify alert (a stream route's
 * half-close). */
void tls_close_notify(struct tls_conn *c);
void tls_conn_free(struct tls_conn *c);

#endif
