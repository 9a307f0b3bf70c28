#define _GNU_SOURCE
#include "init/config/ctx.h"

#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/http.h"
#include "mcp-bridge/tls.h"
#include "common/envref.h"
#include "common/parse.h"
#include "init/config/providers.h"
#include "init/config/proxy.h"

static const struct {
	const char *name;
	int named; /* "[route NAME]" */
	int enforced;
} sections[] = {
	[SEC_WARD] = { "ward", 0, 1 },	   [SEC_SUPERVISE] = { "supervise", 0, 1 },
	[SEC_AGENT] = { "agent", 0, 1 },   [SEC_LANDLOCK] = { "landlock", 0, 1 },
	[SEC_SECCOMP] = { "seccomp", 0, 1 }, [SEC_MCP] = { "mcp", 0, 1 },
	[SEC_ROUTE] = { "route", 1, 1 },   [SEC_FILE] = { "file", 1, 1 },
	[SEC_PROXY] = { "proxy", 0, 1 },
};

#define N_SECTIONS ((int)(sizeof sections / sizeof sections[0]))

void config_fail(struct parse_ctx *ctx, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ctx->err_line)
		return; /* the first error is the one reported */
	ctx->err_line = line;
	n = snprintf(ctx->err, sizeof ctx->err, "%s:%d: ", ctx->name, line);
	va_start(ap, fmt);
	vsnprintf(ctx->err + n, sizeof ctx->err - (size_t)n, fmt, ap);
	va_end(ap);
}

static enum section section_kind(const char *name, size_t len)
{
	int i;

	for (i = 0; i < N_SECTIONS; i++) {
		size_t sl = strlen(sections[i].name);
		if (len < sl || strncmp(name, sections[i].name, sl) != 0)
			continue;
		if (!sections[i].named && len == sl)
			return (enum section)i;
		if (sections[i].named && len > sl + 1 && name[sl] == ' ')
			return (enum section)i;
	}
	return SEC_UNKNOWN;
}

/* Returns 0 if the section may be used, else records why not. */
static int check_section(struct parse_ctx *ctx, const char *name, size_t len)
{
	enum section s = section_kind(name, len);

	if (s == SEC_UNKNOWN) {
		config_fail(ctx, ctx->line, "[%.*s]: unknown section (known: ward, supervise, agent, "
			  "landlock, seccomp, mcp, route NAME, file NAME, proxy)", (int)len, name);
		return -1;
	}
	if (!sections[s].enforced) {
		config_fail(ctx, ctx->line, "[%.*s]: this build of ward cannot put this layer in force "
			  "yet; remove the section", (int)len, name);
		return -1;
	}
	/* a section that is present switches its layer on, keys or not */
	if (s == SEC_AGENT)
		ctx->cfg->has_agent = 1;
	else if (s == SEC_LANDLOCK && !ctx->cfg->has_landlock) {
		ctx->cfg->has_landlock = 1;
		ctx->cfg->landlock.mode = LL_HARD;
		ctx->section_line[SEC_LANDLOCK] = ctx->line;
	} else if (s == SEC_MCP && !ctx->cfg->has_mcp) {
		ctx->cfg->has_mcp = 1;
		ctx->cfg->mcp_line = ctx->line;
	} else if (s == SEC_ROUTE) {
		if (!route_named(ctx->cfg, name + 6, len - 6, ctx->line)) {
			config_fail(ctx, ctx->line, "out of memory");
			return -1;
		}
	} else if (s == SEC_FILE) {
		if (!file_named(ctx->cfg, name + 5, len - 5, ctx->line)) {
			config_fail(ctx, ctx->line, "out of memory");
			return -1;
		}
	} else if (s == SEC_PROXY && !ctx->cfg->proxy.has) {
		ctx->cfg->proxy.has = 1;
		ctx->cfg->proxy.line = ctx->line;
	} else if (s == SEC_SECCOMP && !ctx->cfg->has_seccomp) {
		ctx->cfg->has_seccomp = 1;
		ctx->cfg->seccomp.enabled = 1;
		ctx->section_line[SEC_SECCOMP] = ctx->line;
	}
	return 0;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;
	enum section sec = section_kind(section, strlen(section));
	const char *why = NULL;
	size_t i;

	ctx->key_seen = 1;
	if (ctx->err_line)
		return 0;
	if (!*section) {
		config_fail(ctx, ctx->line, "%s: key outside any section; put it under [ward], "
			  "[supervise], [agent], ...", name);
		return 0;
	}
	if (check_section(ctx, section, strlen(section)) != 0)
		return 0;
	ctx->section = section;
	ctx->sec = sec;
	for (i = 0; i < config_n_keys; i++) {
		size_t kl = strlen(config_keys[i].key);
		int prefix = config_keys[i].key[kl - 1] == '_';
		if (config_keys[i].section != sec)
			continue;
		if (prefix ? strncmp(name, config_keys[i].key, kl) != 0 : strcmp(name, config_keys[i].key) != 0)
			continue;
		if (!config_keys[i].repeatable && !(ctx->continued && config_keys[i].continues)) {
			if (ctx->key_line[i]) {
				config_fail(ctx, ctx->line, "%s: set twice (first on line %d); an indented "
					  "line continues the value above it", name, ctx->key_line[i]);
				return 0;
			}
			ctx->key_line[i] = ctx->line;
		}
		if (!*value && (!config_keys[i].repeatable || sec == SEC_ROUTE || sec == SEC_FILE)) {
			config_fail(ctx, ctx->line, "%s: empty value", name);
			return 0;
		}
		if (config_keys[i].set(ctx, name, value, &why) != 0) {
			config_fail(ctx, ctx->line, "%s: '%s': %s", name, value, why);
			return 0;
		}
		return 1;
	}
	config_fail(ctx, ctx->line, "%s: unknown key in [%s]", name, section);
	return 0;
}

