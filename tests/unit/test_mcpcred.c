/* Unit tests for mcp-bridge/mcpcred.c: an MCP server's OAuth sign-in as
 * Pi 1.6 keeps it in mcp-auth.json (found by its key, read, refreshed as
 * pi-mcp refreshes it, written back) and mcpjson.c's use of it: a route
 * that sends the sign-in's token, or the server left out with why. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "mcp-bridge/credfile.h"
#include "mcp-bridge/mcpcred.h"
#include "mcp-bridge/mcpjson.h"
#include "unit.h"

/* pi-mcp's state as Pi 1.6 writes it after a sign-in (a client it
 * registered, the discovery it cached), and another server's entry. */
#define AUTH_FMT                                                                                                   \
	"{\n  \"mcp__lin_ear|https://mcp.example.com/mcp\": {\n"                                                   \
	"    \"clientInformation\": {\"client_id\": \"cid-1\"%s, \"redirect_uris\": [\"http://127.0.0.1:1/callback\"]},\n" \
	"    \"discovery\": {\"authorizationServerUrl\": \"https://auth.example.com/\",\n"                       \
	"      \"authorizationServerMetadata\": {\"issuer\": \"https://auth.example.com/\",\n"                    \
	"        \"token_endpoint\": \"https://auth.example.com/oauth/token\"%s},\n"                              \
	"      \"resourceMetadata\": {\"resource\": \"https://mcp.example.com/mcp\"}},\n"                         \
	"    \"tokens\": {\"access_token\": \"at-0\", \"token_type\": \"Bearer\", \"expires_in\": 3600,\n"         \
	"      \"scope\": \"read write\", \"refresh_token\": \"rt-0\"},\n"                                          \
	"    \"tokensExpireAt\": 1796000000000\n  },\n"                                                             \
	"  \"mcp__other|https://other.example.com/\": {\"tokens\": {\"access_token\": \"o\"}}\n}\n"

static void auth_text(char *buf, size_t size, const char *client_extra, const char *meta_extra)
{
	snprintf(buf, size, AUTH_FMT, client_extra, meta_extra);
}

static void test_find(void)
{
	static struct cred_tokens t;
	char buf[4096], key[512], why[400];

	auth_text(buf, sizeof buf, "", "");
	/* the name's '-' as '_', the URL as pi-mcp normalizes it (host in
	 * lower case, the default port left out) */
	CHECK(mcpcred_find(buf, strlen(buf), "lin-ear", "https://MCP.example.com:443/mcp", key, sizeof key, &t, why,
			   sizeof why) == 1);
	CHECK_STR(key, "mcp__lin_ear|https://mcp.example.com/mcp");
	CHECK_STR(t.access, "at-0");
	CHECK_STR(t.refresh, "rt-0");
	CHECK_STR(t.client_id, "cid-1");
	CHECK_STR(t.token_url, "https://auth.example.com/oauth/token");
	CHECK_STR(t.resource, "https://mcp.example.com/mcp");
	CHECK(t.expires == 1796000000000LL && t.format == CRED_MCP && t.client_auth == CLIENT_NONE);
	/* another server's name or URL: none */
	CHECK(mcpcred_find(buf, strlen(buf), "linear", "https://mcp.example.com/mcp", key, sizeof key, &t, why,
			   sizeof why) == 0 && strstr(why, "sign in"));
	CHECK(mcpcred_find(buf, strlen(buf), "lin-ear", "https://mcp.example.com/mcp/", key, sizeof key, &t, why,
			   sizeof why) == 0);
	/* an entry without a refresh token: found, but ward cannot keep it */
	CHECK(mcpcred_find(buf, strlen(buf), "other", "https://other.example.com", key, sizeof key, &t, why,
			   sizeof why) == -1 && strstr(why, "refresh token"));
	/* the legacy key, the URL alone (older versions wrote it) */
	{
		const char *legacy = "{\"https://old.example.com/mcp\": {\"tokens\": {\"access_token\": \"a\", "
				     "\"refresh_token\": \"r\"}, \"clientInformation\": {\"client_id\": \"c\"}, "
				     "\"discovery\": {\"authorizationServerMetadata\": {\"token_endpoint\": "
				     "\"https://old.example.com/token\"}}}}";
		CHECK(mcpcred_find(legacy, strlen(legacy), "old", "https://old.example.com/mcp", key, sizeof key, &t,
				   why, sizeof why) == 1);
		CHECK_STR(key, "https://old.example.com/mcp");
		CHECK(t.expires == 0); /* none kept: good until a 401 */
		CHECK(credfile_fresh(&t, 1LL << 50));
	}
	/* a token endpoint that is not https: refused */
	{
		char bad[4096];
		auth_text(bad, sizeof bad, "", "");
		char *p = strstr(bad, "https://auth.example.com/oauth/token");
		memcpy(p, "http:/", 6);
		CHECK(mcpcred_find(bad, strlen(bad), "lin-ear", "https://mcp.example.com/mcp", key, sizeof key, &t, why,
				   sizeof why) == -1 && strstr(why, "https token endpoint"));
	}
	CHECK(mcpcred_find("{", 1, "x", "https://a/", key, sizeof key, &t, why, sizeof why) == 0);
}

