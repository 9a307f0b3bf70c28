/* mcp-bridge/upstream.c (names in tcp:/tls: upstreams) and
 * mcp-bridge/resolve.c (an answer's addresses taken into a name's entry). */
#include <ares.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "mcp-bridge/resolve.h"
#include "mcp-bridge/upstream.h"
#include "unit.h"

static void test_names(void)
{
	static const char *const good[] = { "api.anthropic.com", "a", "x-1.example", "EXAMPLE.org.", "a.b.c.d.e.f",
					    "0a", "1.2.3.a", "xn--bcher-kva.example" };
	static const char *const bad[] = { "", ".", "a..b", "-a.com", "a-.com", "a_b.com", "1.2.3", "10.1",
					   "0x7f.1", "a b", "a.123", "exa mple.com", "a/b", "[::1]", "ä.com" };
	char long_label[80], long_name[300];
	size_t i;

	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		CHECK(upstream_name_ok(good[i], strlen(good[i])));
		if (!upstream_name_ok(good[i], strlen(good[i])))
			fprintf(stderr, "  good: %s\n", good[i]);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK(!upstream_name_ok(bad[i], strlen(bad[i])));
		if (upstream_name_ok(bad[i], strlen(bad[i])))
			fprintf(stderr, "  bad: %s\n", bad[i]);
	}
	memset(long_label, 'a', 64);
	long_label[64] = '\0';
	CHECK(!upstream_name_ok(long_label, 64)); /* a label of 64 */
	CHECK(upstream_name_ok(long_label, 63));
	for (i = 0; i < 254; i++)
		long_name[i] = (i % 2) ? '.' : 'a';
	long_name[253] = 'a';
	CHECK(upstream_name_ok(long_name, 253));
	CHECK(!upstream_name_ok(long_name, 254) || long_name[253] == '.');
	memcpy(long_name + 253, "a.b", 4);
	CHECK(!upstream_name_ok(long_name, strlen(long_name))); /* 256 */
}

static void test_parse(void)
{
	struct upstream u;
	const char *why = NULL;

	CHECK(upstream_parse("tls:api.anthropic.com:443", &u, &why) == 0 && u.kind == UP_TLS && u.port == 443);
	CHECK_STR(u.name, "api.anthropic.com");
	CHECK_STR(u.default_host, "api.anthropic.com"); /* the scheme's port left out */
	CHECK(upstream_parse("tcp:db.pod.local.:5432", &u, &why) == 0 && u.kind == UP_TCP && u.port == 5432);
	CHECK_STR(u.name, "db.pod.local");
	CHECK_STR(u.default_host, "db.pod.local:5432");
	CHECK(upstream_parse("tcp:10.0.0.5:80", &u, &why) == 0 && !u.name[0] && u.addr.ss_family == AF_INET);
	CHECK_STR(u.default_host, "10.0.0.5");
	CHECK(upstream_parse("tcp:localhost:8080", &u, &why) == 0 && !u.name[0] && u.port == 8080);
	CHECK_STR(u.default_host, "127.0.0.1:8080");
	CHECK(upstream_parse("tls:10.1:443", &u, &why) == -1 && strstr(why, "neither"));
	CHECK(upstream_parse("tls:a_b.com:443", &u, &why) == -1);
	CHECK(upstream_parse("tls:[::1]:443", &u, &why) == -1);
	CHECK(upstream_parse("tls:api.example:0", &u, &why) == -1 && strstr(why, "tls:HOST:PORT"));
	CHECK(upstream_parse("tcp:api.example", &u, &why) == -1);
}

/* One node of an answer: ip of its family, in sa (a sockaddr_in or _in6). */
static struct ares_addrinfo_node *node(struct ares_addrinfo_node *n, void *sa, int family, const char *ip, int ttl,
				       struct ares_addrinfo_node *next)
{
	size_t len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);

	memset(n, 0, sizeof *n);
	memset(sa, 0, len);
	if (family == AF_INET) {
		((struct sockaddr_in *)sa)->sin_family = AF_INET;
		inet_pton(AF_INET, ip, &((struct sockaddr_in *)sa)->sin_addr);
	} else {
		((struct sockaddr_in6 *)sa)->sin6_family = AF_INET6;
		inet_pton(AF_INET6, ip, &((struct sockaddr_in6 *)sa)->sin6_addr);
	}
	n->ai_family = family;
	n->ai_addr = (struct sockaddr *)sa;
	n->ai_addrlen = (ares_socklen_t)len;
	n->ai_ttl = ttl;
	n->ai_next = next;
	return n;
}

#define node4(n, sa, ip, ttl, next) node(n, sa, AF_INET, ip, ttl, next)
#define node6(n, sa, ip, ttl, next) node(n, sa, AF_INET6, ip, ttl, next)

