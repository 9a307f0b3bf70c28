#define _GNU_SOURCE
#include "mcp-bridge/mcpcred.h"

#include <ctype.h>
#include <jansson.h>
#include <mbedtls/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int fail(char *why, size_t size, const char *msg)
{
	snprintf(why, size, "%s", msg);
	return -1;
}

/* A string field into dst: printable ASCII (it goes into a form or a
 * header), shorter than size. 1: copied; 0: absent; -1: unusable. */
static int field(json_t *o, const char *key, char *dst, size_t size)
{
	json_t *v = json_object_get(o, key);
	const char *s;
	size_t i, n;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return -1;
	s = json_string_value(v);
	n = strlen(s);
	if (n >= size)
		return -1;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return -1;
	memcpy(dst, s, n + 1);
	return 1;
}

/* pi-mcp's String(new URL(url)) for the URLs mcp_url_split takes: the
 * scheme and host in lower case, the scheme's default port left out, an
 * empty path made "/". */
static int normalize(const char *url, char *out, size_t size)
{
	const char *sep = strstr(url, "://"), *host, *end;
	size_t i, o = 0, sl, hl;
	int tls;

	if (!sep)
		return -1;
	sl = (size_t)(sep - url);
	host = sep + 3;
	end = host + strcspn(host, "/?#");
	hl = (size_t)(end - host);
	tls = sl == 5 && strncasecmp(url, "https", 5) == 0;
	if (hl > 4 && tls && strncmp(end - 4, ":443", 4) == 0)
		hl -= 4;
	else if (hl > 3 && !tls && strncmp(end - 3, ":80", 3) == 0)
		hl -= 3;
	if (sl + 3 + hl + 1 + strlen(end) + 1 > size)
		return -1;
	for (i = 0; i < sl; i++)
		out[o++] = (char)tolower((unsigned char)url[i]);
	out[o++] = ':';
	out[o++] = '/';
	out[o++] = '/';
	for (i = 0; i < hl; i++)
		out[o++] = (char)tolower((unsigned char)host[i]);
	if (*end != '/')
		out[o++] = '/';
	strcpy(out + o, end); // NOLINT: measured above
	return 0;
}

/* pi-mcp chooses how the client authenticates (flow.js's
 * selectClientAuthMethod): the method its registration names if the
 * server lists it (or lists none); else basic, post or none by what the
 * server supports and whether there is a secret. */
static enum cred_client_auth choose_auth(const char *hinted, json_t *supported, int secret)
{
	size_t n = json_is_array(supported) ? json_array_size(supported) : 0, i;
	int has_basic = 0, has_post = 0, has_none = 0, has_hint = 0;

	for (i = 0; i < n; i++) {
		const char *m = json_string_value(json_array_get(supported, i));
		if (!m)
			continue;
		has_basic |= strcmp(m, "client_secret_basic") == 0;
		has_post |= strcmp(m, "client_secret_post") == 0;
		has_none |= strcmp(m, "none") == 0;
		has_hint |= hinted && strcmp(m, hinted) == 0;
	}
	if (hinted && (n == 0 || has_hint)) {
		if (strcmp(hinted, "client_secret_basic") == 0)
			return CLIENT_BASIC;
		if (strcmp(hinted, "client_secret_post") == 0)
			return CLIENT_POST;
		if (strcmp(hinted, "none") == 0)
			return CLIENT_NONE;
	}
	if (n == 0)
		return secret ? CLIENT_BASIC : CLIENT_NONE;
	if (secret && has_basic)
		return CLIENT_BASIC;
	if (secret && has_post)
		return CLIENT_POST;
	if (has_none)
		return CLIENT_NONE;
	return secret ? CLIENT_POST : CLIENT_NONE;
}

