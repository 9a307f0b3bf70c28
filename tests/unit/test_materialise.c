/* Unit tests for mcp-bridge/mcpjson.c and init/sandbox/privwrite.c: both mcp.json flavours, what
 * passes through, where secrets go, every refusal. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/source.h"
#include "init/sandbox/privwrite.h"
#include "mcp-bridge/mcpjson.h"
#include "unit.h"

static int rewrite(const char *text, struct mcp_result *r)
{
	return mcp_rewrite(text, strlen(text), 7800, NULL, r);
}

static json_t *server(const struct mcp_result *r, const char *name)
{
	json_t *root = json_loads(r->text, 0, NULL);
	json_t *s = json_incref(json_object_get(json_object_get(root, "mcpServers"), name));
	json_decref(root);
	return s;
}

static void test_builtin(void)
{
	struct mcp_result r;
	json_t *s;
	const char *text =
		"{\"mcpServers\":{"
		"\"paseo\":{\"url\":\"http://127.0.0.1:6767/mcp/agents?callerAgentId=a1\","
		"\"headers\":{\"Authorization\":\"Bearer ${WARD_TEST_TOKEN}\",\"X-Team\":\"blue\"},"
		"\"exposure\":\"direct\",\"timeout\":60},"
		"\"docs\":{\"type\":\"http\",\"url\":\"https://docs.example.com\"},"
		"\"fs\":{\"command\":\"npx\",\"args\":[\"-y\",\"x\"],\"env\":{\"A\":\"b\"}}},"
		"\"unknown\":{\"kept\":true}}";

	setenv("WARD_TEST_TOKEN", "s3cret", 1);
	CHECK(rewrite(text, &r) == 0);
	CHECK(r.n_routes == 2);
	CHECK_STR(r.routes[0].name, "mcp-paseo");
	CHECK(r.routes[0].port == 7800 && r.routes[1].port == 7801);
	CHECK_STR(r.routes[0].host, "127.0.0.1:6767");
	CHECK_STR(r.routes[0].path, "/mcp/agents?callerAgentId=a1");
	CHECK(r.routes[0].n_headers == 2);
	CHECK_STR(hline(&r.routes[0].headers[0]), "Authorization: Bearer s3cret");
	CHECK_STR(hline(&r.routes[0].headers[1]), "X-Team: blue");
	/* the variable it came from, for the env_pass check */
	CHECK(r.n_vars == 1 && strcmp(r.vars[0], "WARD_TEST_TOKEN") == 0);
	CHECK_STR(r.routes[1].host, "docs.example.com");
	CHECK_STR(r.routes[1].path, "/");
	CHECK(strstr(r.text, "s3cret") == NULL && strstr(r.text, "WARD_TEST_TOKEN") == NULL);
	CHECK(strstr(r.text, "\"unknown\"") != NULL);
	s = server(&r, "paseo");
	CHECK_STR(json_string_value(json_object_get(s, "url")), "http://127.0.0.1:7800/mcp/agents?callerAgentId=a1");
	CHECK(json_object_get(s, "headers") == NULL);
	CHECK_STR(json_string_value(json_object_get(s, "exposure")), "direct");
	CHECK(json_integer_value(json_object_get(s, "timeout")) == 60);
	json_decref(s);
	s = server(&r, "docs");
	CHECK_STR(json_string_value(json_object_get(s, "url")), "http://127.0.0.1:7801/");
	json_decref(s);
	s = server(&r, "fs");
	CHECK_STR(json_string_value(json_object_get(s, "command")), "npx");
	CHECK(json_array_size(json_object_get(s, "args")) == 2 && json_object_get(s, "env") != NULL);
	json_decref(s);
	mcp_result_free(&r);
}

