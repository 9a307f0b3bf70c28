#define _GNU_SOURCE
#include "init/sandbox/privfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/source.h"
#include "init/sandbox/privwrite.h"
#include "mcp-bridge/http.h"
#include "mcp-bridge/tls.h"

/* One fd:N the config names: open now, and named once. */
static int fd_named(const struct ward_config *cfg, int line, const char *what, const char *spec, int *seen,
		    int *seen_line, int *n)
{
	int v = source_fd(spec), i;

	if (v < 0)
		return 0; /* the config's own checks say why */
	for (i = 0; i < *n; i++)
		if (seen[i] == v) {
			log_error("%s:%d: %s fd:%d: also named on line %d (a descriptor is read once, then closed)",
				  cfg->path, line, what, v, seen_line[i]);
			return 2;
		}
	if (fcntl(v, F_GETFD) < 0) {
		log_error("%s:%d: %s fd:%d: ward was not given this descriptor (runc/podman --preserve-fds)",
			  cfg->path, line, what, v);
		return 2;
	}
	seen[*n] = v;
	seen_line[(*n)++] = line;
	return 0;
}

int privfiles_check_fds(const struct ward_config *cfg)
{
	int n = 0, i, h, rc = 0, max = 1 + cfg->n_files, *seen, *seen_line;

	for (i = 0; i < cfg->n_routes; i++)
		max += cfg->routes[i].n_headers;
	seen = calloc((size_t)max, sizeof *seen);
	seen_line = calloc((size_t)max, sizeof *seen_line);
	if (!seen || !seen_line) {
		free(seen);
		free(seen_line);
		log_error("out of memory");
		return 3;
	}
	if (cfg->has_mcp && cfg->mcp_source && strncmp(cfg->mcp_source, "fd:", 3) == 0)
		rc = fd_named(cfg, cfg->mcp_line, "[mcp] source", cfg->mcp_source, seen, seen_line, &n);
	for (i = 0; !rc && i < cfg->n_files; i++)
		if (cfg->files[i].source && strncmp(cfg->files[i].source, "fd:", 3) == 0)
			rc = fd_named(cfg, cfg->files[i].line, "[file] source", cfg->files[i].source, seen,
				      seen_line, &n);
	for (i = 0; !rc && i < cfg->n_routes; i++)
		for (h = 0; !rc && h < cfg->routes[i].n_headers; h++) {
			const char *src = cfg->routes[i].headers[h].source;
			if (src && strncmp(src, "fd:", 3) == 0)
				rc = fd_named(cfg, cfg->routes[i].line, "[route] header", src, seen, seen_line, &n);
		}
	free(seen);
	free(seen_line);
	return rc;
}

/* At start, each server's route, one line each, and a warning for an
 * upstream that cannot be reached as things are: a socket not there (a
 * daemon's endpoint, a loopback relay nobody made). (--check's report
 * says the same in its table and warnings.) */
static void say_routes(const struct ward_config *cfg, const struct mcp_result *res)
{
	int i;

	if (cfg->mcp_has_up && res->n_routes && upstream_unix_absent(&cfg->mcp_up))
		log_warn("mcp: [mcp] upstream %s is not a socket here: every server's calls fail until it is",
			 cfg->mcp_up.desc);
	for (i = 0; i < res->n_routes; i++) {
		const struct mcp_route *m = &res->routes[i];
		const struct upstream *u = m->has_up ? &m->up : &cfg->mcp_up;
		log_info("mcp: server %s: 127.0.0.1:%u%s -> %s%s%s%s", m->name + 4, m->port, m->path, u->desc,
			 u->kind == UP_TLS ? " (TLS verified: " : "",
			 u->kind == UP_TLS ? (cfg->mcp_tls_ca ? cfg->mcp_tls_ca : TLS_DEFAULT_CA) : "",
			 u->kind == UP_TLS ? ")" : "");
		if (m->has_up && upstream_unix_absent(u))
			log_warn("mcp: server %s: its relay %s is not a socket here: its calls fail until it is",
				 m->name + 4, u->desc + 5);
	}
}

