/* config/proxy: [proxy], the egress proxy in the bridge: where it listens,
 * the hosts it tunnels to (mcp-bridge/allow.h) and their presets, its
 * limits; and what the agent is told of it (HTTPS_PROXY and the rest). */
#ifndef WARD_CONFIG_PROXY_H
#define WARD_CONFIG_PROXY_H

#include <stddef.h>

#include "init/config/ctx.h"

/* A preset's hosts, for --check and the docs: NULL-terminated rules as
 * [proxy] allow writes them. NULL: no such preset. */
const char *const *proxy_preset(const char *name);

/* The names of the presets, "github npm ...", for messages. */
const char *proxy_preset_names(void);

/* The [proxy] keys' setter (keys.c's table names it). */
int proxy_set(struct parse_ctx *ctx, const char *k, const char *v, const char **why);

/* After the whole file: listen and some host are required; the port is
 * no route's; the agent's environment gets the proxy's address. 0, or -1
 * with err and *line. */
int proxy_apply(struct ward_config *cfg, char *err, size_t errsize, int *line);

#endif