/* inih (r55) truncates section and key names to this, less one */
#define INIH_MAX_NAME 50

/* inih's line reader, wrapped to count lines (Debian's inih is built
 * without line numbers in the handler), to refuse over-long lines instead
 * of letting inih split them, and to see section headers even when the
 * section has no keys: an empty [landlock] must not pass unnoticed. */
static char *reader(char *str, int num, void *stream)
{
	struct parse_ctx *ctx = stream;
	int c = EOF, len = 0, nul = 0;
	char *p, *q;

	while (len < num - 1 && (c = getc(ctx->f)) != EOF) {
		if (c == '\0')
			nul = 1;
		str[len++] = (char)c;
		if (c == '\n')
			break;
	}
	if (len == 0)
		return NULL;
	str[len] = '\0';
	ctx->line++;
	if (c != '\n' && c != EOF && (c = getc(ctx->f)) != EOF) {
		/* The buffer filled before the line's newline: inih would ask
		 * for the rest and join the next line to it. */
		while (c != '\n' && (c = getc(ctx->f)) != EOF)
			;
		config_fail(ctx, ctx->line, "line longer than %d characters; split a list over "
			  "repeated keys", num - 2);
		str[0] = '\0';
		return str;
	}
	if (nul) {
		config_fail(ctx, ctx->line, "NUL byte in the line");
		str[0] = '\0';
		return str;
	}
	p = str;
	if (ctx->line == 1 && strncmp(p, "\xEF\xBB\xBF", 3) == 0)
		p += 3;
	q = p + strspn(p, " \t");
	/* inih takes an indented line as the value above only after a key
	 * of the same section; else as a line of its own */
	ctx->continued = q > p && *q && !strchr(";#\r\n", *q) && ctx->key_seen;
	if (*q == '[' && q > p && !ctx->continued) {
		/* inih would take it as a header: be plain about it */
		config_fail(ctx, ctx->line, "a section header starts its line (this one is indented)");
		str[0] = '\0';
		return str;
	}
	if (*q == '[' && !ctx->continued) {
		char *end = strchr(q, ']');
		ctx->key_seen = 0;
		if (end && end - q - 1 >= INIH_MAX_NAME) {
			config_fail(ctx, ctx->line, "section name longer than %d characters", INIH_MAX_NAME - 1);
			str[0] = '\0';
			return str;
		}
		if (end)
			check_section(ctx, q + 1, (size_t)(end - q - 1));
	} else if (!ctx->continued && *q && !strchr(";#\r\n", *q)) {
		size_t k = strcspn(q, "=:");
		while (k && (q[k - 1] == ' ' || q[k - 1] == '\t'))
			k--;
		if (k >= INIH_MAX_NAME) {
			config_fail(ctx, ctx->line, "key longer than %d characters", INIH_MAX_NAME - 1);
			str[0] = '\0';
			return str;
		}
	}
	return str;
}

