/* The egress proxy's pure parts: [proxy] allow rules (mcp-bridge/allow.c),
 * the CONNECT head (proxyreq.c), the ClientHello's server name (hello.c),
 * and the [proxy] section as the config reader takes it. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "init/config/config.h"
#include "mcp-bridge/allow.h"
#include "mcp-bridge/hello.h"
#include "mcp-bridge/proxyreq.h"
#include "mcp-bridge/resolve.h"
#include "unit.h"

static int parse(const char *s, struct allow_rule *r)
{
	const char *why = NULL;
	int rc = allow_parse(s, strlen(s), r, &why);

	if (rc != 0 && !why)
		return -2; /* a refusal must say why */
	return rc;
}

static void test_rules(void)
{
	static const struct {
		const char *in, *out;
	} good[] = {
		{ "github.com", "github.com:443" },
		{ "GitHub.COM.", "github.com:443" },
		{ "*.githubusercontent.com", "*.githubusercontent.com:443" },
		{ "registry.npmjs.org:8443", "registry.npmjs.org:8443" },
		{ "db:5432", "db:5432" },
		{ "host1:80-81", "host1:80-81" },
		{ "10.0.0.5", "10.0.0.5:443" },
		{ "10.1.2.3/8:5432", "10.0.0.0/8:5432" },
		{ "[fd00::1]:443", "[fd00::1]:443" },
		{ "[fd00::1]/8:80", "[fd00::]/8:80" },
		{ "[::ffff:10.0.0.1]/104", "10.0.0.0/8:443" },
		{ "192.168.1.0/24", "192.168.1.0/24:443" },
	};
	static const char *const bad[] = { "",	       ":443",	       "*.com",	       "a*.example.com", "*",
					   "exa mple.com", "a..b",	       "host:0",       "host:65536",	 "host:90-80",
					   "10.0.0.256",   "10.0.0.0/33",    "[fd00::1",     "[fd00::1]x",	 "fd00::1:443",
					   "[fd00::1]/129", "-a.com",	       "host:",	       "1.2.3",		 "10.0.0.1/8/8",
					   "11I10I.." /* found by fuzz_allow: a final dot kept */ };
	struct allow_rule r;
	char buf[300];
	size_t i;

	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		int rc = parse(good[i].in, &r);
		CHECK(rc == 0);
		if (rc == 0) {
			CHECK_STR(allow_text(&r, buf, sizeof buf), good[i].out);
		} else {
			fprintf(stderr, "  good: %s\n", good[i].in);
		}
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = parse(bad[i], &r);
		CHECK(rc == -1);
		if (rc != -1)
			fprintf(stderr, "  bad: %s (%d)\n", bad[i], rc);
	}
	/* a NUL inside is refused, whatever comes after it */
	CHECK(allow_parse("a.com\0x", 7, &r, &(const char *){ NULL }) == -1);
}

static void test_match(void)
{
	const char *rules[] = { "github.com", "*.githubusercontent.com", "db.test:5432", "10.0.0.0/8:5432",
				"[fd00::]/8:443", "ports.test:8000-8010" };
	struct allow_rule v[6];
	unsigned char b[16];
	int i, fam;

	for (i = 0; i < 6; i++)
		CHECK(parse(rules[i], &v[i]) == 0);
	CHECK(allow_match(v, 6, "github.com", 443) == &v[0]);
	CHECK(allow_match(v, 6, "GITHUB.com.", 443) == &v[0]);
	CHECK(allow_match(v, 6, "github.com", 80) == NULL);
	CHECK(allow_match(v, 6, "api.github.com", 443) == NULL);	      /* exact only */
	CHECK(allow_match(v, 6, "evilgithub.com", 443) == NULL);
	CHECK(allow_match(v, 6, "raw.githubusercontent.com", 443) == &v[1]);
	CHECK(allow_match(v, 6, "a.b.githubusercontent.com", 443) == &v[1]);
	CHECK(allow_match(v, 6, "githubusercontent.com", 443) == NULL);	      /* the suffix itself is not under it */
	CHECK(allow_match(v, 6, "xgithubusercontent.com", 443) == NULL);
	CHECK(allow_match(v, 6, "db.test", 5432) == &v[2]);
	CHECK(allow_match(v, 6, "10.1.2.3", 5432) == &v[3]);
	CHECK(allow_match(v, 6, "10.1.2.3", 443) == NULL);
	CHECK(allow_match(v, 6, "11.1.2.3", 5432) == NULL);
	CHECK(allow_match(v, 6, "::ffff:10.1.2.3", 5432) == &v[3]); /* IPv4-mapped is the IPv4 address */
	CHECK(allow_match(v, 6, "fd12::1", 443) == &v[4]);
	CHECK(allow_match(v, 6, "fe80::1", 443) == NULL);
	CHECK(allow_match(v, 6, "ports.test", 8005) == &v[5]);
	CHECK(allow_match(v, 6, "ports.test", 8011) == NULL);
	/* a name never matches an address rule, an address never a name rule */
	CHECK(allow_match(v, 6, "10.0.0.1.nip.io", 5432) == NULL);
	CHECK(allow_literal("10.9.8.7", &fam, b) && fam == AF_INET && b[0] == 10 && b[3] == 7);
	CHECK(allow_covers(v, 6, AF_INET, b, 5432) == &v[3]);
	CHECK(allow_covers(v, 6, AF_INET, b, 443) == NULL);
	CHECK(!allow_literal("github.com", &fam, b));
}

