#define _GNU_SOURCE
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../mcp-bridge/http.h"
#include "../mcp-bridge/tls.h"
#include "parse.h"

/* Sections ward knows. The ones whose layer this build cannot put in force
 * yet are refused rather than silently ignored: a config that asks for
 * confinement must never run unconfined. */
enum section {
	SEC_NONE = -1,
	SEC_WARD,
	SEC_SUPERVISE,
	SEC_AGENT,
	SEC_LANDLOCK,
	SEC_SECCOMP,
	SEC_MCP,
	SEC_ROUTE,
	SEC_FILE,
	SEC_UNKNOWN,
};

static const struct {
	const char *name;
	int named; /* "[route NAME]" */
	int enforced;
} sections[] = {
	[SEC_WARD] = { "ward", 0, 1 },	   [SEC_SUPERVISE] = { "supervise", 0, 1 },
	[SEC_AGENT] = { "agent", 0, 1 },   [SEC_LANDLOCK] = { "landlock", 0, 1 },
	[SEC_SECCOMP] = { "seccomp", 0, 1 }, [SEC_MCP] = { "mcp", 0, 1 },
	[SEC_ROUTE] = { "route", 1, 1 },   [SEC_FILE] = { "file", 1, 1 },
};

#define N_SECTIONS ((int)(sizeof sections / sizeof sections[0]))

struct parse_ctx;
typedef int (*setter)(struct parse_ctx *ctx, const char *key, const char *value, const char **why);

struct key_def {
	enum section section;
	const char *key; /* a trailing '_' matches a prefix: "rlimit_" */
	setter set;
	int repeatable;
};

struct parse_ctx {
	struct ward_config *cfg;
	FILE *f;
	const char *name;
	int line;
	int err_line; /* 0: no error yet */
	char err[600];
	int key_line[48]; /* first line each single-valued key was set on */
	const char *section; /* the current one, for [route NAME] */
	int continued;	     /* this line is indented: it continues the value above */
	int key_seen;	     /* a key came since the last section header (inih's prev_name) */
	char *command_text;  /* [agent] command as written, continuation lines joined */
	int command_line;
	int section_line[SEC_UNKNOWN];
};

static void fail(struct parse_ctx *ctx, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct parse_ctx *ctx, int line, const char *fmt, ...)
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

/* Finds or creates the route NAME (created with the line of its header). */
static struct config_route *route_named(struct ward_config *cfg, const char *name, size_t len, int line)
{
	struct config_route *nv;
	int i;

	for (i = 0; i < cfg->n_routes; i++)
		if (strlen(cfg->routes[i].name) == len && strncmp(cfg->routes[i].name, name, len) == 0)
			return &cfg->routes[i];
	nv = realloc(cfg->routes, (size_t)(cfg->n_routes + 1) * sizeof *nv);
	if (!nv)
		return NULL;
	cfg->routes = nv;
	memset(&nv[cfg->n_routes], 0, sizeof *nv);
	nv[cfg->n_routes].name = strndup(name, len);
	nv[cfg->n_routes].line = line;
	return nv[cfg->n_routes].name ? &nv[cfg->n_routes++] : NULL;
}

/* Finds or creates the file NAME (created with the line of its header). */
static struct config_file *file_named(struct ward_config *cfg, const char *name, size_t len, int line)
{
	struct config_file *nv;
	int i;

	for (i = 0; i < cfg->n_files; i++)
		if (strlen(cfg->files[i].name) == len && strncmp(cfg->files[i].name, name, len) == 0)
			return &cfg->files[i];
	nv = realloc(cfg->files, (size_t)(cfg->n_files + 1) * sizeof *nv);
	if (!nv)
		return NULL;
	cfg->files = nv;
	memset(&nv[cfg->n_files], 0, sizeof *nv);
	nv[cfg->n_files].name = strndup(name, len);
	nv[cfg->n_files].line = line;
	nv[cfg->n_files].mode = 0600;
	return nv[cfg->n_files].name ? &nv[cfg->n_files++] : NULL;
}

/* Returns 0 if the section may be used, else records why not. */
static int check_section(struct parse_ctx *ctx, const char *name, size_t len)
{
	enum section s = section_kind(name, len);

	if (s == SEC_UNKNOWN) {
		fail(ctx, ctx->line, "[%.*s]: unknown section (known: ward, supervise, agent, "
			  "landlock, seccomp, mcp, route NAME, file NAME)", (int)len, name);
		return -1;
	}
	if (!sections[s].enforced) {
		fail(ctx, ctx->line, "[%.*s]: this build of ward cannot put this layer in force "
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
			fail(ctx, ctx->line, "out of memory");
			return -1;
		}
	} else if (s == SEC_FILE) {
		if (!file_named(ctx->cfg, name + 5, len - 5, ctx->line)) {
			fail(ctx, ctx->line, "out of memory");
			return -1;
		}
	} else if (s == SEC_SECCOMP && !ctx->cfg->has_seccomp) {
		ctx->cfg->has_seccomp = 1;
		ctx->cfg->seccomp.enabled = 1;
		ctx->section_line[SEC_SECCOMP] = ctx->line;
	}
	return 0;
}