static void test_request(void)
{
	static struct cred_tokens t;
	char buf[4096], key[512], why[400], out[8192];
	int n;

	/* no secret: the client's id in the form (auth method none) */
	auth_text(buf, sizeof buf, "", "");
	CHECK(mcpcred_find(buf, strlen(buf), "lin-ear", "https://mcp.example.com/mcp", key, sizeof key, &t, why,
			   sizeof why) == 1);
	n = credfile_request(&t, "auth.example.com", "/oauth/token", NULL, out, sizeof out);
	CHECK(n > 0);
	CHECK(strncmp(out, "POST /oauth/token HTTP/1.1\r\nHost: auth.example.com\r\n"
			   "Content-Type: application/x-www-form-urlencoded\r\n", 101) == 0);
	CHECK(strstr(out, "\r\n\r\ngrant_type=refresh_token&refresh_token=rt-0&resource=https%3A%2F%2Fmcp.example.com"
			  "%2Fmcp&client_id=cid-1") != NULL);
	CHECK(!strstr(out, "Authorization"));
	/* a secret and no methods listed: client_secret_basic, as pi-mcp */
	auth_text(buf, sizeof buf, ", \"client_secret\": \"s3cr:t\"", "");
	CHECK(mcpcred_find(buf, strlen(buf), "lin-ear", "https://mcp.example.com/mcp", key, sizeof key, &t, why,
			   sizeof why) == 1 && t.client_auth == CLIENT_BASIC);
	n = credfile_request(&t, "auth.example.com", "/oauth/token", NULL, out, sizeof out);
	/* base64("cid-1:s3cr:t") */
	CHECK(n > 0 && strstr(out, "\r\nAuthorization: Basic Y2lkLTE6czNjcjp0\r\n") && !strstr(out, "client_id=") &&
	      !strstr(out, "client_secret="));
	/* the server lists post only: the secret in the form, encoded */
	auth_text(buf, sizeof buf, ", \"client_secret\": \"s3cr:t\"",
		  ", \"token_endpoint_auth_methods_supported\": [\"client_secret_post\"]");
	CHECK(mcpcred_find(buf, strlen(buf), "lin-ear", "https://mcp.example.com/mcp", key, sizeof key, &t, why,
			   sizeof why) == 1 && t.client_auth == CLIENT_POST);
	n = credfile_request(&t, "auth.example.com", "/oauth/token", NULL, out, sizeof out);
	CHECK(n > 0 && strstr(out, "&client_id=cid-1&client_secret=s3cr%3At") && !strstr(out, "Authorization"));
	/* the registration's own method, when the server lists it */
	auth_text(buf, sizeof buf, ", \"client_secret\": \"s\", \"token_endpoint_auth_method\": \"client_secret_post\"",
		  ", \"token_endpoint_auth_methods_supported\": [\"client_secret_basic\", \"client_secret_post\"]");
	CHECK(mcpcred_find(buf, strlen(buf), "lin-ear", "https://mcp.example.com/mcp", key, sizeof key, &t, why,
			   sizeof why) == 1 && t.client_auth == CLIENT_POST);
	CHECK(credfile_request(&t, "h", "/p", NULL, out, 60) == -1);
}

