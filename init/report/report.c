#define _GNU_SOURCE
#include "init/report/report.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/envref.h"
#include "common/source.h"
#include "common/parse.h"
#include "init/config/names.h"
#include "init/report/json.h"
#include "mcp-bridge/credfile.h"
#include "mcp-bridge/http.h"
#include "mcp-bridge/tls.h"


/* A JSON string even for bytes that are not UTF-8 (jansson refuses those,
 * and a warning must never vanish): such bytes become '?'. */
static json_t *strings(char *const *v, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, jstr(v[i]));
	return a;
}

static json_t *supervise(const struct ward_config *cfg)
{
	json_t *o = json_object(), *rw = json_array();
	char b1[32], b2[32], line[80];
	int i;

	json_object_set_new(o, "restart", jstr(restart_names[cfg->restart]));
	json_object_set_new(o, "restart_delay", jstr(fmt_duration(cfg->restart_delay_ms, b1, sizeof b1)));
	json_object_set_new(o, "restart_limit", json_integer(cfg->restart_limit));
	json_object_set_new(o, "grace", jstr(fmt_duration(cfg->grace_ms, b1, sizeof b1)));
	json_object_set_new(o, "forward_to", jstr(forward_names[cfg->forward_to]));
	for (i = 1; i < WARD_NSIG; i++) {
		if (cfg->rewrite[i] < 0)
			continue;
		snprintf(line, sizeof line, "%s:%s", signal_name(i, b1, sizeof b1),
			 cfg->rewrite[i] ? signal_name(cfg->rewrite[i], b2, sizeof b2) : "0");
		json_array_append_new(rw, jstr(line));
	}
	json_object_set_new(o, "signal_rewrite", rw);
	return o;
}

static void rlim_str(rlim_t v, char *buf, size_t size)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, size, "unlimited");
	else
		snprintf(buf, size, "%llu", (unsigned long long)v);
}

static json_t *agent_json(const struct confine *agent, const struct ward_config *cfg)
{
	json_t *o = json_object(), *rl = json_array();
	char b1[32], b2[32], line[96];
	int i;

	if (cfg->command) {
		for (i = 0; cfg->command[i]; i++)
			;
		json_object_set_new(o, "command", strings(cfg->command, i));
	} else {
		json_object_set_new(o, "command", jstr("from ward's command line"));
	}
	if (agent) {
		const struct user_ids *u = &agent->user;
		json_t *user = json_object(), *groups = json_array();
		json_object_set_new(user, "name", u->name[0] ? jstr(u->name) : json_null());
		json_object_set_new(user, "uid", json_integer(u->uid));
		json_object_set_new(user, "gid", json_integer(u->gid));
		for (i = 0; i < u->ngroups; i++)
			json_array_append_new(groups, json_integer(u->groups[i]));
		json_object_set_new(user, "groups", groups);
		json_object_set_new(o, "user", user);
		json_object_set_new(o, "capabilities", jstr("none (every set cleared, bounding and ambient too)"));
		json_object_set_new(o, "no_new_privs", json_true());
	} else {
		json_object_set_new(o, "user", jstr("ward's own (no [agent] user)"));
		json_object_set_new(o, "capabilities", jstr("ward's own"));
		json_object_set_new(o, "no_new_privs", json_false());
	}
	if (agent && geteuid() != 0) {
		snprintf(line, sizeof line, "without root (uid %d): the agent, the bridge and ward share it", (int)getuid());
		json_object_set_new(o, "start", jstr(line));
	}
	json_object_set_new(o, "cwd", jstr(cfg->cwd ? cfg->cwd : "the directory ward starts in"));
	if (cfg->umask_set) {
		snprintf(line, sizeof line, "%04o", cfg->umask);
		json_object_set_new(o, "umask", jstr(line));
	} else {
		json_object_set_new(o, "umask", jstr("inherited"));
	}
	if (cfg->has_agent) {
		json_object_set_new(o, "env", strings(cfg->env, cfg->n_env));
		json_object_set_new(o, "env_pass", strings(cfg->env_pass, cfg->n_env_pass));
	} else {
		json_object_set_new(o, "env", jstr("ward's own, passed through (no [agent] section)"));
	}
	for (i = 0; i < cfg->n_rlimits; i++) {
		rlim_str(cfg->rlimits[i].soft, b1, sizeof b1);
		rlim_str(cfg->rlimits[i].hard, b2, sizeof b2);
		snprintf(line, sizeof line, "%s=%s:%s", rlimit_name(cfg->rlimits[i].resource), b1, b2);
		json_array_append_new(rl, jstr(line));
	}
	json_object_set_new(o, "rlimits", rl);
	json_object_set_new(o, "writable", strings(cfg->writable, cfg->n_writable));
	return o;
}