/* The entry o into t; -1 with why for what it lacks. */
static int entry_tokens(json_t *o, struct cred_tokens *t, char *why, size_t whysize)
{
	json_t *tok = json_object_get(o, "tokens"), *ci = json_object_get(o, "clientInformation");
	json_t *disc = json_object_get(o, "discovery"), *meta = json_object_get(disc, "authorizationServerMetadata");
	json_t *exp = json_object_get(o, "tokensExpireAt");
	char hinted[64] = "";
	int h;

	memset(t, 0, sizeof *t);
	t->format = CRED_MCP;
	t->expires_in = -1;
	if (!json_is_object(tok) || field(tok, "access_token", t->access, sizeof t->access) != 1 ||
	    !cred_token_ok(t->access))
		return fail(why, whysize, "its sign-in holds no usable access token: sign in again on the host");
	if (field(tok, "refresh_token", t->refresh, sizeof t->refresh) != 1 || !cred_token_ok(t->refresh))
		return fail(why, whysize, "its sign-in holds no refresh token, so ward could not keep it fresh");
	if (field(tok, "token_type", t->token_type, sizeof t->token_type) < 0 ||
	    field(tok, "scope", t->scope, sizeof t->scope) < 0)
		return fail(why, whysize, "its tokens' token_type or scope is not a printable string");
	if (!t->token_type[0])
		strcpy(t->token_type, "Bearer");
	if (exp && !json_is_null(exp)) {
		/* ms since the epoch: far from what an int64 holds */
		if (!json_is_number(exp) || json_number_value(exp) <= 0 || json_number_value(exp) > 1e15)
			return fail(why, whysize, "its tokensExpireAt is not a time in ms");
		t->expires = (int64_t)json_number_value(exp);
	}
	/* a client pi-mcp registered; one given in mcp.json's oauth (or a
	 * Client ID Metadata Document) is not in the entry */
	if (!json_is_object(ci) || field(ci, "client_id", t->client_id, sizeof t->client_id) != 1 || !t->client_id[0])
		return fail(why, whysize, "its sign-in keeps no registered client (a client of mcp.json's oauth or of a "
			    "client metadata document): ward cannot refresh it");
	if (field(ci, "client_secret", t->client_secret, sizeof t->client_secret) < 0 ||
	    (h = field(ci, "token_endpoint_auth_method", hinted, sizeof hinted)) < 0)
		return fail(why, whysize, "its client's secret or method is not a printable string");
	/* https, or http on the loopback (pi-mcp's secureEndpoint: a server
	 * of the person's own machine) */
	if (!json_is_object(meta) || field(meta, "token_endpoint", t->token_url, sizeof t->token_url) != 1 ||
	    (strncmp(t->token_url, "https://", 8) != 0 && strncmp(t->token_url, "http://127.0.0.1:", 17) != 0 &&
	     strncmp(t->token_url, "http://localhost:", 17) != 0))
		return fail(why, whysize, "its sign-in keeps no https token endpoint (the server's discovery), nor "
			    "one on the host's loopback");
	t->client_auth = choose_auth(h ? hinted : NULL, json_object_get(meta, "token_endpoint_auth_methods_supported"),
				     t->client_secret[0] != '\0');
	if (t->client_auth == CLIENT_BASIC && !t->client_secret[0])
		return fail(why, whysize, "its client authenticates with a secret it does not keep");
	if (field(json_object_get(disc, "resourceMetadata"), "resource", t->resource, sizeof t->resource) < 0)
		return fail(why, whysize, "its protected resource is not a printable string");
	return 0;
}

int mcpcred_parse(const char *buf, size_t len, const char *key, struct cred_tokens *t, char *why, size_t whysize)
{
	json_error_t e;
	json_t *root = json_loadb(buf, len, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &e), *o;
	int rc = -1;

	memset(t, 0, sizeof *t);
	t->format = CRED_MCP;
	if (!json_is_object(root))
		snprintf(why, whysize, "not a JSON object (%s)", root ? "another value" : e.text);
	else if (!json_is_object(o = json_object_get(root, key)))
		snprintf(why, whysize, "no sign-in for it: sign in on the host first (pi, /mcp)");
	else
		rc = entry_tokens(o, t, why, whysize);
	json_decref(root);
	if (rc != 0)
		explicit_bzero(t, sizeof *t), t->format = CRED_MCP;
	return rc;
}