/* A token endpoint's answer as the bridge relays it. */
static void answer(char *out, size_t size, const char *body)
{
	snprintf(out, size, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(body), body);
}

static void test_answer_and_update(void)
{
	static struct cred_tokens t, back;
	char buf[4096], key[512], why[400], *text;
	size_t n;
	char ok[512], err200[512], notype[512], noexp[512];

	/* an OAuth error with a 200: refused all the same, as pi-mcp reads it */
	answer(ok, sizeof ok, "{\"access_token\":\"at-1\",\"token_type\":\"Bearer\",\"expires_in\":7200,"
			      "\"refresh_token\":\"rt-1\"}");
	answer(err200, sizeof err200, "{\"error\":\"invalid_grant\",\"error_description\":\"revoked\"}");
	answer(notype, sizeof notype, "{\"access_token\":\"at-2\"}");
	answer(noexp, sizeof noexp, "{\"access_token\":\"at-3\",\"token_type\":\"bearer\"}");
	auth_text(buf, sizeof buf, "", "");
	CHECK(mcpcred_find(buf, strlen(buf), "lin-ear", "https://mcp.example.com/mcp", key, sizeof key, &t, why,
			   sizeof why) == 1);
	CHECK(credfile_answer(ok, strlen(ok), 1000000, &t, why, sizeof why) == 0);
	CHECK_STR(t.access, "at-1");
	CHECK_STR(t.refresh, "rt-1");
	/* pi-mcp's tokensExpireAt: now + expires_in, no margin of its own */
	CHECK(t.expires == 1000000 + 7200000);
	CHECK(credfile_fresh(&t, 1000000 + 7200000 - 31000) && !credfile_fresh(&t, 1000000 + 7200000 - 29000));
	text = credfile_update(buf, strlen(buf), key, &t, &n);
	CHECK(text && n == strlen(text));
	CHECK(text && mcpcred_parse(text, n, key, &back, why, sizeof why) == 0 && strcmp(back.access, "at-1") == 0 &&
	      strcmp(back.refresh, "rt-1") == 0 && back.expires == 1000000 + 7200000 &&
	      strcmp(back.client_id, "cid-1") == 0);
	/* the scope the answer left out is kept; expires_in a whole number;
	 * the other server's entry and the discovery as they were */
	CHECK(text && strstr(text, "\"scope\": \"read write\"") && strstr(text, "\"expires_in\": 7200,") &&
	      strstr(text, "\"mcp__other|https://other.example.com/\"") && strstr(text, "\"issuer\""));
	free(text);
	CHECK(credfile_answer(err200, strlen(err200), 0, &t, why, sizeof why) == -1 && strstr(why, "invalid_grant") &&
	      strstr(why, "revoked"));
	CHECK(credfile_answer(notype, strlen(notype), 0, &t, why, sizeof why) == -1 && strstr(why, "token_type"));
	CHECK_STR(t.access, "at-1");
	/* no expires_in: no tokensExpireAt, good until a 401 */
	CHECK(credfile_answer(noexp, strlen(noexp), 5, &t, why, sizeof why) == 0 && t.expires == 0 &&
	      t.expires_in < 0);
	text = credfile_update(buf, strlen(buf), key, &t, &n);
	CHECK(text && !strstr(text, "tokensExpireAt\": 1796") && !strstr(strstr(text, "lin_ear"), "tokensExpireAt"));
	free(text);
	CHECK(credfile_update("[]", 2, key, &t, &n) == NULL);
}

/* mcpjson: a signed-in server's route sends its token; an oauth object
 * without a sign-in is left out with why; a header wins over a sign-in. */