/* Rules that span keys, checked once the whole file is read. */
/* A tcp: or tls: upstream's port that [landlock] bind lets the agent
 * take: while that upstream is down (or before it starts), the agent
 * could listen there and be sent the route's secret headers. 0 if none. */
static unsigned bound_upstream_port(const struct ward_config *cfg, const struct upstream *u)
{
	unsigned port;
	int i;

	if (!cfg->has_landlock || (u->kind != UP_TCP && u->kind != UP_TLS))
		return 0;
	port = u->port;
	for (i = 0; i < cfg->landlock.n_bind; i++)
		if (port >= cfg->landlock.bind[i].lo && port <= cfg->landlock.bind[i].hi)
			return port;
	return 0;
}

/* A ${VAR} of a route header that [agent] env_pass also gives the agent:
 * the variable's name, or NULL. */
struct passed {
	const struct ward_config *cfg;
	const char *name;
};

static int passed_cb(void *ctx, const char *name)
{
	struct passed *p = ctx;
	int i;

	for (i = 0; i < p->cfg->n_env_pass; i++)
		if (strcmp(p->cfg->env_pass[i], name) == 0) {
			p->name = p->cfg->env_pass[i];
			return 1;
		}
	return 0;
}

/* The names env_pass took from a ${VAR} (ward-pi's WARD_AGENT_ENV, the
 * person's variables) are the agent's: their values go to its environment
 * and leave ward's, so that neither PID 1 nor the bridge it starts (c-ares
 * reads LOCALDOMAIN and RES_OPTIONS) is steered by them. */
static void take_agent_vars(struct parse_ctx *ctx)
{
	struct ward_config *cfg = ctx->cfg;
	int i;

	for (i = 0; i < cfg->n_agent_vars; i++) {
		const char *v = getenv(cfg->agent_vars[i]);
		if (!v)
			continue;
		if (config_agent_env(cfg, cfg->agent_vars[i], v) != 0) {
			config_fail(ctx, 0, "[agent] env_pass: out of memory");
			return;
		}
		unsetenv(cfg->agent_vars[i]);
	}
}