/* [mcp] auth: the host's mcp-auth.json, read now (the bridge opens it
 * again read-write for the servers signed in there). Not there: no
 * sign-ins, said in a line. 0, or 2 after saying why. */
static int read_auth(const struct ward_config *cfg, char **buf, size_t *len)
{
	char err[1024];

	*buf = NULL;
	*len = 0;
	if (!cfg->mcp_auth || cfg->mcp_has_up)
		return 0;
	if (access(cfg->mcp_auth, F_OK) != 0 && errno == ENOENT) {
		log_info("mcp: [mcp] auth %s is not there: no server's sign-in to send", cfg->mcp_auth);
		return 0;
	}
	if (source_read(cfg->mcp_auth, CRED_MAX_FILE, buf, len, err, sizeof err) != 0) {
		log_error("%s:%d: [mcp] auth %s", cfg->path, cfg->mcp_line, err);
		return 2;
	}
	return 0;
}

/* The host's mcp.json -> its servers' routes and the agent's copy, kept
 * in pf (the routes until the route table takes them, the copy until
 * privfiles_write). */
static int read_mcp(struct privfiles *pf, const struct ward_config *cfg, int check)
{
	struct mcp_result *res = &pf->mcp_res;
	struct mcp_where where = { .by_url = 1 };
	char err[1024], *text = NULL, *auth = NULL;
	size_t len = 0, auth_len = 0;
	int rc, i, j;

	if (cfg->mcp_optional && strncmp(cfg->mcp_source, "fd:", 3) != 0 && access(cfg->mcp_source, F_OK) != 0 &&
	    errno == ENOENT) {
		log_info("mcp: %s is not there (required = no): no MCP servers", cfg->mcp_source);
		return 0;
	}
	if (source_read(cfg->mcp_source, SOURCE_MAX_FILE, &text, &len, err, sizeof err) != 0) {
		log_error("%s:%d: [mcp] %s", cfg->path, cfg->mcp_line, err);
		return 2;
	}
	where.loopback = cfg->mcp_loopback;
	if (read_auth(cfg, &auth, &auth_len) != 0) {
		explicit_bzero(text, len);
		free(text);
		return 2;
	}
	where.auth = auth;
	where.auth_len = auth_len;
	rc = mcp_rewrite(text, len, cfg->mcp_port, cfg->mcp_has_up ? NULL : &where, res);
	explicit_bzero(text, len);
	free(text);
	if (auth)
		explicit_bzero(auth, auth_len);
	free(auth);
	if (rc != 0) {
		log_error("%s:%d: [mcp] source %s: %s", cfg->path, cfg->mcp_line, cfg->mcp_source, res->err);
		return 2;
	}
	/* a server ward cannot serve costs only itself: one line each, the
	 * others work (one OAuth server in the person's mcp.json would
	 * otherwise mean no Pi at all) */
	for (i = 0; !check && i < res->n_skipped && i < MCP_MAX_SKIPPED; i++)
		log_warn("mcp: %s: left out of the agent's MCP servers (the others work)", res->skipped[i].why);
	if (!check && res->n_skipped > MCP_MAX_SKIPPED)
		log_warn("mcp: %d more servers left out", res->n_skipped - MCP_MAX_SKIPPED);
	/* a secret the bridge adds must not reach the agent by its environment */
	for (i = 0; i < res->n_vars; i++)
		for (j = 0; j < cfg->n_env_pass; j++)
			if (strcmp(res->vars[i], cfg->env_pass[j]) == 0) {
				log_error("%s:%d: [mcp] source %s takes a header from ${%s}, which [agent] env_pass "
					  "gives the agent too: it could read the secret; take it out of env_pass",
					  cfg->path, cfg->mcp_line, cfg->mcp_source, res->vars[i]);
				return 2;
			}
	if (!check)
		say_routes(cfg, res);
	pf->mcp = 1;
	pf->mcp_servers = res->n_routes;
	return 0;
}