static void test_adapter(void)
{
	struct mcp_result r;
	json_t *s;
	const char *text = "{\"settings\":{\"toolPrefix\":\"server\",\"directTools\":true},\"mcpServers\":{"
			   "\"a\":{\"url\":\"http://localhost:18091/mcp\",\"bearerToken\":\"tok\",\"lifecycle\":\"eager\"},"
			   "\"b\":{\"url\":\"http://10.0.0.1/x\",\"auth\":\"bearer\",\"bearerTokenEnv\":\"WARD_TEST_TOKEN\"}}}";

	CHECK(rewrite(text, &r) == 0 && r.n_routes == 2);
	CHECK(r.routes[0].n_headers == 1);
	CHECK_STR(hline(&r.routes[0].headers[0]), "Authorization: Bearer tok");
	CHECK_STR(hline(&r.routes[1].headers[0]), "Authorization: Bearer s3cret");
	CHECK(r.n_vars == 1 && strcmp(r.vars[0], "WARD_TEST_TOKEN") == 0); /* bearerTokenEnv's */
	CHECK_STR(r.routes[0].host, "localhost:18091");
	CHECK(strstr(r.text, "tok\"") == NULL && strstr(r.text, "bearerToken") == NULL);
	CHECK(strstr(r.text, "\"directTools\": true") != NULL && strstr(r.text, "\"lifecycle\": \"eager\"") != NULL);
	s = server(&r, "b");
	CHECK_STR(json_string_value(json_object_get(s, "auth")), "bearer");
	json_decref(s);
	mcp_result_free(&r);
}

static void test_interpolation(void)
{
	struct mcp_result r;

	setenv("WARD_TEST_LONG", "0123456789012345678901234567890123456789", 1);
	CHECK(rewrite("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"X\":"
		      "\"${WARD_TEST_LONG}-${WARD_TEST_LONG}$x$${WARD_TEST_TOKEN}tail\"}}}}", &r) == 0);
	CHECK(r.n_routes == 1 && r.routes[0].n_headers == 1);
	CHECK_STR(hline(&r.routes[0].headers[0]), "X: 0123456789012345678901234567890123456789-"
					  "0123456789012345678901234567890123456789$x$s3crettail");
	/* each variable once, in the order met */
	CHECK(r.n_vars == 2 && strcmp(r.vars[0], "WARD_TEST_LONG") == 0 && strcmp(r.vars[1], "WARD_TEST_TOKEN") == 0);
	mcp_result_free(&r);
	CHECK(r.n_vars == 0);
}

static char last_err[sizeof ((struct mcp_result *)0)->err];

/* Not served, with why: the whole file refused (-1, r.err), or the one
 * server "a" left out (0, r.skipped; no route, nothing of its entry in the
 * agent's copy) while the file is taken. */
static int refused(const char *text, const char *why)
{
	struct mcp_result r;
	int rc = rewrite(text, &r);
	const char *msg = rc == -1 ? r.err : r.n_skipped ? r.skipped[0].why : "";
	int ok = (rc == -1 || (r.n_skipped == 1 && r.n_routes == 0 && r.text && !strstr(r.text, "\"a\":"))) &&
		 strstr(msg, why) != NULL;

	if (!ok)
		fprintf(stderr, "want '%s', got '%s' (rc %d, %d left out) for %s\n", why, msg, rc, r.n_skipped, text);
	snprintf(last_err, sizeof last_err, "%s", msg);
	mcp_result_free(&r);
	return ok;
}

/* the last refusal's message holds s */
static int said(const char *s)
{
	if (strstr(last_err, s))
		fprintf(stderr, "the message repeats '%s': %s\n", s, last_err);
	return strstr(last_err, s) != NULL;
}

/* A server ward cannot serve costs only itself: left out, named with why,
 * nothing of its entry in the copy; the others served as ever. */
static void test_left_out(void)
{
	struct mcp_result r;

	CHECK(rewrite("{\"mcpServers\":{\"good\":{\"url\":\"https://h/mcp\",\"headers\":{\"A\":\"1\"}},"
		      "\"auth\":{\"url\":\"https://o/mcp\",\"auth\":\"oauth\",\"oauth\":{\"clientSecret\":\"S3CRET\"}},"
		      "\"mux\":{\"socket\":\"/run/mux.sock\"},\"local\":{\"command\":\"npx\"},"
		      "\"cmd\":{\"url\":\"http://h/x\",\"headers\":{\"A\":\"!pass show t\"}}}}", &r) == 0);
	CHECK(r.n_routes == 1 && strcmp(r.routes[0].name, "mcp-good") == 0 && r.routes[0].port == 7800);
	CHECK(r.n_skipped == 3 && strstr(r.skipped[0].why, "server auth: pi-mcp-adapter's OAuth") &&
	      strstr(r.skipped[1].why, "server mux: a host unix socket") && strstr(r.skipped[2].why, "server cmd: ") &&
	      strstr(r.skipped[2].why, "!command"));
	CHECK(r.text && !strstr(r.text, "S3CRET") && !strstr(r.text, "\"auth\"") && !strstr(r.text, "mux") &&
	      !strstr(r.text, "pass show") && strstr(r.text, "\"good\"") && strstr(r.text, "\"local\""));
	mcp_result_free(&r);
	CHECK(r.n_skipped == 0);
}