static void validate(struct parse_ctx *ctx)
{
	struct ward_config *cfg = ctx->cfg;
	int confining = (cfg->has_landlock && cfg->landlock.mode != LL_OFF) ||
			(cfg->has_seccomp && cfg->seccomp.enabled);

	const char *why = NULL;
	int i, j, argc;

	if (ctx->command_text && split_words(ctx->command_text, &cfg->command, &argc, &why) != 0) {
		config_fail(ctx, ctx->command_line, "command: '%s': %s", ctx->command_text, why);
		return;
	}
	{
		char perr[512];
		int pline = 0;
		if (providers_apply(cfg, perr, sizeof perr, &pline) != 0 ||
		    proxy_apply(cfg, perr, sizeof perr, &pline) != 0) {
			config_fail(ctx, pline, "%s", perr);
			return;
		}
	}
	for (i = 0; i < cfg->n_routes; i++) {
		struct config_route *r = &cfg->routes[i];
		const char *missing = !r->port ? "listen" : !r->has_up ? "upstream" : !r->path && !r->stream ? "path" : NULL;
		/* a stream's host is only the TLS server name of a tls: upstream */
		const char *http_only = r->methods ? "methods" : r->path ? "path"
				      : r->host && r->up.kind != UP_TLS ? "host" : r->n_headers ? "header"
				      : r->tools.has_allow ? "tools" : r->tools.n_deny ? "deny_tools"
				      : r->tools.n_pins ? "pin" : r->tools.audit_args ? "audit_args"
				      : r->tools.has_res_allow ? "resources" : r->tools.n_res_deny ? "deny_resources"
				      : r->tools.has_pr_allow ? "prompts" : r->tools.n_pr_deny ? "deny_prompts" : NULL;
		if (strspn(r->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
		    strlen(r->name)) {
			config_fail(ctx, r->line, "[route %s]: route names are letters, digits, _ and -", r->name);
			return;
		}
		if (strncmp(r->name, "mcp-", 4) == 0) {
			/* the audit log names an [mcp] server's route mcp-SERVER */
			config_fail(ctx, r->line, "[route %s]: names beginning with mcp- are the [mcp] servers' routes",
			     r->name);
			return;
		}
		if (missing) {
			config_fail(ctx, r->line, "[route %s]: %s is required", r->name, missing);
			return;
		}
		if (r->stream && http_only) {
			/* a stream is not parsed: nothing could pin it or carry a header */
			config_fail(ctx, r->line, "[route %s]: %s is for HTTP routes: protocol = stream relays bytes "
				    "as they come, with nothing checked or added", r->name, http_only);
			return;
		}
		for (j = 0; j < i; j++)
			if (cfg->routes[j].port == r->port) {
				config_fail(ctx, r->line, "[route %s]: listen: port %u is also route %s's", r->name,
				     r->port, cfg->routes[j].name);
				return;
			}
		if ((r->up.kind == UP_TCP || r->up.kind == UP_TLS) &&
		    r->up.port == r->port) {
			/* the agent may connect to every listen port: one that is
			 * the upstream's too would let it past the bridge */
			config_fail(ctx, r->line, "[route %s]: listen port %u is the upstream's port too: the agent, "
				    "which may connect to it, could skip the bridge; pick another listen port",
				    r->name, r->port);
			return;
		}
		for (j = 0; j < r->n_headers; j++) {
			struct passed pass = { cfg, NULL };
			const char *bad = NULL;
			if (r->headers[j].env && envref_names(r->headers[j].value, passed_cb, &pass, &bad) == 1) {
				config_fail(ctx, r->line, "[route %s]: header %s takes ${%s}, which [agent] env_pass "
					    "gives the agent too: it could read the secret; take it out of env_pass",
					    r->name, r->headers[j].name, pass.name);
				return;
			}
		}
		if (bound_upstream_port(cfg, &r->up)) {
			config_fail(ctx, r->line, "[route %s]: the upstream's port %u is in [landlock] bind: the agent "
				    "could listen there while the upstream is down and be sent what the bridge adds; "
				    "take it out of bind", r->name, bound_upstream_port(cfg, &r->up));
			return;
		}
		if (!r->methods && !r->stream)
			r->methods = HTTP_DEFAULT_METHODS;
		if ((r->tls_ca || r->tls_pin) && r->up.kind != UP_TLS) {
			config_fail(ctx, r->line, "[route %s]: tls_ca and tls_pin need a tls: upstream", r->name);
			return;
		}
	}
	for (i = 0; i < cfg->n_files; i++) {
		struct config_file *f = &cfg->files[i];
		if (strspn(f->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
		    strlen(f->name) || !f->name[0]) {
			config_fail(ctx, f->line, "[file %s]: file names are letters, digits, ., _ and -", f->name);
			return;
		}
		if (!f->source || !f->target) {
			config_fail(ctx, f->line, "[file %s]: %s is required", f->name, !f->source ? "source" : "target");
			return;
		}
		for (j = 0; j < i; j++)
			if (strcmp(cfg->files[j].target, f->target) == 0 ||
			    strcmp(cfg->files[j].source, f->source) == 0) {
				config_fail(ctx, f->line, "[file %s]: same %s as [file %s]", f->name,
				     strcmp(cfg->files[j].target, f->target) == 0 ? "target" : "source",
				     cfg->files[j].name);
				return;
			}
		if (cfg->has_mcp && cfg->mcp_target && strcmp(cfg->mcp_target, f->target) == 0) {
			config_fail(ctx, f->line, "[file %s]: target is also [mcp] target", f->name);
			return;
		}
		if (cfg->has_mcp && cfg->mcp_source && strcmp(cfg->mcp_source, f->source) == 0) {
			config_fail(ctx, f->line, "[file %s]: source is also [mcp] source (read once)", f->name);
			return;
		}
		if (!cfg->user) {
			config_fail(ctx, f->line, "[file %s]: needs [agent] user (the file is written for that user)", f->name);
			return;
		}
	}
	if (cfg->has_mcp) {
		const char *missing = !cfg->mcp_source ? "source" : !cfg->mcp_target ? "target" : NULL;
		if (missing) {
			config_fail(ctx, cfg->mcp_line, "[mcp]: %s is required", missing);
			return;
		}
		if (bound_upstream_port(cfg, &cfg->mcp_up)) {
			config_fail(ctx, cfg->mcp_line, "[mcp]: the upstream's port %u is in [landlock] bind: the agent "
				    "could listen there while the upstream is down and be sent mcp.json's headers; "
				    "take it out of bind", bound_upstream_port(cfg, &cfg->mcp_up));
			return;
		}
	}
	/* the bridge's secrets are kept from the agent by its user: a root
	 * agent could read the files they come from (and, without [agent],
	 * would have ward's whole environment, mcp.json's ${VAR}s included) */
	if (!cfg->user && cfg->has_mcp) {
		config_fail(ctx, cfg->mcp_line, "[mcp]: needs [agent] user (as root the agent could read the "
			  "secrets the bridge keeps from it)");
		return;
	}
	for (i = 0; !cfg->user && i < cfg->n_routes; i++)
		if (cfg->routes[i].n_headers || cfg->routes[i].credential) {
			config_fail(ctx, cfg->routes[i].line, "[route %s]: %s needs [agent] user (as root the agent "
				  "could read the secrets the bridge keeps from it)", cfg->routes[i].name,
				  cfg->routes[i].n_headers ? "header" : "credential");
			return;
		}
	if (confining && !cfg->user && !cfg->allow_root) {
		int line = cfg->has_landlock ? ctx->section_line[SEC_LANDLOCK] : ctx->section_line[SEC_SECCOMP];
		config_fail(ctx, line, "[agent] user: required when [landlock] or [seccomp] confine the agent "
			  "(set user = NAME, or allow_root = yes to confine a root agent)");
		return;
	}
	take_agent_vars(ctx);
}

const struct ward_config config_default = {
	.log_format = LOG_TEXT,
	.log_level = LOG_INFO,
	.grace_ms = 10000,
	.restart = RESTART_NEVER,
	.restart_delay_ms = 250,
	.restart_limit = 5,
	.rewrite = { [0 ... WARD_NSIG - 1] = -1 },
	.forward_to = FORWARD_CHILD,
	.umask = 022,
	.mcp_port = 7800,
	.proxy = { .methods = 1u << HTTP_CONNECT,
		   .max_tunnels = PROXY_DEFAULT_TUNNELS,
		   .max_bytes = PROXY_DEFAULT_BYTES,
		   .ask_timeout_s = PROXY_DEFAULT_ASK_TIMEOUT_S,
		   .ask_rate = PROXY_DEFAULT_ASK_RATE },
};

void config_defaults(struct ward_config *cfg)
{
	*cfg = config_default;
}

int config_load_stream(struct ward_config *cfg, FILE *f, const char *name)
{
	struct parse_ctx ctx;
	int rc;

	memset(&ctx, 0, sizeof ctx);
	ctx.cfg = cfg;
	ctx.f = f;
	ctx.name = name;
	rc = ini_parse_stream(reader, &ctx, handler, &ctx);
	if (rc > 0 && (!ctx.err_line || rc < ctx.err_line)) {
		ctx.err_line = 0;
		config_fail(&ctx, rc, "syntax: expected 'key = value', '[section]' or a comment");
	} else if (rc < 0 && !ctx.err_line) {
		config_fail(&ctx, 0, "could not parse (out of memory)");
	}
	if (!ctx.err_line && ferror(f))
		config_fail(&ctx, ctx.line, "read error");
	if (!ctx.err_line)
		validate(&ctx);
	free(ctx.command_text);
	if (ctx.err_line) {
		log_error("%s", ctx.err);
		return -1;
	}
	return 0;
}

int config_load(struct ward_config *cfg, const char *path)
{
	FILE *f = fopen(path, "re");
	int rc;

	if (!f) {
		log_error("%s: cannot open config: %s", path, strerror(errno));
		return -1;
	}
	rc = config_load_stream(cfg, f, path);
	fclose(f);
	if (rc == 0) {
		cfg->path = strdup(path);
		if (!cfg->path)
			return -1;
	}
	return rc;
}

