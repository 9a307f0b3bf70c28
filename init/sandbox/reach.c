/* reach: what of the bridge's the agent could reach, judged before anything
 * runs: the files its secrets come from, a config with a header written in
 * it, a unix: upstream's socket and directory. By the agent's Landlock
 * rules (where a path leads, and where a bind mount shows it again) and,
 * with no Landlock in force, by a try as the agent's user (asagent.h). */
#define _GNU_SOURCE
#include "init/sandbox/reach.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "init/sandbox/asagent.h"
#include "init/supervise/routes.h"

/* mountinfo's escapes (\040 for a blank, ...) undone in place */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++, o++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*o = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o = *s;
		}
	}
	*o = '\0';
}

/* the line after the one at line (or the end) */
static const char *next_line(const char *line)
{
	const char *nl = strchr(line, '\n');

	return nl ? nl + 1 : line + strlen(line);
}

/* Where a resolved path lies in its filesystem: the mount it is on (the
 * last in /proc/self/mountinfo with the longest mount point that is a
 * prefix of it) names the device, and the directory of that filesystem
 * the mount shows; the rest of the path follows. A bind mount shows one
 * directory at two places: the same device and place either way. */
static int fs_place(const char *info, const char *real, char *dev, size_t devsize, char *place, size_t size)
{
	char root[PATH_MAX], mnt[PATH_MAX], d[32], best_root[PATH_MAX];
	const char *line;
	size_t best = 0;
	int found = 0;

	if (!info)
		return -1;
	for (line = info; *line; line = next_line(line)) {
		size_t n;
		if (sscanf(line, "%*s %*s %31s %4095s %4095s", d, root, mnt) != 3)
			continue;
		unescape(root);
		unescape(mnt);
		n = strcmp(mnt, "/") == 0 ? 0 : strlen(mnt);
		if (n && (strncmp(real, mnt, n) != 0 || (real[n] != '/' && real[n] != '\0')))
			continue;
		if (!found || n >= best) {
			found = 1;
			best = n;
			snprintf(dev, devsize, "%s", d);
			snprintf(best_root, sizeof best_root, "%s", root);
		}
	}
	if (!found)
		return -1;
	snprintf(place, size, "%s%s", strcmp(best_root, "/") == 0 ? "" : best_root, real + best);
	if (!place[0])
		snprintf(place, size, "/");
	return 0;
}

/* a rule at rule_place covers what is at place (the same filesystem) */
static int place_within(const char *place, const char *rule_place)
{
	size_t n = strlen(rule_place);

	return strcmp(rule_place, "/") == 0 ||
	       (strncmp(place, rule_place, n) == 0 && (place[n] == '/' || place[n] == '\0'));
}

/* the first of the agent's Landlock rule paths (its write rules only, or
 * all) that reaches path (as written, where it leads, or where a bind
 * mount shows its directory again), or NULL */
static const char *rule_reaching(const struct ll_policy *p, const char *info, const char *path, int writes_only)
{
	char real[PATH_MAX], rreal[PATH_MAX], dev[32], place[2 * PATH_MAX], rdev[32], rplace[2 * PATH_MAX];
	int i, resolved = realpath(path, real) != NULL;
	int placed = resolved && fs_place(info, real, dev, sizeof dev, place, sizeof place) == 0;

	for (i = writes_only ? p->n_read : 0; i < p->n_read + p->n_write; i++) {
		const char *rule = i < p->n_read ? p->read[i] : p->write[i - p->n_read];
		if (ll_covers(path, rule) || (resolved && ll_covers(real, rule)))
			return rule;
		if (placed && realpath(rule, rreal) &&
		    fs_place(info, rreal, rdev, sizeof rdev, rplace, sizeof rplace) == 0 &&
		    strcmp(dev, rdev) == 0 && place_within(place, rplace))
			return rule;
	}
	return NULL;
}

static int private_reached(const struct ward_config *cfg, const char *info, int line, const char *what,
			   const char *path)
{
	const char *rule;
	struct stat st;

	if (path[0] != '/')
		return 0;
	/* another name would be judged by its own directories, which ward
	 * does not know: one name only */
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) {
		log_error("%s:%d: %s %s has %lu names (hard links): one of them may be within the agent's "
			  "Landlock rules; give it one", cfg->path, line, what, path, (unsigned long)st.st_nlink);
		return 2;
	}
	if (!(rule = rule_reaching(&cfg->landlock, info, path, 0)))
		return 0;
	log_error("%s:%d: %s %s is within the agent's Landlock rule for %s: the agent could read it; keep "
		  "it out of the agent's paths (/run/ward)", cfg->path, line, what, path, rule);
	return 2;
}