static json_t *landlock(const struct confine *agent, const struct ll_ruleset *ll, const struct ward_config *cfg)
{
	const struct ll_policy *p = &cfg->landlock;
	const struct ll_ruleset *rs = ll;
	json_t *o = json_object(), *scope = json_array(), *notes = json_array();
	char names[512];
	int i;

	json_object_set_new(o, "mode", jstr(cfg->has_landlock ? ll_mode_names[p->mode] : "absent"));
	if (!cfg->has_landlock || p->mode == LL_OFF)
		return o;
	json_object_set_new(o, "kernel_abi", json_integer(rs->abi));
	json_object_set_new(o, "read", strings(p->read, p->n_read));
	json_object_set_new(o, "write", strings(p->write, p->n_write));
	/* as put in force: the bridge's ports are added to connect */
	json_object_set_new(o, "connect", json_ports(rs->connect, rs->n_connect));
	json_object_set_new(o, "bind", json_ports(rs->bind, rs->n_bind));
	json_object_set_new(o, "egress", jstr(egress_names[cfg->egress]));
	json_object_set_new(o, "egress_enforced_by",
			    jstr(agent && agent->egress ? (agent->egress > 1 ? "guard (required): inet stream sockets held to lo, datagram ones refused"
									      : "guard (best_effort): inet stream sockets held to lo, datagram ones refused")
							: "landlock ports only: any address"));
	if (agent && agent->egress && agent->port_range)
		json_object_set_new(o, "ephemeral_ports", json_pack("[i,i]", (int)(agent->port_range & 0xffff),
								    (int)(agent->port_range >> 16)));
	if (p->scopes & LL_SCOPE_ABSTRACT_UNIX)
		json_array_append_new(scope, jstr("abstract"));
	if (p->scopes & LL_SCOPE_SIGNAL)
		json_array_append_new(scope, jstr("signal"));
	json_object_set_new(o, "scope", scope);
	json_object_set_new(o, "handled", jstr(ll_fs_names(rs->handled_fs, names, sizeof names)));
	for (i = 0; i < rs->n_notes; i++)
		json_array_append_new(notes, jstr(rs->notes[i]));
	json_object_set_new(o, "degraded", notes);
	return o;
}

static json_t *seccomp(const struct sc_filter *sc, const struct ward_config *cfg)
{
	json_t *o = json_object(), *list = json_array();
	const char *names[128];
	size_t i, n;

	if (!cfg->has_seccomp || !cfg->seccomp.enabled) {
		json_object_set_new(o, "mode", jstr(cfg->has_seccomp ? "off" : "absent"));
		json_decref(list);
		return o;
	}
	json_object_set_new(o, "mode", jstr("default"));
	json_object_set_new(o, "rules", json_integer(sc->n_rules));
	json_object_set_new(o, "bpf_instructions", json_integer(sc->len));
	json_object_set_new(o, "deny", strings(cfg->seccomp.deny, cfg->seccomp.n_deny));
	json_object_set_new(o, "allow", strings(cfg->seccomp.allow, cfg->seccomp.n_allow));
	n = sc_default_names(names, sizeof names / sizeof names[0], 0);
	for (i = 0; i < n; i++) {
		int j, allowed = 0;
		for (j = 0; j < cfg->seccomp.n_allow; j++)
			allowed |= strcmp(cfg->seccomp.allow[j], names[i]) == 0;
		if (!allowed)
			json_array_append_new(list, jstr(names[i]));
	}
	json_object_set_new(o, "default_denied", list);
	return o;
}

