#define _GNU_SOURCE
#include "init/config/ctx.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-bridge/http.h"
#include "mcp-bridge/tls.h"
#include "common/envref.h"
#include "common/addr.h"
#include "common/parse.h"
#include "common/source.h"
#include "init/config/names.h"
#include "init/config/proxy.h"

/* The keys of each section: one setter a key, each parsing its value once
 * into the config's types. */

/* The entry of the array *v (*n entries of size bytes, each with its name,
 * a char *, and its header's line, an int, at those offsets) named
 * name[0..len), or a zeroed one with that name and line appended (*created
 * set). NULL when out of memory. */
static void *named_entry(void **v, int *n, size_t size, size_t name_at, size_t line_at, const char *name,
			 size_t len, int line, int *created)
{
	char *base = *v, *e, *copy;
	int i;

	for (i = 0; i < *n; i++) {
		char *have;
		memcpy(&have, base + (size_t)i * size + name_at, sizeof have);
		if (strlen(have) == len && strncmp(have, name, len) == 0)
			return base + (size_t)i * size;
	}
	copy = strndup(name, len);
	base = copy ? realloc(*v, (size_t)(*n + 1) * size) : NULL;
	if (!base) {
		free(copy);
		return NULL;
	}
	*v = base;
	e = base + (size_t)(*n)++ * size;
	memset(e, 0, size);
	memcpy(e + name_at, &copy, sizeof copy);
	memcpy(e + line_at, &line, sizeof line);
	*created = 1;
	return e;
}

/* Finds or creates the route NAME (created with the line of its header). */
struct config_route *route_named(struct ward_config *cfg, const char *name, size_t len, int line)
{
	void *v = cfg->routes;
	int created = 0;
	struct config_route *r = named_entry(&v, &cfg->n_routes, sizeof *r, offsetof(struct config_route, name),
					     offsetof(struct config_route, line), name, len, line, &created);

	return cfg->routes = v, r;
}

/* Finds or creates the file NAME (created with the line of its header and
 * mode 0600). */
struct config_file *file_named(struct ward_config *cfg, const char *name, size_t len, int line)
{
	void *v = cfg->files;
	int created = 0;
	struct config_file *f = named_entry(&v, &cfg->n_files, sizeof *f, offsetof(struct config_file, name),
					    offsetof(struct config_file, line), name, len, line, &created);

	cfg->files = v;
	if (f && created)
		f->mode = 0600;
	return f;
}


/* Settings that name one of a few values: the spellings are names.c's,
 * the value an int-sized enum of the config. */
static const struct enum_key {
	enum section section;
	const char *key;
	const char *const *names;
	int n;
	const char *expected;
	size_t at; /* offsetof(struct ward_config, ...) */
} enum_keys[] = {
	{ SEC_WARD, "log_format", log_format_names, 2, "expected text or json",
	  offsetof(struct ward_config, log_format) },
	{ SEC_WARD, "log_level", log_level_names, 4, "expected error, warn, info or debug",
	  offsetof(struct ward_config, log_level) },
	{ SEC_SUPERVISE, "restart", restart_names, 3, "expected never, on-failure or always",
	  offsetof(struct ward_config, restart) },
	{ SEC_SUPERVISE, "forward_to", forward_names, 2, "expected child or group",
	  offsetof(struct ward_config, forward_to) },
	{ SEC_LANDLOCK, "mode", ll_mode_names, 3, "expected hard_requirement, best_effort or off",
	  offsetof(struct ward_config, landlock.mode) },
	{ SEC_LANDLOCK, "egress", egress_names, 2, "expected loopback or ports",
	  offsetof(struct ward_config, egress) },
	{ SEC_LANDLOCK, "gvisor", gvisor_names, 2, "expected accept or refuse",
	  offsetof(struct ward_config, gvisor) },
};

_Static_assert(sizeof(enum log_format) == sizeof(int) && sizeof(enum log_level) == sizeof(int) &&
		       sizeof(enum restart_policy) == sizeof(int) && sizeof(enum forward_target) == sizeof(int) &&
		       sizeof(enum ll_mode) == sizeof(int) && sizeof(enum egress_mode) == sizeof(int) &&
		       sizeof(enum gvisor_landlock) == sizeof(int),
	       "the enumerated settings are written as int");