/* ---- setters ---------------------------------------------------------- */

static int set_log_format(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (strcmp(v, "text") == 0)
		ctx->cfg->log_format = LOG_TEXT;
	else if (strcmp(v, "json") == 0)
		ctx->cfg->log_format = LOG_JSON;
	else
		return *why = "expected text or json", -1;
	return 0;
}

static int set_log_level(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	int i;

	(void)k;
	for (i = 0; i < 4; i++) {
		if (strcmp(v, names[i]) == 0) {
			ctx->cfg->log_level = (enum log_level)i;
			return 0;
		}
	}
	*why = "expected error, warn, info or debug";
	return -1;
}

static int set_grace(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	return parse_duration(v, &ctx->cfg->grace_ms, why);
}

static int set_restart(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (strcmp(v, "never") == 0)
		ctx->cfg->restart = RESTART_NEVER;
	else if (strcmp(v, "on-failure") == 0)
		ctx->cfg->restart = RESTART_ON_FAILURE;
	else if (strcmp(v, "always") == 0)
		ctx->cfg->restart = RESTART_ALWAYS;
	else
		return *why = "expected never, on-failure or always", -1;
	return 0;
}

static int set_restart_delay(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	uint64_t ms;

	(void)k;
	if (parse_duration(v, &ms, why) != 0)
		return -1;
	if (ms > 30000)
		return *why = "at most 30s (the delay doubles up to 30s)", -1;
	ctx->cfg->restart_delay_ms = ms;
	return 0;
}

static int set_restart_limit(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	uint64_t n;

	(void)k;
	if (parse_uint(v, 0, 10000, &n, why) != 0)
		return -1;
	ctx->cfg->restart_limit = (unsigned)n;
	return 0;
}

static int set_rewrite(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	int from, to;

	(void)k;
	if (parse_rewrite(v, &from, &to, why) != 0)
		return -1;
	if (ctx->cfg->rewrite[from] != -1)
		return *why = "this signal is already rewritten", -1;
	ctx->cfg->rewrite[from] = to;
	return 0;
}

static int set_forward_to(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (strcmp(v, "child") == 0)
		ctx->cfg->forward_to = FORWARD_CHILD;
	else if (strcmp(v, "group") == 0)
		ctx->cfg->forward_to = FORWARD_GROUP;
	else
		return *why = "expected child or group", -1;
	return 0;
}

/* A long command may go on over indented lines; they are joined with a
 * blank before the words are split. */
static int set_command(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	char *text;

	(void)k;
	(void)why;
	if (ctx->continued && ctx->command_text) {
		if (asprintf(&text, "%s %s", ctx->command_text, v) < 0)
			return *why = "out of memory", -1;
	} else {
		text = strdup(v);
		ctx->command_line = ctx->line;
	}
	if (!text)
		return *why = "out of memory", -1;
	free(ctx->command_text);
	ctx->command_text = text;
	return 0; /* split once the last continuation line is in (validate) */
}

static int set_cwd(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (v[0] != '/')
		return *why = "must be an absolute path", -1;
	ctx->cfg->cwd = strdup(v);
	return ctx->cfg->cwd ? 0 : (*why = "out of memory", -1);
}

static int set_umask(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (parse_umask(v, &ctx->cfg->umask, why) != 0)
		return -1;
	ctx->cfg->umask_set = 1;
	return 0;
}

static int env_name_len(const char *s)
{
	int n = 0;

	if (!isalpha((unsigned char)s[0]) && s[0] != '_')
		return 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	return n;
}

static int env_listed(char *const *list, int n, const char *name, size_t len)
{
	int i;

	for (i = 0; i < n; i++)
		if (strncmp(list[i], name, len) == 0 && (list[i][len] == '=' || list[i][len] == '\0'))
			return 1;
	return 0;
}

static int set_env(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	struct ward_config *cfg = ctx->cfg;
	int len = env_name_len(v);

	(void)k;
	if (len == 0 || v[len] != '=')
		return *why = "expected NAME=VALUE", -1;
	if (env_listed(cfg->env, cfg->n_env, v, (size_t)len))
		return *why = "variable already set by an earlier env line", -1;
	if (cfg->n_env >= WARD_MAX_ENV)
		return *why = "too many env lines", -1;
	cfg->env[cfg->n_env] = strdup(v);
	if (!cfg->env[cfg->n_env])
		return *why = "out of memory", -1;
	cfg->n_env++;
	return 0;
}

