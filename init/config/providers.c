#define _GNU_SOURCE
#include "init/config/providers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/header.h"
#include "init/config/ctx.h"
#include "mcp-bridge/http.h"
#include "mcp-bridge/upstream.h"

/* Each provider's API as its SDKs speak it (checked against Pi 1.6's own
 * provider code: the base URL each appends its paths to, the header the key
 * goes in). The route pins the path prefix; the bridge sends the key. */
static const struct provider_preset presets[] = {
	/* Claude Pro/Max: Pi 1.6's anthropic OAuth (its refresh: JSON to
	 * platform.claude.com's token endpoint with Pi's client id) */
	{ "anthropic", "api.anthropic.com", "/v1/", "", "x-api-key", "", "ANTHROPIC_API_KEY", "platform.claude.com",
	  "/v1/oauth/token", "9d1c250a-e61b-44d9-88ed-5944d1962f5e" },
	{ "openai", "api.openai.com", "/v1/", "/v1", "Authorization", "Bearer ", "OPENAI_API_KEY", NULL, NULL, NULL },
	{ "openrouter", "openrouter.ai", "/api/v1/", "/api/v1", "Authorization", "Bearer ", "OPENROUTER_API_KEY", NULL, NULL, NULL },
	{ "google", "generativelanguage.googleapis.com", "/v1beta/", "/v1beta", "x-goog-api-key", "",
	  "GEMINI_API_KEY", NULL, NULL, NULL },
	{ "mistral", "api.mistral.ai", "/v1/", "", "Authorization", "Bearer ", "MISTRAL_API_KEY", NULL, NULL, NULL },
	{ "groq", "api.groq.com", "/openai/v1/", "/openai/v1", "Authorization", "Bearer ", "GROQ_API_KEY", NULL, NULL, NULL },
	{ "xai", "api.x.ai", "/v1/", "/v1", "Authorization", "Bearer ", "XAI_API_KEY", NULL, NULL, NULL },
	{ "deepseek", "api.deepseek.com", "/v1/", "/v1", "Authorization", "Bearer ", "DEEPSEEK_API_KEY", NULL, NULL, NULL },
	/* host and path from provider_url; a key of its own (an OpenAI key
	 * must not go to another server by default), and only if it is set */
	{ "openai-compatible", NULL, NULL, NULL, "Authorization", "Bearer ", "WARD_PROVIDER_KEY", NULL, NULL, NULL },
};

const struct provider_preset *provider_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof presets / sizeof presets[0]; i++)
		if (strcmp(presets[i].name, name) == 0)
			return &presets[i];
	return NULL;
}

const char *provider_names(void)
{
	return "anthropic, openai, openrouter, google, mistral, groq, xai, deepseek, openai-compatible";
}

/* How a value is named in a message: as written; or by its variable, with
 * the value only when it looks like a provider's name (a key given by
 * mistake never reaches the log). */
static const char *shown(const char *v, const char *from, char *buf, size_t size)
{
	size_t n = strlen(v);

	if (!from[0])
		return v;
	if (n && n <= 32 && strspn(v, "abcdefghijklmnopqrstuvwxyz-") == n)
		snprintf(buf, size, "${%s} = %s", from, v);
	else
		snprintf(buf, size, "${%s}", from);
	return buf;
}

/* https://HOST[:PORT][/PREFIX] (or http://) of an OpenAI-compatible server:
 * its upstream spec, path prefix and the agent's base. */
