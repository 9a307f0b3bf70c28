/* credfile: a route's login file of either format, Pi's auth.json (a
 * provider's login, cred.h) or its mcp-auth.json (an MCP server's
 * sign-in, mcpcred.h): each step dispatched by the format, so that the
 * bridge's refresh (refresh.c), PID 1 (bridgeproc.c) and --check
 * (report.c) need not know which. Pure. */
#ifndef WARD_CREDFILE_H
#define WARD_CREDFILE_H

#include <stddef.h>
#include <stdint.h>

#include "mcp-bridge/cred.h"

/* The entry: t's format set to format. 0, or -1 with why. */
int credfile_parse(enum cred_format format, const char *buf, size_t len, const char *entry, struct cred_tokens *t,
		   char *why, size_t whysize);

/* The refresh request to POST host path (client_id: Pi's format's). */
int credfile_request(const struct cred_tokens *t, const char *host, const char *path, const char *client_id,
		     char *out, size_t size);

/* The token endpoint's answer into t (in t's format). */
int credfile_answer(const char *buf, size_t len, int64_t now_ms, struct cred_tokens *t, char *why, size_t whysize);

/* The file's new text with t's tokens (in t's format). */
char *credfile_update(const char *buf, size_t len, const char *entry, const struct cred_tokens *t, size_t *out_len);

/* Whether t's access token is good at now_ms: Pi's margin, or pi-mcp's
 * (an MCP sign-in without an expiry is good until a 401). */
int credfile_fresh(const struct cred_tokens *t, int64_t now_ms);

#endif