/* What an address rule lets through of the addresses the proxy refuses. */
static void test_exempt(void)
{
	const char *rules[] = { "10.20.0.6/32:443", "0.0.0.0/0:9443", "127.0.0.1:5432", "[::]/0:9443", "169.254.0.0/16:80" };
	struct allow_rule v[5];
	unsigned char b[16];
	int i, fam;

	for (i = 0; i < 5; i++)
		CHECK(parse(rules[i], &v[i]) == 0);
#define UNDER(addr, port) (allow_literal(addr, &fam, b), resolver_refuses_under(fam, b, port, v, 5))
	CHECK(UNDER("10.20.0.6", 443) == NULL);		   /* named: a database in the pod */
	CHECK(UNDER("10.20.0.7", 443) != NULL);		   /* its neighbour is not */
	CHECK(UNDER("127.0.0.1", 5432) == NULL);	   /* loopback named exactly */
	CHECK(UNDER("203.0.113.5", 9443) == NULL);	   /* a public address: nothing to lift */
	CHECK(UNDER("127.0.0.1", 9443) != NULL);	   /* "any address" is not loopback */
	CHECK(UNDER("169.254.169.254", 9443) != NULL);	   /* ...nor the metadata service */
	CHECK(UNDER("10.0.0.1", 9443) != NULL);
	CHECK(UNDER("169.254.169.254", 80) == NULL);	   /* link-local named by its /16 */
	CHECK(UNDER("0.0.0.0", 9443) != NULL);		   /* unspecified: never */
	fam = AF_INET6;
	CHECK(inet_pton(AF_INET6, "::ffff:169.254.169.254", b) == 1 && resolver_refuses_under(fam, b, 9443, v, 5));
	CHECK(inet_pton(AF_INET6, "64:ff9b::a9fe:a9fe", b) == 1 && resolver_refuses_under(fam, b, 9443, v, 5));
	CHECK(inet_pton(AF_INET6, "2002:a9fe:a9fe::1", b) == 1 && resolver_refuses_under(fam, b, 9443, v, 5));
	CHECK(inet_pton(AF_INET6, "fd00::1", b) == 1 && resolver_refuses_under(fam, b, 9443, v, 5));
	CHECK(inet_pton(AF_INET6, "2001:db8::1", b) == 1 && !resolver_refuses_under(fam, b, 9443, v, 5));
#undef UNDER
}

#define CONNECT_ONLY (1u << HTTP_CONNECT)
#define WITH_GET (CONNECT_ONLY | (1u << HTTP_GET) | (1u << HTTP_HEAD))

static int req(const char *head, struct proxy_req *r)
{
	return proxyreq_parse(head, strlen(head), CONNECT_ONLY, r);
}

static int plain(const char *head, struct proxy_req *r)
{
	return proxyreq_parse(head, strlen(head), WITH_GET, r);
}