static int set_enum(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	size_t e;
	int i;

	for (e = 0; e < sizeof enum_keys / sizeof enum_keys[0]; e++)
		if (enum_keys[e].section == ctx->sec && strcmp(enum_keys[e].key, k) == 0)
			break;
	if (e == sizeof enum_keys / sizeof enum_keys[0])
		return *why = "not an enumerated setting", -1; /* the key table and this one disagree */
	if ((i = name_index(enum_keys[e].names, enum_keys[e].n, v)) < 0)
		return *why = enum_keys[e].expected, -1;
	memcpy((char *)ctx->cfg + enum_keys[e].at, &i, sizeof i);
	return 0;
}

static int set_grace(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	return parse_duration(v, &ctx->cfg->grace_ms, why);
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

/* [agent] cwd, [ward] evidence: an absolute path, kept as written. */
static int set_abs_path(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	char **dst = strcmp(k, "cwd") == 0 ? &ctx->cfg->cwd : &ctx->cfg->evidence;

	if (v[0] != '/')
		return *why = "must be an absolute path", -1;
	*dst = strdup(v);
	return *dst ? 0 : (*why = "out of memory", -1);
}

/* [ward] log_copy: an absolute path, or ${NAME} alone (unset or empty: none). */
static int set_log_copy(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	char from[128];
	const char *path = config_env_ref(v, from, sizeof from);

	(void)k;
	free(ctx->cfg->log_copy);
	ctx->cfg->log_copy = NULL;
	if (!*path)
		return 0;
	if (path[0] != '/')
		return *why = "must be an absolute path", -1;
	ctx->cfg->log_copy = strdup(path);
	return ctx->cfg->log_copy ? 0 : (*why = "out of memory", -1);
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

int config_env_slots(char ***list)
{
	if (!*list && !(*list = calloc(WARD_MAX_ENV, sizeof **list)))
		return -1;
	return 0;
}

/* The agent's environment: NAME=VALUE added, unless [agent] env set it. */
int config_agent_env(struct ward_config *cfg, const char *name, const char *value)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; i < cfg->n_env; i++)
		if (strncmp(cfg->env[i], name, n) == 0 && cfg->env[i][n] == '=')
			return 0;
	if (cfg->n_env == WARD_MAX_ENV || config_env_slots(&cfg->env) != 0)
		return -1;
	if (asprintf(&cfg->env[cfg->n_env], "%s=%s", name, value) < 0)
		return -1;
	cfg->n_env++;
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
	if (config_env_slots(&cfg->env) != 0)
		return *why = "out of memory", -1;
	cfg->env[cfg->n_env] = strdup(v);
	if (!cfg->env[cfg->n_env])
		return *why = "out of memory", -1;
	cfg->n_env++;
	return 0;
}

/* One name of env_pass (len bytes at p), listed once. */
static int pass_name(struct ward_config *cfg, const char *p, size_t len, const char **why)
{
	if (env_listed(cfg->env_pass, cfg->n_env_pass, p, len))
		return 0;
	if (cfg->n_env_pass >= WARD_MAX_ENV)
		return *why = "too many env_pass names", -1;
	if (config_env_slots(&cfg->env_pass) != 0)
		return *why = "out of memory", -1;
	cfg->env_pass[cfg->n_env_pass] = strndup(p, len);
	if (!cfg->env_pass[cfg->n_env_pass])
		return *why = "out of memory", -1;
	cfg->n_env_pass++;
	return 0;
}

/* Names separated by blanks; from is the variable they came from, if any
 * (an error then names it: its value is the one who started ward's). */
