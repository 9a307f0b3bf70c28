#define _GNU_SOURCE
#include "init/config/proxy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/parse.h"
#include "mcp-bridge/http.h"

/* What agents commonly fetch, by name. Hosts only, port 443: the proxy
 * carries TLS. (Debian's apt needs https sources: deb.debian.org serves
 * them.) */
static const struct {
	const char *name;
	const char *const rules[6];
} presets[] = {
	{ "github", { "github.com", "*.github.com", "*.githubusercontent.com", NULL } },
	{ "npm", { "registry.npmjs.org", "registry.yarnpkg.com", NULL } },
	{ "debian", { "deb.debian.org", "security.debian.org", "snapshot.debian.org", NULL } },
	{ "pypi", { "pypi.org", "files.pythonhosted.org", NULL } },
};

const char *const *proxy_preset(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof presets / sizeof presets[0]; i++)
		if (strcmp(presets[i].name, name) == 0)
			return presets[i].rules;
	return NULL;
}

const char *proxy_preset_names(void)
{
	return "github npm debian pypi";
}

/* One rule more, unless the list holds it already (a preset and a line
 * may both name a host). */
static int add_rule(struct config_proxy *p, const struct allow_rule *r, const char **why)
{
	char a[UPSTREAM_NAME_MAX + 32], b[UPSTREAM_NAME_MAX + 32];
	struct allow_rule *nv;
	int i;

	/* the same rule is written the same way */
	allow_text(r, a, sizeof a);
	for (i = 0; i < p->n_allow; i++)
		if (strcmp(allow_text(&p->allow[i], b, sizeof b), a) == 0)
			return 0;
	if (p->n_allow == PROXY_MAX_RULES)
		return *why = "more than 256 rules", -1;
	nv = realloc(p->allow, (size_t)(p->n_allow + 1) * sizeof *nv);
	if (!nv)
		return *why = "out of memory", -1;
	p->allow = nv;
	p->allow[p->n_allow++] = *r;
	return 0;
}

/* Blanks or commas between words. */
static int each_word(struct parse_ctx *ctx, const char *v, int (*fn)(struct parse_ctx *, const char *, size_t, const char **),
		     const char **why)
{
	while (*v) {
		size_t n;

		v += strspn(v, " \t,");
		n = strcspn(v, " \t,");
		if (n && fn(ctx, v, n, why) != 0)
			return -1;
		v += n;
	}
	return 0;
}

static int allow_word(struct parse_ctx *ctx, const char *w, size_t n, const char **why)
{
	struct allow_rule r;

	if (allow_parse(w, n, &r, why) != 0) {
		snprintf(ctx->why, sizeof ctx->why, "%.*s: %s", (int)(n > 80 ? 80 : n), w, *why);
		*why = ctx->why;
		return -1;
	}
	return add_rule(&ctx->cfg->proxy, &r, why);
}

/* methods: CONNECT (tunnels) and the methods of plain http:// requests,
 * blanks or commas between them. */
static int methods(const char *v, unsigned *out, const char **why)
{
	unsigned mask = 0, bit;
	char name[16];

	while (*v) {
		size_t n;

		v += strspn(v, " \t,");
		n = strcspn(v, " \t,");
		if (!n)
			break;
		snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), v);
		if (n < sizeof name && strcasecmp(name, "CONNECT") == 0)
			bit = 1u << HTTP_CONNECT;
		else if (n >= sizeof name || http_methods(name, &bit) != 0)
			break;
		mask |= bit;
		v += n;
	}
	if (*v || !mask)
		return *why = "expected HTTP methods like CONNECT GET HEAD (CONNECT: https tunnels; the rest: "
			      "plain http:// requests)", -1;
	*out = mask;
	return 0;
}