static int set_env_pass(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	struct ward_config *cfg = ctx->cfg;
	const char *p = v;

	(void)k;
	while (*p) {
		int len = env_name_len(p);
		if (len == 0 || (p[len] != '\0' && p[len] != ' ' && p[len] != '\t'))
			return *why = "expected variable names separated by blanks", -1;
		if (!env_listed(cfg->env_pass, cfg->n_env_pass, p, (size_t)len)) {
			if (cfg->n_env_pass >= WARD_MAX_ENV)
				return *why = "too many env_pass names", -1;
			cfg->env_pass[cfg->n_env_pass] = strndup(p, (size_t)len);
			if (!cfg->env_pass[cfg->n_env_pass])
				return *why = "out of memory", -1;
			cfg->n_env_pass++;
		}
		p += len;
		while (*p == ' ' || *p == '\t')
			p++;
	}
	return 0;
}

static int set_rlimit(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	struct ward_config *cfg = ctx->cfg;
	struct config_rlimit rl;
	int i;

	if (rlimit_resource(k + strlen("rlimit_"), &rl.resource) != 0)
		return *why = "unknown resource (as, core, cpu, data, fsize, locks, memlock, "
			      "msgqueue, nice, nofile, nproc, rss, rtprio, rttime, sigpending, stack)",
		       -1;
	for (i = 0; i < cfg->n_rlimits; i++)
		if (cfg->rlimits[i].resource == rl.resource)
			return *why = "set twice", -1;
	if (parse_rlimit(v, &rl.soft, &rl.hard, why) != 0)
		return -1;
	cfg->rlimits[cfg->n_rlimits++] = rl;
	return 0;
}

static int push(char ***v, int *n, const char *s, size_t len)
{
	char **nv = realloc(*v, (size_t)(*n + 2) * sizeof **v);

	if (!nv)
		return -1;
	*v = nv;
	nv[*n] = strndup(s, len);
	if (!nv[*n])
		return -1;
	nv[++*n] = NULL;
	return 0;
}

static int set_evidence(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (v[0] != '/')
		return *why = "must be an absolute path", -1;
	ctx->cfg->evidence = strdup(v);
	return ctx->cfg->evidence ? 0 : (*why = "out of memory", -1);
}