static void test_refusals(void)
{
	CHECK(refused("{\"mcpServers\":", "line 1"));
	CHECK(refused("[]", "mcpServers"));
	CHECK(refused("{\"servers\":{}}", "mcpServers"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"ws://h/x\"}}}", "cannot be bridged"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://user:pw@h/x\"}}}", "cannot be bridged"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http:///x\"}}}", "cannot be bridged"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x#frag\"}}}", "cannot be bridged"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"type\":\"sse\",\"url\":\"http://h/sse\"}}}", "legacy SSE"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"socket\":\"/run/mux.sock\"}}}", "cannot be reached"));
	CHECK(refused("{\"mcpServers\":{\"a\":{}}}", "neither url nor command"));
	CHECK(refused("{\"mcpServers\":{\"a\":3}}", "not an object"));
	CHECK(refused("{\"mcpServers\":{\"a b\":{\"command\":\"x\"}}}", "letters, digits"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"A\":\"${WARD_NOPE_XYZ}\"}}}}", "not in ward's environment"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"A\":\"${\"}}}}", "bad ${VAR}"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"A\":7}}}}", "string value"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"A\":\"x\\r\\nB: y\"}}}}", "line break"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":[]}}}", "headers must be an object"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"bearerTokenEnv\":\"WARD_NOPE_XYZ\"}}}", "bearerTokenEnv"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"command\":\"x\"},\"a\":{\"command\":\"y\"}}}", "duplicate"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"Content-Length\":\"0\"}}}}",
		      "writes it itself"));
	/* a header name must be a token: the upstream would refuse every request */
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"X(1)\":\"v\"}}}}", "not an HTTP token"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"X\\u00e9\":\"v\"}}}}", "not an HTTP token"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"X,Y\":\"v\"}}}}", "not an HTTP token"));
	/* an Authorization header and a bearer token would send two */
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"authorization\":\"Bearer 1\"},"
		      "\"bearerToken\":\"2\"}}}", "say one"));
	/* URLs no request could reach through the bridge: refused at start, not at each request */
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/a/../b\"}}}", "cannot be bridged"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/a%2Fb\"}}}", "cannot be bridged"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h:99999/x\"}}}", "cannot be bridged"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h:0/x\"}}}", "cannot be bridged"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h:/x\"}}}", "cannot be bridged"));
	{
		struct mcp_result r;
		CHECK(rewrite("{\"mcpServers\":{\"a\":{\"url\":\"http://[::1]:6767/mcp\"}}}", &r) == 0 && r.n_routes == 1 &&
		      strcmp(r.routes[0].host, "[::1]:6767") == 0);
		mcp_result_free(&r);
	}
	/* lines upstream: a bearer token or a host with a line break would add its own */
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"bearerToken\":\"t\\r\\nX-I: 1\"}}}", "line break"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h\\r\\nX-I: 1/x\"}}}", "cannot be bridged"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h x/x\"}}}", "cannot be bridged"));
	/* what the messages must not repeat: a password in a URL, the input near a JSON error */
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://u:SECRETPW@h/x\"}}}", "cannot be bridged") &&
	      !said("SECRETPW"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"A\":SECRET7}}}}", "line 1") &&
	      !said("SECRET7"));
	/* names with a line break are not echoed */
	CHECK(refused("{\"mcpServers\":{\"a\\nb\":{\"command\":\"x\"}}}", "server name") && !said("\n"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"A\\nB\":\"v\"}}}}",
		      "not an HTTP token") && !said("\n"));
	/* OAuth keeps a client secret in the entry: refused, not copied */
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"https://h/mcp\",\"auth\":\"oauth\",\"oauth\":"
		      "{\"clientId\":\"x\",\"clientSecret\":\"S3CRET\"}}}}", "OAuth") && !said("S3CRET"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"https://h/mcp\",\"auth\":\"oauth\"}}}", "OAuth"));
	/* headers from a command would be made inside the sandbox, a !command
	 * value sent as written; a "Headers" map would stay in the agent's copy */
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"requestHeadersCommand\":"
		      "{\"command\":\"vault\",\"args\":[\"read\"]}}}}", "requestHeadersCommand"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"A\":\"!pass show t\"}}}}",
		      "!command"));
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"Headers\":{\"A\":\"S3CRET\"}}}}",
		      "lower case") && !said("S3CRET"));
	/* $env:NAME of a variable ward's environment lacks: as ${NAME} */
	unsetenv("WARD_TEST_NOT_SET");
	CHECK(refused("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"A\":\"Bearer "
		      "$env:WARD_TEST_NOT_SET\"}}}}", "WARD_TEST_NOT_SET"));
	/* hosts that are no Host line, and paths a client would send otherwise */
	{
		static const char *const bad[] = {
			"http://::1/x", "http://h:80:90/x", "http://:80/x", "http://[::1/x", "http://[::1]x/x",
			"http://${HOST}/x", "http://[]/x", "http://h/caf\\u00e9", "http://h/a{b}", "http://h/a%7Bb%7D?q=<x>",
			"http://h/a\\\\b", "http://h/a`b", "http://h/a?x='y'", "http://h/a\\\"b", "http://h/a^b",
		};
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			char text[200];
			snprintf(text, sizeof text, "{\"mcpServers\":{\"a\":{\"url\":\"%s\"}}}", bad[i]);
			if (!refused(text, "cannot be bridged"))
				fprintf(stderr, "  accepted: %s\n", bad[i]);
			CHECK(refused(text, "cannot be bridged"));
		}
	}
	{
		/* what the parser leaves as it is: ' in a path; { } ^ ` \ in a query */
		static const char *const good[] = { "http://h/o'brien/mcp", "http://h/m?f={a}&g=^`|" };
		for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
			struct mcp_result r;
			char text[200];
			snprintf(text, sizeof text, "{\"mcpServers\":{\"a\":{\"url\":\"%s\"}}}", good[i]);
			CHECK(rewrite(text, &r) == 0 && r.n_routes == 1);
			mcp_result_free(&r);
		}
	}
	{
		struct mcp_result r;
		/* the scheme in any case; a bearer token from ward's environment;
		 * a URL server's env does not reach the agent */
		CHECK(rewrite("{\"mcpServers\":{\"a\":{\"url\":\"HTTPS://H.example:8443/m?x=1\",\"bearerToken\":"
			      "\"${WARD_TEST_TOKEN}\",\"env\":{\"K\":\"envsecret\"}}}}", &r) == 0 && r.n_routes == 1);
		CHECK(r.n_routes == 1 && strcmp(r.routes[0].host, "H.example:8443") == 0 &&
		      strcmp(r.routes[0].path, "/m?x=1") == 0 && r.routes[0].n_headers == 1 &&
		      strcmp(hline(&r.routes[0].headers[0]), "Authorization: Bearer s3cret") == 0);
		CHECK(r.text && !strstr(r.text, "envsecret") && !strstr(r.text, "WARD_TEST_TOKEN"));
		mcp_result_free(&r);
	}
}