static void test_rewrite(void)
{
	char auth[4096];
	struct mcp_result r;
	struct mcp_where where = { .by_url = 1, .loopback = "/run/ward/host" };
	const char *json = "{\"mcpServers\": {"
			   "\"lin-ear\": {\"url\": \"https://mcp.example.com/mcp\", \"oauth\": {\"clientName\": \"x\"}},"
			   "\"hdr\": {\"url\": \"https://mcp.example.com/mcp\", \"headers\": {\"Authorization\": \"Bearer k\"}},"
			   "\"unsigned\": {\"url\": \"https://mcp.example.com/other\", \"oauth\": {}},"
			   "\"plain\": {\"url\": \"https://mcp.example.com/plain\"},"
			   "\"adapter\": {\"url\": \"https://mcp.example.com/a\", \"auth\": \"oauth\"}}}";

	auth_text(auth, sizeof auth, "", "");
	where.auth = auth;
	where.auth_len = strlen(auth);
	CHECK(mcp_rewrite(json, strlen(json), 7800, &where, &r) == 0);
	CHECK(r.n_routes == 3);
	CHECK(r.n_routes == 3 && strcmp(r.routes[0].name, "mcp-lin-ear") == 0 && r.routes[0].oauth_key &&
	      strcmp(r.routes[0].oauth_key, "mcp__lin_ear|https://mcp.example.com/mcp") == 0 &&
	      strcmp(r.routes[0].token_host, "auth.example.com") == 0 &&
	      strcmp(r.routes[0].token_path, "/oauth/token") == 0 && r.routes[0].token_up.kind == UP_TLS &&
	      r.routes[0].token_up.port == 443);
	CHECK(r.n_routes == 3 && !r.routes[1].oauth_key && !r.routes[2].oauth_key);
	CHECK(r.n_skipped == 2 && strstr(r.skipped[0].why, "unsigned") && strstr(r.skipped[0].why, "sign in") &&
	      strstr(r.skipped[1].why, "adapter") && strstr(r.skipped[1].why, "keyring"));
	/* the agent's copy: no oauth object, no token */
	CHECK(r.text && !strstr(r.text, "oauth\"") && !strstr(r.text, "at-0") && !strstr(r.text, "clientName"));
	mcp_result_free(&r);
	/* a token endpoint on the host's loopback: by that port's relay */
	{
		char *p = strstr(auth, "https://auth.example.com/oauth/token");
		char local[4096];
		snprintf(local, sizeof local, "%.*shttp://127.0.0.1:8446/token%s", (int)(p - auth), auth,
			 p + strlen("https://auth.example.com/oauth/token"));
		where.auth = local;
		where.auth_len = strlen(local);
		CHECK(mcp_rewrite(json, strlen(json), 7800, &where, &r) == 0);
		CHECK(r.n_routes == 3 && r.routes[0].oauth_key && r.routes[0].token_up.kind == UP_UNIX &&
		      strstr(r.routes[0].token_up.desc, "/run/ward/host/8446.sock") &&
		      strcmp(r.routes[0].token_path, "/token") == 0);
		mcp_result_free(&r);
		/* plain http elsewhere: the server left out, saying why */
		snprintf(local, sizeof local, "%.*shttp://localhost.example.com/token%s", (int)(p - auth), auth,
			 p + strlen("https://auth.example.com/oauth/token"));
		where.auth_len = strlen(local);
		CHECK(mcp_rewrite(json, strlen(json), 7800, &where, &r) == 0);
		CHECK(r.n_routes == 2 && strstr(r.skipped[0].why, "lin-ear") && strstr(r.skipped[0].why, "token endpoint"));
		mcp_result_free(&r);
	}
	/* no file given: an oauth server is left out saying so */
	where.auth = NULL;
	CHECK(mcp_rewrite(json, strlen(json), 7800, &where, &r) == 0);
	CHECK(r.n_routes == 2 && r.n_skipped == 3 && strstr(r.skipped[0].why, "[mcp] auth"));
	mcp_result_free(&r);
}

int main(void)
{
	test_find();
	test_request();
	test_answer_and_update();
	test_rewrite();
	return unit_done("test_mcpcred");
}