static void test_take(void)
{
	struct ares_addrinfo_node n[12];
	struct sockaddr_in s4[12];
	struct sockaddr_in6 s6[4];
	struct name e;
	unsigned ttl = 0;
	char text[64];
	int i;

	memset(&e, 0, sizeof e);
	e.port = 8443;
	/* an AAAA before the A: IPv4 comes first; the duplicate A is one */
	node6(&n[0], &s6[0], "2001:db8::1", 30,
	      node4(&n[1], &s4[0], "192.0.2.1", 60, node4(&n[2], &s4[1], "192.0.2.1", 60, NULL)));
	CHECK(resolver_take(&e, &n[0], &ttl) == 2 && ttl == 30);
	CHECK(e.addr[0].sa.ss_family == AF_INET && e.addr[1].sa.ss_family == AF_INET6);
	CHECK(ntohs(((struct sockaddr_in *)&e.addr[0].sa)->sin_port) == 8443);
	CHECK(ntohs(((struct sockaddr_in6 *)&e.addr[1].sa)->sin6_port) == 8443);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&e.addr[0].sa)->sin_addr, text, sizeof text);
	CHECK_STR(text, "192.0.2.1");
	CHECK(e.addr[0].len == sizeof(struct sockaddr_in) && e.addr[1].len == sizeof(struct sockaddr_in6));
	/* at most NAME_MAX_ADDRS; a TTL past the cap is capped; a negative one is 0 */
	for (i = 0; i < 12; i++) {
		char ip[32];
		snprintf(ip, sizeof ip, "198.51.100.%d", i + 1);
		node4(&n[i], &s4[i], ip, 99999, i < 11 ? &n[i + 1] : NULL);
	}
	CHECK(resolver_take(&e, &n[0], &ttl) == NAME_MAX_ADDRS && ttl == NAME_TTL_MAX_S);
	node4(&n[0], &s4[0], "192.0.2.9", -5, NULL);
	CHECK(resolver_take(&e, &n[0], &ttl) == 1 && ttl == 0);
	/* a node whose address is not of its family, or too short, is skipped */
	node4(&n[0], &s4[0], "192.0.2.9", 5, NULL);
	n[0].ai_addrlen = 4;
	CHECK(resolver_take(&e, &n[0], &ttl) == 0);
	node4(&n[0], &s4[0], "192.0.2.9", 5, NULL);
	n[0].ai_family = AF_INET6;
	CHECK(resolver_take(&e, &n[0], &ttl) == 0);
	CHECK(resolver_take(&e, NULL, &ttl) == 0);
	/* refused answers are counted, the first named; the others are kept */
	node4(&n[0], &s4[0], "127.0.0.1", 5, node4(&n[1], &s4[1], "192.0.2.7", 5, NULL));
	CHECK(resolver_take(&e, &n[0], &ttl) == 1 && e.refused == 1);
	CHECK_STR(e.refused_what, "127.0.0.1 (loopback)");
}

static int refused(const char *ip, int public_only, const char *want)
{
	unsigned char b[16];
	int family = strchr(ip, ':') ? AF_INET6 : AF_INET;
	const char *why;

	inet_pton(family, ip, b);
	why = resolver_refuses(family, b, public_only);
	if (want ? !why || strcmp(why, want) != 0 : why != NULL) {
		fprintf(stderr, "  %s: want %s, got %s\n", ip, want ? want : "taken", why ? why : "taken");
		return 0;
	}
	return 1;
}

static void test_refuses(void)
{
	CHECK(refused("192.0.2.1", 1, NULL) && refused("10.0.0.5", 0, NULL) && refused("2001:db8::1", 1, NULL));
	CHECK(refused("127.0.0.1", 0, "loopback") && refused("127.9.9.9", 0, "loopback") && refused("::1", 0, "loopback"));
	CHECK(refused("0.0.0.0", 0, "unspecified") && refused("::", 0, "unspecified"));
	CHECK(refused("169.254.169.254", 0, "link-local") && refused("fe80::1", 0, "link-local"));
	CHECK(refused("224.0.0.1", 0, "multicast") && refused("ff02::1", 0, "multicast"));
	CHECK(refused("255.255.255.255", 0, "reserved"));
	CHECK(refused("::ffff:127.0.0.1", 0, "IPv4-mapped") && refused("::ffff:8.8.8.8", 0, "IPv4-mapped"));
	CHECK(refused("::127.0.0.1", 0, "IPv4-compatible"));
	CHECK(refused("10.1.2.3", 1, "private") && refused("172.16.0.1", 1, "private") &&
	      refused("172.31.255.1", 1, "private") && refused("192.168.1.1", 1, "private") &&
	      refused("100.64.0.1", 1, "private") && refused("fd00::1", 1, "private"));
	CHECK(refused("172.32.0.1", 1, NULL) && refused("100.128.0.1", 1, NULL));
	/* what a gateway turns into an IPv4 address of its choosing */
	CHECK(refused("64:ff9b::a9fe:a9fe", 0, "NAT64") && refused("64:ff9b:1::1", 0, "NAT64") &&
	      refused("64:ff9b:2::1", 0, NULL));
	CHECK(refused("2002:a9fe:a9fe::1", 0, "6to4") && refused("fec0::1", 0, "site-local"));
}

int main(void)
{
	test_refuses();
	test_names();
	test_parse();
	test_take();
	return unit_done("test_resolve");
}