int privfiles_check_mcp(struct privfiles *pf, const struct ward_config *cfg)
{
	struct stat st;

	memset(pf, 0, sizeof *pf);
	if (!cfg->has_mcp)
		return 0;
	if (strncmp(cfg->mcp_source, "fd:", 3) == 0) {
		log_info("mcp: %s is handed in at run time: its servers are checked at start", cfg->mcp_source);
		return 0;
	}
	if (access(cfg->mcp_source, R_OK) != 0) {
		if (errno == ENOENT && cfg->mcp_optional)
			log_info("mcp: %s is not there (required = no): no MCP servers", cfg->mcp_source);
		else
			log_info("mcp: %s: %s here: its servers are checked at start", cfg->mcp_source,
				 strerror(errno));
		return 0;
	}
	if (stat(cfg->mcp_source, &st) != 0 || !S_ISREG(st.st_mode)) {
		/* a pipe would be read once, by the start: not here */
		log_info("mcp: %s is not a regular file: its servers are checked at start", cfg->mcp_source);
		return 0;
	}
	return read_mcp(pf, cfg, 1);
}

int privfiles_read(struct privfiles *pf, const struct ward_config *cfg)
{
	char err[1024];
	int i;

	memset(pf, 0, sizeof *pf);
	if (cfg->n_files) {
		pf->data = calloc((size_t)cfg->n_files, sizeof *pf->data);
		pf->len = calloc((size_t)cfg->n_files, sizeof *pf->len);
		if (!pf->data || !pf->len) {
			log_error("out of memory");
			return 3;
		}
	}
	pf->n = cfg->n_files;
	for (i = 0; i < pf->n; i++)
		if (source_read(cfg->files[i].source, SOURCE_MAX_FILE, &pf->data[i], &pf->len[i], err, sizeof err) != 0) {
			log_error("%s:%d: [file %s] %s", cfg->path, cfg->files[i].line, cfg->files[i].name, err);
			return 2;
		}
	return cfg->has_mcp ? read_mcp(pf, cfg, 0) : 0;
}

int privfiles_write(struct privfiles *pf, const struct ward_config *cfg, uid_t uid, gid_t gid)
{
	char err[1024];
	int i;

	for (i = 0; i < pf->n; i++) {
		const struct config_file *f = &cfg->files[i];
		if (private_file_write(f->target, pf->data[i], pf->len[i], f->mode, uid, gid, err, sizeof err) != 0) {
			log_error("%s:%d: [file %s] %s", cfg->path, f->line, f->name, err);
			return 2;
		}
		pf->written++;
		log_info("file %s: %s -> %s (%zu bytes, mode %04o)", f->name, f->source, f->target, pf->len[i],
			 f->mode);
	}
	if (pf->mcp) {
		if (mcp_write_target(cfg->mcp_target, pf->mcp_res.text, uid, gid, err, sizeof err) != 0) {
			log_error("%s:%d: [mcp] %s", cfg->path, cfg->mcp_line, err);
			return 2;
		}
		pf->written++;
		log_info("mcp: %s -> %s: %d server(s) through the bridge", cfg->mcp_source, cfg->mcp_target,
			 pf->mcp_servers);
	}
	return 0;
}

void privfiles_unwrite(const struct ward_config *cfg, int written)
{
	int i;

	for (i = 0; i < written; i++) {
		const char *t = i < cfg->n_files ? cfg->files[i].target : cfg->mcp_target;
		if (private_file_remove(t) != 0 && errno != ENOENT)
			log_warn("cannot remove %s: %s", t, strerror(errno));
		else
			log_debug("removed %s (the start failed)", t);
	}
}

void privfiles_free(struct privfiles *pf)
{
	int i;

	for (i = 0; pf->data && i < pf->n; i++) {
		if (pf->data[i])
			explicit_bzero(pf->data[i], pf->len[i]);
		free(pf->data[i]);
	}
	free(pf->data);
	free(pf->len);
	mcp_result_free(&pf->mcp_res);
	memset(pf, 0, sizeof *pf);
}
