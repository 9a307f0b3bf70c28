/* Unit tests for mcp-bridge/http.c: every refusal, exact body framing, the
 * rewritten upstream head and response head. */
#include <stdlib.h>

#include "mcp-bridge/http.h"
#include "mcp-bridge/respend.h"
#include "mcp-bridge/tls.h"
#include "mcp-bridge/upstream.h"
#include "unit.h"

static char *inject[] = { "Authorization: Bearer s3cret" };
static struct http_route route = { "mcp", (1u << HTTP_POST) | (1u << HTTP_GET) | (1u << HTTP_DELETE),
				   "/mcp/agents?callerAgentId=a1", "127.0.0.1:6767", inject, 1, 0, 0 };
static struct http_route prefix = { "model", (1u << HTTP_POST), "/v1/", "api.example.com", NULL, 0, 0, 0 };

/* Feeds a whole request; returns bytes that belong to it, or -status. */
static long run(const struct http_route *r, const char *req, struct http_req *q)
{
	ssize_t n;

	http_req_init(q, r);
	n = http_req_feed(q, req, strlen(req));
	return n < 0 ? -q->status : n;
}

static int refused(const char *req, int status)
{
	struct http_req q;
	long r = run(&route, req, &q);
	if (r != -status)
		fprintf(stderr, "want %d got %ld (%s) for: %s\n", status, r, q.why ? q.why : "", req);
	return r == -status;
}

#define OK_HEAD "Host: 127.0.0.1:7800\r\n"