/* Sources up to 1 MiB are read whole; one byte more is refused; a
 * directory is an error, not an empty file. */
static void test_source_size(void)
{
	char path[] = "/tmp/ward-src-XXXXXX", err[256], *buf = NULL, dir[] = "/tmp/ward-srcdir-XXXXXX";
	size_t len = 0, sizes[] = { 1 << 20, (1 << 20) + 1 };
	int fd = mkstemp(path), i;
	char *data = malloc((1 << 20) + 1);

	CHECK(fd >= 0 && data != NULL);
	if (fd < 0 || !data) {
		free(data);
		return;
	}
	memset(data, 'j', (1 << 20) + 1);
	for (i = 0; i < 2; i++) {
		CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, data, sizes[i], 0) == (ssize_t)sizes[i]);
		buf = NULL;
		len = 0;
		if (i == 0)
			CHECK(source_read(path, SOURCE_MAX_FILE, &buf, &len, err, sizeof err) == 0 && len == sizes[i]);
		else
			CHECK(source_read(path, SOURCE_MAX_FILE, &buf, &len, err, sizeof err) == -1 && strstr(err, "larger than 1 MiB"));
		free(buf);
	}
	close(fd);
	unlink(path);
	free(data);
	CHECK(mkdtemp(dir) != NULL);
	buf = NULL;
	CHECK(source_read(dir, SOURCE_MAX_FILE, &buf, &len, err, sizeof err) == -1 && strstr(err, "directory") && !buf);
	rmdir(dir);
}

/* pi-mcp-adapter's $env:NAME and {env:NAME}: the same ${NAME}, sent as the
 * adapter would have sent it, and noted as the variable it is. */
