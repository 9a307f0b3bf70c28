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

static struct ares_addrinfo_node *node4(struct ares_addrinfo_node *n, struct sockaddr_in *sa, const char *ip, int ttl,
					struct ares_addrinfo_node *next)
{
	memset(n, 0, sizeof *n);
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	inet_pton(AF_INET, ip, &sa->sin_addr);
	n->ai_family = AF_INET;
	n->ai_addr = (struct sockaddr *)sa;
	n->ai_addrlen = sizeof *sa;
	n->ai_ttl = ttl;
	n->ai_next = next;
	return n;
}

static struct ares_addrinfo_node *node6(struct ares_addrinfo_node *n, struct sockaddr_in6 *sa, const char *ip, int ttl,
					struct ares_addrinfo_node *next)
{
	memset(n, 0, sizeof *n);
	memset(sa, 0, sizeof *sa);
	sa->sin6_family = AF_INET6;
	inet_pton(AF_INET6, ip, &sa->sin6_addr);
	n->ai_family = AF_INET6;
	n->ai_addr = (struct sockaddr *)sa;
	n->ai_addrlen = sizeof *sa;
	n->ai_ttl = ttl;
	n->ai_next = next;
	return n;
}

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
}

int main(void)
{
	test_names();
	test_parse();
	test_take();
	return unit_done("test_resolve");
}
