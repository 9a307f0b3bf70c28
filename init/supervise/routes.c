#include "init/supervise/routes.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "mcp-bridge/http.h"

const struct route *routes_on_port(const struct route_table *t, unsigned port)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].port == port)
			return &t->v[i];
	return NULL;
}

/* The proxy's upstream: none of its own (upstream.h). */
static const struct upstream proxy_up = {
	.kind = UP_PROXY,
	.desc = "proxy: tunnels (and plain requests, by [proxy] methods) to the hosts of [proxy] allow",
};

/* A server's OAuth sign-in as a login the bridge sends and refreshes:
 * its entry of [mcp] auth's file, its token endpoint where its URL says
 * (mcpjson.c found both); NULL without one. */
static const struct config_cred *mcp_cred(struct config_cred *k, const struct mcp_route *m,
					  const struct ward_config *cfg)
{
	if (!m->oauth_key || !cfg->mcp_auth)
		return NULL;
	*k = (struct config_cred){ .path = cfg->mcp_auth, .format = CRED_MCP, .entry = m->oauth_key,
				   .token_host = m->token_host, .token_path = m->token_path, .up = m->token_up };
	return k;
}

int routes_build(struct route_table *t, const struct ward_config *cfg, struct mcp_result *mcp)
{
	int i, n_mcp = mcp ? mcp->n_routes : 0;

	memset(t, 0, sizeof *t);
	if (mcp) {
		t->mcp = mcp->routes;
		t->n_mcp = mcp->n_routes;
		mcp->routes = NULL;
		mcp->n_routes = 0;
		t->n_skipped_all = mcp->n_skipped;
		t->n_skipped = mcp->n_skipped < MCP_MAX_SKIPPED ? mcp->n_skipped : MCP_MAX_SKIPPED;
		if (t->n_skipped && !(t->skipped = malloc((size_t)t->n_skipped * sizeof *t->skipped))) {
			log_error("out of memory");
			return 3;
		}
		if (t->n_skipped)
			memcpy(t->skipped, mcp->skipped, (size_t)t->n_skipped * sizeof *t->skipped);
	}
	t->v = calloc((size_t)cfg->n_routes + (size_t)n_mcp + 2, sizeof *t->v);
	t->mcp_creds = n_mcp ? calloc((size_t)n_mcp, sizeof *t->mcp_creds) : NULL;
	if (!t->v || (n_mcp && !t->mcp_creds)) {
		log_error("out of memory");
		return 3;
	}
	/* [route] sections: their ports are told apart when the config is
	 * read (config_load says which line) */
	for (i = 0; i < cfg->n_routes; i++) {
		const struct config_route *c = &cfg->routes[i];
		t->v[t->n++] = (struct route){
			.name = c->name, .line = c->line, .port = c->port, .up = &c->up, .methods = c->methods,
			.path = c->path, .host = c->host, .headers = c->headers, .n_headers = c->n_headers,
			.tls_ca = c->tls_ca, .tls_pin = c->tls_pin, .stream = c->stream, .cred = c->cred,
			.tools = tools_any(&c->tools) ? &c->tools
															: NULL,
		};
	}
	for (i = 0; i < n_mcp; i++) {
		const struct mcp_route *m = &t->mcp[i];
		const struct route *clash = routes_on_port(t, m->port);
		if (clash) {
			log_error("%s:%d: [mcp] listen: port %u of server %s is also route %s's", cfg->path, cfg->mcp_line,
				  m->port, m->name, clash->name);
			return 2;
		}
		t->v[t->n++] = (struct route){
			.name = m->name, .line = cfg->mcp_line, .port = m->port, .up = m->has_up ? &m->up : &cfg->mcp_up,
			/* its own, and its sign-in's token endpoint's (by name over TLS too) */
			.tls_ca = m->has_up ? cfg->mcp_tls_ca : NULL,
			.methods = HTTP_DEFAULT_METHODS, .path = m->path, .host = m->host,
			.exact = 1, /* an MCP server's URL is one endpoint, "/" or "/mcp/" too */
			.from_mcp = 1, .headers = m->headers, .n_headers = m->n_headers,
			.cred = mcp_cred(&t->mcp_creds[i], m, cfg),
			.tools = tools_any(&m->tools) ? &m->tools
															: NULL,
		};
	}
	if (cfg->proxy.has) {
		/* its port is told apart from the [route]s' when the config is read */
		const struct route *clash = routes_on_port(t, cfg->proxy.port);
		if (clash) {
			log_error("%s:%d: [proxy] listen: port %u is also route %s's", cfg->path, cfg->proxy.line,
				  cfg->proxy.port, clash->name);
			return 2;
		}
		t->v[t->n++] = (struct route){
			.name = "proxy", .line = cfg->proxy.line, .port = cfg->proxy.port, .up = &proxy_up,
			.proxy = &cfg->proxy,
		};
	}
	return 0;
}

void routes_free(struct route_table *t)
{
	free(t->v);
	free(t->skipped);
	free(t->mcp_creds);
	mcp_routes_free(t->mcp, t->n_mcp);
	memset(t, 0, sizeof *t);
}