static void test_adapter_spellings(void)
{
	struct mcp_result r;

	setenv("WARD_TEST_TOKEN", "s3cret", 1);
	CHECK(rewrite("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"bearerToken\":\"{env:WARD_TEST_TOKEN}\"}}}", &r) == 0);
	CHECK(r.n_routes == 1 && r.routes[0].n_headers == 1);
	CHECK_STR(hline(&r.routes[0].headers[0]), "Authorization: Bearer s3cret");
	mcp_result_free(&r);
	CHECK(rewrite("{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"A\":\"Bearer $env:WARD_TEST_TOKEN\","
		      "\"B\":\"x{env:WARD_TEST_TOKEN}y\",\"C\":\"$env: {env:} $${WARD_TEST_TOKEN}\"}}}}", &r) == 0);
	CHECK(r.n_routes == 1 && r.routes[0].n_headers == 3);
	CHECK_STR(hline(&r.routes[0].headers[0]), "A: Bearer s3cret");
	CHECK_STR(hline(&r.routes[0].headers[1]), "B: xs3crety");
	/* what no spelling is stays as it is */
	CHECK_STR(hline(&r.routes[0].headers[2]), "C: $env: {env:} $s3cret");
	CHECK(r.n_vars == 1 && strcmp(r.vars[0], "WARD_TEST_TOKEN") == 0);
	CHECK(!strstr(r.text, "s3cret") && !strstr(r.text, "WARD_TEST_TOKEN"));
	mcp_result_free(&r);
}

static int seen_commands(void *ctx, const char *command)
{
	char *all = ctx;
	size_t n = strlen(all);

	snprintf(all + n, 256 - n, "%s|", command);
	return 0;
}

/* "!COMMAND": ward runs nothing; the value is what ward-pi's run of it on
 * the host printed, by the command's own name; "!!" is a literal '!'. */
static void test_commands(void)
{
	struct mcp_result r;
	char name[MCP_CMD_VAR_SIZE], all[256] = "", err[128];
	const char *text = "{\"mcpServers\":{\"a\":{\"url\":\"http://h/x\",\"headers\":{\"A\":\"!pass show t\","
			   "\"B\":\"!!literal\"},\"bearerToken\":\"!op read x\"},"
			   "\"s\":{\"command\":\"npx\",\"args\":[\"!rm -rf x\"],\"env\":{\"E\":\"!id\"}}}}";

	/* the name: WARD_MCP_CMD_ and 16 hex digits of SHA-256("pass show t") */
	mcp_command_var("pass show t", name);
	CHECK(strlen(name) == 29 && strncmp(name, "WARD_MCP_CMD_", 13) == 0);
	CHECK_STR(name, "WARD_MCP_CMD_f2b87b90f4e2bd4d");
	/* what ward-pi runs: the url servers' header values and bearerToken,
	 * never "!!", never a stdio server's args or env */
	CHECK(mcp_commands(text, strlen(text), seen_commands, all, err, sizeof err) == 0);
	CHECK_STR(all, "pass show t|op read x|");
	CHECK(mcp_commands("[]", 2, seen_commands, all, err, sizeof err) == -1 && strstr(err, "mcpServers"));

	/* not run on the host (nothing under its name): the server left out */
	unsetenv(name);
	CHECK(rewrite(text, &r) == 0 && r.n_routes == 0 && r.n_skipped == 1 && strstr(r.skipped[0].why, name));
	mcp_result_free(&r);
	/* run: its output is the header, "!!" a literal '!' */
	setenv(name, "tok-from-pass", 1);
	mcp_command_var("op read x", name);
	setenv(name, "bearer-from-op", 1);
	CHECK(rewrite(text, &r) == 0 && r.n_routes == 1 && r.routes[0].n_headers == 3);
	CHECK_STR(hline(&r.routes[0].headers[0]), "A: tok-from-pass");
	CHECK_STR(hline(&r.routes[0].headers[1]), "B: !literal");
	CHECK_STR(hline(&r.routes[0].headers[2]), "Authorization: Bearer bearer-from-op");
	/* the variables noted, for the env_pass check */
	CHECK(r.n_vars == 2);
	CHECK(!strstr(r.text, "tok-from-pass") && !strstr(r.text, "pass show"));
	mcp_result_free(&r);
	/* an output with a control character: left out */
	setenv(name, "bearer\x1b[2J", 1);
	CHECK(rewrite(text, &r) == 0 && r.n_routes == 0 && strstr(r.skipped[0].why, "control character"));
	mcp_result_free(&r);
	unsetenv(name);
	mcp_command_var("pass show t", name);
	unsetenv(name);
}