/* The head a plain request becomes for its host, or "refused". */
static const char *origin(const char *head)
{
	static char buf[512];
	struct proxy_req r;
	size_t n = strlen(head);

	if (plain(head, &r) != 0 || !r.plain)
		return "refused";
	memcpy(buf, head, n);
	n = proxyreq_origin_form(buf, n, &r);
	buf[n] = '\0';
	return buf;
}

static void test_request(void)
{
	struct proxy_req r;

	CHECK(req("CONNECT github.com:443 HTTP/1.1\r\nHost: github.com:443\r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "github.com");
	CHECK(r.port == 443);
	CHECK(req("CONNECT [fd00::5]:8443 HTTP/1.1\r\n\r\n", &r) == 0);
	CHECK_STR(r.host, "fd00::5");
	CHECK(r.port == 8443);
	CHECK(req("CONNECT 10.0.0.1:5432 HTTP/1.0\r\nProxy-Connection: keep-alive\r\n\r\n", &r) == 0);
	CHECK(req("GET http://github.com/ HTTP/1.1\r\nHost: github.com\r\n\r\n", &r) == -1 && r.status == 405);
	CHECK(req("CONNECT github.com HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(req("CONNECT github.com:0 HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(req("CONNECT git_hub.com:443 HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(req("CONNECT github.com:443 HTTP/1.1\nHost: x\r\n\r\n", &r) == -1 && r.status == 400); /* bare LF */
	CHECK(req("CONNECT github.com:443 HTTP/1.1\r\nX: a\r\n b\r\n\r\n", &r) == -1 && r.status == 400); /* fold */
	CHECK(req("\r\nCONNECT github.com:443 HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(req("CONNECT a b c\r\n\r\n", &r) == -1 && r.status == 400 && r.why);
	/* CONNECT left out of [proxy] methods: no tunnels */
	{
		const char *c = "CONNECT github.com:443 HTTP/1.1\r\n\r\n";
		CHECK(proxyreq_parse(c, strlen(c), 1u << HTTP_GET, &r) == -1 && r.status == 405);
	}
}

/* Absolute-form requests, with methods = CONNECT GET HEAD. */
static void test_plain_request(void)
{
	struct proxy_req r;

	CHECK(plain("GET http://deb.debian.org/debian/dists/ HTTP/1.1\r\nHost: deb.debian.org\r\n\r\n", &r) == 0);
	CHECK(r.plain && r.method == HTTP_GET && r.port == 80);
	CHECK_STR(r.host, "deb.debian.org");
	CHECK(plain("HEAD http://10.0.0.5:8080/x?y=1 HTTP/1.0\r\n\r\n", &r) == 0 && r.port == 8080);
	CHECK_STR(r.host, "10.0.0.5");
	CHECK(plain("GET http://[fd00::5]:81/ HTTP/1.1\r\n\r\n", &r) == 0 && r.port == 81);
	CHECK_STR(r.host, "fd00::5");
	CHECK(plain("CONNECT github.com:443 HTTP/1.1\r\n\r\n", &r) == 0 && !r.plain);
	/* a method not named, another scheme, a path alone, a user, a fragment */
	CHECK(plain("POST http://a.example/ HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 405);
	CHECK(plain("GET https://a.example/ HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(plain("GET ftp://a.example/ HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(plain("GET /index.html HTTP/1.1\r\nHost: a.example\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(plain("GET http://u:p@a.example/ HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(plain("GET http://a.example/#f HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(plain("GET http://a.example/p# HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400); /* no fragment to http-parser */
	CHECK(plain("GET http://a.example/p?q# HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(plain("GET http://a.example:0/ HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(plain("GET http://a_b.example/ HTTP/1.1\r\n\r\n", &r) == -1 && r.status == 400);
	CHECK(req("GET http://github.com/ HTTP/1.1\r\nHost: github.com\r\n\r\n", &r) == -1 && r.status == 405);
	/* rewritten to origin form; what follows the head is kept */
	CHECK_STR(origin("GET http://a.example/p/q?x=1 HTTP/1.1\r\nHost: a.example\r\n\r\nBODY"),
		  "GET /p/q?x=1 HTTP/1.1\r\nHost: a.example\r\n\r\nBODY");
	CHECK_STR(origin("GET http://a.example HTTP/1.1\r\n\r\n"), "GET / HTTP/1.1\r\n\r\n");
	CHECK_STR(origin("GET http://a.example?x HTTP/1.1\r\n\r\n"), "GET /?x HTTP/1.1\r\n\r\n");
	CHECK_STR(origin("HEAD http://a.example:8080/ HTTP/1.0\r\n\r\n"), "HEAD / HTTP/1.0\r\n\r\n");
}

/* A ClientHello record as TLS clients send it: sni (NULL: none), one more
 * extension of type extra (0: none), a second server_name if twice. */
static size_t hello(unsigned char *out, const char *sni, unsigned extra, int twice)
{
	unsigned char body[1024], *p = body;
	unsigned char *ext_len, *hs_len;
	size_t n, sl = sni ? strlen(sni) : 0;
	int k;

	*p++ = 3, *p++ = 3;		/* legacy_version */
	memset(p, 0x11, 32), p += 32;	/* random */
	*p++ = 0;			/* session id */
	*p++ = 0, *p++ = 2, *p++ = 0x13, *p++ = 0x01; /* one cipher suite */
	*p++ = 1, *p++ = 0;		/* compression: null */
	ext_len = p, p += 2;
	for (k = 0; sni && k < (twice ? 2 : 1); k++) {
		*p++ = 0, *p++ = 0;			     /* server_name */
		*p++ = (unsigned char)((sl + 5) >> 8), *p++ = (unsigned char)(sl + 5);
		*p++ = (unsigned char)((sl + 3) >> 8), *p++ = (unsigned char)(sl + 3);
		*p++ = 0;				     /* host_name */
		*p++ = (unsigned char)(sl >> 8), *p++ = (unsigned char)sl;
		memcpy(p, sni, sl), p += sl;
	}
	if (extra) {
		*p++ = (unsigned char)(extra >> 8), *p++ = (unsigned char)extra;
		*p++ = 0, *p++ = 1, *p++ = 0;
	}
	n = (size_t)(p - ext_len - 2);
	ext_len[0] = (unsigned char)(n >> 8), ext_len[1] = (unsigned char)n;
	n = (size_t)(p - body);
	out[0] = 22, out[1] = 3, out[2] = 1;
	out[3] = (unsigned char)((n + 4) >> 8), out[4] = (unsigned char)(n + 4);
	hs_len = out + 5;
	hs_len[0] = 1, hs_len[1] = 0, hs_len[2] = (unsigned char)(n >> 8), hs_len[3] = (unsigned char)n;
	memcpy(out + 9, body, n);
	return n + 9;
}

static void test_hello(void)
{
	unsigned char h[2048], split[2100];
	char name[300];
	const char *why = NULL;
	size_t n, i;
	int bad_prefix = 0;

	n = hello(h, "GitHub.com", 0, 0);
	CHECK(hello_server_name(h, n, name, sizeof name, &why) == HELLO_OK);
	CHECK_STR(name, "github.com");
	for (i = 0; i < n; i++)
		bad_prefix += hello_server_name(h, i, name, sizeof name, &why) != HELLO_MORE;
	CHECK(bad_prefix == 0); /* every prefix asks for more */
	/* the same hello in two records: the handshake message joined */
	memcpy(split, h, 5 + 20);
	split[3] = 0, split[4] = 20;
	split[25] = 22, split[26] = 3, split[27] = 1;
	split[28] = (unsigned char)((n - 25) >> 8), split[29] = (unsigned char)(n - 25);
	memcpy(split + 30, h + 25, n - 25);
	CHECK(hello_server_name(split, n + 5, name, sizeof name, &why) == HELLO_OK);
	CHECK_STR(name, "github.com");
	CHECK(hello_server_name(split, 25, name, sizeof name, &why) == HELLO_MORE);

	n = hello(h, NULL, 0, 0);
	CHECK(hello_server_name(h, n, name, sizeof name, &why) == HELLO_OK && name[0] == '\0');
	n = hello(h, "a.example", 0, 1);
	CHECK(hello_server_name(h, n, name, sizeof name, &why) == HELLO_BAD && strstr(why, "two"));
	/* an encrypted ClientHello is judged by its outer name (GREASE ECH) */
	n = hello(h, "a.example", 0xfe0d, 0);
	CHECK(hello_server_name(h, n, name, sizeof name, &why) == HELLO_OK && strcmp(name, "a.example") == 0);
	/* a hello in a byte per record: refused past 16 records (each read parses it again) */
	{
		unsigned char many[4096];
		size_t k, m = 0, body = n - 5;
		n = hello(h, "a.example", 0, 0);
		body = n - 5;
		for (k = 0; k < body && m + 6 <= sizeof many; k++) {
			many[m++] = 22, many[m++] = 3, many[m++] = 1, many[m++] = 0, many[m++] = 1;
			many[m++] = h[5 + k];
		}
		CHECK(hello_server_name(many, m, name, sizeof name, &why) == HELLO_BAD && strstr(why, "16 records"));
		CHECK(hello_server_name(many, 16 * 6, name, sizeof name, &why) == HELLO_MORE);
	}
	n = hello(h, "a_b.example", 0, 0);
	CHECK(hello_server_name(h, n, name, sizeof name, &why) == HELLO_BAD);
	CHECK(hello_server_name((const unsigned char *)"GET / HTTP/1.1\r\n", 16, name, sizeof name, &why) == HELLO_BAD &&
	      strstr(why, "TLS only"));
	n = hello(h, "a.example", 0, 0);
	h[5] = 2; /* a ServerHello where the ClientHello goes */
	CHECK(hello_server_name(h, n, name, sizeof name, &why) == HELLO_BAD);
	n = hello(h, "a.example", 0, 0);
	h[8] += 1; /* the handshake says one byte more than the record holds: more wanted... */
	h[4] += 1; /* ...and the record one more too: the body is malformed */
	h[n] = 0;
	CHECK(hello_server_name(h, n + 1, name, sizeof name, &why) == HELLO_BAD);
}

static int load(const char *text, struct ward_config *cfg)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	config_defaults(cfg);
	rc = config_load_stream(cfg, f, "t.conf");
	fclose(f);
	return rc;
}

static void test_config(void)
{
	struct ward_config cfg;
	char buf[300];
	int i, found = 0;

	CHECK(load("[agent]\nuser = 1000\n[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test *.b.test, 10.0.0.0/8:5432\n"
		   "presets = github\nmax_tunnels = 12\nmax_bytes = 512M\n", &cfg) == 0);
	CHECK(cfg.proxy.has && cfg.proxy.port == 7990 && cfg.proxy.max_tunnels == 12 &&
	      cfg.proxy.max_bytes == (uint64_t)512 << 20);
	CHECK(cfg.proxy.n_allow == 6);
	CHECK_STR(allow_text(&cfg.proxy.allow[2], buf, sizeof buf), "10.0.0.0/8:5432");
	CHECK_STR(cfg.proxy.presets, "github");
	for (i = 0; i < cfg.n_env; i++)
		found += strcmp(cfg.env[i], "HTTPS_PROXY=http://127.0.0.1:7990") == 0 ||
			 strcmp(cfg.env[i], "NO_PROXY=127.0.0.1,localhost,::1") == 0;
	CHECK(found == 2);
	config_free(&cfg);
	/* [agent] env wins over what the proxy would set */
	CHECK(load("[agent]\nenv = NO_PROXY=internal.test\n[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test\n", &cfg) == 0);
	for (i = 0, found = 0; i < cfg.n_env; i++)
		found += strncmp(cfg.env[i], "NO_PROXY=", 9) == 0 && strcmp(cfg.env[i], "NO_PROXY=internal.test") != 0;
	CHECK(found == 0);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test\n", &cfg) == 0 && cfg.proxy.max_tunnels == 256 &&
	      cfg.proxy.max_bytes == (uint64_t)1 << 30 && cfg.proxy.methods == 1u << HTTP_CONNECT);
	config_free(&cfg);
	/* methods: CONNECT and plain requests' methods, any case; nothing else */
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test:80\nmethods = connect, GET HEAD\n", &cfg) == 0 &&
	      cfg.proxy.methods == ((1u << HTTP_CONNECT) | (1u << HTTP_GET) | (1u << HTTP_HEAD)));
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test:80\nmethods = GET\n", &cfg) == 0 &&
	      cfg.proxy.methods == 1u << HTTP_GET);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test\nmethods = GET FETCH\n", &cfg) == -1);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test\nmethods = ,\n", &cfg) == -1);
	config_free(&cfg);
	/* hosts from ${VAR}s: their words; none set: no proxy at all */
	setenv("WARD_TEST_ALLOW", "a.test b.test:8443", 1);
	setenv("WARD_TEST_PRESETS", "", 1);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = ${WARD_TEST_ALLOW}\npresets = ${WARD_TEST_PRESETS}\n", &cfg) ==
		      0 &&
	      cfg.proxy.has && cfg.proxy.n_allow == 2);
	config_free(&cfg);
	unsetenv("WARD_TEST_ALLOW");
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = ${WARD_TEST_ALLOW}\npresets = ${WARD_TEST_PRESETS}\n", &cfg) ==
		      0 &&
	      !cfg.proxy.has && cfg.n_env == 0);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = ${WARD_TEST_ALLOW} x\n", &cfg) == -1); /* not alone: a word */
	config_free(&cfg);
	setenv("WARD_TEST_PRESETS", "nosuch", 1);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\npresets = ${WARD_TEST_PRESETS}\n", &cfg) == -1);
	config_free(&cfg);
	/* ask: the approver's unix: or vsock: address; a proxy with no
	 * allow rule; ${VAR} unset or empty: none, and no proxy without hosts */
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nask = unix:/run/ward/approver.sock\n", &cfg) == 0 &&
	      cfg.proxy.has && cfg.proxy.has_ask && cfg.proxy.ask.kind == UP_UNIX && cfg.proxy.ask_timeout_s == 60 &&
	      cfg.proxy.ask_rate == 10 && cfg.proxy.n_allow == 0);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test\nask = vsock:2:7999\nask_timeout = 5\n"
		   "ask_rate = 100\n", &cfg) == 0 &&
	      cfg.proxy.has_ask && cfg.proxy.ask.kind == UP_VSOCK && cfg.proxy.ask_timeout_s == 5 &&
	      cfg.proxy.ask_rate == 100);
	config_free(&cfg);
	setenv("WARD_TEST_ASK", "unix:/run/ward/a.sock", 1);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = ${WARD_TEST_ALLOW}\nask = ${WARD_TEST_ASK}\n", &cfg) == 0 &&
	      cfg.proxy.has && cfg.proxy.has_ask);
	config_free(&cfg);
	unsetenv("WARD_TEST_ASK");
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = ${WARD_TEST_ALLOW}\nask = ${WARD_TEST_ASK}\n", &cfg) == 0 &&
	      !cfg.proxy.has);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test\nask = no\n", &cfg) == 0 && !cfg.proxy.has_ask);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nask = no\n", &cfg) == -1); /* no host, none to ask */
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nask = tcp:127.0.0.1:9\n", &cfg) == -1); /* the agent's loopback */
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nask = yes\n", &cfg) == -1);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nask = unix:/a.sock\nask_timeout = 0\n", &cfg) == -1);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nask = unix:/a.sock\nask_rate = 1001\n", &cfg) == -1);
	config_free(&cfg);
	CHECK(load("[proxy]\nallow = a.test\n", &cfg) == -1);			       /* no listen */
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\n", &cfg) == -1);		       /* no host */
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 0.0.0.0:7990\nallow = a.test\n", &cfg) == -1);     /* not loopback */
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = *.com\n", &cfg) == -1);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\npresets = nosuch\n", &cfg) == -1);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test\nmax_tunnels = 0\n", &cfg) == -1);
	config_free(&cfg);
	CHECK(load("[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test\nmax_bytes = 5X\n", &cfg) == -1);
	config_free(&cfg);
	CHECK(load("[route r]\nlisten = 127.0.0.1:7990\nupstream = unix:/run/x.sock\npath = /\n"
		   "[proxy]\nlisten = 127.0.0.1:7990\nallow = a.test\n", &cfg) == -1); /* a route's port */
	config_free(&cfg);
}

int main(void)
{
	test_rules();
	test_match();
	test_exempt();
	test_request();
	test_plain_request();
	test_hello();
	test_config();
	return unit_done("test_proxy");
}