static json_t *bridge(const struct route_table *t, const struct ward_config *cfg)
{
	json_t *o = json_object(), *routes = json_array();
	char line[512];
	int i, m, h;

	if (geteuid() != 0) {
		snprintf(line, sizeof line, "ward's own, uid %d (started without root)", (int)getuid());
		json_object_set_new(o, "user", jstr(line));
	} else {
		json_object_set_new(o, "user", jstr(cfg->bridge_user ? cfg->bridge_user : BRIDGE_USER_DEFAULT " (default)"));
	}
	for (i = 0; i < t->n; i++) {
		const struct route *r = &t->v[i];
		json_t *ro, *hdrs;
		size_t off = 0;

		if (r->proxy) {
			json_array_append_new(routes, json_proxy(r->proxy));
			continue;
		}
		ro = json_object();
		hdrs = json_array();
		json_object_set_new(ro, "name", jstr(r->name));
		snprintf(line, sizeof line, "127.0.0.1:%u", r->port);
		json_object_set_new(ro, "listen", jstr(line));
		json_object_set_new(ro, "upstream", jstr(r->up->desc));
		json_object_set_new(ro, "protocol", jstr(r->stream ? "stream" : "http"));
		if (r->stream) { /* no request to pin, no header to add */
			json_array_append_new(routes, ro);
			continue;
		}
		line[0] = '\0';
		for (m = 0; m < 32; m++)
			if (r->methods & (1u << m))
				off += (size_t)snprintf(line + off, sizeof line - off, "%s%s", off ? "," : "",
							http_method_str((enum http_method)m));
		json_object_set_new(ro, "methods", jstr(line));
		json_object_set_new(ro, "path", jstr(r->path));
		json_object_set_new(ro, "host", jstr(r->host ? r->host : r->up->default_host));
		for (h = 0; h < r->n_headers; h++) {
			/* never a secret: only where it comes from */
			snprintf(line, sizeof line, "%s: %s%s%s", r->headers[h].name,
				r->headers[h].source && r->headers[h].value ? r->headers[h].value : "",
				r->headers[h].source ? "@" : "",
				 r->headers[h].source ? r->headers[h].source : "(value hidden)");
			json_array_append_new(hdrs, jstr(line));
		}
		json_object_set_new(ro, "headers", hdrs);
		if (r->cred) {
			/* a login: its file and where it is refreshed, never a token */
			snprintf(line, sizeof line, "Authorization: Bearer, the access token of %s (%s), refreshed at "
				 "%s%s", r->cred->path, r->cred->entry, r->cred->up.desc, r->cred->token_path);
			json_object_set_new(ro, "login", jstr(line));
		}
		if (r->tools) {
			/* which MCP tools the agent may call: each call judged whole (tools.h) */
			char rules[1024];
			tools_describe(r->tools, rules, sizeof rules);
			json_object_set_new(ro, "tools", jstr(rules));
		}
		json_array_append_new(routes, ro);
	}
	json_object_set_new(o, "routes", routes);
	return o;
}

static json_t *files(const struct ward_config *cfg)
{
	json_t *a = json_array();
	char mode[8];
	int i;

	for (i = 0; i < cfg->n_files; i++) {
		json_t *f = json_object();
		json_object_set_new(f, "name", jstr(cfg->files[i].name));
		json_object_set_new(f, "source", jstr(cfg->files[i].source));
		json_object_set_new(f, "target", jstr(cfg->files[i].target));
		snprintf(mode, sizeof mode, "%04o", cfg->files[i].mode);
		json_object_set_new(f, "mode", jstr(mode));
		json_array_append_new(a, f);
	}
	return a;
}

