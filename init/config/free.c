/* config/free: what a config owns, given back (config_free, and a provider
 * route that is not made). Apart from the reader so that providers.c,
 * which the reader calls, needs nothing of the reader's. */
#include <stdlib.h>
#include <string.h>

#include "init/config/config.h"
#include "common/header.h"

static void free_strv(char **v, int n)
{
	int i;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void config_route_free(struct config_route *r)
{
	free(r->name);
	free(r->path);
	free(r->host);
	free(r->tls_ca);
	free(r->tls_pin);
	free(r->provider);
	free(r->provider_url);
	free(r->credential);
	tools_rules_free(&r->tools);
	if (r->cred)
		free(r->cred->path);
	free(r->cred);
	headers_free(r->headers, r->n_headers);
}

void config_free(struct ward_config *cfg)
{
	int i;

	free(cfg->path);
	free(cfg->command);
	free(cfg->cwd);
	for (i = 0; i < cfg->n_env; i++)
		free(cfg->env[i]);
	for (i = 0; i < cfg->n_env_pass; i++)
		free(cfg->env_pass[i]);
	free(cfg->env);
	free(cfg->env_pass);
	free(cfg->evidence);
	free(cfg->log_copy);
	free(cfg->user);
	free_strv(cfg->landlock.read, cfg->landlock.n_read);
	free_strv(cfg->landlock.write, cfg->landlock.n_write);
	free_strv(cfg->writable, cfg->n_writable);
	free(cfg->landlock.connect);
	free(cfg->landlock.bind);
	free_strv(cfg->seccomp.deny, cfg->seccomp.n_deny);
	free_strv(cfg->seccomp.allow, cfg->seccomp.n_allow);
	for (i = 0; i < cfg->n_routes; i++)
		config_route_free(&cfg->routes[i]);
	free(cfg->routes);
	free(cfg->proxy.allow);
	free(cfg->proxy.ask_store);
	free(cfg->policy_note);
	free(cfg->refusals);
	free(cfg->policy_note_add);
	for (i = 0; i < cfg->n_agent_vars; i++)
		free(cfg->agent_vars[i]);
	free(cfg->agent_vars);
	free(cfg->bridge_user);
	free(cfg->mcp_source);
	free(cfg->mcp_target);
	free(cfg->mcp_tls_ca);
	free(cfg->mcp_loopback);
	free(cfg->mcp_auth);
	for (i = 0; i < cfg->n_files; i++) {
		free(cfg->files[i].name);
		free(cfg->files[i].source);
		free(cfg->files[i].target);
	}
	free(cfg->files);
	memset(cfg, 0, sizeof *cfg);
}
