#define _GNU_SOURCE
#include "init/host/mcppins.h"

#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/version.h"
#include "mcp-bridge/toolslist.h"

#define PINS_PAGES 100	      /* tools/list pages followed, at most */
#define PINS_TIMEOUT_S 30     /* each request's answer */
#define PINS_ANSWER_MAX ((size_t)8 << 20)

/* What one read gave, through the filter that frames the answer
 * (toolslist.h, with no rules: every tool stays), onto the answer kept.
 * The state it reached. */
static enum toolslist_state feed(struct toolslist *t, const char *in, size_t n, int eof, char **buf, size_t *len,
				 int *status)
{
	static const struct tool_rules none = { 0 };
	struct toolslist_out o;
	enum toolslist_state st = toolslist_feed(t, &none, "pins", in, n, eof, NULL, &o);
	char *g;

	if (st == TL_FAIL) {
		log_error("--mcp-pins: the server's answer: %s", o.why);
		return TL_FAIL;
	}
	if (o.len) {
		*status = o.status;
		g = *len + o.len <= PINS_ANSWER_MAX ? realloc(*buf, *len + o.len + 1) : NULL;
		if (!g) {
			free(o.resp);
			log_error("--mcp-pins: an answer larger than 8 MiB");
			return TL_FAIL;
		}
		*buf = g;
		memcpy(*buf + *len, o.resp, o.len);
		*len += o.len;
		(*buf)[*len] = '\0'; /* strcspn in answer_of stops here */
		free(o.resp);
	}
	return st;
}

/* One request on a connection of its own, its answer read until it is
 * whole (its framing says so, or its SSE stream holds the response: a
 * server may keep the stream open after it), as the filter writes it: a
 * head, then a JSON body or SSE events. A malloc'd answer, its length and
 * status, or NULL after logging why. */
static char *exchange(unsigned port, const char *req, size_t rlen, size_t *alen, int *status)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { PINS_TIMEOUT_S, 0 };
	struct toolslist *t = toolslist_new(NULL, 0, 1);
	enum toolslist_state st = TL_MORE;
	char in[65536], *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!t || s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
	    connect(s, (struct sockaddr *)&a, sizeof a) != 0 || send(s, req, rlen, MSG_NOSIGNAL) != (ssize_t)rlen) {
		log_error("--mcp-pins: the bridge on 127.0.0.1:%u: %s", port, strerror(errno));
		goto fail;
	}
	while (st == TL_MORE) {
		n = recv(s, in, sizeof in, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_error("--mcp-pins: reading the answer: %s", strerror(errno));
			goto fail;
		}
		st = feed(t, in, (size_t)n, n == 0, &buf, &len, status);
		if (st == TL_MORE && n == 0) {
			log_error("--mcp-pins: the server's answer ended before it was whole");
			goto fail;
		}
	}
	if (st != TL_DONE)
		goto fail;
	close(s);
	toolslist_free(t);
	*alen = len;
	return buf;
fail:
	if (s >= 0)
		close(s);
	toolslist_free(t);
	free(buf);
	return NULL;
}

/* The answer's JSON-RPC message (its JSON body, or its SSE event that
 * holds a response) and its Mcp-Session-Id: a new reference, or NULL. */
static json_t *answer_of(const char *raw, size_t len, char *sid, size_t sid_size)
{
	const char *body, *h, *d;
	json_t *m = NULL;

	body = memmem(raw, len, "\r\n\r\n", 4);
	body = body ? body + 4 : raw + len;
	/* its session, when it gave one */
	for (h = raw; h && h < body; h = memmem(h, (size_t)(body - h), "\r\n", 2), h = h ? h + 2 : NULL)
		if ((size_t)(body - h) > 16 && strncasecmp(h, "Mcp-Session-Id: ", 16) == 0) {
			size_t n = strcspn(h + 16, "\r\n");
			if (n < sid_size) {
				memcpy(sid, h + 16, n);
				sid[n] = '\0';
			}
		}
	m = json_loadb(body, (size_t)(raw + len - body), 0, NULL);
	for (d = body; !m && d && d < raw + len; d = memmem(d, (size_t)(raw + len - d), "\ndata: ", 7)) {
		const char *v = d == body ? d : d + 1;
		if (strncmp(v, "data: ", 6) == 0) {
			json_t *j = json_loadb(v + 6, strcspn(v + 6, "\n"), 0, NULL);
			if (json_is_object(j) && json_object_get(j, "id"))
				m = j;
			else
				json_decref(j);
		}
		d = v + 1;
	}
	return m;
}

/* One POST (or DELETE with body NULL) to the route, with the session and
 * the protocol version once there are: its message, or NULL. */