int mcpcred_find(const char *buf, size_t len, const char *name, const char *url, char *key, size_t keysize,
		 struct cred_tokens *t, char *why, size_t whysize)
{
	json_t *root = json_loadb(buf, len, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, NULL);
	char norm[CRED_MAX_FIELD], ns[80];
	size_t i;
	int n, found;

	if (strlen(name) >= sizeof ns - 5 || normalize(url, norm, sizeof norm) != 0) {
		json_decref(root);
		return fail(why, whysize, "its name or URL is too long for a sign-in's key");
	}
	/* pi-mcp's namespace: mcp__ and the name with - as _ */
	n = snprintf(ns, sizeof ns, "mcp__%s", name);
	for (i = 5; i < (size_t)n; i++)
		if (ns[i] == '-')
			ns[i] = '_';
	if ((size_t)snprintf(key, keysize, "%s|%s", ns, norm) >= keysize) {
		json_decref(root);
		return fail(why, whysize, "its name or URL is too long for a sign-in's key");
	}
	found = json_is_object(json_object_get(root, key));
	if (!found && json_is_object(json_object_get(root, norm)) && strlen(norm) < keysize) {
		strcpy(key, norm); // NOLINT: measured
		found = 1;
	}
	json_decref(root);
	if (!found) {
		fail(why, whysize, "no sign-in for it in the host's mcp-auth.json: sign in on the host first (pi, /mcp)");
		return 0;
	}
	return mcpcred_parse(buf, len, key, t, why, whysize) == 0 ? 1 : -1;
}

/* application/x-www-form-urlencoded, as URLSearchParams writes it. */
static size_t form(char *out, size_t size, size_t o, const char *name, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *v = (const unsigned char *)value;

	if (o && o < size)
		out[o] = '&';
	o += o != 0;
	o += (size_t)snprintf(o < size ? out + o : NULL, o < size ? size - o : 0, "%s=", name);
	for (; *v; v++) {
		char c[3];
		size_t k = 1;
		if (isalnum(*v) || strchr("*-._", *v))
			c[0] = (char)*v;
		else if (*v == ' ')
			c[0] = '+';
		else
			c[0] = '%', c[1] = hex[*v >> 4], c[2] = hex[*v & 15], k = 3;
		if (o + k < size)
			memcpy(out + o, c, k);
		o += k;
	}
	if (o < size)
		out[o] = '\0';
	return o;
}