static void warn(json_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(json_t *w, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	json_array_append_new(w, jstr(buf));
}

/* A route's login as the start will find it: a file that is no login
 * would stop the start (bridgeproc.c), and is said now. */
static void login_warning(json_t *w, const struct route *r)
{
	char *buf = NULL, why[300];
	size_t got = 0;
	struct cred_tokens t;

	if (source_read(r->cred->path, CRED_MAX_FILE, &buf, &got, why, sizeof why) == 0 &&
	    credfile_parse(r->cred->format, buf, got, r->cred->entry, &t, why, sizeof why) == 0)
		why[0] = '\0';
	if (buf) {
		explicit_bzero(buf, got);
		free(buf);
	}
	explicit_bzero(&t, sizeof t);
	if (why[0])
		warn(w, "[route %s] credential %s: %s: the start would stop", r->name, r->cred->path, why);
}

/* A path list entry that covers a whole system tree. */
static int is_root_of(const char *path, const char *tree)
{
	size_t n = strlen(tree);
	return strncmp(path, tree, n) == 0 && (path[n] == '\0' || (path[n] == '/' && path[n + 1] == '\0'));
}

/* a tcp: upstream on this machine's loopback (127.0.0.0/8, ::1), however
 * it was written (tcp:localhost is 127.0.0.1) */
static int loopback(const struct upstream *u)
{
	if (u->addr.ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)&u->addr)->sin_addr.s_addr) >> 24) == 127;
	return u->addr.ss_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)&u->addr)->sin6_addr);
}

/* Is the agent refused UDP sockets: by its filter (deny = udp), or by the
 * egress guard, which makes stream sockets only, when it is required (a
 * best_effort guard may give way to ports alone)? */
static int udp_denied(const struct confine *agent, const struct ward_config *cfg)
{
	int i;

	if (agent && agent->egress > 1)
		return 1;
	if (!cfg->has_seccomp || !cfg->seccomp.enabled)
		return 0;
	for (i = 0; i < cfg->seccomp.n_deny; i++)
		if (strcmp(cfg->seccomp.deny[i], "udp") == 0)
			return 1;
	return 0;
}

/* A route header's ${VAR} that ward's environment does not hold now: the
 * start would stop on it. */
struct unset_ctx {
	json_t *w;
	const char *route;
};

static int warn_unset(void *ctx, const char *name)
{
	const struct unset_ctx *u = ctx;

	if (!getenv(name))
		warn(u->w, "[route %s] a header takes ${%s}, which ward's environment does not have: the start "
			   "would stop (docker run -e %s, a pod's env)", u->route, name, name);
	return 0;
}