static int set_user(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (strlen(v) >= 64 || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789_.-:$") != strlen(v))
		return *why = "expected a user name, UID or UID:GID", -1;
	ctx->cfg->user = strdup(v);
	ctx->cfg->user_line = ctx->line;
	return ctx->cfg->user ? 0 : (*why = "out of memory", -1);
}

static int set_allow_root(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	return parse_bool(v, &ctx->cfg->allow_root, why);
}

static int set_ll_mode(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (strcmp(v, "hard_requirement") == 0)
		ctx->cfg->landlock.mode = LL_HARD;
	else if (strcmp(v, "best_effort") == 0)
		ctx->cfg->landlock.mode = LL_BEST_EFFORT;
	else if (strcmp(v, "off") == 0)
		ctx->cfg->landlock.mode = LL_OFF;
	else
		return *why = "expected hard_requirement, best_effort or off", -1;
	return 0;
}

/* A list of absolute paths, split like a command line (quotes allowed). */
static int set_paths(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	struct ll_policy *ll = &ctx->cfg->landlock;
	char ***list = strcmp(k, "read") == 0 ? &ll->read : strcmp(k, "write") == 0 ? &ll->write : &ctx->cfg->writable;
	int *n = list == &ll->read ? &ll->n_read : list == &ll->write ? &ll->n_write : &ctx->cfg->n_writable;
	char **words;
	int argc, i, rc = 0;

	if (!*v)
		return 0;
	if (list == &ctx->cfg->writable && !ctx->cfg->writable_line)
		ctx->cfg->writable_line = ctx->line;
	if (split_words(v, &words, &argc, why) != 0)
		return -1;
	for (i = 0; i < argc && rc == 0; i++) {
		/* "." is the directory the runtime starts ward in (docker -w, the
		 * OCI cwd): the workspace, at the same absolute path */
		if (words[i][0] != '/' && strcmp(words[i], ".") != 0)
			rc = (*why = "paths must be absolute (or . for the start directory)", -1);
		else if (push(list, n, words[i], strlen(words[i])) != 0)
			rc = (*why = "out of memory", -1);
	}
	free(words);
	return rc;
}

static int set_ports(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	struct ll_policy *ll = &ctx->cfg->landlock;

	if (strcmp(k, "connect") == 0)
		return ll_parse_ports(v, &ll->connect, &ll->n_connect, why);
	return ll_parse_ports(v, &ll->bind, &ll->n_bind, why);
}

static int set_scope(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	const char *p = v;

	(void)k;
	while (*p) {
		size_t len = strcspn(p, " \t,");
		if ((len == 8 && strncmp(p, "abstract", 8) == 0) || (len == 13 && strncmp(p, "abstract_unix", 13) == 0))
			ctx->cfg->landlock.scopes |= LL_SCOPE_ABSTRACT_UNIX;
		else if (len == 6 && strncmp(p, "signal", 6) == 0)
			ctx->cfg->landlock.scopes |= LL_SCOPE_SIGNAL;
		else if (len)
			return *why = "expected abstract and/or signal", -1;
		p += len;
		p += strspn(p, " \t,");
	}
	return 0;
}

static int set_sc_mode(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (strcmp(v, "default") == 0)
		ctx->cfg->seccomp.enabled = 1;
	else if (strcmp(v, "off") == 0)
		ctx->cfg->seccomp.enabled = 0;
	else
		return *why = "expected default or off", -1;
	return 0;
}

/* deny: system calls libseccomp knows; allow: names of the default list. */
static int set_sc_names(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	struct sc_policy *sc = &ctx->cfg->seccomp;
	int deny = strcmp(k, "deny") == 0;
	const char *p = v;
	char name[64];

	while (*p) {
		size_t len = strcspn(p, " \t,");
		if (len) {
			if (len >= sizeof name)
				return *why = "system call name too long", -1;
			memcpy(name, p, len);
			name[len] = '\0';
			if (deny && !sc_known_syscall(name) && !sc_optin_has(name))
				return *why = "unknown system call (or group: udp)", -1;
			if (!deny && !sc_default_has(name))
				return *why = "not in the default deny list (see ward.conf(5))", -1;
			/* its flags are in memory a filter cannot read: allowed, it
			 * would create namespaces; refused, libc falls back to clone */
			if (!deny && strcmp(name, "clone3") == 0)
				return *why = "cannot be allowed: a filter cannot see its flags, so it would allow "
					      "new namespaces (libc falls back to clone, which is filtered)", -1;
			if (deny ? push(&sc->deny, &sc->n_deny, name, len)
				 : push(&sc->allow, &sc->n_allow, name, len))
				return *why = "out of memory", -1;
		}
		p += len;
		p += strspn(p, " \t,");
	}
	return 0;
}

static int set_bridge_user(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (strlen(v) >= 64 || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789_.-:$") != strlen(v))
		return *why = "expected a user name, UID or UID:GID", -1;
	ctx->cfg->bridge_user = strdup(v);
	ctx->cfg->bridge_user_line = ctx->line;
	return ctx->cfg->bridge_user ? 0 : (*why = "out of memory", -1);
}

static int set_source(char **dst, const char *v, const char **why);

/* The route a [route NAME] key belongs to; its header created it. */
static struct config_route *route_of(struct parse_ctx *ctx)
{
	return route_named(ctx->cfg, ctx->section + strlen("route "),
			   strlen(ctx->section + strlen("route ")), ctx->line);
}

static int set_route(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	struct config_route *r = route_of(ctx);
	uint64_t port;

	if (!r)
		return *why = "out of memory", -1;
	if (strcmp(k, "listen") == 0) {
		if (r->port)
			return *why = "set twice in this route", -1;
		if (strncmp(v, "127.0.0.1:", 10) != 0 || parse_uint(v + 10, 1, 65535, &port, why) != 0)
			return *why = "expected 127.0.0.1:PORT (the bridge listens on loopback only)", -1;
		r->port = (unsigned)port;
	} else if (strcmp(k, "upstream") == 0) {
		if (r->has_up)
			return *why = "set twice in this route", -1;
		if (upstream_parse(v, &r->up, why) != 0)
			return -1;
		r->has_up = 1;
	} else if (strcmp(k, "methods") == 0) {
		if (r->methods)
			return *why = "set twice in this route", -1;
		if (http_methods(v, &r->methods) != 0)
			return *why = "expected HTTP methods like POST GET DELETE", -1;
	} else if (strcmp(k, "path") == 0) {
		if (r->path)
			return *why = "set twice in this route", -1;
		if (!http_target_ok(v))
			return *why = "expected an origin-form target like /mcp or /v1/ (no dot segments or "
				      "encoded separators: the bridge would refuse every request)", -1;
		r->path = strdup(v);
	} else if (strcmp(k, "tls_ca") == 0) {
		if (r->tls_ca)
			return *why = "set twice in this route", -1;
		if (v[0] != '/')
			return *why = "expected an absolute path to a PEM bundle", -1;
		r->tls_ca = strdup(v);
	} else if (strcmp(k, "tls_pin") == 0) {
		unsigned char pin[32];
		if (r->tls_pin)
			return *why = "set twice in this route", -1;
		if (tls_parse_pin(v, pin) != 0)
			return *why = "expected sha256: and 64 hex digits (the certificate's SHA-256)", -1;
		r->tls_pin = strdup(v);
	} else if (strcmp(k, "host") == 0) {
		if (r->host)
			return *why = "set twice in this route", -1;
		char name[256];
		const char *b;
		for (b = v; *b; b++)
			if ((unsigned char)*b <= ' ' || *b == 0x7f || *b == '/' || *b == '@')
				break;
		if (*b || host_server_name(v, name, sizeof name) != 0)
			return *why = "expected HOST, HOST:PORT or [IPV6]:PORT", -1;
		r->host = strdup(v);
	} else {
		const char *colon = strchr(v, ':'), *val;
		char **nv, *one;
		if (!colon || colon == v || strcspn(v, " \t") < (size_t)(colon - v) || !colon[1])
			return *why = "expected Name: value (value may be @PATH or @fd:N)", -1;
		if (http_header_reserved(v, (size_t)(colon - v)))
			return *why = "the bridge writes this header itself (framing, Host, hop-by-hop)", -1;
		val = colon + 1 + strspn(colon + 1, " \t");
		if (*val == '@') {
			/* read at start: checked as a source now, written as ward
			 * compares it (@fd:03 is @fd:3) */
			char *src;
			if (set_source(&src, val + 1, why) != 0)
				return *why = "expected Name: @fd:N (N >= 3) or Name: @/absolute/path", -1;
			if (asprintf(&one, "%.*s: @%s", (int)(colon - v), v, src) < 0)
				one = NULL;
			free(src);
		} else {
			one = strdup(v);
		}
		if (!one)
			return *why = "out of memory", -1;
		nv = realloc(r->headers, (size_t)(r->n_headers + 1) * sizeof *nv);
		if (!nv) {
			free(one);
			return *why = "out of memory", -1;
		}
		r->headers = nv;
		nv[r->n_headers] = one;
		r->n_headers++;
	}
	return 0;
}

/* An absolute file path with no //, . or .. segment and no trailing /:
 * two spellings of one file must not pass the overlap checks. */
static int plain_file_path(const char *v)
{
	size_t vl = strlen(v);

	return v[0] == '/' && v[vl - 1] != '/' && !strstr(v, "/../") && !strstr(v, "/./") && !strstr(v, "//") &&
	       !(vl >= 2 && strcmp(v + vl - 2, "/.") == 0) && !(vl >= 3 && strcmp(v + vl - 3, "/..") == 0);
}

/* "fd:N" (N >= 3, written as ward will compare it: fd:03 is fd:3) or an
 * absolute path. */
static int set_source(char **dst, const char *v, const char **why)
{
	uint64_t n;

	if (strncmp(v, "fd:", 3) != 0 && v[0] != '/')
		return *why = "expected fd:N or an absolute path", -1;
	if (strncmp(v, "fd:", 3) == 0) {
		if (parse_uint(v + 3, 3, 65535, &n, why) != 0)
			return *why = "expected fd:N with N >= 3", -1;
		if (asprintf(dst, "fd:%u", (unsigned)n) < 0)
			*dst = NULL;
	} else {
		*dst = strdup(v);
	}
	return *dst ? 0 : (*why = "out of memory", -1);
}

static int set_file(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	const char *name = ctx->section + strlen("file ");
	struct config_file *f = file_named(ctx->cfg, name, strlen(name), ctx->line);

	if (!f)
		return *why = "out of memory", -1;
	if (strcmp(k, "source") == 0) {
		if (f->source)
			return *why = "set twice in this file", -1;
		return set_source(&f->source, v, why);
	}
	if (strcmp(k, "target") == 0) {
		if (f->target)
			return *why = "set twice in this file", -1;
		if (!plain_file_path(v))
			return *why = "expected an absolute, normalised file path", -1;
		f->target = strdup(v);
		return f->target ? 0 : (*why = "out of memory", -1);
	}
	/* mode */
	if (f->mode_set)
		return *why = "set twice in this file", -1;
	{
		char *end;
		unsigned long m = strtoul(v, &end, 8);
		if (*end || !*v || v[0] == '-' || m > 0777)
			return *why = "expected an octal mode like 0600 (no set-id or sticky bits)", -1;
		if (m & 0022)
			return *why = "group or other write access makes the file no longer private", -1;
		f->mode = (unsigned)m;
		f->mode_set = 1;
	}
	return 0;
}

static int set_mcp(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	struct ward_config *cfg = ctx->cfg;
	uint64_t port;

	if (strcmp(k, "source") == 0) {
		free(cfg->mcp_source);
		cfg->mcp_source = NULL;
		return set_source(&cfg->mcp_source, v, why);
	} else if (strcmp(k, "target") == 0) {
		if (!plain_file_path(v))
			return *why = "expected an absolute, normalised file path", -1;
		free(cfg->mcp_target);
		cfg->mcp_target = strdup(v);
	} else if (strcmp(k, "upstream") == 0) {
		if (upstream_parse(v, &cfg->mcp_up, why) != 0)
			return -1;
		cfg->mcp_has_up = 1;
	} else if (strcmp(k, "required") == 0) {
		int b;
		if (parse_bool(v, &b, why) != 0)
			return -1;
		cfg->mcp_optional = !b;
	} else {
		if (strncmp(v, "127.0.0.1:", 10) != 0 || parse_uint(v + 10, 1, 65535, &port, why) != 0)
			return *why = "expected 127.0.0.1:PORT (the first port; one per HTTP server)", -1;
		cfg->mcp_port = (unsigned)port;
	}
	return 0;
}

static const struct key_def keys[] = {
	{ SEC_WARD, "log_format", set_log_format, 0 },
	{ SEC_WARD, "log_level", set_log_level, 0 },
	{ SEC_WARD, "evidence", set_evidence, 0 },
	{ SEC_WARD, "bridge_user", set_bridge_user, 0 },
	{ SEC_SUPERVISE, "grace", set_grace, 0 },
	{ SEC_SUPERVISE, "restart", set_restart, 0 },
	{ SEC_SUPERVISE, "restart_delay", set_restart_delay, 0 },
	{ SEC_SUPERVISE, "restart_limit", set_restart_limit, 0 },
	{ SEC_SUPERVISE, "signal_rewrite", set_rewrite, 1 },
	{ SEC_SUPERVISE, "forward_to", set_forward_to, 0 },
	{ SEC_AGENT, "command", set_command, 0 },
	{ SEC_AGENT, "cwd", set_cwd, 0 },
	{ SEC_AGENT, "user", set_user, 0 },
	{ SEC_AGENT, "allow_root", set_allow_root, 0 },
	{ SEC_AGENT, "umask", set_umask, 0 },
	{ SEC_AGENT, "env", set_env, 1 },
	{ SEC_AGENT, "env_pass", set_env_pass, 1 },
	{ SEC_AGENT, "rlimit_", set_rlimit, 1 },
	{ SEC_AGENT, "writable", set_paths, 1 },
	{ SEC_LANDLOCK, "mode", set_ll_mode, 0 },
	{ SEC_LANDLOCK, "read", set_paths, 1 },
	{ SEC_LANDLOCK, "write", set_paths, 1 },
	{ SEC_LANDLOCK, "connect", set_ports, 1 },
	{ SEC_LANDLOCK, "bind", set_ports, 1 },
	{ SEC_LANDLOCK, "scope", set_scope, 0 },
	{ SEC_SECCOMP, "mode", set_sc_mode, 0 },
	{ SEC_SECCOMP, "deny", set_sc_names, 1 },
	{ SEC_SECCOMP, "allow", set_sc_names, 1 },
	{ SEC_MCP, "source", set_mcp, 0 },
	{ SEC_MCP, "target", set_mcp, 0 },
	{ SEC_MCP, "upstream", set_mcp, 0 },
	{ SEC_MCP, "listen", set_mcp, 0 },
	{ SEC_MCP, "required", set_mcp, 0 },
	/* route keys may repeat across routes; set_route refuses repeats in one */
	{ SEC_ROUTE, "listen", set_route, 1 },
	{ SEC_ROUTE, "upstream", set_route, 1 },
	{ SEC_ROUTE, "methods", set_route, 1 },
	{ SEC_ROUTE, "path", set_route, 1 },
	{ SEC_ROUTE, "host", set_route, 1 },
	{ SEC_ROUTE, "header", set_route, 1 },
	{ SEC_ROUTE, "tls_ca", set_route, 1 },
	{ SEC_ROUTE, "tls_pin", set_route, 1 },
	/* like route keys: set_file refuses repeats in one file */
	{ SEC_FILE, "source", set_file, 1 },
	{ SEC_FILE, "target", set_file, 1 },
	{ SEC_FILE, "mode", set_file, 1 },
};

#define N_KEYS (sizeof keys / sizeof keys[0])
_Static_assert(N_KEYS <= sizeof ((struct parse_ctx *)0)->key_line / sizeof(int),
	       "key_line too small");

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
		fail(ctx, ctx->line, "%s: key outside any section; put it under [ward], "
			  "[supervise], [agent], ...", name);
		return 0;
	}
	if (check_section(ctx, section, strlen(section)) != 0)
		return 0;
	ctx->section = section;
	for (i = 0; i < N_KEYS; i++) {
		size_t kl = strlen(keys[i].key);
		int prefix = keys[i].key[kl - 1] == '_';
		if (keys[i].section != sec)
			continue;
		if (prefix ? strncmp(name, keys[i].key, kl) != 0 : strcmp(name, keys[i].key) != 0)
			continue;
		if (!keys[i].repeatable && !(ctx->continued && keys[i].set == set_command)) {
			if (ctx->key_line[i]) {
				fail(ctx, ctx->line, "%s: set twice (first on line %d); an indented "
					  "line continues the value above it", name, ctx->key_line[i]);
				return 0;
			}
			ctx->key_line[i] = ctx->line;
		}
		if (!*value && (!keys[i].repeatable || sec == SEC_ROUTE || sec == SEC_FILE)) {
			fail(ctx, ctx->line, "%s: empty value", name);
			return 0;
		}
		if (keys[i].set(ctx, name, value, &why) != 0) {
			fail(ctx, ctx->line, "%s: '%s': %s", name, value, why);
			return 0;
		}
		return 1;
	}
	fail(ctx, ctx->line, "%s: unknown key in [%s]", name, section);
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
		fail(ctx, ctx->line, "line longer than %d characters; split a list over "
			  "repeated keys", num - 2);
		str[0] = '\0';
		return str;
	}
	if (nul) {
		fail(ctx, ctx->line, "NUL byte in the line");
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
		fail(ctx, ctx->line, "a section header starts its line (this one is indented)");
		str[0] = '\0';
		return str;
	}
	if (*q == '[' && !ctx->continued) {
		char *end = strchr(q, ']');
		ctx->key_seen = 0;
		if (end && end - q - 1 >= INIH_MAX_NAME) {
			fail(ctx, ctx->line, "section name longer than %d characters", INIH_MAX_NAME - 1);
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
			fail(ctx, ctx->line, "key longer than %d characters", INIH_MAX_NAME - 1);
			str[0] = '\0';
			return str;
		}
	}
	return str;
}