static int preset_word(struct parse_ctx *ctx, const char *w, size_t n, const char **why)
{
	char name[32];
	const char *const *rules;

	snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), w);
	if (n >= sizeof name || !(rules = proxy_preset(name))) {
		snprintf(ctx->why, sizeof ctx->why, "%.*s: no such preset (known: %s)", (int)(n > 40 ? 40 : n), w,
			 proxy_preset_names());
		*why = ctx->why;
		return -1;
	}
	if (strstr(ctx->cfg->proxy.presets, name) == NULL) {
		size_t l = strlen(ctx->cfg->proxy.presets);
		snprintf(ctx->cfg->proxy.presets + l, sizeof ctx->cfg->proxy.presets - l, "%s%s", l ? " " : "", name);
	}
	for (; *rules; rules++)
		if (allow_word(ctx, *rules, strlen(*rules), why) != 0)
			return -1;
	return 0;
}

/* A byte count: digits, then K, M or G (binary) or nothing. */
static int bytes(const char *v, uint64_t *out, const char **why)
{
	size_t n = strspn(v, "0123456789");
	uint64_t x, mult = 1;

	if (!n || parse_digits(v, n, 12, UINT64_C(1) << 40, &x) != 0)
		return *why = "expected a byte count (1048576, 512M, 4G; 0: no limit)", -1;
	if (v[n] == 'K' || v[n] == 'k')
		mult = UINT64_C(1) << 10, n++;
	else if (v[n] == 'M' || v[n] == 'm')
		mult = UINT64_C(1) << 20, n++;
	else if (v[n] == 'G' || v[n] == 'g')
		mult = UINT64_C(1) << 30, n++;
	if (v[n] || x > (UINT64_C(1) << 50) / mult) /* 1 PiB: no overflow below */
		return *why = "expected a byte count up to 1024T (1048576, 512M, 4G; 0: no limit)", -1;
	*out = x * mult;
	return 0;
}

/* ask: the approver's address, or no/none/empty (nothing asked). ${NAME}
 * alone: that variable of ward's environment (an image's docker run -e
 * WARD_PROXY_ASK=unix:/run/ward/approver.sock), unset or empty: none. */
static int ask_set(struct parse_ctx *ctx, const char *v, const char **why)
{
	struct config_proxy *p = &ctx->cfg->proxy;
	char from[128];
	const char *a = config_env_ref(v, from, sizeof from);

	/* from a variable that is empty: as an allow = ${VAR} of none */
	if (from[0])
		p->from_env = 1;
	p->has_ask = p->ask_terminal = 0;
	if (!*a || strcmp(a, "no") == 0 || strcmp(a, "none") == 0)
		return 0;
	if (strcmp(a, "terminal") == 0) {
		/* ward itself, at its terminal: the bridge's end is a socket
		 * pair of PID 1's, not an address */
		memset(&p->ask, 0, sizeof p->ask);
		snprintf(p->ask.desc, sizeof p->ask.desc, "terminal");
		p->has_ask = p->ask_terminal = 1;
		return 0;
	}
	if (upstream_parse(a, &p->ask, why) != 0 || (p->ask.kind != UP_UNIX && p->ask.kind != UP_VSOCK)) {
		snprintf(ctx->why, sizeof ctx->why, "%.60s: expected terminal, the approver's unix:PATH or "
			 "vsock:CID:PORT (docs/approver.md), or no", a);
		*why = ctx->why;
		return -1;
	}
	p->has_ask = 1;
	return 0;
}