static int pass_names(struct parse_ctx *ctx, const char *p, const char *from, const char **why)
{
	while (*p == ' ' || *p == '\t')
		p++;
	while (*p) {
		int len = env_name_len(p);
		if (len == 0 || (p[len] != '\0' && p[len] != ' ' && p[len] != '\t')) {
			if (!from)
				return *why = "expected variable names separated by blanks", -1;
			snprintf(ctx->why, sizeof ctx->why, "${%s}: expected variable names separated by blanks", from);
			return *why = ctx->why, -1;
		}
		if (pass_name(ctx->cfg, p, (size_t)len, why) != 0)
			return -1;
		/* the person's own variables: the agent's, never ward's (moved out
		 * of ward's environment once the file is read: reader.c) */
		if (from && !env_listed(ctx->cfg->agent_vars, ctx->cfg->n_agent_vars, p, (size_t)len)) {
			if (config_env_slots(&ctx->cfg->agent_vars) != 0 ||
			    !(ctx->cfg->agent_vars[ctx->cfg->n_agent_vars] = strndup(p, (size_t)len)))
				return *why = "out of memory", -1;
			ctx->cfg->n_agent_vars++;
		}
		p += len;
		while (*p == ' ' || *p == '\t')
			p++;
	}
	return 0;
}

/* env_pass = NAME ... | ${NAME}: a word ${NAME} is the names listed in that
 * variable of ward's environment, read once with the file (ward-pi's
 * WARD_AGENT_ENV: the person's own variables for the agent); unset, none.
 * A route's secret among them is refused when the file is read, as any. */
static int set_env_pass(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	char **words;
	int argc, i, rc = 0;

	(void)k;
	if (!*v)
		return 0;
	if (split_words(v, &words, &argc, why) != 0)
		return -1;
	for (i = 0; i < argc && rc == 0; i++) {
		char from[64];
		const char *w = config_env_ref(words[i], from, sizeof from);
		rc = pass_names(ctx, w, from[0] ? from : NULL, why);
	}
	free(words);
	return rc;
}