/* /proc/self/mountinfo, read once for every path judged; NULL without it */
static char *mountinfo(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *text = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&text, &len, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

/* Apart from reach_private, so that its 8 KiB of path buffers are on the
 * stack only with Landlock in force (the compiler probes every page of a
 * frame: a plain init would pay for them in memory). */
static __attribute__((noinline)) int private_checks(const struct ward_config *cfg)
{
	char cwd[PATH_MAX], *info;
	int i, h, rc = 0;

	for (i = 0; i < cfg->landlock.n_write; i++)
		if (strcmp(cfg->landlock.write[i], ".") == 0 && getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") == 0) {
			log_error("%s: [landlock] write = .: ward was started in /, and the agent could write the "
				  "whole filesystem; start it in the workspace (docker -w, the OCI process.cwd)",
				  cfg->path);
			return 2;
		}
	info = mountinfo();
	if (cfg->has_mcp && cfg->mcp_source)
		rc = private_reached(cfg, info, cfg->mcp_line, "[mcp] source", cfg->mcp_source);
	/* the logins the bridge sends and writes back: the host's own files */
	if (!rc && cfg->has_mcp && cfg->mcp_auth && !cfg->mcp_has_up)
		rc = private_reached(cfg, info, cfg->mcp_line, "[mcp] auth", cfg->mcp_auth);
	for (i = 0; !rc && i < cfg->n_routes; i++)
		if (cfg->routes[i].cred)
			rc = private_reached(cfg, info, cfg->routes[i].line, "[route] credential",
					     cfg->routes[i].cred->path);
	/* a header written in the config is a secret in the config file */
	for (i = 0; !rc && cfg->path && i < cfg->n_routes; i++)
		for (h = 0; !rc && h < cfg->routes[i].n_headers; h++)
			if (!cfg->routes[i].headers[h].source && !cfg->routes[i].headers[h].env) {
				char real[PATH_MAX], what[160];
				snprintf(what, sizeof what, "[route %s]'s header %s is written in the config, and",
					 cfg->routes[i].name, cfg->routes[i].headers[h].name);
				rc = private_reached(cfg, info, cfg->routes[i].line, what,
						     realpath(cfg->path, real) ? real : cfg->path);
			}
	for (i = 0; !rc && i < cfg->n_routes; i++)
		for (h = 0; !rc && h < cfg->routes[i].n_headers; h++)
			if (cfg->routes[i].headers[h].source)
				rc = private_reached(cfg, info, cfg->routes[i].line, "[route] header file",
						     cfg->routes[i].headers[h].source);
	free(info);
	return rc;
}

int reach_private(const struct ward_config *cfg)
{
	if (!cfg->has_landlock || cfg->landlock.mode == LL_OFF)
		return 0;
	return private_checks(cfg);
}

/* One private input tried as the agent's user: 2 (after logging) if it
 * may read it, or if that could not be judged. */
static int private_mode(const struct confine *agent, const struct ward_config *cfg, int line, const char *what,
			const char *path)
{
	int e = as_agent(&agent->user, try_read, path);

	if (e == EACCES || e == EPERM || e == ENOENT)
		return 0;
	if (e == 0)
		log_error("%s:%d: %s %s may be read by the agent's user (uid %d) and no Landlock is in force: make "
			  "it root's alone (chmod 0600), or its directory closed to that user", cfg->path, line, what,
			  path, (int)agent->user.uid);
	else
		log_error("%s:%d: %s %s: a read as the agent's user could not be judged (%s): refused rather than "
			  "assumed safe", cfg->path, line, what, path,
			  e == AS_AGENT_FAILED ? "ward cannot become that user" : strerror(e));
	return 2;
}

int reach_private_modes(const struct confine *agent, const struct ll_ruleset *ll, const struct ward_config *cfg,
			int check)
{
	int i, h, rc = 0;

	if (check || !agent || geteuid() != 0 || (ll && ll->fd >= 0) || !cfg->has_landlock ||
	    cfg->landlock.mode == LL_OFF)
		return 0;
	if (cfg->has_mcp && cfg->mcp_source)
		rc = private_mode(agent, cfg, cfg->mcp_line, "[mcp] source", cfg->mcp_source);
	if (!rc && cfg->has_mcp && cfg->mcp_auth && !cfg->mcp_has_up)
		rc = private_mode(agent, cfg, cfg->mcp_line, "[mcp] auth", cfg->mcp_auth);
	for (i = 0; !rc && i < cfg->n_routes; i++) {
		if (cfg->routes[i].cred)
			rc = private_mode(agent, cfg, cfg->routes[i].line, "[route] credential", cfg->routes[i].cred->path);
		for (h = 0; !rc && h < cfg->routes[i].n_headers; h++)
			if (cfg->routes[i].headers[h].source)
				rc = private_mode(agent, cfg, cfg->routes[i].line, "[route] header file",
						  cfg->routes[i].headers[h].source);
	}
	return rc;
}

/* ward could not become the agent's user to try (no CAP_SETUID or
 * CAP_SETGID, as under runc's default spec): the start could not either. */
/* What a message names: a route's upstream, or the proxy's approver. */
static const char *label(const struct route *r, char lab[400])
{
	if (r->proxy)
		snprintf(lab, 400, "[proxy] ask = %s", r->up->desc);
	else
		snprintf(lab, 400, "[route %s] upstream %s", r->name, r->up->desc);
	return lab;
}

static int cannot_try(const struct ward_config *cfg, const struct route *r)
{
	char lab[400];

	log_error("%s:%d: %s: ward cannot become the agent's user to check what it may "
		  "reach (no CAP_SETUID/CAP_SETGID?)", cfg->path, r->line, label(r, lab));
	return 3;
}

/* One unix: upstream: its directory out of the agent's write rules (it
 * could put a socket of its own there, or one in its place, and be sent
 * what the bridge adds), and the socket out of its user's reach (it could
 * connect around the bridge, past its path pins). */
static int unix_upstream_private(const struct confine *agent, int ll_in_force, const struct ward_config *cfg,
				 const char *info, const struct route *r, int check)
{
	const char *path = ((const struct sockaddr_un *)&r->up->addr)->sun_path, *rule;
	char dir[PATH_MAX], real[PATH_MAX], lab[400];
	struct stat st;
	int e;

	/* a socket that is a symlink is judged where it leads: the bridge goes there */
	snprintf(dir, sizeof dir, "%s", realpath(path, real) ? real : path);
	/* the nearest directory there is: a socket not made yet is judged by it */
	do {
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		*(slash == dir ? slash + 1 : slash) = '\0';
	} while (!realpath(dir, real) && strcmp(dir, "/") != 0);
	if (ll_in_force && (rule = rule_reaching(&cfg->landlock, info, dir, 1))) {
		log_error("%s:%d: %s: its directory is within the agent's Landlock write rule "
			  "for %s: the agent could put its own socket there and be sent what the bridge adds; keep "
			  "the socket out of the agent's paths (/run/ward)", cfg->path, r->line, label(r, lab),
			  rule);
		return 2;
	}
	if (check || !agent)
		return 0;
	if (geteuid() != 0) {
		/* started without root, the bridge is the agent's uid: what
		 * connects for one connects for the other */
		log_warn("%s:%d: %s: ward started without root, so the agent shares the "
			 "bridge's uid and may connect to this socket itself, around the route's path and method "
			 "pins (the headers the bridge adds stay with the bridge); a root start keeps them apart",
			 cfg->path, r->line, label(r, lab));
		return 0;
	}
	/* no Landlock in force: the file modes alone keep the directory */
	if (!ll_in_force && (e = as_agent(&agent->user, try_make_file, dir)) != EACCES && e != EPERM && e != EROFS) {
		if (e == AS_AGENT_FAILED)
			return cannot_try(cfg, r);
		log_error("%s:%d: %s: %s", cfg->path, r->line, label(r, lab),
			  e == 0 ? "with no Landlock in force, the agent's user may create files in the socket's "
				   "directory: it could put its own socket there; keep the socket in a directory "
				   "only root and the bridge may write"
				 : "its directory could not be judged as the agent's user: refused rather than "
				   "assumed safe");
		return 2;
	}
	if (stat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
		return 0; /* nothing there yet to try: judged by its directory alone */
	e = as_agent(&agent->user, try_connect_unix, path);
	if (e == AS_AGENT_FAILED)
		return cannot_try(cfg, r);
	if (e != EACCES && e != EPERM && e != ENOENT && e != ENOTDIR) {
		if (e == 0)
			log_error("%s:%d: %s: the agent's user (uid %d) may connect to it (mode "
				  "%04o, owner %d:%d) and go around the bridge; give it to the bridge's user alone "
				  "(chmod 0600)", cfg->path, r->line, label(r, lab), (int)agent->user.uid,
				  (unsigned)(st.st_mode & 07777), (int)st.st_uid, (int)st.st_gid);
		else
			log_error("%s:%d: %s: a connect as the agent's user could not be judged "
				  "(%s): refused rather than assumed safe", cfg->path, r->line, label(r, lab),
				  strerror(e));
		return 2;
	}
	return 0;
}

/* [proxy] ask_store: where ward keeps the answers of always. What the
 * agent could write there, the next session would allow: out of its
 * Landlock write rules, and, with no Landlock in force (gVisor), out of
 * its user's reach by the file's modes (a host user's file mounted into a
 * rootless podman is the agent's uid's). */
static int ask_store_private(const struct confine *agent, int ll_in_force, const struct ward_config *cfg,
			     const char *info, int check)
{
	const char *store = cfg->proxy.ask_store, *rule;
	char dir[PATH_MAX], *slash;
	int e;

	if (ll_in_force && (rule = rule_reaching(&cfg->landlock, info, store, 1))) {
		log_error("%s:%d: [proxy] ask_store %s is within the agent's Landlock write rule for %s: it could "
			  "add hosts the next session allows; keep it out of the agent's paths (/run/ward)",
			  cfg->path, cfg->proxy.line, store, rule);
		return 2;
	}
	if (ll_in_force || check || !agent || geteuid() != 0)
		return 0;
	e = as_agent(&agent->user, try_append, store);
	if (e == ENOENT) {
		snprintf(dir, sizeof dir, "%s", store);
		slash = strrchr(dir, '/');
		*(slash == dir ? slash + 1 : slash) = '\0';
		e = as_agent(&agent->user, try_make_file, dir);
	}
	if (e == AS_AGENT_FAILED) {
		log_error("%s:%d: [proxy] ask_store %s: ward cannot become the agent's user to check it", cfg->path,
			  cfg->proxy.line, store);
		return 3;
	}
	if (e != EACCES && e != EPERM && e != EROFS && e != ENOENT && e != ENOTDIR && e != ELOOP) {
		log_error("%s:%d: [proxy] ask_store %s: %s: it could add hosts the next session allows; make it "
			  "root's alone, or leave ask_store unset", cfg->path, cfg->proxy.line, store,
			  e == 0 ? "with no Landlock in force, the agent's user may write it (its modes and owner)"
				 : "the agent's reach could not be judged");
		return 2;
	}
	return 0;
}

int reach_upstreams(const struct confine *agent, const struct ll_ruleset *ll, const struct route_table *t,
		    const struct ward_config *cfg, int check)
{
	char *info;
	int i, j, h, rc = 0, ll_in_force = ll && ll->fd >= 0;

	if (!t->n)
		return 0; /* no route: nothing to judge, and no mount table to read */
	info = mountinfo();
	/* without Landlock in force the config file is the agent's to read if
	 * its modes say so: a header written there is tried as the agent */
	for (i = 0; !rc && !ll_in_force && agent && !check && geteuid() == 0 && cfg->path && i < t->n; i++)
		for (h = 0; !rc && h < t->v[i].n_headers; h++)
			if (!t->v[i].from_mcp && !t->v[i].headers[h].source && !t->v[i].headers[h].env) {
				int e = as_agent(&agent->user, try_read, cfg->path);
				if (e == AS_AGENT_FAILED)
					rc = cannot_try(cfg, &t->v[i]);
				else if (e != EACCES) {
					log_error("%s:%d: [route %s]'s header %s is written in the config, which the "
						  "agent's user may read (no Landlock in force): take it from a file "
						  "(@PATH) or make the config root's alone", cfg->path, t->v[i].line,
						  t->v[i].name, t->v[i].headers[h].name);
					rc = 2;
				}
			}

	for (i = 0; !rc && i < t->n; i++) {
		int seen = 0;
		if (t->v[i].up->kind != UP_UNIX)
			continue;
		for (j = 0; j < i; j++)
			seen |= t->v[j].up == t->v[i].up; /* [mcp]'s servers share one */
		if (!seen)
			rc = unix_upstream_private(agent, ll_in_force, cfg, info, &t->v[i], check);
	}
	/* the proxy's approver: an agent that reached its socket could answer
	 * its own questions */
	for (i = 0; !rc && i < t->n; i++)
		if (t->v[i].proxy && t->v[i].proxy->has_ask && !t->v[i].proxy->ask_terminal &&
		    t->v[i].proxy->ask.kind == UP_UNIX) {
			struct route ask = { .name = "proxy", .line = t->v[i].line, .up = &t->v[i].proxy->ask,
					     .proxy = t->v[i].proxy };
			rc = unix_upstream_private(agent, ll_in_force, cfg, info, &ask, check);
		}
	/* where ward keeps the answers of always: what the agent could write
	 * there, the next session would allow */
	if (!rc && cfg->proxy.has && cfg->proxy.has_ask && cfg->proxy.ask_store)
		rc = ask_store_private(agent, ll_in_force, cfg, info, check);
	free(info);
	return rc;
}
