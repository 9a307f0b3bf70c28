#define _GNU_SOURCE
#include "mcp-bridge/cred.h"

#include <http_parser.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A token goes into a header line: printable ASCII, no blank, no more
 * than CRED_MAX_TOKEN - 1 bytes. */
int cred_token_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n >= CRED_MAX_TOKEN)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

static int fail(char *why, size_t size, const char *msg)
{
	snprintf(why, size, "%s", msg);
	return -1;
}

int cred_parse_file(const char *buf, size_t len, const char *entry, struct cred_tokens *t, char *why, size_t whysize)
{
	json_error_t e;
	json_t *root = json_loadb(buf, len, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &e);
	json_t *o, *type, *acc, *ref, *exp;
	int rc = -1;

	memset(t, 0, sizeof *t);
	if (!json_is_object(root)) {
		snprintf(why, whysize, "not a JSON object (%s)", root ? "another value" : e.text);
		goto out;
	}
	o = json_object_get(root, entry);
	if (!json_is_object(o)) {
		snprintf(why, whysize, "no \"%s\" entry: log in to %s first", entry, entry);
		goto out;
	}
	type = json_object_get(o, "type");
	acc = json_object_get(o, "access");
	ref = json_object_get(o, "refresh");
	exp = json_object_get(o, "expires");
	if (!json_is_string(type) || strcmp(json_string_value(type), "oauth") != 0) {
		snprintf(why, whysize, "\"%s\" is not an OAuth login (type \"oauth\")", entry);
		goto out;
	}
	/* ms since the epoch: far from what an int64 holds (a cast of a
	 * double out of its range is undefined) */
	if (!json_is_string(acc) || !json_is_string(ref) || !json_is_number(exp) ||
	    json_number_value(exp) < -1e15 || json_number_value(exp) > 1e15 ||
	    !cred_token_ok(json_string_value(acc)) || !cred_token_ok(json_string_value(ref))) {
		snprintf(why, whysize, "\"%s\": expected access and refresh tokens (printable, under 8 KiB) and "
			 "expires (ms)", entry);
		goto out;
	}
	strcpy(t->access, json_string_value(acc)); // NOLINT: token_ok bounds it
	strcpy(t->refresh, json_string_value(ref)); // NOLINT: token_ok bounds it
	t->expires = (int64_t)json_number_value(exp);
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int cred_refresh_request(const struct cred_tokens *t, const char *host, const char *path, const char *client_id,
			 char *out, size_t size)
{
	json_t *o;
	char *body;
	int n = -1;

	o = json_pack("{s:s,s:s,s:s}", "grant_type", "refresh_token", "client_id", client_id, "refresh_token",
		      t->refresh);
	body = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	if (body) {
		n = snprintf(out, size,
			     "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
			     "Accept: application/json\r\nContent-Length: %zu\r\n\r\n%s",
			     path, host, strlen(body), body);
		explicit_bzero(body, strlen(body));
		free(body);
	}
	return n < 0 || (size_t)n >= size ? -1 : n;
}

/* The answer's body, de-chunked by http-parser. */
struct body {
	char *p;
	size_t n, cap;
	int over;
	int done;
};

static int on_body(http_parser *hp, const char *at, size_t n)
{
	struct body *b = hp->data;

	if (b->n + n >= b->cap) {
		b->over = 1;
		return 1;
	}
	memcpy(b->p + b->n, at, n);
	b->n += n;
	return 0;
}

static int on_done(http_parser *hp)
{
	((struct body *)hp->data)->done = 1;
	return 0;
}

/* A server's words for a log line and the agent's 502: printable ASCII
 * only (no line break to forge a log line, no character cut in half), at
 * most size - 1 bytes; NULL stays NULL. */
static const char *printable(const char *src, char *dst, size_t size)
{
	size_t n = 0;

	if (!src)
		return NULL;
	for (; *src && n + 1 < size; src++)
		dst[n++] = (char)((unsigned char)*src >= 0x20 && (unsigned char)*src < 0x7f ? *src : '?');
	dst[n] = '\0';
	return dst;
}

/* What the endpoint said it refused: its OAuth error, or the bridge's own
 * refusal (a 502 when the endpoint could not be reached), or the status. */
void cred_refused(int status, void *json, char *why, size_t size)
{
	json_t *j = json;
	char eb[64], db[161], rb[201];
	json_t *eo = json_object_get(j, "error");
	const char *err = printable(json_string_value(eo), eb, sizeof eb);
	const char *desc = printable(json_string_value(json_object_get(j, "error_description")), db, sizeof db);
	const char *reason = printable(json_string_value(json_object_get(j, "reason")), rb, sizeof rb);

	/* some endpoints nest it: {"error": {"type", "message"}} */
	if (json_is_object(eo)) {
		err = printable(json_string_value(json_object_get(eo, "type")), eb, sizeof eb);
		desc = printable(json_string_value(json_object_get(eo, "message")), db, sizeof db);
	}
	if (err && strcmp(err, "ward-bridge") == 0 && reason)
		snprintf(why, size, "the token endpoint could not be reached: %s", reason);
	else if (err && (strcmp(err, "invalid_grant") == 0 || status == 401))
		snprintf(why, size, "the provider refused the refresh token (%s%s%s): log in again", err,
			 desc ? ": " : "", desc ? desc : "");
	else if (err)
		snprintf(why, size, "the token endpoint answered %d (%s%s%s)", status, err, desc ? ": " : "",
			 desc ? desc : "");
	else
		snprintf(why, size, "the token endpoint answered %d", status);
}

int cred_answer_json(const char *buf, size_t len, void **json, int *status, char *why, size_t whysize)
{
	static char space[CRED_MAX_ANSWER];
	struct body b = { space, 0, sizeof space, 0, 0 };
	http_parser hp;
	http_parser_settings s;

	http_parser_init(&hp, HTTP_RESPONSE);
	hp.data = &b;
	http_parser_settings_init(&s);
	s.on_body = on_body;
	s.on_message_complete = on_done;
	if (http_parser_execute(&hp, &s, buf, len) != len && !b.done)
		return fail(why, whysize, b.over ? "the token endpoint's answer is too long" : "the token endpoint's "
			    "answer is not HTTP");
	/* a body the close ends: the end of input completes it */
	if (!b.done && (http_parser_execute(&hp, &s, NULL, 0), !hp.data || !((struct body *)hp.data)->done))
		return fail(why, whysize, "the token endpoint's answer was cut short");
	*json = json_loadb(b.p, b.n, 0, NULL);
	*status = (int)hp.status_code;
	explicit_bzero(space, b.n);
	return 0;
}

int cred_parse_answer(const char *buf, size_t len, int64_t now_ms, struct cred_tokens *t, char *why, size_t whysize)
{
	json_t *j, *acc, *ref, *exp;
	void *jv = NULL;
	int rc = -1, status = 0;

	if (cred_answer_json(buf, len, &jv, &status, why, whysize) != 0)
		return -1;
	j = jv;
	if (status != 200) {
		cred_refused(status, j, why, whysize);
		goto out;
	}
	acc = json_object_get(j, "access_token");
	ref = json_object_get(j, "refresh_token");
	exp = json_object_get(j, "expires_in");
	if (!json_is_string(acc) || !cred_token_ok(json_string_value(acc)) || (ref && (!json_is_string(ref) ||
	    !cred_token_ok(json_string_value(ref)))) || !json_is_number(exp) || json_number_value(exp) <= 0 ||
	    json_number_value(exp) > 10 * 365 * 86400.0) {
		fail(why, whysize, "the token endpoint's answer holds no usable access_token and expires_in");
		goto out;
	}
	strcpy(t->access, json_string_value(acc)); // NOLINT: token_ok bounds it
	if (ref)
		strcpy(t->refresh, json_string_value(ref)); // NOLINT: token_ok bounds it
	{
		/* as Pi computes it, 5 minutes early; a short life, half of
		 * it (never a token stale the moment it comes) */
		int64_t life = (int64_t)(json_number_value(exp) * 1000), early = life - (int64_t)5 * 60 * 1000;
		t->expires = now_ms + (early > life / 2 ? early : life / 2);
	}
	rc = 0;
out:
	json_decref(j);
	return rc;
}

char *cred_file_update(const char *buf, size_t len, const char *entry, const struct cred_tokens *t, size_t *out_len)
{
	json_t *root = json_loadb(buf, len, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, NULL);
	json_t *o = json_object_get(root, entry);
	char *text = NULL;

	if (json_is_object(root) && json_is_object(o) &&
	    json_object_set_new(o, "access", json_string(t->access)) == 0 &&
	    json_object_set_new(o, "refresh", json_string(t->refresh)) == 0 &&
	    json_object_set_new(o, "expires", json_integer(t->expires)) == 0)
		text = json_dumps(root, JSON_INDENT(2));
	json_decref(root);
	if (text)
		*out_len = strlen(text);
	return text;
}

int cred_fresh(const struct cred_tokens *t, int64_t now_ms)
{
	return t->access[0] && t->expires - CRED_MARGIN_MS > now_ms;
}