int proxy_set(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	struct config_proxy *p = &ctx->cfg->proxy;
	uint64_t n;

	if (strcmp(k, "listen") == 0) {
		if (strncmp(v, "127.0.0.1:", 10) != 0 || parse_uint(v + 10, 1, 65535, &n, why) != 0)
			return *why = "expected 127.0.0.1:PORT (the bridge listens on loopback only)", -1;
		p->port = (unsigned)n;
		return 0;
	}
	if (strcmp(k, "allow") == 0 || strcmp(k, "presets") == 0) {
		/* ${NAME} alone: the words of that variable of ward's environment
		 * (an image's docker run -e WARD_PROXY_ALLOW=...) */
		char from[128];
		const char *words = config_env_ref(v, from, sizeof from);
		if (from[0])
			p->from_env = 1;
		else
			p->literal = 1;
		return each_word(ctx, words, k[0] == 'a' ? allow_word : preset_word, why);
	}
	if (strcmp(k, "methods") == 0)
		return methods(v, &p->methods, why);
	if (strcmp(k, "max_tunnels") == 0) {
		if (parse_uint(v, 1, PROXY_MAX_TUNNELS, &n, why) != 0)
			return *why = "expected 1-4096 tunnels at once", -1;
		p->max_tunnels = (unsigned)n;
		return 0;
	}
	if (strcmp(k, "max_bytes") == 0)
		return bytes(v, &p->max_bytes, why);
	if (strcmp(k, "ask") == 0)
		return ask_set(ctx, v, why);
	if (strcmp(k, "ask_timeout") == 0) {
		if (parse_uint(v, 1, 3600, &n, why) != 0)
			return *why = "expected seconds, 1-3600 (an unanswered question is refused after them)", -1;
		p->ask_timeout_s = (unsigned)n;
		return 0;
	}
	if (strcmp(k, "ask_store") == 0) {
		char from[128];
		const char *path = config_env_ref(v, from, sizeof from);
		free(p->ask_store);
		p->ask_store = NULL;
		if (!*path)
			return 0;
		if (path[0] != '/')
			return *why = "expected an absolute path (where `always` answers at the terminal are kept)", -1;
		p->ask_store = strdup(path);
		return p->ask_store ? 0 : (*why = "out of memory", -1);
	}
	if (strcmp(k, "ask_rate") == 0) {
		if (parse_uint(v, 1, 1000, &n, why) != 0)
			return *why = "expected questions per minute, 1-1000", -1;
		p->ask_rate = (unsigned)n;
		return 0;
	}
	return *why = "unknown key", -1;
}

int proxy_apply(struct ward_config *cfg, char *err, size_t errsize, int *line)
{
	static const char *const vars[] = { "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy" };
	struct config_proxy *p = &cfg->proxy;
	char url[32];
	size_t i;
	int j;

	if (!p->has)
		return 0;
	*line = p->line;
	/* hosts that only ${VAR}s would give, none set: no proxy, as a
	 * provider route without its ${WARD_PROVIDER} is none */
	if (!p->n_allow && !p->has_ask && p->from_env && !p->literal) {
		p->has = 0;
		return 0;
	}
	if (!p->port)
		return snprintf(err, errsize, "[proxy]: listen is required"), -1;
	if (!p->n_allow && !p->has_ask)
		return snprintf(err, errsize, "[proxy]: no host to tunnel to: set allow (or presets), or ask"), -1;
	for (j = 0; j < cfg->n_routes; j++)
		if (cfg->routes[j].port == p->port)
			return snprintf(err, errsize, "[proxy]: listen: port %u is also route %s's", p->port,
					cfg->routes[j].name), -1;
	if (cfg->has_mcp && p->port == cfg->mcp_port)
		return snprintf(err, errsize, "[proxy]: listen: port %u is [mcp]'s first port", p->port), -1;
	/* what programs read to find a proxy; NO_PROXY keeps the routes
	 * (127.0.0.1) direct. Not NODE_USE_ENV_PROXY: Node 22 then warns on
	 * stderr at the first fetch, into a person's TUI (docs/proxy.md) */
	snprintf(url, sizeof url, "http://127.0.0.1:%u", p->port);
	for (i = 0; i < sizeof vars / sizeof vars[0]; i++)
		if (config_agent_env(cfg, vars[i], url) != 0)
			goto full;
	if (config_agent_env(cfg, "NO_PROXY", "127.0.0.1,localhost,::1") != 0 ||
	    config_agent_env(cfg, "no_proxy", "127.0.0.1,localhost,::1") != 0)
		goto full;
	return 0;
full:
	return snprintf(err, errsize, "[agent] env: no room for the proxy's variables (HTTPS_PROXY...)"), -1;
}