static json_t *weak_settings(const struct confine *agent, const struct ll_ruleset *ll, const struct route_table *routes,
			     const struct ward_config *cfg)
{
	static const char *const trees[] = { "/proc", "/sys", "/dev", "/etc", "/usr", "/boot" };
	const struct ll_policy *p = &cfg->landlock;
	json_t *w = json_array();
	size_t t;
	int i;

	if (!cfg->path) {
		warn(w, "no config file: ward is a plain init and confines nothing; give one with -c or $WARD_CONFIG");
		return w;
	}
	if (!agent)
		warn(w, "no [agent] user: the agent keeps ward's uid and capabilities; set [agent] user");
	else if (agent->user.uid == 0)
		warn(w, "[agent] runs as uid 0 (allow_root = yes): without capabilities, but root-owned "
			"files stay writable where Landlock allows; use an unprivileged user");
	if (agent && geteuid() != 0)
		warn(w, "started without root (uid %d): the agent, the bridge and ward share one uid, kept apart by "
			"Landlock's domain and scopes (added), by ward and the bridge not being dumpable and by the "
			"agent's seccomp filter; weaker than a root start: the bridge's secret files are that uid's "
			"(only the agent's Landlock rules keep them from it) and unix: upstreams are its to connect "
			"to around the bridge", (int)getuid());
	if (!cfg->has_landlock || p->mode == LL_OFF)
		warn(w, "landlock is %s: the agent reaches every path and port its user can; add [landlock] "
			"mode = hard_requirement with read/write lists",
		     cfg->has_landlock ? "off" : "absent");
	if (agent && cfg->has_landlock && p->mode != LL_OFF && !agent->egress)
		warn(w, "[landlock] egress = ports: the agent's TCP reaches any address on the ports it may "
			"connect to (the bridge's among them), and a listen() on a socket it never bound may take "
			"a tcp: upstream's port; egress = loopback holds it to lo and off those ports");
	if (cfg->has_landlock && p->mode == LL_BEST_EFFORT)
		for (i = 0; i < ll->n_notes; i++)
			warn(w, "landlock best_effort is degraded on this kernel (ABI %d): %s", ll->abi,
			     ll->notes[i]);
	if (cfg->has_landlock && p->mode != LL_OFF) {
		/* judge where a path leads (/tmp/.., a symlink to /); "." that is
		 * / was refused before this report. Writes first, then reads. */
		for (i = 0; i < p->n_write + p->n_read; i++) {
			int writes = i < p->n_write;
			const char *rule = writes ? p->write[i] : p->read[i - p->n_write];
			char real[PATH_MAX];
			const char *path = realpath(rule, real) ? real : rule;
			if (strcmp(path, "/") == 0 && writes)
				warn(w, "[landlock] write = %s: the whole filesystem is writable; list the workspace "
					"and state directories instead", rule);
			else if (strcmp(path, "/") == 0)
				warn(w, "[landlock] read = %s: every file the agent's user can read is readable, "
					"mounted secrets included; list the trees it needs", rule);
			for (t = 0; writes && t < sizeof trees / sizeof trees[0]; t++)
				if (is_root_of(path, trees[t]))
					warn(w, "[landlock] write = %s: the agent may write all of %s; list single "
						"files (e.g. /dev/null) or subdirectories", rule, trees[t]);
		}
		for (i = 0; i < p->n_connect; i++)
			if (p->connect[i].lo <= 1 && p->connect[i].hi == 65535)
				warn(w, "[landlock] connect allows every TCP port; list the ports the agent needs");
		/* (a start without root adds both scopes itself) */
		if (!(p->scopes & LL_SCOPE_SIGNAL) && geteuid() == 0)
			warn(w, "[landlock] scope lacks signal: the agent may signal processes outside its "
				"sandbox that its uid owns; set scope = abstract signal");
		if (!(p->scopes & LL_SCOPE_ABSTRACT_UNIX) && geteuid() == 0)
			warn(w, "[landlock] scope lacks abstract: the agent may connect to abstract unix sockets "
				"outside its sandbox; set scope = abstract signal");
	}
	if (!cfg->has_seccomp || !cfg->seccomp.enabled)
		warn(w, "seccomp is %s: no system call filter (namespaces, mount, ptrace, AF_VSOCK stay open "
			"to the agent); set [seccomp] mode = default",
		     cfg->has_seccomp ? "off" : "absent");
	else
		for (i = 0; i < cfg->seccomp.n_allow; i++)
			warn(w, "[seccomp] allow = %s: taken out of the default deny list", cfg->seccomp.allow[i]);
	for (i = 0; i < routes->n; i++) {
		const struct route *r = &routes->v[i];
		struct unset_ctx u = { w, r->name };
		int h;
		for (h = 0; h < r->n_headers; h++)
			if (r->headers[h].env)
				(void)envref_names(r->headers[h].value, warn_unset, &u, NULL);
		if (r->up->name[0] && !udp_denied(agent, cfg))
			warn(w, "[route %s] resolves %s: without [seccomp] deny = udp the agent could answer the "
				"bridge's DNS queries on a loopback resolver, and choose where the route goes", r->name,
			     r->up->name);
		if (r->proxy) {
			if (!udp_denied(agent, cfg))
				warn(w, "[proxy] resolves the hosts it tunnels to: without [seccomp] deny = udp the "
					"agent could answer the bridge's DNS queries on a loopback resolver");
			continue;
		}
		if (r->cred)
			login_warning(w, r);
		if (r->up->kind == UP_TCP && r->n_headers && !loopback(r->up))
			warn(w, "[route %s] adds headers and sends them in clear over %s; use a tls: upstream",
			     r->name, r->up->desc);
		if (r->stream) {
			/* the exception it is for: said, since nothing is checked on it */
			warn(w, "[route %s] protocol = stream: the agent may send anything to %s, nothing checked",
			     r->name, r->up->desc);
			continue;
		}
		if (strcmp(r->path, "/") == 0)
			warn(w, "[route %s] path = /: every path of the upstream is reachable; give the endpoint's "
				"path", r->name);
	}
	/* mcp.json's servers: those left out, and a socket not there (a
	 * daemon's endpoint, a loopback relay nobody made) */
	for (i = 0; i < routes->n_skipped; i++)
		warn(w, "mcp: %s: left out of the agent's MCP servers (the others work)", routes->skipped[i].why);
	if (routes->n_skipped_all > routes->n_skipped)
		warn(w, "mcp: %d more servers left out", routes->n_skipped_all - routes->n_skipped);
	for (i = 0; i < routes->n; i++)
		if (routes->v[i].from_mcp && upstream_unix_absent(routes->v[i].up))
			warn(w, "[mcp] server %s: its upstream %s is not a socket here: its calls fail until it is",
			     routes->v[i].name + 4, routes->v[i].up->desc);
	for (i = 0; i < cfg->n_files; i++)
		if (cfg->files[i].mode & 044)
			warn(w, "[file %s] mode %04o: readable by other users; 0600 keeps it private",
			     cfg->files[i].name, cfg->files[i].mode);
	return w;
}