int mcpcred_request(const struct cred_tokens *t, const char *host, const char *path, char *out, size_t size)
{
	char body[CRED_MAX_TOKEN * 3 + CRED_MAX_FIELD * 9 + 128], basic[CRED_MAX_FIELD * 3 + 64] = "";
	size_t b = 0;
	int n;

	/* pi-mcp's order: the grant, the resource, the client */
	b = form(body, sizeof body, b, "grant_type", "refresh_token");
	b = form(body, sizeof body, b, "refresh_token", t->refresh);
	if (t->resource[0])
		b = form(body, sizeof body, b, "resource", t->resource);
	if (t->client_auth != CLIENT_BASIC)
		b = form(body, sizeof body, b, "client_id", t->client_id);
	if (t->client_auth == CLIENT_POST && t->client_secret[0])
		b = form(body, sizeof body, b, "client_secret", t->client_secret);
	if (b >= sizeof body)
		return -1;
	if (t->client_auth == CLIENT_BASIC) {
		char pair[CRED_MAX_FIELD * 2 + 2];
		size_t olen = 0;
		int pl = snprintf(pair, sizeof pair, "%s:%s", t->client_id, t->client_secret);
		int bad = pl < 0 || (size_t)pl >= sizeof pair ||
			  mbedtls_base64_encode((unsigned char *)basic + 21, sizeof basic - 24, &olen,
						(const unsigned char *)pair, (size_t)pl) != 0;
		explicit_bzero(pair, sizeof pair);
		if (bad) {
			explicit_bzero(body, sizeof body);
			return -1;
		}
		memcpy(basic, "Authorization: Basic ", 21);
		memcpy(basic + 21 + olen, "\r\n", 3);
	}
	n = snprintf(out, size,
		     "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\n"
		     "Accept: application/json\r\n%sContent-Length: %zu\r\n\r\n%s",
		     path, host, basic, b, body);
	explicit_bzero(body, sizeof body);
	explicit_bzero(basic, sizeof basic);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

int mcpcred_answer(const char *buf, size_t len, int64_t now_ms, struct cred_tokens *t, char *why, size_t whysize)
{
	json_t *j, *exp;
	void *jv = NULL;
	char access[CRED_MAX_TOKEN], refresh[CRED_MAX_TOKEN], type[sizeof t->token_type], scope[CRED_MAX_FIELD];
	int status = 0, rc = -1;

	if (cred_answer_json(buf, len, &jv, &status, why, whysize) != 0)
		return -1;
	j = jv;
	/* an OAuth error in any status, as pi-mcp reads it */
	if (json_is_string(json_object_get(j, "error")) || status != 200) {
		cred_refused(status, j, why, whysize);
		goto out;
	}
	exp = json_object_get(j, "expires_in");
	if (field(j, "access_token", access, sizeof access) != 1 || !cred_token_ok(access) ||
	    field(j, "token_type", type, sizeof type) != 1) {
		fail(why, whysize, "the token endpoint's answer holds no usable access_token and token_type");
		goto out;
	}
	if ((field(j, "refresh_token", refresh, sizeof refresh) == 1 && !cred_token_ok(refresh)) ||
	    field(j, "refresh_token", refresh, sizeof refresh) < 0 || field(j, "scope", scope, sizeof scope) < 0 ||
	    (exp && !json_is_null(exp) && (!json_is_number(exp) || json_number_value(exp) < 0 ||
					   json_number_value(exp) > 10 * 365 * 86400.0))) {
		fail(why, whysize, "the token endpoint's answer has an unusable refresh_token, scope or expires_in");
		goto out;
	}
	strcpy(t->access, access); // NOLINT: field bounds it
	strcpy(t->token_type, type); // NOLINT: same size
	if (field(j, "refresh_token", refresh, sizeof refresh) == 1)
		strcpy(t->refresh, refresh); // NOLINT: same size
	if (field(j, "scope", scope, sizeof scope) == 1)
		strcpy(t->scope, scope); // NOLINT: same size
	/* pi-mcp's tokensExpireAt: the life as given, no margin (it keeps
	 * its own 30 s, and so does cred_fresh) */
	t->expires_in = exp && json_is_number(exp) ? json_number_value(exp) : -1;
	t->expires = t->expires_in >= 0 ? now_ms + (int64_t)(t->expires_in * 1000) : 0;
	rc = 0;
out:
	json_decref(j);
	explicit_bzero(access, sizeof access);
	explicit_bzero(refresh, sizeof refresh);
	return rc;
}

/* expires_in as the server wrote it: a whole number of seconds stays one. */
static json_t *expires_in(double s)
{
	return s == (double)(json_int_t)s ? json_integer((json_int_t)s) : json_real(s);
}

char *mcpcred_update(const char *buf, size_t len, const char *key, const struct cred_tokens *t, size_t *out_len)
{
	json_t *root = json_loadb(buf, len, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, NULL);
	json_t *o = json_object_get(root, key), *tok = json_object();
	char *text = NULL;
	int ok;

	ok = json_is_object(root) && json_is_object(o) && tok &&
	     json_object_set_new(tok, "access_token", json_string(t->access)) == 0 &&
	     json_object_set_new(tok, "token_type", json_string(t->token_type)) == 0 &&
	     (t->expires_in < 0 || json_object_set_new(tok, "expires_in", expires_in(t->expires_in)) == 0) &&
	     (!t->scope[0] || json_object_set_new(tok, "scope", json_string(t->scope)) == 0) &&
	     json_object_set_new(tok, "refresh_token", json_string(t->refresh)) == 0;
	if (ok && json_object_set(o, "tokens", tok) == 0 &&
	    (t->expires ? json_object_set_new(o, "tokensExpireAt", json_integer(t->expires)) == 0
			: (json_object_del(o, "tokensExpireAt"), 1)))
		text = json_dumps(root, JSON_INDENT(2));
	json_decref(tok);
	json_decref(root);
	if (text)
		*out_len = strlen(text);
	return text;
}