/* Rules that span keys, checked once the whole file is read. */
static void validate(struct parse_ctx *ctx)
{
	struct ward_config *cfg = ctx->cfg;
	int confining = (cfg->has_landlock && cfg->landlock.mode != LL_OFF) ||
			(cfg->has_seccomp && cfg->seccomp.enabled);

	const char *why = NULL;
	int i, j, argc;

	if (ctx->command_text && split_words(ctx->command_text, &cfg->command, &argc, &why) != 0) {
		fail(ctx, ctx->command_line, "command: '%s': %s", ctx->command_text, why);
		return;
	}
	for (i = 0; i < cfg->n_routes; i++) {
		struct config_route *r = &cfg->routes[i];
		const char *missing = !r->port ? "listen" : !r->has_up ? "upstream" : !r->path ? "path" : NULL;
		if (strspn(r->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
		    strlen(r->name)) {
			fail(ctx, r->line, "[route %s]: route names are letters, digits, _ and -", r->name);
			return;
		}
		if (strncmp(r->name, "mcp-", 4) == 0) {
			/* the audit log names an [mcp] server's route mcp-SERVER */
			fail(ctx, r->line, "[route %s]: names beginning with mcp- are the [mcp] servers' routes",
			     r->name);
			return;
		}
		if (missing) {
			fail(ctx, r->line, "[route %s]: %s is required", r->name, missing);
			return;
		}
		for (j = 0; j < i; j++)
			if (cfg->routes[j].port == r->port) {
				fail(ctx, r->line, "[route %s]: listen: port %u is also route %s's", r->name,
				     r->port, cfg->routes[j].name);
				return;
			}
		if (!r->methods)
			r->methods = (1u << HTTP_POST) | (1u << HTTP_GET) | (1u << HTTP_DELETE);
		if ((r->tls_ca || r->tls_pin) && r->up.kind != UP_TLS) {
			fail(ctx, r->line, "[route %s]: tls_ca and tls_pin need a tls: upstream", r->name);
			return;
		}
	}
	for (i = 0; i < cfg->n_files; i++) {
		struct config_file *f = &cfg->files[i];
		if (strspn(f->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
		    strlen(f->name) || !f->name[0]) {
			fail(ctx, f->line, "[file %s]: file names are letters, digits, ., _ and -", f->name);
			return;
		}
		if (!f->source || !f->target) {
			fail(ctx, f->line, "[file %s]: %s is required", f->name, !f->source ? "source" : "target");
			return;
		}
		for (j = 0; j < i; j++)
			if (strcmp(cfg->files[j].target, f->target) == 0 ||
			    strcmp(cfg->files[j].source, f->source) == 0) {
				fail(ctx, f->line, "[file %s]: same %s as [file %s]", f->name,
				     strcmp(cfg->files[j].target, f->target) == 0 ? "target" : "source",
				     cfg->files[j].name);
				return;
			}
		if (cfg->has_mcp && cfg->mcp_target && strcmp(cfg->mcp_target, f->target) == 0) {
			fail(ctx, f->line, "[file %s]: target is also [mcp] target", f->name);
			return;
		}
		if (cfg->has_mcp && cfg->mcp_source && strcmp(cfg->mcp_source, f->source) == 0) {
			fail(ctx, f->line, "[file %s]: source is also [mcp] source (read once)", f->name);
			return;
		}
		if (!cfg->user) {
			fail(ctx, f->line, "[file %s]: needs [agent] user (the file is written for that user)", f->name);
			return;
		}
	}
	if (cfg->has_mcp) {
		const char *missing = !cfg->mcp_source ? "source" : !cfg->mcp_target ? "target"
				    : !cfg->mcp_has_up ? "upstream" : NULL;
		if (missing) {
			fail(ctx, cfg->mcp_line, "[mcp]: %s is required", missing);
			return;
		}
	}
	/* the bridge's secrets are kept from the agent by its user: a root
	 * agent could read the files they come from (and, without [agent],
	 * would have ward's whole environment, mcp.json's ${VAR}s included) */
	if (!cfg->user && cfg->has_mcp) {
		fail(ctx, cfg->mcp_line, "[mcp]: needs [agent] user (as root the agent could read the "
			  "secrets the bridge keeps from it)");
		return;
	}
	for (i = 0; !cfg->user && i < cfg->n_routes; i++)
		if (cfg->routes[i].n_headers) {
			fail(ctx, cfg->routes[i].line, "[route %s]: header needs [agent] user (as root the agent "
				  "could read the secrets the bridge keeps from it)", cfg->routes[i].name);
			return;
		}
	if (confining && !cfg->user && !cfg->allow_root) {
		int line = cfg->has_landlock ? ctx->section_line[SEC_LANDLOCK] : ctx->section_line[SEC_SECCOMP];
		fail(ctx, line, "[agent] user: required when [landlock] or [seccomp] confine the agent "
			  "(set user = NAME, or allow_root = yes to confine a root agent)");
	}
}

void config_defaults(struct ward_config *cfg)
{
	int i;

	memset(cfg, 0, sizeof *cfg);
	cfg->log_format = LOG_TEXT;
	cfg->log_level = LOG_INFO;
	cfg->grace_ms = 10000;
	cfg->restart = RESTART_NEVER;
	cfg->restart_delay_ms = 250;
	cfg->restart_limit = 5;
	for (i = 0; i < WARD_NSIG; i++)
		cfg->rewrite[i] = -1;
	cfg->forward_to = FORWARD_CHILD;
	cfg->umask = 022;
	cfg->mcp_port = 7800;
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
		fail(&ctx, rc, "syntax: expected 'key = value', '[section]' or a comment");
	} else if (rc < 0 && !ctx.err_line) {
		fail(&ctx, 0, "could not parse (out of memory)");
	}
	if (!ctx.err_line && ferror(f))
		fail(&ctx, ctx.line, "read error");
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

static void free_strv(char **v, int n)
{
	int i;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
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
	free(cfg->evidence);
	free(cfg->user);
	free_strv(cfg->landlock.read, cfg->landlock.n_read);
	free_strv(cfg->landlock.write, cfg->landlock.n_write);
	free_strv(cfg->writable, cfg->n_writable);
	free(cfg->landlock.connect);
	free(cfg->landlock.bind);
	free_strv(cfg->seccomp.deny, cfg->seccomp.n_deny);
	free_strv(cfg->seccomp.allow, cfg->seccomp.n_allow);
	for (i = 0; i < cfg->n_routes; i++) {
		free(cfg->routes[i].name);
		free(cfg->routes[i].path);
		free(cfg->routes[i].host);
		free(cfg->routes[i].tls_ca);
		free(cfg->routes[i].tls_pin);
		for (int h = 0; h < cfg->routes[i].n_headers; h++)
			free(cfg->routes[i].headers[h]);
		free(cfg->routes[i].headers);
	}
	free(cfg->routes);
	free(cfg->bridge_user);
	free(cfg->mcp_source);
	free(cfg->mcp_target);
	for (i = 0; i < cfg->n_files; i++) {
		free(cfg->files[i].name);
		free(cfg->files[i].source);
		free(cfg->files[i].target);
	}
	free(cfg->files);
	memset(cfg, 0, sizeof *cfg);
}