json_t *report_policy(const struct confine *agent, const struct ll_ruleset *ll, const struct sc_filter *sc,
		      const struct route_table *routes, const struct ward_config *cfg)
{
	json_t *o = json_object(), *mcp;

	json_object_set_new(o, "config", cfg->path ? jstr(cfg->path) : json_null());
	json_object_set_new(o, "kernel", json_pack("{s:i}", "landlock_abi", ll_abi()));
	json_object_set_new(o, "supervise", supervise(cfg));
	json_object_set_new(o, "agent", agent_json(agent, cfg));
	json_object_set_new(o, "landlock", landlock(agent, ll, cfg));
	json_object_set_new(o, "seccomp", seccomp(sc, cfg));
	json_object_set_new(o, "bridge", routes->n || cfg->has_mcp ? bridge(routes, cfg) : json_null());
	if (cfg->has_mcp) {
		char port[16];
		mcp = json_object();
		json_object_set_new(mcp, "source", jstr(cfg->mcp_source));
		json_object_set_new(mcp, "target", jstr(cfg->mcp_target));
		json_object_set_new(mcp, "upstream", jstr(cfg->mcp_has_up ? cfg->mcp_up.desc : "each server's own URL"));
		if (!cfg->mcp_has_up) {
			json_object_set_new(mcp, "tls_ca", jstr(cfg->mcp_tls_ca ? cfg->mcp_tls_ca : TLS_DEFAULT_CA));
			json_object_set_new(mcp, "loopback", cfg->mcp_loopback ? jstr(cfg->mcp_loopback) : json_null());
			json_object_set_new(mcp, "auth", cfg->mcp_auth ? jstr(cfg->mcp_auth) : json_null());
		}
		snprintf(port, sizeof port, "%u", cfg->mcp_port);
		json_object_set_new(mcp, "first_port", jstr(port));
		json_object_set_new(mcp, "required", json_boolean(!cfg->mcp_optional));
	} else {
		mcp = json_null();
	}
	json_object_set_new(o, "mcp", mcp);
	json_object_set_new(o, "files", files(cfg));
	json_object_set_new(o, "evidence", cfg->evidence ? jstr(cfg->evidence) : json_null());
	json_object_set_new(o, "warnings", weak_settings(agent, ll, routes, cfg));
	return o;
}

/* ---- the table: every layer's keys, one value per row (short values
 * share a row), nested objects as key=value pairs ---- */

#define WRAP 76

