/* cred: an OAuth credential of the kind Pi's /login keeps in auth.json
 * ({"anthropic": {"type": "oauth", "access", "refresh", "expires"}}), as
 * the bridge holds it for a route: the file read, the refresh request to
 * the provider's token endpoint written, its answer read, the file
 * rewritten with the new tokens and every other entry kept. Pure functions
 * over buffers (fuzzable); the refresh's I/O is refresh.c's. */
#ifndef WARD_CRED_H
#define WARD_CRED_H

#include <stddef.h>
#include <stdint.h>

#define CRED_MAX_FILE ((size_t)256 * 1024) /* the credential file, read whole */
#define CRED_MAX_TOKEN 8192		   /* an access or refresh token */
#define CRED_MAX_ANSWER ((size_t)64 * 1024) /* the token endpoint's answer, head and body */
/* An access token is taken as expired this long before its "expires"
 * (Pi's own entries already end 5 minutes early): a request under way
 * does not outlive it. */
#define CRED_MARGIN_MS 60000

#define CRED_MAX_FIELD 2048 /* an MCP sign-in's client id, secret, resource, token endpoint, scope */

/* Whose file: Pi's auth.json (a provider's login) or its mcp-auth.json
 * (an MCP server's sign-in, mcpcred.h). */
enum cred_format { CRED_PI, CRED_MCP };

/* How an MCP sign-in's client authenticates at the token endpoint. */
enum cred_client_auth { CLIENT_NONE, CLIENT_POST, CLIENT_BASIC };

struct cred_tokens {
	char access[CRED_MAX_TOKEN];
	char refresh[CRED_MAX_TOKEN];
	int64_t expires; /* ms since the epoch, as Pi writes it (CRED_MCP: 0, none kept) */
	enum cred_format format; /* set by the parser that read it; the answer and the update follow it */
	/* CRED_MCP: the client, the endpoint and the grant as the entry keeps them */
	char client_id[CRED_MAX_FIELD], client_secret[CRED_MAX_FIELD];
	enum cred_client_auth client_auth;
	char resource[CRED_MAX_FIELD], token_url[CRED_MAX_FIELD];
	char token_type[64], scope[CRED_MAX_FIELD];
	double expires_in; /* the last answer's, seconds; -1: it gave none */
};

/* The entry named entry of a credential file (its first JSON value; bytes
 * after it are ignored, see cred_file_update). 0, or -1 with why. */
int cred_parse_file(const char *buf, size_t len, const char *entry, struct cred_tokens *t, char *why, size_t whysize);

/* The refresh request, head and JSON body, to POST host path: what Pi's
 * own refresh sends (grant_type, client_id, refresh_token). Its length,
 * or -1 if it does not fit. (Either format: credfile.h.) */
int cred_refresh_request(const struct cred_tokens *t, const char *host, const char *path, const char *client_id,
			 char *out, size_t size);

/* The token endpoint's answer as the bridge relayed it (status line,
 * head, body by Content-Length, chunks or the close): 0 with the new
 * tokens in t (a refresh token the answer leaves out is kept; expires is
 * now_ms + expires_in s - 5 min, as Pi computes it, or half of expires_in
 * when that is later); -1 with why, which
 * says what the endpoint refused (invalid_grant: the person logs in
 * again). */
int cred_parse_answer(const char *buf, size_t len, int64_t now_ms, struct cred_tokens *t, char *why, size_t whysize);

/* The file's new text: its object with entry's access, refresh and
 * expires replaced, every other key and entry as it was. malloc'd (the
 * caller frees), its length in *out_len; NULL if buf is not such a file.
 * Written over the old text from offset 0 and then cut to its length: a
 * writer stopped between the two leaves the new object and trailing
 * bytes, which cred_parse_file ignores. */
char *cred_file_update(const char *buf, size_t len, const char *entry, const struct cred_tokens *t, size_t *out_len);

/* Shared with mcpcred.c: a token fit for a header line (printable, no
 * blank, under CRED_MAX_TOKEN); the answer's JSON body and status
 * (NULL body: not JSON) or -1 with why; what an endpoint's refusal says. */
int cred_token_ok(const char *s);
int cred_answer_json(const char *buf, size_t len, void **json, int *status, char *why, size_t whysize);
void cred_refused(int status, void *json, char *why, size_t size);

/* Whether t's access token is good at now_ms (wall clock, ms). */
int cred_fresh(const struct cred_tokens *t, int64_t now_ms);

#endif