static int parse_url(const char *url, char *spec, size_t spec_size, char *path, size_t path_size, const char **why)
{
	int tls = strncmp(url, "https://", 8) == 0;
	const char *h = url + (tls ? 8 : 7), *slash;
	size_t hl, pl;

	if (!tls && strncmp(url, "http://", 7) != 0)
		return *why = "expected https://HOST[:PORT]/PATH (or http://)", -1;
	slash = strchr(h, '/');
	hl = slash ? (size_t)(slash - h) : strlen(h);
	pl = slash ? strlen(slash) : 0;
	while (pl && slash[pl - 1] == '/')
		pl--;
	if (!hl || memchr(h, '@', hl) || memchr(h, '?', hl) || (slash && strpbrk(slash, "?#")))
		return *why = "expected https://HOST[:PORT]/PATH: no user, query or fragment", -1;
	/* the path goes into the agent's base URL as it is: plain characters */
	if (slash && strspn(slash, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/") != strlen(slash))
		return *why = "the path may hold letters, digits and - . _ ~ / only", -1;
	if (pl + 2 > path_size)
		return *why = "the URL's path is too long", -1;
	if (memchr(h, ':', hl))
		snprintf(spec, spec_size, "%s:%.*s", tls ? "tls" : "tcp", (int)hl, h);
	else
		snprintf(spec, spec_size, "%s:%.*s:%s", tls ? "tls" : "tcp", (int)hl, h, tls ? "443" : "80");
	if (strlen(spec) + 1 >= spec_size)
		return *why = "the host is too long", -1;
	memcpy(path, slash ? slash : "", pl);
	path[pl] = '/';
	path[pl + 1] = '\0';
	return 0;
}

static void drop_route(struct ward_config *cfg, int i)
{
	struct config_route *r = &cfg->routes[i];

	config_route_free(r);
	memmove(r, r + 1, (size_t)(cfg->n_routes - i - 1) * sizeof *r);
	cfg->n_routes--;
}

/* The preset's settings into r; what the section set itself is refused
 * (a provider route is the preset's), but for a header of the key's name,
 * which takes the key from elsewhere (@/run/secrets/key). */
static int fill(struct ward_config *cfg, struct config_route *r, const struct provider_preset *p, const char *url,
		const char *url_from, char *err, size_t errsize)
{
	char named[140];
	char spec[300], path[256], value[160], base[300];
	const char *why = NULL, *set = r->has_up ? "upstream" : r->path ? "path" : r->methods ? "methods"
				    : r->protocol_set ? "protocol" : NULL;
	struct header *nv;
	int h;

	if (set) {
		snprintf(err, errsize, "[route %s]: %s is the provider's: a provider route takes only listen, header, "
			 "tls_ca, tls_pin and host", r->name, set);
		return -1;
	}
	if (!p->host) {
		if (!*url) {
			snprintf(err, errsize, "[route %s]: provider = %s needs provider_url (WARD_PROVIDER_URL): the "
				 "server's https://HOST[:PORT]/PATH", r->name, p->name);
			return -1;
		}
		if (parse_url(url, spec, sizeof spec, path, sizeof path, &why) != 0 ||
		    upstream_parse(spec, &r->up, &why) != 0 || (!http_target_ok(path) && (why = "not a usable path"))) {
			snprintf(err, errsize, "[route %s]: provider_url '%s': %s", r->name,
				 shown(url, url_from, named, sizeof named), why);
			return -1;
		}
	} else {
		/* the provider's public name, whole: no search domain of the
		 * pod's (ndots) is tried first, and no private answer taken */
		snprintf(spec, sizeof spec, "tls:%s.:443", p->host);
		snprintf(path, sizeof path, "%s", p->path);
		if (upstream_parse(spec, &r->up, &why) != 0) {
			snprintf(err, errsize, "[route %s]: provider %s: %s", r->name, p->name, why);
			return -1;
		}
		r->up.public_only = 1;
		/* shown as people write it: the dot is how it is looked up */
		snprintf(r->up.desc, sizeof r->up.desc, "tls:%s:443", p->host);
	}
	r->has_up = 1;
	r->path = strdup(path);
	if (!r->path || http_methods("POST GET", &r->methods) != 0)
		return snprintf(err, errsize, "out of memory"), -1;
	for (h = 0; h < r->n_headers; h++)
		if (strcasecmp(r->headers[h].name, p->header) == 0 ||
		    (r->cred && strcasecmp(r->headers[h].name, "Authorization") == 0))
			break;
	if (r->cred && h < r->n_headers) {
		snprintf(err, errsize, "[route %s]: header %s: with a credential the bridge sends the login's own "
			 "Authorization", r->name, r->headers[h].name);
		return -1;
	}
	/* openai-compatible: a server may need no key, and WARD_PROVIDER_KEY
	 * is its own; any other preset's key is required. A login sends its
	 * own token instead (refresh.h). */
	if (h == r->n_headers && !r->cred && (p->host || getenv(p->key_var))) {
		/* the key, from ward's environment at start (a missing one stops it) */
		snprintf(value, sizeof value, "%s${%s}", p->prefix, p->key_var);
		nv = realloc(r->headers, (size_t)(r->n_headers + 1) * sizeof *nv);
		if (!nv)
			return snprintf(err, errsize, "out of memory"), -1;
		r->headers = nv;
		if (header_set(&nv[r->n_headers], p->header, strlen(p->header), value, NULL) != 0)
			return snprintf(err, errsize, "out of memory"), -1;
		nv[r->n_headers++].env = 1;
	}
	/* what the agent's SDK is pointed at, nothing secret */
	path[strlen(path) - 1] = '\0';
	snprintf(base, sizeof base, "http://127.0.0.1:%u%s", r->port, p->host ? p->base : path);
	if (config_agent_env(cfg, "WARD_PROVIDER", p->name) != 0 || config_agent_env(cfg, "WARD_PROVIDER_BASE_URL", base) != 0 ||
	    (r->cred && config_agent_env(cfg, "WARD_PROVIDER_AUTH", "oauth") != 0)) {
		snprintf(err, errsize, "[agent] env: no room for WARD_PROVIDER and WARD_PROVIDER_BASE_URL");
		return -1;
	}
	return 0;
}

/* credential = PATH or ${VAR} (empty: none): the preset's login, its
 * token endpoint by name like the API's. */
static int credential(struct config_route *r, const struct provider_preset *p, char *err, size_t errsize)
{
	char from[128], spec[300];
	const char *path = config_env_ref(r->credential, from, sizeof from), *why = NULL;

	if (!*path)
		return 0;
	if (!p->token_host) {
		snprintf(err, errsize, "[route %s]: credential: provider %s has no login ward can refresh (anthropic "
			 "has: a Claude subscription)", r->name, p->name);
		return -1;
	}
	if (path[0] != '/') {
		snprintf(err, errsize, "[route %s]: credential%s%s%s: expected an absolute path", r->name,
			 from[0] ? " (${" : "", from, from[0] ? "})" : "");
		return -1;
	}
	r->cred = calloc(1, sizeof *r->cred);
	if (!r->cred || !(r->cred->path = strdup(path)))
		return snprintf(err, errsize, "out of memory"), -1;
	r->cred->entry = p->name;
	r->cred->client_id = p->client_id;
	r->cred->token_host = p->token_host;
	r->cred->token_path = p->token_path;
	r->cred->key_header = p->header;
	snprintf(spec, sizeof spec, "tls:%s.:443", p->token_host);
	if (upstream_parse(spec, &r->cred->up, &why) != 0) {
		snprintf(err, errsize, "[route %s]: credential: %s", r->name, why);
		return -1;
	}
	r->cred->up.public_only = 1;
	snprintf(r->cred->up.desc, sizeof r->cred->up.desc, "tls:%s:443", p->token_host);
	return 0;
}

int providers_apply(struct ward_config *cfg, char *err, size_t errsize, int *line)
{
	const char *first = NULL; /* the provider route already made */
	int i;

	for (i = 0; i < cfg->n_routes; i++) {
		struct config_route *r = &cfg->routes[i];
		const struct provider_preset *p;
		const char *name, *url;
		char from[128], url_from[128], named[140];

		*line = r->line;
		if (!r->provider) {
			if (r->provider_url) {
				snprintf(err, errsize, "[route %s]: provider_url needs provider = openai-compatible", r->name);
				return -1;
			}
			if (r->credential) {
				snprintf(err, errsize, "[route %s]: credential needs provider = anthropic (the login's "
					 "token endpoint is the preset's)", r->name);
				return -1;
			}
			continue;
		}
		name = config_env_ref(r->provider, from, sizeof from);
		if (!*name) {
			/* WARD_PROVIDER unset: no provider, and no route for one */
			drop_route(cfg, i--);
			continue;
		}
		p = provider_find(name);
		if (!p) {
			snprintf(err, errsize, "[route %s]: provider '%s': expected one of %s", r->name,
				 shown(name, from, named, sizeof named), provider_names());
			return -1;
		}
		if (first) {
			snprintf(err, errsize, "[route %s]: a second provider route (route %s is one): the agent is told "
				 "of one", r->name, first);
			return -1;
		}
		url = r->provider_url ? config_env_ref(r->provider_url, url_from, sizeof url_from) : (url_from[0] = '\0', "");
		if (p->host && *url) {
			snprintf(err, errsize, "[route %s]: provider_url '%s' is for provider = openai-compatible, not %s",
				 r->name, shown(url, url_from, named, sizeof named), p->name);
			return -1;
		}
		if ((r->credential && credential(r, p, err, errsize) != 0) ||
		    fill(cfg, r, p, url, url_from, err, errsize) != 0)
			return -1;
		first = r->name;
	}
	return 0;
}