static void test_good(void)
{
	struct http_req q;
	const char *post = "POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD
			   "Content-Type: application/json\r\nContent-Length: 40\r\n"
			   "Mcp-Session-Id: abc\r\nAuthorization: Bearer agent-made-up\r\nConnection: keep-alive\r\n"
			   "X-HTTP-Method-Override: DELETE\r\nX-Original-URL: /admin\r\nX-Forwarded-For: 1.2.3.4\r\n"
			   "forwarded: for=1.2.3.4\r\nX-Rewrite-URL: /admin\r\n\r\n"
			   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
			   "GET /admin HTTP/1.1\r\nHost: x\r\n\r\n"; /* pipelined: not ours */
	char out[4096], m[64];
	ssize_t n;
	long len = run(&route, post, &q);

	CHECK(len > 0 && q.done && q.status == 0);
	CHECK((size_t)len == strlen(post) - strlen("GET /admin HTTP/1.1\r\nHost: x\r\n\r\n"));
	CHECK(q.body_bytes == 40);
	CHECK_STR(http_req_rpc_method(&q, m, sizeof m), "ping");
	{
		/* what the audit line names (issue 43): a method behind 4100
		 * blanks, each of a batch, "?" when it cannot tell */
		static char big[8192];
		struct http_req b;
		char mm[96];
		int k;
		const struct { const char *body; const char *rpc; } t[] = {
			{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"},{\"method\":\"tools/list\"},{}]",
			  "tools/call,tools/list,?" },
			{ "not json", "?" }, { "{\"id\":1}", "?" }, { "{\"method\":\"a,b\"}", "a?b" },
		};
		for (k = 0; k < (int)(sizeof t / sizeof t[0]); k++) {
			snprintf(big, sizeof big, "POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD
				 "Content-Length: %zu\r\n\r\n%s", strlen(t[k].body), t[k].body);
			CHECK(run(&route, big, &b) > 0 && b.done);
			CHECK_STR(http_req_rpc_method(&b, mm, sizeof mm), t[k].rpc);
		}
		k = snprintf(big, sizeof big, "POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD
			     "Content-Length: 4117\r\n\r\n");
		memset(big + k, ' ', 4100);
		memcpy(big + k + 4100, "{\"method\":\"ping\"}", 17);
		big[k + 4117] = '\0';
		CHECK(run(&route, big, &b) > 0 && b.done);
		CHECK_STR(http_req_rpc_method(&b, mm, sizeof mm), "ping");
		{
			/* a method past the bytes kept: it cannot tell, and says so */
			static char body[5001];
			memset(body, 'x', 5000);
			memcpy(body, "{\"params\":\"", 11);
			memcpy(body + 5000 - 15, "\",\"method\":\"p\"}", 15);
			snprintf(big, sizeof big, "POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD
				 "Content-Length: 5000\r\n\r\n%s", body);
			CHECK(run(&route, big, &b) > 0 && b.done);
			CHECK_STR(http_req_rpc_method(&b, mm, sizeof mm), "?");
		}
	}
	n = http_req_upstream_head(&q, NULL, NULL, 0, out, sizeof out);
	CHECK(n > 0);
	out[n > 0 ? n : 0] = '\0';
	CHECK(strstr(out, "POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n") == out);
	CHECK(strstr(out, "Host: 127.0.0.1:6767\r\n") != NULL);
	CHECK(strstr(out, "Host: 127.0.0.1:7800") == NULL);
	CHECK(strstr(out, "Authorization: Bearer s3cret\r\n") != NULL);
	CHECK(strstr(out, "agent-made-up") == NULL);
	CHECK(strstr(out, "Mcp-Session-Id: abc\r\n") != NULL);
	CHECK(strstr(out, "keep-alive") == NULL);
	/* what would take another method or path, or another origin, is not forwarded */
	CHECK(strstr(out, "DELETE") == NULL && strstr(out, "/admin") == NULL && strstr(out, "1.2.3.4") == NULL);
	CHECK(strstr(out, "Connection: close\r\n\r\n") != NULL);

	/* GET without a body ends with its head */
	len = run(&route, "GET /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Accept: text/event-stream\r\n\r\nXX", &q);
	CHECK(q.done && len == (long)strlen("GET /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Accept: text/event-stream\r\n\r\n"));

	/* a chunked body, fed in pieces */
	{
		const char *head = "POST /v1/chat HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
		const char *b1 = "5\r\nhel", *b2 = "lo\r\n0\r\n\r\nNEXT";
		ssize_t a, b, c;
		http_req_init(&q, &prefix);
		a = http_req_feed(&q, head, strlen(head));
		b = http_req_feed(&q, b1, strlen(b1));
		c = http_req_feed(&q, b2, strlen(b2));
		CHECK(a == (ssize_t)strlen(head) && b == (ssize_t)strlen(b1));
		CHECK(q.done && c == (ssize_t)strlen(b2) - 4 && q.body_bytes == 5);
	}
	/* the same body a byte at a time, with a chunk extension and a size
	 * with leading zeros: the strict check keeps its place across feeds */
	{
		const char *head = "POST /v1/chat HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
		const char *body = "005;name=\"v a\"\r\nhello\r\n0\r\n\r\n";
		size_t i;
		int ok = 1;
		http_req_init(&q, &prefix);
		ok = http_req_feed(&q, head, strlen(head)) == (ssize_t)strlen(head);
		for (i = 0; body[i] && ok; i++)
			ok = http_req_feed(&q, body + i, 1) == 1;
		CHECK(ok && q.done && q.body_bytes == 5);
	}
	/* prefix route */
	CHECK(run(&prefix, "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) > 0);
	CHECK(run(&prefix, "POST /v2/chat HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) == -404);
	CHECK(run(&prefix, "POST /v1 HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) == -404);
	CHECK(run(&prefix, "POST /v1/../admin HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) == -400);
}

static void test_refusals(void)
{
	/* the exact target: path and query */
	CHECK(refused("POST /mcp/agents?callerAgentId=a2 HTTP/1.1\r\n" OK_HEAD "\r\n", 404));
	CHECK(refused("POST /mcp/agents HTTP/1.1\r\n" OK_HEAD "\r\n", 404));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1&x=1 HTTP/1.1\r\n" OK_HEAD "\r\n", 404));
	/* a fragment is refused on every route, before the route is matched */
	CHECK(refused("POST /mcp/agents?callerAgentId=a1#f HTTP/1.1\r\n" OK_HEAD "\r\n", 400));
	CHECK(refused("PUT /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "\r\n", 405));
	CHECK(refused("OPTIONS /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "\r\n", 405));
	/* methods past bit 31 of the route mask (SOURCE is 33: its bit would be GET's) */
	CHECK(refused("SOURCE /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "\r\n", 405));
	CHECK(refused("UNLINK /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "\r\n", 405));
	/* forms and methods that tunnel */
	CHECK(refused("POST http://127.0.0.1:6767/mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "\r\n", 400));
	CHECK(refused("CONNECT 127.0.0.1:22 HTTP/1.1\r\n" OK_HEAD "\r\n", 403));
	CHECK(refused("GET /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n", 403));
	CHECK(refused("GET /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Upgrade: h2c\r\n\r\n", 403));
	/* smuggling */
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Content-Length: 4\r\nContent-Length: 5\r\n\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Content-Length: 4\r\nContent-Length: 4\r\n\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Transfer-Encoding: gzip, chunked\r\n\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 400));
	/* chunked framing that http-parser lets through and upstream parsers
	 * read otherwise: two bytes other than CRLF after chunk data, a bare
	 * LF in an extension or after the size, a trailer section, a size of
	 * more than 16 digits, a control byte in an extension */
#define CHUNKED "POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Transfer-Encoding: chunked\r\n\r\n"
	CHECK(refused(CHUNKED "5\r\nhelloXY0\r\n\r\n", 400));
	CHECK(refused(CHUNKED "5;\nabc\r\nhello\r\n0\r\n\r\n", 400));
	CHECK(refused(CHUNKED "5\nhello\r\n0\r\n\r\n", 400));
	CHECK(refused(CHUNKED "5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n", 400));
	CHECK(refused(CHUNKED "00000000000000005\r\nhello\r\n0\r\n\r\n", 400));
	CHECK(refused(CHUNKED "5;a\x01\r\nhello\r\n0\r\n\r\n", 400));
	CHECK(refused(CHUNKED "5;\xff\r\nhello\r\n0\r\n\r\n", 400));
	CHECK(refused(CHUNKED ";5\r\nhello\r\n0\r\n\r\n", 400));
	{
		struct http_req q;
		CHECK(run(&route, CHUNKED "5 ;x=1\r\nhello\r\n0\r\n\r\n", &q) > 0 && q.done);
		CHECK(run(&route, CHUNKED "A\r\n0123456789\r\n0\r\n\r\n", &q) > 0 && q.done && q.body_bytes == 10);
	}
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Content-Length: -1\r\n\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Content-Length: 1x\r\n\r\n", 400));
	/* paths a server might normalise */
	CHECK(refused("POST /mcp/./agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "\r\n", 400));
	CHECK(refused("POST /mcp/%2e%2e/agents HTTP/1.1\r\n" OK_HEAD "\r\n", 400));
	CHECK(refused("POST /mcp/%2E./x HTTP/1.1\r\n" OK_HEAD "\r\n", 400));
	CHECK(refused("POST /mcp%2fagents HTTP/1.1\r\n" OK_HEAD "\r\n", 400));
	CHECK(refused("POST /mcp\\agents HTTP/1.1\r\n" OK_HEAD "\r\n", 400));
	CHECK(refused("POST /mcp/.. HTTP/1.1\r\n" OK_HEAD "\r\n", 400));
	{
		/* a dot segment with ";params" (servers that strip them before
		 * normalising read "..;" as ".."), a separator encoded twice
		 * (read as one by a server that decodes twice); a ';' elsewhere,
		 * "..x" and "%25" before other bytes stay plain names */
		static const struct { const char *target; int refused; } t[] = {
			{ "/v1/..;/admin", 1 }, { "/v1/.;x/a", 1 }, { "/v1/a/..;x=1", 1 },
			{ "/v1/%252e%252e/admin", 1 }, { "/v1/a%252Fb", 1 },
			{ "/v1/a;b/c", 0 }, { "/v1/..x/.a", 0 }, { "/v1/100%25", 0 }, { "/v1/a%25zz", 0 },
			/* an encoded percent before hex: decoded twice, it is another
			 * byte, judged as any: a name's byte passes, a dot does not */
			{ "/v1/100%2520", 0 }, { "/v1/%2541", 0 }, { "/v1/%25%32%65%25%32%65/admin", 1 },
			/* the red team's (issue 43): a fragment, '%' not before two
			 * hex digits (decoded twice by Python's unquote it is ".."),
			 * an encoded ';' after "..", %u, a five-byte overlong '.' */
			{ "/v1/..#/admin", 1 }, { "/v1/x#y", 1 }, { "/v1/%%32%65%%32%65/admin", 1 },
			{ "/v1/%%32%66..%%32%66", 1 }, { "/v1/..%3b/admin", 1 }, { "/v1/%u002e%u002e/x", 1 },
			{ "/v1/%f8%80%80%80%ae%f8%80%80%80%ae/admin", 1 }, { "/v1/x%", 1 }, { "/v1/x%2", 1 },
			{ "/v1/x?q=%", 1 }, { "/v1/%252e%25252e/x", 1 }, { "/v1/%25252525252e/x", 1 },
			/* a decoded '/' or '?' a second decoding makes real */
			{ "/v1/a%253fb", 1 }, { "/v1/a%253bb/c", 1 },
			/* overlong UTF-8, which a lax decoder reads as '/' or '.' */
			{ "/v1/%c0%af", 1 }, { "/v1/%C1%9C", 1 }, { "/v1/%e0%80%af", 1 }, { "/v1/%f0%80%80%af", 1 },
			/* real UTF-8 stays a name; in the query nothing is judged */
			{ "/v1/caf%c3%a9", 0 }, { "/v1/%e0%a0%80", 0 }, { "/v1/%f0%90%80%80", 0 },
			{ "/v1/x?q=%c0%af", 0 },
		};
		struct http_req q;
		char req[256];
		size_t i;
		for (i = 0; i < sizeof t / sizeof t[0]; i++) {
			snprintf(req, sizeof req, "POST %s HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", t[i].target);
			CHECK(t[i].refused ? run(&prefix, req, &q) == -400 : run(&prefix, req, &q) > 0);
		}
	}
	/* field names that are not tokens: some servers read "Host :" as Host
	 * (behind the Host rewrite), "Authorization :" as the route's own
	 * header; control bytes in a value. Tabs and non-ASCII in a value pass */
	{
		static const char *const fields[] = { "Host : evil", "Authorization : Bearer x", "Ho st: x",
						      "X-\xc3\xa9: x", "X: \x01a", "X: a\x7f" };
		char req[256];
		size_t i;
		for (i = 0; i < sizeof fields / sizeof fields[0]; i++) {
			snprintf(req, sizeof req, "POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "%s\r\n\r\n",
				 fields[i]);
			CHECK(refused(req, 400));
		}
	}
	{
		struct http_req q;
		CHECK(run(&route, "POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD
			  "X-Odd_name.1~: a\tb caf\xc3\xa9\r\nContent-Length: 0\r\n\r\n", &q) > 0);
	}
	/* Transfer-Encoding belongs to HTTP/1.1: a 1.0 server reads no chunks */
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.0\r\n" OK_HEAD "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400));
	/* after the chunk size only blanks, then an extension or the line end;
	 * no chunk of 2 GiB or more (a 32-bit reader would see another size) */
	CHECK(refused(CHUNKED "5 5\r\nhello\r\n0\r\n\r\n", 400));
	CHECK(refused(CHUNKED "5 junk\r\nhello\r\n0\r\n\r\n", 400));
	CHECK(refused(CHUNKED "80000000\r\n", 400));
	CHECK(refused(CHUNKED "100000005\r\nhello\r\n0\r\n\r\n", 400));
	{
		struct http_req q;
		CHECK(run(&route, CHUNKED "7fffffff\r\nhello", &q) > 0 && !q.done);
		CHECK(run(&route, CHUNKED "5  \r\nhello\r\n0\r\n\r\n", &q) > 0 && q.done);
	}
	/* headers */
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD OK_HEAD "\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Origin: http://evil.example\r\n\r\n", 403));
	{
		/* the egress proxy's plain requests: their client is the agent */
		struct http_route proxied = { "proxy", 1u << HTTP_GET, "/", "a.example", NULL, 0, 0, 1 };
		struct http_req q;
		CHECK(run(&proxied, "GET /x HTTP/1.1\r\nHost: a\r\nOrigin: http://evil.example\r\n\r\n", &q) > 0 &&
		      q.done);
	}
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/2.0\r\n" OK_HEAD "\r\n", 400));
	CHECK(refused("BREW /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Bad Header\r\n\r\n", 400));
	/* line ends other than CRLF, and folded lines: http-parser takes both,
	 * with a view of the head that differs from the bytes (a head ended
	 * by a bare LF crashed the bridge; folds hid its own lines in a body) */
	CHECK(refused("GET /mcp/agents?callerAgentId=a1 HTTP/1.1\nHost: x\n\n\r\n\r\n", 400));
	CHECK(refused("GET /mcp/agents?callerAgentId=a1 HTTP/1.1\r\nHost: x\n\r\n", 400));
	CHECK(refused("GET /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "X-A: 1\n\n\r\n\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Content-Length: 4\r\n"
		      "X: a\r\n b\r\n c\r\n\r\nABCD", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "X: a\r\n\tb\r\n\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n " OK_HEAD "\r\n", 400));
	CHECK(refused("POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "X: a\r\n\rX-B: c\r\n\r\n", 400));
	{
		/* bytes http-parser lets into a target: a tab (a new field in the
		 * audit line), a form feed, non-ASCII; a plain one still passes */
		struct http_req q;
		CHECK(run(&prefix, "POST /v1/a\tstatus=200 HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) == -400);
		CHECK(run(&prefix, "POST /v1/a\x0c" "b HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) == -400);
		CHECK(run(&prefix, "POST /v1/a\xff HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) == -400);
		CHECK(run(&prefix, "POST /v1/a-b_c~d%20e?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) > 0);
	}
	{
		char big[4096] = "POST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD;
		int i;
		for (i = 0; i < HTTP_MAX_FIELDS + 1; i++)
			strcat(big, "X-A: b\r\n");
		strcat(big, "\r\n");
		CHECK(refused(big, 431));
	}
	{
		struct http_req q;
		const char *ok = "GET /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Origin: http://127.0.0.1:7800\r\n\r\n";
		CHECK(run(&route, ok, &q) > 0);
		CHECK(run(&route, "POST /mcp/agents?callerAgentId=a1 HTTP/1.0\r\n" OK_HEAD "\r\n", &q) > 0);
	}
	/* http-parser skips blank lines before the request line: the head it
	 * parses would not be the one found, and the client's own head would
	 * go upstream as body */
	CHECK(refused("\r\n\r\nPOST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Content-Length: 0\r\n\r\n", 400));
	CHECK(refused("\r\nPOST /mcp/agents?callerAgentId=a1 HTTP/1.1\r\n" OK_HEAD "Content-Length: 0\r\n\r\n", 400));
	{
		/* a route made from an MCP server's URL is that one endpoint, even
		 * "/" or one ending in '/'; a [route]'s path ending in '/' is a prefix */
		struct http_route root = { "mcp-docs", 1u << HTTP_POST, "/", "docs.example.com", NULL, 0, 1, 0 };
		struct http_route root_prefix = { "docs", 1u << HTTP_POST, "/", "docs.example.com", NULL, 0, 0, 0 };
		struct http_req q;
		CHECK(run(&root, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) > 0);
		CHECK(run(&root, "POST /admin HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) == -404);
		CHECK(run(&root, "POST /?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) == -404);
		CHECK(run(&root_prefix, "POST /admin HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", &q) > 0);
	}
	CHECK(http_head_end("GET / HTTP/1.1\r\nHost: x\r\n", 25) == 0);
	CHECK(http_head_end("GET / HTTP/1.1\r\n\r\nBODY", 22) == 18);
}

static void test_response(void)
{
	const char *in = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\n"
			 "Keep-Alive: timeout=5\r\nMcp-Session-Id: s1\r\nTransfer-Encoding: chunked\r\n\r\n"
			 "6\r\nevent:\r\n";
	char out[1024], ref[512], many[HTTP_MAX_HEAD], big[HTTP_MAX_HEAD + 64];
	size_t ol = 0, ml;
	struct http_resp r = { 0, 0, 0 };
	int n, i;
	ssize_t h = http_resp_head(in, strlen(in), 0, out, sizeof out, &ol, &r);

	CHECK(h > 0 && r.status == 200 && r.framed && (size_t)h == strlen(in) - strlen("6\r\nevent:\r\n"));
	out[ol] = '\0';
	CHECK(strstr(out, "HTTP/1.1 200 OK\r\n") == out);
	CHECK(strstr(out, "keep-alive") == NULL && strstr(out, "Keep-Alive") == NULL);
	CHECK(strstr(out, "Mcp-Session-Id: s1\r\n") && strstr(out, "Transfer-Encoding: chunked\r\n"));
	CHECK(strstr(out, "Connection: close\r\n\r\n") != NULL);
	CHECK(http_resp_head("HTTP/1.1 200 OK\r\n", 17, 0, out, sizeof out, &ol, &r) == 0);
	CHECK(http_resp_head("garbage\r\n\r\n", 11, 0, out, sizeof out, &ol, &r) == -1);
	/* what ends the body: a length, chunks (above), a status without
	 * one, or else only the connection's close */
	CHECK(http_resp_head("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", 38, 0, out, sizeof out, &ol, &r) == 38 && r.framed);
	CHECK(http_resp_head("HTTP/1.1 204 No Content\r\n\r\n", 27, 0, out, sizeof out, &ol, &r) == 27 && r.framed);
#define CLOSE_ENDS "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
	CHECK(http_resp_head(CLOSE_ENDS, strlen(CLOSE_ENDS), 0, out, sizeof out, &ol, &r) == (ssize_t)strlen(CLOSE_ENDS) &&
	      !r.framed && r.status == 200);
	/* no limit on the number of fields but the head's size: 1000 of
	 * them, each kept, in order, Connection still replaced */
	ml = (size_t)snprintf(many, sizeof many, "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n");
	for (i = 0; i < 1000; i++)
		ml += (size_t)snprintf(many + ml, sizeof many - ml, "S%d: v\r\n", i);
	ml += (size_t)snprintf(many + ml, sizeof many - ml, "\r\n");
	CHECK(http_resp_head(many, ml, 0, big, sizeof big, &ol, &r) == (ssize_t)ml && r.status == 200);
	big[ol] = '\0';
	CHECK(strstr(big, "S0: v\r\nS1: v\r\n") && strstr(big, "S999: v\r\nConnection: close\r\n\r\n") &&
	      !strstr(big, "keep-alive"));
	/* the same for responses: a bare LF or a folded line is a malformed head */
#define BARE_LF "HTTP/1.1 200 OK\nX: 1\n\nabc\r\n\r\n"
#define FOLDED "HTTP/1.1 200 OK\r\nX: 1\r\n 2\r\n\r\n"
	CHECK(http_resp_head(BARE_LF, strlen(BARE_LF), 0, out, sizeof out, &ol, &r) == -1);
	/* a blank line before the status line: http-parser skips it */
	CHECK(http_resp_head("\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 40, 0, out, sizeof out, &ol, &r) == -1);
	{
		/* a head near 16 KiB whose fields have no blank after the colon
		 * grows when rewritten: it still fits the bridge's 32 KiB */
		static char tight[HTTP_MAX_HEAD], wide[2 * HTTP_MAX_HEAD];
		size_t tl = (size_t)snprintf(tight, sizeof tight, "HTTP/1.1 200 OK\r\n");
		while (tl < HTTP_MAX_HEAD - 16)
			tl += (size_t)snprintf(tight + tl, sizeof tight - tl, "a:b\r\n");
		tl += (size_t)snprintf(tight + tl, sizeof tight - tl, "\r\n");
		CHECK(http_resp_head(tight, tl, 0, wide, sizeof wide, &ol, &r) == (ssize_t)tl && ol > tl);
	}
	CHECK(http_resp_head(FOLDED, strlen(FOLDED), 0, out, sizeof out, &ol, &r) == -1);

	n = http_refusal(405, "method not allowed on this route", route.methods, ref, sizeof ref);
	CHECK(n > 0 && strstr(ref, "HTTP/1.1 405 Method Not Allowed\r\n") == ref);
	CHECK(strstr(ref, "Allow: DELETE, GET, POST\r\n") != NULL);
	CHECK(strstr(ref, "\"reason\":\"method not allowed on this route\"") != NULL);
	CHECK(strstr(ref, "Connection: close") != NULL);
}

static void test_methods(void)
{
	unsigned b;

	CHECK(http_methods("POST GET DELETE", &b) == 0 && b == ((1u << HTTP_POST) | (1u << HTTP_GET) | (1u << HTTP_DELETE)));
	CHECK(http_methods("post,get", &b) == 0);
	CHECK(http_methods("CONNECT", &b) == -1);
	/* methods past bit 31 do not fit the mask (found by fuzz_config) */
	CHECK(http_methods("SOURCE", &b) == -1 && http_methods("UNLINK", &b) == -1);
	CHECK(http_methods("FETCH", &b) == -1);
	CHECK(http_methods("", &b) == -1);
}

/* tls_pin = sha256:HEX (64 hex digits, either case) */
static void test_pin(void)
{
	unsigned char out[32];
	char s[80];

	snprintf(s, sizeof s, "sha256:%s", "00ff10AB" "0123456789abcdef0123456789ABCDEF0123456789abcdef01234567");
	CHECK(tls_parse_pin(s, out) == 0 && out[0] == 0 && out[1] == 0xff && out[2] == 0x10 && out[3] == 0xab &&
	      out[31] == 0x67);
	s[10] = 'g';
	CHECK(tls_parse_pin(s, out) == -1);
	s[10] = ' ';
	CHECK(tls_parse_pin(s, out) == -1); /* sscanf's %2x took a blank */
	CHECK(tls_parse_pin("sha256:00", out) == -1);
	CHECK(tls_parse_pin("sha1:00ff10ab0123456789abcdef0123456789abcdef0123456789abcdef01234567", out) == -1);
}

/* A Content-Length body passed on without being fed (spliced): what is
 * left, counted down, done at zero; chunked and bodiless requests have
 * nothing to splice. */
static void test_body_left(void)
{
	struct http_req q;
	const char *head = "POST /v1/x HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n";
	ssize_t n;

	http_req_init(&q, &prefix);
	CHECK(http_req_body_left(&q) == 0); /* nothing parsed yet */
	n = http_req_feed(&q, head, strlen(head));
	CHECK(n == (ssize_t)strlen(head) && !q.done);
	CHECK(http_req_body_left(&q) == 100000);
	n = http_req_feed(&q, "abcde", 5); /* some of it fed */
	CHECK(n == 5 && http_req_body_left(&q) == 99995 && q.body_bytes == 5);
	http_req_body_skipped(&q, 90000);
	CHECK(!q.done && http_req_body_left(&q) == 9995 && q.body_bytes == 90005);
	/* the parser goes on where the skipped bytes end */
	n = http_req_feed(&q, "xyz", 3);
	CHECK(n == 3 && http_req_body_left(&q) == 9992);
	http_req_body_skipped(&q, 1u << 30); /* more than is left: only what is */
	CHECK(q.done && http_req_body_left(&q) == 0 && q.body_bytes == 100000);
	CHECK(http_req_feed(&q, "GET / HTTP/1.1\r\n", 16) == 0); /* nothing after it is ours */

	http_req_init(&q, &prefix);
	head = "POST /v1/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
	CHECK(http_req_feed(&q, head, strlen(head)) == (ssize_t)strlen(head));
	CHECK(!q.done && http_req_body_left(&q) == 0);
	head = "5\r\nhello\r\n";
	CHECK(http_req_feed(&q, head, strlen(head)) == (ssize_t)strlen(head));
	CHECK(http_req_body_left(&q) == 0); /* a chunk's length is not the body's */

	http_req_init(&q, &prefix);
	head = "POST /v1/x HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n";
	CHECK(http_req_feed(&q, head, strlen(head)) > 0 && q.done && http_req_body_left(&q) == 0);
	http_req_init(&q, &prefix);
	head = "POST /v2/x HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\n"; /* refused */
	CHECK(http_req_feed(&q, head, strlen(head)) < 0 && http_req_body_left(&q) == 0);
}

/* The TLS server name a route's Host gives (bridgeproc.c). */
static void test_server_name(void)
{
	char n[16];

	CHECK(host_server_name("api.example.com:443", n, sizeof n) == 0 && strcmp(n, "api.example.com") == 0);
	CHECK(host_server_name("h", n, sizeof n) == 0 && strcmp(n, "h") == 0);
	CHECK(host_server_name("127.0.0.1:8443", n, sizeof n) == 0 && strcmp(n, "127.0.0.1") == 0);
	CHECK(host_server_name("[::1]:443", n, sizeof n) == 0 && strcmp(n, "::1") == 0); /* it was "[" */
	CHECK(host_server_name("[fe80::1]", n, sizeof n) == 0 && strcmp(n, "fe80::1") == 0);
	CHECK(host_server_name("[::1", n, sizeof n) == -1);
	CHECK(host_server_name("[]:443", n, sizeof n) == -1);
	CHECK(host_server_name("[::1]x", n, sizeof n) == -1);
	CHECK(host_server_name("[[::1]]", n, sizeof n) == -1);
	CHECK(host_server_name("::1", n, sizeof n) == -1);
	CHECK(host_server_name(":443", n, sizeof n) == -1);
	CHECK(host_server_name("h:", n, sizeof n) == -1);
	CHECK(host_server_name("h: 443", n, sizeof n) == -1);
	CHECK(host_server_name("h:70000", n, sizeof n) == -1);
	CHECK(host_server_name("a-name-too-long-for-16", n, sizeof n) == -1);
	CHECK(host_server_name("fifteen-chars-x", n, sizeof n) == 0 && strcmp(n, "fifteen-chars-x") == 0);
}

/* Where an answer ends (respend.c): what of the bytes read is the
 * answer's, and whether its connection may carry another request. */
static size_t ends(const char *in, int head_req, int *done, int *keep)
{
	struct resp_end e;
	size_t n;

	resp_end_init(&e, head_req);
	n = resp_end_feed(&e, in, strlen(in));
	*done = e.done;
	*keep = e.keep;
	return n;
}

static void test_resp_end(void)
{
	int done, keep;
	struct resp_end e;
	const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n";
	size_t i, sum = 0;

	CHECK(ends("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiEXTRA", 0, &done, &keep) == 40 && done && keep);
	CHECK(ends("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nh", 0, &done, &keep) == 39 && !done);
	CHECK(ends("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\nX", 0, &done, &keep) == 59 && done &&
	      keep);
	/* an interim answer does not end the exchange; the final one does */
	CHECK(ends("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\nX", 0, &done, &keep) == 52 && done && keep);
	CHECK(ends("HTTP/1.1 100 Continue\r\n\r\n", 0, &done, &keep) == 25 && !done);
	/* the server's close after it, or a 1.0 answer: the connection is not kept */
	CHECK(ends("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", 0, &done, &keep) == 57 && done &&
	      !keep);
	CHECK(ends("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 0, &done, &keep) == 38 && done && !keep);
	/* a HEAD's answer: no body, whatever its length says */
	CHECK(ends("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", 1, &done, &keep) == 40 && done && keep);
	CHECK(ends("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", 0, &done, &keep) == 40 && !done);
	/* 204 and 304 have no body, whatever length or chunks their head says */
	CHECK(ends("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", 0, &done, &keep) == 49 && done && keep);
	CHECK(ends("HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n", 0, &done, &keep) == 55 && done);
	/* only the close ends it: never done by its bytes */
	CHECK(ends("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: x\n\n", 0, &done, &keep) == 61 && !done);
	/* a byte at a time ends at the same byte */
	resp_end_init(&e, 0);
	for (i = 0; i < strlen(chunked) + 3; i++)
		sum += resp_end_feed(&e, i < strlen(chunked) ? chunked + i : "Z", 1);
	CHECK(sum == strlen(chunked) && e.done && e.keep);
	/* not HTTP: failed, every byte the answer's (only the close ends it) */
	resp_end_init(&e, 0);
	CHECK(resp_end_feed(&e, "SSH-2.0-x\r\n", 11) == 11 && e.failed && !e.done);
}

/* The upstream's head asks to keep the connection only when told to, and
 * a Keep-Alive timeout is read off the answer. */
static void test_keep_heads(void)
{
	static const struct http_route keep_route = { .methods = 1u << HTTP_POST, .path = "/mcp", .exact = 1 };
	struct http_req q;
	char out[1024];
	size_t ol;
	struct http_resp r = { 0, 0, 0 };
	const char *in = "POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}";
	ssize_t n;

	http_req_init(&q, &keep_route);
	CHECK(http_req_feed(&q, in, strlen(in)) > 0);
	n = http_req_upstream_head(&q, NULL, NULL, 1, out, sizeof out);
	CHECK(n > 0 && (out[n] = '\0', strstr(out, "Connection: keep-alive\r\n\r\n")) && !strstr(out, "close"));
	n = http_req_upstream_head(&q, NULL, NULL, 0, out, sizeof out);
	CHECK(n > 0 && (out[n] = '\0', strstr(out, "Connection: close\r\n\r\n")) && !strstr(out, "keep-alive"));
#define KA(v) "HTTP/1.1 200 OK\r\nKeep-Alive: " v "\r\nContent-Length: 0\r\n\r\n"
	CHECK(http_resp_head(KA("timeout=5, max=100"), strlen(KA("timeout=5, max=100")), 1, out, sizeof out, &ol, &r) > 0 &&
	      r.keep_s == 5);
	CHECK(http_resp_head(KA("max=9, timeout=12"), strlen(KA("max=9, timeout=12")), 1, out, sizeof out, &ol, &r) > 0 &&
	      r.keep_s == 12);
	out[ol] = '\0';
	CHECK(strstr(out, "Content-Length: 0\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n") &&
	      !strstr(out, "max=9") && !strstr(out, "close"));
	CHECK(http_resp_head(KA("xtimeout=5"), strlen(KA("xtimeout=5")), 1, out, sizeof out, &ol, &r) > 0 && r.keep_s == 0);
	CHECK(http_resp_head(KA("timeout=99999999999"), strlen(KA("timeout=99999999999")), 1, out, sizeof out, &ol, &r) > 0 &&
	      r.keep_s == 3600);
}

int main(void)
{
	test_resp_end();
	test_keep_heads();
	test_server_name();
	test_pin();
	test_body_left();
	test_good();
	test_refusals();
	test_response();
	test_methods();
	return unit_done("test_http");
}