static int set_rlimit(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	struct ward_config *cfg = ctx->cfg;
	struct rlimit_value rl;
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

/* [agent] user, [ward] bridge_user: a name, UID or UID:GID, resolved at
 * start against the image's /etc/passwd; its line kept for messages. */
static int set_user(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	int agent = strcmp(k, "user") == 0;
	char **dst = agent ? &ctx->cfg->user : &ctx->cfg->bridge_user;

	if (strlen(v) >= 64 || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789_.-:$") != strlen(v))
		return *why = "expected a user name, UID or UID:GID", -1;
	*dst = strdup(v);
	*(agent ? &ctx->cfg->user_line : &ctx->cfg->bridge_user_line) = ctx->line;
	return *dst ? 0 : (*why = "out of memory", -1);
}

static int set_allow_root(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	return parse_bool(v, &ctx->cfg->allow_root, why);
}

/* "${NAME}" alone: its value in ward's environment ("" when unset); any
 * other value: itself. *from is NAME when the value came from there (an
 * error then names the variable, never its value: it could be a key given
 * by mistake). */
const char *config_env_ref(const char *v, char *from, size_t from_size)
{
	size_t n = strlen(v);

	from[0] = '\0';
	if (n < 4 || strncmp(v, "${", 2) != 0 || v[n - 1] != '}' || n - 3 >= from_size ||
	    strspn(v + 2, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != n - 3)
		return v;
	memcpy(from, v + 2, n - 3);
	from[n - 3] = '\0';
	v = getenv(from);
	return v ? v : "";
}

/* The paths of a ${NAME} (from): absolute, separated by ':' as PATH's are
 * (ward-pi's WARD_PI_RO and WARD_PI_RW, the person's --ro and --rw; one
 * path such as WARD_GIT_DIR is a list of one). Empty: none. */
static int env_paths(struct parse_ctx *ctx, char ***list, int *n, const char *w, const char *from,
		     const char **why)
{
	while (*w) {
		size_t len = strcspn(w, ":");
		if (len > 0) {
			if (w[0] != '/') {
				snprintf(ctx->why, sizeof ctx->why, "${%s} holds a path that is not absolute", from);
				return *why = ctx->why, -1;
			}
			if (push(list, n, w, len) != 0)
				return *why = "out of memory", -1;
		}
		w += len;
		w += *w == ':';
	}
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
		/* ${NAME}: a path the one who starts ward names in its environment
		 * (ward-pi's WARD_GIT_DIR, the agent's git directory),
		 * read now, once; unset or empty, no path */
		char from[64];
		const char *w = config_env_ref(words[i], from, sizeof from);

		if (from[0]) {
			rc = env_paths(ctx, list, n, w, from, why);
			continue;
		}
		/* "." is the directory the runtime starts ward in (docker -w, the
		 * OCI cwd): the workspace, at the same absolute path */
		if (w[0] != '/' && strcmp(w, ".") != 0)
			rc = (*why = "paths must be absolute (or . for the start directory, or ${NAME} of them)", -1);
		else if (push(list, n, w, strlen(w)) != 0)
			rc = (*why = "out of memory", -1);
	}
	free(words);
	return rc;
}

static int set_ports(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	struct ll_policy *ll = &ctx->cfg->landlock;
	const char *w = v;

	/* An address (10.0.0.5:5432, [fd00::5]:80) is not a port list: said
	 * so, rather than "expected ports". Landlock knows ports only, and
	 * the guard holds every socket to lo, so no address can be let out. */
	while (*w) {
		size_t len = strcspn(w, " \t,");
		struct tcp_dest d;
		const char *ignored;
		if (len && memchr(w, ':', len) && addr_parse(w, len, &d, &ignored) == 0 && d.has_addr)
			return *why = addr_loopback(&d)
					      ? "a loopback address: give the port alone (ports are on loopback)"
					      : "addresses other than loopback cannot be allowed: the egress guard holds "
						"every socket to lo; reach one host through the bridge with a [route] of "
						"protocol = stream (egress = ports lets the ports reach any address)",
			       -1;
		w += len;
		w += strspn(w, " \t,");
	}
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
	} else if (strcmp(k, "protocol") == 0) {
		if (r->protocol_set)
			return *why = "set twice in this route", -1;
		if (strcmp(v, "http") != 0 && strcmp(v, "stream") != 0)
			return *why = "expected http (requests checked and pinned) or stream (bytes as they come)", -1;
		r->stream = strcmp(v, "stream") == 0;
		r->protocol_set = 1;
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
	} else if (strcmp(k, "provider") == 0 || strcmp(k, "provider_url") == 0) {
		/* resolved once the file is read (providers.c): a ${VAR} alone,
		 * or the value itself */
		char **dst = k[8] ? &r->provider_url : &r->provider;
		if (*dst)
			return *why = "set twice in this route", -1;
		if (!*v)
			return *why = "expected a provider's name or ${VAR}", -1;
		*dst = strdup(v);
	} else if (strcmp(k, "credential") == 0) {
		/* resolved with the provider (providers.c): a path or ${VAR} */
		if (r->credential)
			return *why = "set twice in this route", -1;
		if (v[0] != '/' && strncmp(v, "${", 2) != 0)
			return *why = "expected the absolute path of a login's credential file (Pi's auth.json) or "
				      "${VAR}", -1;
		r->credential = strdup(v);
	} else if (strcmp(k, "audit_args") == 0) {
		/* a call's arguments in its audit line (tools.h): never unless asked */
		return parse_bool(v, &r->tools.audit_args, why);
	} else if (strcmp(k, "pin") == 0) {
		/* a tool as it was reviewed (tools.h) */
		return tools_pin_parse(v, &r->tools, why);
	} else if (strcmp(k, "pin_file") == 0) {
		return tools_pin_file(v, &r->tools, why);
	} else if (strcmp(k, "tools") == 0 || strcmp(k, "deny_tools") == 0) {
		/* the MCP tools the agent may call (tools.h); each line adds */
		if (k[0] == 't') {
			r->tools.has_allow = 1;
			return tools_parse(v, &r->tools.allow, &r->tools.n_allow, why);
		}
		return tools_parse(v, &r->tools.deny, &r->tools.n_deny, why);
	} else if (strcmp(k, "resources") == 0 || strcmp(k, "deny_resources") == 0) {
		/* the MCP resources the agent may read, by URI prefix (tools.h) */
		if (k[0] == 'r') {
			r->tools.has_res_allow = 1;
			return tools_parse_uris(v, &r->tools.res_allow, &r->tools.n_res_allow, why);
		}
		return tools_parse_uris(v, &r->tools.res_deny, &r->tools.n_res_deny, why);
	} else if (strcmp(k, "prompts") == 0 || strcmp(k, "deny_prompts") == 0) {
		/* the MCP prompts it may get (tools.h) */
		if (k[0] == 'p') {
			r->tools.has_pr_allow = 1;
			return tools_parse_prompts(v, &r->tools.pr_allow, &r->tools.n_pr_allow, why);
		}
		return tools_parse_prompts(v, &r->tools.pr_deny, &r->tools.n_pr_deny, why);
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
		const char *colon = strchr(v, ':'), *val, *at;
		struct header *nv, one;
		int rc;
		if (!colon || colon == v || strcspn(v, " \t") < (size_t)(colon - v) || !colon[1])
			return *why = "expected Name: value (value may be @PATH, @fd:N or hold ${VAR})", -1;
		if (http_header_reserved(v, (size_t)(colon - v)))
			return *why = "the bridge writes this header itself (framing, Host, hop-by-hop)", -1;
		val = colon + 1 + strspn(colon + 1, " \t");
		/* the secret: the value, or its last word after a prefix
		 * ("Bearer @/run/secrets/token") */
		at = *val == '@' ? val : strrchr(val, ' ');
		if (at && at != val)
			at = at[1] == '@' ? at + 1 : NULL;
		if (at && envref_has(val))
			return *why = "a header takes its secret from one place: @PATH, @fd:N or ${VAR}", -1;
		if (at) {
			/* read at start: checked as a source now, written as ward
			 * compares it (@fd:03 is @fd:3) */
			char *src, *prefix = at > val ? strndup(val, (size_t)(at - val)) : NULL;
			if (set_source(&src, at + 1, why) != 0) {
				free(prefix);
				return *why = "expected @fd:N (N >= 3) or @/absolute/path as the value or after a "
					      "prefix (Name: Bearer @/path)",
				       -1;
			}
			rc = at > val && !prefix ? -1 : header_set(&one, v, (size_t)(colon - v), prefix, src);
			free(src);
			free(prefix);
		} else {
			const char *bad = NULL;
			/* ${VAR}: its syntax now, its value at start (the config
			 * stays as it was read) */
			if (envref_names(val, NULL, NULL, &bad) != 0)
				return *why = bad, -1;
			rc = header_set(&one, v, (size_t)(colon - v), val, NULL);
			one.env = rc == 0 && envref_has(val);
		}
		if (rc != 0)
			return *why = "out of memory", -1;
		nv = realloc(r->headers, (size_t)(r->n_headers + 1) * sizeof *nv);
		if (!nv) {
			header_clear(&one);
			return *why = "out of memory", -1;
		}
		r->headers = nv;
		nv[r->n_headers++] = one;
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

/* [agent] policy_note: written as root for the agent, like a [file]'s target. */
static int set_policy_note(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (!plain_file_path(v))
		return *why = "expected an absolute, normalised file path", -1;
	ctx->cfg->policy_note = strdup(v);
	return ctx->cfg->policy_note ? 0 : (*why = "out of memory", -1);
}

/* [agent] policy_note_add: a file the one who starts ward provides (ward-pi's
 * facts of the session), added to the note at each start. */
static int set_policy_note_add(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (!plain_file_path(v))
		return *why = "expected an absolute, normalised file path", -1;
	free(ctx->cfg->policy_note_add);
	ctx->cfg->policy_note_add = strdup(v);
	return ctx->cfg->policy_note_add ? 0 : (*why = "out of memory", -1);
}

/* [agent] refusals: where PID 1 writes a line for each destination the
 * egress guard refuses, for the agent to read. */
static int set_refusals(struct parse_ctx *ctx, const char *k, const char *v, const char **why)
{
	(void)k;
	if (!plain_file_path(v))
		return *why = "expected an absolute, normalised file path", -1;
	ctx->cfg->refusals = strdup(v);
	return ctx->cfg->refusals ? 0 : (*why = "out of memory", -1);
}

/* "fd:N" (N >= 3, written as ward will compare it: fd:03 is fd:3) or an
 * absolute path. */
static int set_source(char **dst, const char *v, const char **why)
{
	int fd;

	if (strncmp(v, "fd:", 3) != 0 && v[0] != '/')
		return *why = "expected fd:N or an absolute path", -1;
	if (strncmp(v, "fd:", 3) == 0) {
		if ((fd = source_fd(v)) < 0)
			return *why = "expected fd:N with N >= 3", -1;
		if (asprintf(dst, "fd:%d", fd) < 0)
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
		/* ${NAME} alone: a daemon names its endpoint at run time, and
		 * unset (or none) every server goes where its URL says */
		char from[ENVREF_NAME_MAX];
		const char *val = config_env_ref(v, from, sizeof from);
		if (!*val || strcmp(val, "none") == 0)
			return 0;
		if (upstream_parse(val, &cfg->mcp_up, why) != 0) {
			if (from[0]) {
				snprintf(ctx->why, sizeof ctx->why, "${%s}: %s", from, *why);
				*why = ctx->why;
			}
			return -1;
		}
		cfg->mcp_has_up = 1;
	} else if (strcmp(k, "tls_ca") == 0) {
		if (!plain_file_path(v))
			return *why = "expected an absolute, normalised file path (a PEM bundle)", -1;
		free(cfg->mcp_tls_ca);
		cfg->mcp_tls_ca = strdup(v);
	} else if (strcmp(k, "loopback") == 0) {
		if (!plain_file_path(v) || strlen(v) > 80)
			return *why = "expected an absolute, normalised directory path of at most 80 characters", -1;
		free(cfg->mcp_loopback);
		cfg->mcp_loopback = strdup(v);
	} else if (strcmp(k, "auth") == 0) {
		/* the host's mcp-auth.json, read-write for the bridge alone;
		 * ${VAR} unset or empty: none */
		char from[ENVREF_NAME_MAX];
		const char *val = config_env_ref(v, from, sizeof from);
		free(cfg->mcp_auth);
		cfg->mcp_auth = NULL;
		if (!*val)
			return 0;
		if (!plain_file_path(val))
			return *why = "expected the absolute, normalised path of the host's mcp-auth.json, or ${VAR}", -1;
		cfg->mcp_auth = strdup(val);
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

const struct key_def config_keys[] = {
	{ SEC_WARD, "log_format", set_enum, 0, 0 },
	{ SEC_WARD, "log_level", set_enum, 0, 0 },
	{ SEC_WARD, "evidence", set_abs_path, 0, 0 },
	{ SEC_WARD, "log_copy", set_log_copy, 0, 0 },
	{ SEC_WARD, "bridge_user", set_user, 0, 0 },
	{ SEC_SUPERVISE, "grace", set_grace, 0, 0 },
	{ SEC_SUPERVISE, "restart", set_enum, 0, 0 },
	{ SEC_SUPERVISE, "restart_delay", set_restart_delay, 0, 0 },
	{ SEC_SUPERVISE, "restart_limit", set_restart_limit, 0, 0 },
	{ SEC_SUPERVISE, "signal_rewrite", set_rewrite, 1, 0 },
	{ SEC_SUPERVISE, "forward_to", set_enum, 0, 0 },
	{ SEC_AGENT, "command", set_command, 0, 1 },
	{ SEC_AGENT, "cwd", set_abs_path, 0, 0 },
	{ SEC_AGENT, "user", set_user, 0, 0 },
	{ SEC_AGENT, "allow_root", set_allow_root, 0, 0 },
	{ SEC_AGENT, "umask", set_umask, 0, 0 },
	{ SEC_AGENT, "env", set_env, 1, 0 },
	{ SEC_AGENT, "env_pass", set_env_pass, 1, 0 },
	{ SEC_AGENT, "rlimit_", set_rlimit, 1, 0 },
	{ SEC_AGENT, "writable", set_paths, 1, 0 },
	{ SEC_AGENT, "policy_note", set_policy_note, 0, 0 },
	{ SEC_AGENT, "policy_note_add", set_policy_note_add, 0, 0 },
	{ SEC_AGENT, "refusals", set_refusals, 0, 0 },
	{ SEC_LANDLOCK, "mode", set_enum, 0, 0 },
	{ SEC_LANDLOCK, "read", set_paths, 1, 0 },
	{ SEC_LANDLOCK, "write", set_paths, 1, 0 },
	{ SEC_LANDLOCK, "connect", set_ports, 1, 0 },
	{ SEC_LANDLOCK, "bind", set_ports, 1, 0 },
	{ SEC_LANDLOCK, "scope", set_scope, 0, 0 },
	{ SEC_LANDLOCK, "egress", set_enum, 0, 0 },
	{ SEC_LANDLOCK, "gvisor", set_enum, 0, 0 },
	{ SEC_SECCOMP, "mode", set_sc_mode, 0, 0 },
	{ SEC_SECCOMP, "deny", set_sc_names, 1, 0 },
	{ SEC_SECCOMP, "allow", set_sc_names, 1, 0 },
	{ SEC_MCP, "source", set_mcp, 0, 0 },
	{ SEC_MCP, "target", set_mcp, 0, 0 },
	{ SEC_MCP, "upstream", set_mcp, 0, 0 },
	{ SEC_MCP, "listen", set_mcp, 0, 0 },
	{ SEC_MCP, "required", set_mcp, 0, 0 },
	{ SEC_MCP, "tls_ca", set_mcp, 0, 0 },
	{ SEC_MCP, "loopback", set_mcp, 0, 0 },
	{ SEC_MCP, "auth", set_mcp, 0, 0 },
	/* route keys may repeat across routes; set_route refuses repeats in one */
	{ SEC_ROUTE, "listen", set_route, 1, 0 },
	{ SEC_ROUTE, "upstream", set_route, 1, 0 },
	{ SEC_ROUTE, "protocol", set_route, 1, 0 },
	{ SEC_ROUTE, "methods", set_route, 1, 0 },
	{ SEC_ROUTE, "path", set_route, 1, 0 },
	{ SEC_ROUTE, "host", set_route, 1, 0 },
	{ SEC_ROUTE, "header", set_route, 1, 0 },
	{ SEC_ROUTE, "tls_ca", set_route, 1, 0 },
	{ SEC_ROUTE, "tls_pin", set_route, 1, 0 },
	{ SEC_ROUTE, "provider", set_route, 1, 0 },
	{ SEC_ROUTE, "provider_url", set_route, 1, 0 },
	{ SEC_ROUTE, "credential", set_route, 1, 0 },
	{ SEC_ROUTE, "tools", set_route, 1, 0 },
	{ SEC_ROUTE, "deny_tools", set_route, 1, 0 },
	{ SEC_ROUTE, "resources", set_route, 1, 0 },
	{ SEC_ROUTE, "deny_resources", set_route, 1, 0 },
	{ SEC_ROUTE, "prompts", set_route, 1, 0 },
	{ SEC_ROUTE, "deny_prompts", set_route, 1, 0 },
	{ SEC_ROUTE, "pin", set_route, 1, 0 },
	{ SEC_ROUTE, "audit_args", set_route, 1, 0 },
	{ SEC_ROUTE, "pin_file", set_route, 1, 0 },
	/* like route keys: set_file refuses repeats in one file */
	{ SEC_FILE, "source", set_file, 1, 0 },
	{ SEC_FILE, "target", set_file, 1, 0 },
	{ SEC_FILE, "mode", set_file, 1, 0 },
	{ SEC_PROXY, "listen", proxy_set, 0, 0 },
	{ SEC_PROXY, "allow", proxy_set, 1, 0 },
	{ SEC_PROXY, "presets", proxy_set, 1, 0 },
	{ SEC_PROXY, "methods", proxy_set, 0, 0 },
	{ SEC_PROXY, "max_tunnels", proxy_set, 0, 0 },
	{ SEC_PROXY, "max_bytes", proxy_set, 0, 0 },
	{ SEC_PROXY, "ask", proxy_set, 0, 0 },
	{ SEC_PROXY, "ask_timeout", proxy_set, 0, 0 },
	{ SEC_PROXY, "ask_rate", proxy_set, 0, 0 },
	{ SEC_PROXY, "ask_store", proxy_set, 0, 0 },
};

const size_t config_n_keys = sizeof config_keys / sizeof config_keys[0];
_Static_assert(sizeof config_keys / sizeof config_keys[0] <= CONFIG_KEY_LINES, "key_line too small");