static json_t *call(unsigned port, const char *path, const char *sid, const char *version, const char *body,
		    char *new_sid, size_t sid_size, int *status)
{
	char extra[512] = "", *req = NULL, *raw;
	size_t alen, at = 0;
	int n;
	json_t *m;

	if (body)
		at += (size_t)snprintf(extra + at, sizeof extra - at, "Content-Type: application/json\r\n");
	if (sid && *sid)
		at += (size_t)snprintf(extra + at, sizeof extra - at, "Mcp-Session-Id: %s\r\n", sid);
	if (version && at < sizeof extra)
		snprintf(extra + at, sizeof extra - at, "MCP-Protocol-Version: %s\r\n", version);
	n = asprintf(&req,
		     "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAccept: application/json, text/event-stream\r\n%s"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		     body ? "POST" : "DELETE", path, port, extra, body ? strlen(body) : 0, body ? body : "");
	if (n < 0)
		return NULL;
	raw = exchange(port, req, (size_t)n, &alen, status);
	free(req);
	if (!raw)
		return NULL;
	m = answer_of(raw, alen, new_sid, sid_size);
	free(raw);
	return m;
}

int mcp_pins_run(unsigned port, const char *path, const struct tool_rules *rules, FILE *out)
{
	char sid[256] = "", version[64] = "2025-06-18", *s, body[1024];
	json_t *m, *res, *tools, *t, *cursor = NULL;
	int status = 0, page, printed = 0, i;
	unsigned char h[32];
	size_t k;

	snprintf(body, sizeof body,
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
		 "\"capabilities\":{},\"clientInfo\":{\"name\":\"ward-mcp-pins\",\"version\":\"%s\"}}}",
		 version, WARD_VERSION);
	m = call(port, path, NULL, NULL, body, sid, sizeof sid, &status);
	res = m ? json_object_get(m, "result") : NULL;
	if (!json_is_object(res)) {
		log_error("--mcp-pins: the server did not initialize (HTTP %d)", status);
		json_decref(m);
		return 1;
	}
	if (json_is_string(json_object_get(res, "protocolVersion")))
		snprintf(version, sizeof version, "%s", json_string_value(json_object_get(res, "protocolVersion")));
	json_decref(m);
	json_decref(call(port, path, sid, version, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
			 sid, sizeof sid, &status));
	fprintf(out, "# ward --mcp-pins: each tool's hash as listed now (its name, description and input schema)\n");
	for (page = 0; page < PINS_PAGES; page++) {
		json_t *req = json_pack("{s:s,s:i,s:s}", "jsonrpc", "2.0", "id", page + 2, "method", "tools/list");
		if (cursor)
			json_object_set_new(req, "params", json_pack("{s:O}", "cursor", cursor));
		json_decref(cursor);
		cursor = NULL;
		s = req ? json_dumps(req, JSON_COMPACT) : NULL;
		json_decref(req);
		m = s ? call(port, path, sid, version, s, sid, sizeof sid, &status) : NULL;
		free(s);
		res = m ? json_object_get(m, "result") : NULL;
		tools = json_is_object(res) ? json_object_get(res, "tools") : NULL;
		if (!json_is_array(tools)) {
			log_error("--mcp-pins: the server's tools/list answer holds no tools (HTTP %d)", status);
			json_decref(m);
			return 1;
		}
		for (k = 0; k < json_array_size(tools); k++) {
			const char *name;
			t = json_array_get(tools, k);
			name = json_is_string(json_object_get(t, "name")) ? json_string_value(json_object_get(t, "name")) : NULL;
			if (!name || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.") !=
					     strlen(name) || !*name || strlen(name) > TOOLS_NAME_MAX) {
				fprintf(out, "# a tool whose name cannot be pinned (not 1-128 of A-Z a-z 0-9 _ - .)\n");
				continue;
			}
			if (tools_hash(t, h) != 0)
				continue;
			if (rules && !tools_allowed(rules, name))
				fprintf(out, "# %s: not allowed by this route's tools and deny_tools\n", name);
			fprintf(out, "pin = %s=sha256:", name);
			for (i = 0; i < 32; i++)
				fprintf(out, "%02x", h[i]);
			fputc('\n', out);
			printed++;
		}
		if (json_is_string(json_object_get(res, "nextCursor")))
			cursor = json_incref(json_object_get(res, "nextCursor"));
		json_decref(m);
		if (!cursor)
			break;
	}
	json_decref(cursor);
	json_decref(call(port, path, sid, version, NULL, sid, sizeof sid, &status)); /* DELETE: the session ends */
	log_info("--mcp-pins: %d tool(s) listed", printed);
	return 0;
}
