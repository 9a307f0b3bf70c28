/* mcpcred: an MCP server's OAuth sign-in as Pi 1.6 keeps it in the
 * host's mcp-auth.json (pi-mcp's state, one entry per server keyed
 * "mcp__NAME|URL", or by the URL alone as older versions wrote it):
 *   {"tokens": {"access_token", "refresh_token", "token_type", "expires_in", "scope"},
 *    "tokensExpireAt": ms, "clientInformation": {"client_id", "client_secret",
 *    "token_endpoint_auth_method"}, "discovery": {"authorizationServerMetadata":
 *    {"token_endpoint", "token_endpoint_auth_methods_supported"},
 *    "resourceMetadata": {"resource"}}}
 * The refresh is pi-mcp's own (its flow.js): a form-encoded POST to the
 * token endpoint with grant_type, refresh_token, resource and the client's
 * authentication (none, client_secret_post or client_secret_basic, chosen
 * as pi-mcp chooses). The token endpoint is https, or http on the host's
 * loopback (as pi-mcp allows), which the bridge reaches as a server there:
 * by that port's relay. Pure functions over buffers, as cred.h's: the bridge
 * refreshes through refresh.c as for a provider's login. */
#ifndef WARD_MCPCRED_H
#define WARD_MCPCRED_H

#include <stddef.h>
#include <stdint.h>

#include "mcp-bridge/cred.h"

/* pi-mcp refreshes a token this long before its tokensExpireAt. */
#define MCPCRED_MARGIN_MS 30000

/* The entry of a server named name at url (as mcp.json writes it): its
 * key in key ("mcp__NAME|URL" as pi-mcp normalizes the URL, or the legacy
 * URL alone when only that is there). 1: found, and t holds it whole; 0:
 * no entry (no sign-in: why says so); -1: an entry ward cannot refresh
 * (why says what it lacks). */
int mcpcred_find(const char *buf, size_t len, const char *name, const char *url, char *key, size_t keysize,
		 struct cred_tokens *t, char *why, size_t whysize);

/* The entry keyed key: 0 with t (format CRED_MCP), or -1 with why. */
int mcpcred_parse(const char *buf, size_t len, const char *key, struct cred_tokens *t, char *why, size_t whysize);

/* The refresh request to POST host path. Its length, or -1. */
int mcpcred_request(const struct cred_tokens *t, const char *host, const char *path, char *out, size_t size);

/* The endpoint's answer: 0 with the new tokens in t (a refresh token or
 * scope it leaves out kept; expires now_ms + expires_in, or 0 without),
 * or -1 with why (an OAuth error in the body whatever the status, as
 * pi-mcp reads it). */
int mcpcred_answer(const char *buf, size_t len, int64_t now_ms, struct cred_tokens *t, char *why, size_t whysize);

/* The file's new text: the entry's tokens and tokensExpireAt replaced as
 * pi-mcp's saveTokens writes them, everything else as it was. */
char *mcpcred_update(const char *buf, size_t len, const char *key, const struct cred_tokens *t, size_t *out_len);

#endif
