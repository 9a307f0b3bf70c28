/* config/providers: model providers by name. A [route] with
 * `provider = NAME` (or `${VAR}`, from ward's environment when the config
 * is read: WARD_PROVIDER in the image) takes its upstream, path, methods
 * and key header from a preset; the key itself is a ${VAR} of ward's
 * environment (ANTHROPIC_API_KEY...), read at start like any header's, so
 * the agent never has it. The agent is told the provider and the base URL
 * its SDK should use through the bridge (WARD_PROVIDER,
 * WARD_PROVIDER_BASE_URL), and nothing secret. Private to init/config/. */
#ifndef WARD_PROVIDERS_H
#define WARD_PROVIDERS_H

#include <stddef.h>

#include "init/config/config.h"

struct provider_preset {
	const char *name;    /* as WARD_PROVIDER says it (Pi's provider id too) */
	const char *host;    /* its API's host, reached over TLS on 443 */
	const char *path;    /* the route's path prefix */
	const char *base;    /* what the agent's SDK puts after the bridge's http://127.0.0.1:PORT */
	const char *header;  /* the key's header */
	const char *prefix;  /* before the key in it ("Bearer "), or "" */
	const char *key_var; /* the provider's usual variable */
	/* its subscription login (Pi's /login), when ward can refresh it:
	 * the OAuth token endpoint (TLS, 443) and Pi's client id; NULL: none */
	const char *token_host, *token_path, *client_id;
};

/* The preset of that name, or NULL. */
const struct provider_preset *provider_find(const char *name);

/* "anthropic, openai, ...": for messages. */
const char *provider_names(void);

/* Each [route] with a provider, applied once the whole file is read: the
 * value resolved (a route whose ${VAR} is unset or empty is taken out:
 * no provider, no route), the preset's settings filled in, the agent's
 * environment told. 0, or -1 with err and the line at fault. */
int providers_apply(struct ward_config *cfg, char *err, size_t errsize, int *line);

#endif
