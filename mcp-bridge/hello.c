#define _GNU_SOURCE
#include "mcp-bridge/hello.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "mcp-bridge/upstream.h"

#define REC_HEAD 5
#define REC_HANDSHAKE 22
#define REC_MAX 16384 /* a record's plaintext, RFC 8446 5.1 */
#define HS_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0x0000
#define SNI_HOST_NAME 0
#define MAX_RECORDS 16 /* a hello in more is refused: each read parses it again */

/* A cursor over the hello's bytes: every read is bounded by it. */
struct cur {
	const unsigned char *p;
	size_t n;
};

static int take(struct cur *c, size_t k, struct cur *out)
{
	if (c->n < k)
		return -1;
	if (out) {
		out->p = c->p;
		out->n = k;
	}
	c->p += k;
	c->n -= k;
	return 0;
}

static int u8(struct cur *c, unsigned *v)
{
	if (c->n < 1)
		return -1;
	*v = c->p[0];
	return take(c, 1, NULL);
}

static int u16(struct cur *c, unsigned *v)
{
	if (c->n < 2)
		return -1;
	*v = (unsigned)c->p[0] << 8 | c->p[1];
	return take(c, 2, NULL);
}

/* A vector with a length prefix of w bytes (1 or 2). */
static int vec(struct cur *c, int w, struct cur *out)
{
	unsigned len;

	if ((w == 1 ? u8(c, &len) : u16(c, &len)) != 0)
		return -1;
	return take(c, len, out);
}

/* The server_name extension's host name, checked as a DNS name. */
static const char *server_name(struct cur e, char *name, size_t size)
{
	struct cur list, host;
	unsigned type;
	size_t i;

	if (vec(&e, 2, &list) != 0 || e.n)
		return "a malformed server_name extension";
	while (list.n) {
		if (u8(&list, &type) != 0 || vec(&list, 2, &host) != 0)
			return "a malformed server_name extension";
		if (type != SNI_HOST_NAME)
			continue;
		if (name[0])
			return "two host names in server_name";
		if (!host.n || host.n >= size || host.n > UPSTREAM_NAME_MAX + 1 ||
		    !upstream_name_ok((const char *)host.p, host.n))
			return "a server name that is not a DNS name";
		for (i = 0; i < host.n; i++)
			name[i] = (char)tolower(host.p[i]);
		name[host.n] = '\0';
		if (host.n && name[host.n - 1] == '.')
			name[host.n - 1] = '\0';
	}
	return NULL;
}

/* The ClientHello's body (after its 4-byte handshake header). */
static const char *client_hello(struct cur h, char *name, size_t size)
{
	struct cur exts, ext;
	unsigned type, seen_sni = 0;

	if (take(&h, 2 + 32, NULL) != 0 || vec(&h, 1, NULL) != 0 || vec(&h, 2, NULL) != 0 || vec(&h, 1, NULL) != 0)
		return "a malformed ClientHello";
	if (!h.n)
		return NULL; /* no extensions at all: no server name */
	if (vec(&h, 2, &exts) != 0 || h.n)
		return "a malformed ClientHello";
	while (exts.n) {
		if (u16(&exts, &type) != 0 || vec(&exts, 2, &ext) != 0)
			return "a malformed ClientHello extension";
		/* an encrypted ClientHello (ECH) is judged by its outer name: a
		 * GREASE one (Chrome's, with no ECH config) names the host
		 * itself; a real one names its provider's public name, which a
		 * rule must then allow */
		if (type != EXT_SERVER_NAME)
			continue;
		if (seen_sni++)
			return "two server_name extensions";
		{
			const char *why = server_name(ext, name, size);
			if (why)
				return why;
		}
	}
	return NULL;
}

int hello_server_name(const unsigned char *buf, size_t len, char *name, size_t size, const char **why)
{
	static unsigned char hs[HELLO_MAX];
	size_t off = 0, got = 0, need = 0;
	int records = 0;

	if (!size)
		return *why = "no room for the name", HELLO_BAD;
	name[0] = '\0';
	/* the handshake message, joined from the records that carry it */
	while (off < len) {
		size_t rlen;

		if (len - off < REC_HEAD)
			return HELLO_MORE;
		if (++records > MAX_RECORDS)
			return *why = "a ClientHello in more than 16 records", HELLO_BAD;
		if (buf[off] != REC_HANDSHAKE || buf[off + 1] != 3)
			return *why = "not a TLS ClientHello (the proxy carries TLS only)", HELLO_BAD;
		rlen = (size_t)buf[off + 3] << 8 | buf[off + 4];
		if (!rlen || rlen > REC_MAX)
			return *why = "a TLS record of a bad length", HELLO_BAD;
		if (len - off - REC_HEAD < rlen)
			return HELLO_MORE;
		if (got + rlen > sizeof hs)
			return *why = "a ClientHello longer than 32 KiB", HELLO_BAD;
		memcpy(hs + got, buf + off + REC_HEAD, rlen);
		got += rlen;
		off += REC_HEAD + rlen;
		if (got >= 4) {
			if (hs[0] != HS_CLIENT_HELLO)
				return *why = "the first TLS message is not a ClientHello", HELLO_BAD;
			need = 4 + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3]);
			if (need > sizeof hs)
				return *why = "a ClientHello longer than 32 KiB", HELLO_BAD;
			if (got >= need)
				break;
		}
	}
	if (!need || got < need)
		return HELLO_MORE;
	*why = client_hello((struct cur){ hs + 4, need - 4 }, name, size);
	return *why ? HELLO_BAD : HELLO_OK;
}