static void scalar(const json_t *v, char *buf, size_t size)
{
	if (json_is_string(v))
		snprintf(buf, size, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, size, "%s", json_is_true(v) ? "yes" : "no");
	else if (json_is_null(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "?");
}


/* An object as "k=v k=v" (arrays inside joined by commas). */
static void flat(const json_t *o, char *buf, size_t size)
{
	const char *k;
	json_t *v;
	size_t off = 0;

	buf[0] = '\0';
	json_object_foreach((json_t *)o, k, v) {
		char val[1024];
		if (json_is_array(v)) {
			size_t i, vo = 0;
			json_t *e;
			if (!json_array_size(v))
				continue;
			val[0] = '\0';
			json_array_foreach(v, i, e) {
				char one[512];
				scalar(e, one, sizeof one);
				vo += (size_t)snprintf(val + vo, sizeof val - vo, "%s%s", i ? "," : "", one);
				if (vo >= sizeof val)
					vo = sizeof val - 1;
			}
		} else {
			scalar(v, val, sizeof val);
		}
		off += (size_t)snprintf(buf + off, size - off, "%s%s=%s", off ? " " : "", k, val);
		if (off >= size)
			return;
	}
}

static void row(FILE *out, const char **layer, const char *key, const char *value)
{
	fprintf(out, "%-10s %-16s %s\n", *layer, key, value);
	*layer = "";
}

static void rows(FILE *out, const char *layer, const json_t *o)
{
	const char *k;
	json_t *v;
	char buf[2048];

	if (json_is_null(o)) {
		row(out, &layer, "-", "(not configured)");
		return;
	}
	json_object_foreach((json_t *)o, k, v) {
		if (json_is_array(v) && strcmp(k, "default_denied") == 0) {
			snprintf(buf, sizeof buf, "%zu system calls (ward --check --json lists them)",
				 json_array_size(v));
			row(out, &layer, k, buf);
		} else if (json_is_array(v)) {
			size_t i, off = 0;
			json_t *e;
			/* a command stays on one row, however long */
			int one_row = strcmp(k, "command") == 0;
			if (!json_array_size(v)) {
				row(out, &layer, k, "none");
				continue;
			}
			buf[0] = '\0';
			json_array_foreach(v, i, e) {
				char one[1024];
				if (json_is_object(e))
					flat(e, one, sizeof one);
				else
					scalar(e, one, sizeof one);
				/* short values share a row up to WRAP columns */
				if (off && !one_row && (json_is_object(e) || off + 1 + strlen(one) > WRAP - 28)) {
					row(out, &layer, k, buf);
					off = 0;
					buf[0] = '\0';
				}
				off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", off ? " " : "", one);
				if (off >= sizeof buf)
					off = sizeof buf - 1;
			}
			row(out, &layer, k, buf);
		} else if (json_is_object(v)) {
			flat(v, buf, sizeof buf);
			row(out, &layer, k, buf);
		} else {
			scalar(v, buf, sizeof buf);
			row(out, &layer, k, buf);
		}
	}
}

int report_print(const struct confine *agent, const struct ll_ruleset *ll, const struct sc_filter *sc,
		 const struct route_table *routes, const struct ward_config *cfg, int as_json, FILE *out)
{
	json_t *r = report_policy(agent, ll, sc, routes, cfg), *w;
	static const char *const layers[] = { "supervise", "agent", "landlock", "seccomp", "bridge", "mcp" };
	size_t i, n;
	int abi = ll_abi();

	if (!r)
		return -1;
	w = json_object_get(r, "warnings");
	n = json_array_size(w);
	if (as_json) {
		json_dumpf(r, out, JSON_INDENT(2));
		fputc('\n', out);
	} else {
		char kernel[32];
		if (abi > 0)
			snprintf(kernel, sizeof kernel, "Landlock ABI %d", abi);
		else
			snprintf(kernel, sizeof kernel, "no Landlock");
		fprintf(out, "ward --check: %s (this kernel: %s)\n\n", cfg->path ? cfg->path : "no config file",
			kernel);
		fprintf(out, "%-10s %-16s %s\n", "LAYER", "SETTING", "VALUE");
		for (i = 0; i < sizeof layers / sizeof layers[0]; i++)
			rows(out, layers[i], json_object_get(r, layers[i]));
		{
			json_t *f = json_object_get(r, "files"), *e;
			const char *layer = "files";
			size_t j;
			char buf[1024];
			json_array_foreach(f, j, e) {
				flat(e, buf, sizeof buf);
				const char *name = json_string_value(json_object_get(e, "name"));
				row(out, &layer, name ? name : "?", buf);
			}
		}
		if (cfg->evidence) {
			const char *layer = "evidence";
			row(out, &layer, "path", cfg->evidence);
		}
		fputc('\n', out);
		if (!n)
			fputs("no warnings\n", out);
		for (i = 0; i < n; i++)
			fprintf(out, "warning: %s\n", json_string_value(json_array_get(w, i)));
	}
	json_decref(r);
	return (int)n;
}
