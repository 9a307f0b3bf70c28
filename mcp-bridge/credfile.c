#include "mcp-bridge/credfile.h"

#include "mcp-bridge/mcpcred.h"

int credfile_parse(enum cred_format format, const char *buf, size_t len, const char *entry, struct cred_tokens *t,
		   char *why, size_t whysize)
{
	return format == CRED_MCP ? mcpcred_parse(buf, len, entry, t, why, whysize)
				  : cred_parse_file(buf, len, entry, t, why, whysize);
}

int credfile_request(const struct cred_tokens *t, const char *host, const char *path, const char *client_id,
		     char *out, size_t size)
{
	return t->format == CRED_MCP ? mcpcred_request(t, host, path, out, size)
				     : cred_refresh_request(t, host, path, client_id, out, size);
}

int credfile_answer(const char *buf, size_t len, int64_t now_ms, struct cred_tokens *t, char *why, size_t whysize)
{
	return t->format == CRED_MCP ? mcpcred_answer(buf, len, now_ms, t, why, whysize)
				     : cred_parse_answer(buf, len, now_ms, t, why, whysize);
}

char *credfile_update(const char *buf, size_t len, const char *entry, const struct cred_tokens *t, size_t *out_len)
{
	return t->format == CRED_MCP ? mcpcred_update(buf, len, entry, t, out_len)
				     : cred_file_update(buf, len, entry, t, out_len);
}

int credfile_fresh(const struct cred_tokens *t, int64_t now_ms)
{
	if (t->format == CRED_MCP)
		return t->access[0] && (!t->expires || t->expires - MCPCRED_MARGIN_MS > now_ms);
	return cred_fresh(t, now_ms);
}