/* [mcp] without upstream: each server where its URL says. */
static void test_by_url(void)
{
	static const struct mcp_where where = { .by_url = 1, .loopback = "/run/ward/host" };
	static const struct mcp_where no_relay = { .by_url = 1 };
	struct mcp_result r;
	const char *text = "{\"mcpServers\":{"
			   "\"linear\":{\"url\":\"https://mcp.linear.app/mcp\"},"
			   "\"mine\":{\"url\":\"https://mcp.example.com:8443/v1/mcp?team=a\"},"
			   "\"plain\":{\"url\":\"http://10.0.0.7:8080/mcp\"},"
			   "\"local\":{\"url\":\"http://127.0.0.1:3000/mcp\"},"
			   "\"named\":{\"url\":\"http://LocalHost./mcp\"},"
			   "\"any\":{\"url\":\"http://0.0.0.0:5000/mcp\"},"
			   "\"six\":{\"url\":\"http://[::1]:4000/mcp\"},"
			   "\"other\":{\"url\":\"http://127.0.0.2:4001/mcp\"},"
			   "\"tlslocal\":{\"url\":\"https://127.0.0.1:3001/mcp\"},"
			   "\"meta\":{\"url\":\"http://169.254.169.254/mcp\"},"
			   "\"zero\":{\"url\":\"http://0.1.2.3/mcp\"},"
			   "\"v6\":{\"url\":\"https://[2001:db8::1]/mcp\"}}}";

	CHECK(mcp_rewrite(text, strlen(text), 7800, &where, &r) == 0);
	CHECK(r.n_routes == 6);
	CHECK(r.routes[0].has_up && r.routes[0].up.kind == UP_TLS && strcmp(r.routes[0].up.name, "mcp.linear.app") == 0 &&
	      r.routes[0].up.port == 443);
	/* a name mcp.json gave: DNS answers only, never the sandbox's /etc/hosts */
	CHECK(r.routes[0].up.dns_only);
	CHECK_STR(r.routes[0].host, "mcp.linear.app");
	CHECK(r.routes[1].up.kind == UP_TLS && strcmp(r.routes[1].up.name, "mcp.example.com") == 0 &&
	      r.routes[1].up.port == 8443);
	CHECK_STR(r.routes[1].path, "/v1/mcp?team=a");
	CHECK(r.routes[2].up.kind == UP_TCP && !r.routes[2].up.name[0] && r.routes[2].up.port == 8080);
	/* the host's loopback: its relay, port by port */
	CHECK_STR(r.routes[3].up.desc, "unix:/run/ward/host/3000.sock");
	CHECK_STR(r.routes[3].host, "127.0.0.1:3000");
	CHECK_STR(r.routes[4].up.desc, "unix:/run/ward/host/80.sock");
	CHECK_STR(r.routes[5].up.desc, "unix:/run/ward/host/5000.sock");
	CHECK(r.n_skipped == 6 && strstr(r.skipped[0].why, "server six: an IPv6 address") &&
	      strstr(r.skipped[1].why, "server other: a loopback address other than 127.0.0.1") &&
	      strstr(r.skipped[2].why, "server tlslocal: https on the host's loopback") &&
	      strstr(r.skipped[3].why, "server meta: its url's address is link-local") &&
	      strstr(r.skipped[4].why, "server zero: its url's address is unspecified") &&
	      strstr(r.skipped[5].why, "server v6: an IPv6 address"));
	mcp_result_free(&r);

	/* nothing relays the host's loopback: those servers are left out */
	CHECK(mcp_rewrite(text, strlen(text), 7800, &no_relay, &r) == 0);
	CHECK(r.n_routes == 3 && r.n_skipped == 9 && strstr(r.skipped[0].why, "server local: it is on the host's loopback") &&
	      strstr(r.skipped[0].why, "[mcp] loopback unset"));
	mcp_result_free(&r);

	/* [mcp] upstream: every server to it, as before */
	CHECK(mcp_rewrite(text, strlen(text), 7800, NULL, &r) == 0);
	CHECK(r.n_routes == 12 && !r.routes[0].has_up && !r.routes[3].has_up);
	mcp_result_free(&r);
}

int main(void)
{
	test_adapter_spellings();
	test_by_url();
	test_commands();
	test_builtin();
	test_adapter();
	test_interpolation();
	test_refusals();
	test_left_out();
	test_source_size();
	return unit_done("test_materialise");
}
