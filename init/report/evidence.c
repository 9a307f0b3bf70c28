#define _GNU_SOURCE
#include "init/report/evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init/sandbox/ephemeral.h"
#include "init/supervise/bridgeproc.h"
#include "init/supervise/guardproc.h"
#include "init/config/names.h"
#include "common/log.h"
#include "common/parse.h"
#include "child/privdrop.h"
#include "init/config/names.h"
#include "init/report/json.h"
#include "common/version.h"

/* The /proc/PID/status fields that prove credentials and confinement. */
static const char *const status_keys[] = { "Uid",    "Gid",    "Groups", "CapInh",	   "CapPrm",
					   "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp",
					   "Seccomp_filters" };

static json_t *proc_status(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0, i;
	json_t *o = json_object();
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		json_object_set_new(o, "error", json_string(strerror(errno)));
		return o;
	}
	/* whole lines: Groups can be longer than any fixed buffer */
	while (getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':'), *v;
		if (!colon)
			continue;
		*colon = '\0';
		for (i = 0; i < sizeof status_keys / sizeof status_keys[0]; i++) {
			if (strcmp(line, status_keys[i]) != 0)
				continue;
			v = colon + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			json_object_set_new(o, line, jstr(v));
		}
	}
	free(line);
	fclose(f);
	return o;
}

/* /proc/PID/limits: "Max open files  4096  4096  files" */
static json_t *proc_limits(pid_t pid)
{
	static const struct {
		const char *label, *name;
	} map[] = {
		{ "Max cpu time", "cpu" },	       { "Max file size", "fsize" },
		{ "Max data size", "data" },	       { "Max stack size", "stack" },
		{ "Max core file size", "core" },      { "Max resident set", "rss" },
		{ "Max processes", "nproc" },	       { "Max open files", "nofile" },
		{ "Max locked memory", "memlock" },    { "Max address space", "as" },
		{ "Max file locks", "locks" },	       { "Max pending signals", "sigpending" },
		{ "Max msgqueue size", "msgqueue" },   { "Max nice priority", "nice" },
		{ "Max realtime priority", "rtprio" }, { "Max realtime timeout", "rttime" },
	};
	char path[64], line[256];
	json_t *o = json_object();
	FILE *f;
	size_t i;

	snprintf(path, sizeof path, "/proc/%d/limits", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return o;
	while (fgets(line, sizeof line, f)) {
		for (i = 0; i < sizeof map / sizeof map[0]; i++) {
			size_t l = strlen(map[i].label);
			char soft[32], hard[32];
			if (strncmp(line, map[i].label, l) != 0 || line[l] != ' ')
				continue;
			if (sscanf(line + 26, "%31s %31s", soft, hard) == 2)
				json_object_set_new(o, map[i].name, json_pack("[s,s]", soft, hard));
		}
	}
	fclose(f);
	return o;
}

static json_t *fs_rights(uint64_t rights)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < 16; i++)
		if (rights & (1ULL << i))
			json_array_append_new(a, json_string(ll_fs_right_name(1ULL << i)));
	return a;
}

/* Landlock's bits of one kind by the names the evidence gives them. */
struct bit_name {
	uint64_t bit;
	const char *name; /* NULL: the end */
};

static const struct bit_name net_bits[] = {
	{ LL_NET_BIND_TCP, "bind_tcp" }, { LL_NET_CONNECT_TCP, "connect_tcp" }, { 0, NULL } };
static const struct bit_name scope_bits[] = {
	{ LL_SCOPE_ABSTRACT_UNIX, "abstract_unix_socket" }, { LL_SCOPE_SIGNAL, "signal" }, { 0, NULL } };
static const struct bit_name restrict_bits[] = {
	{ LL_LOG_SAME_EXEC_OFF, "log_same_exec_off" }, { LL_LOG_NEW_EXEC_ON, "log_new_exec_on" }, { 0, NULL } };

static json_t *bit_names(uint64_t bits, const struct bit_name *t)
{
	json_t *a = json_array();

	for (; t->name; t++)
		if (bits & t->bit)
			json_array_append_new(a, json_string(t->name));
	return a;
}

static json_t *landlock_json(const struct evidence_src *e, json_t *degr)
{
	const struct ll_ruleset *ll = e->ll;
	const struct ll_policy *p = &e->cfg->landlock;
	json_t *o, *rules;
	int i;

	if (!e->cfg->has_landlock || p->mode == LL_OFF) {
		json_array_append_new(degr, json_string("landlock: off (no [landlock] section or mode = off)"));
		return json_pack("{s:b}", "enabled", 0);
	}
	o = json_pack("{s:b,s:s,s:i}", "enabled", ll->fd >= 0, "mode", ll_mode_names[p->mode], "abi", ll->abi);
	json_object_set_new(o, "handled_fs", fs_rights(ll->handled_fs));
	json_object_set_new(o, "handled_net", bit_names(ll->handled_net, net_bits));
	json_object_set_new(o, "scoped", bit_names(ll->scoped, scope_bits));
	json_object_set_new(o, "restrict_flags", bit_names(ll->restrict_flags, restrict_bits));
	rules = json_array();
	for (i = 0; i < ll->n_rules; i++)
		json_array_append_new(rules, json_pack("{s:o,s:s,s:o}", "path", jstr(ll->rules[i].path), "type",
						       ll->rules[i].is_dir ? "dir" : "file", "access",
						       fs_rights(ll->rules[i].access)));
	json_object_set_new(o, "rules", rules);
	/* what was put in force (the bridge's ports included), not the config */
	json_object_set_new(o, "connect_tcp", json_ports(ll->connect, ll->n_connect));
	json_object_set_new(o, "bind_tcp", json_ports(ll->bind, ll->n_bind));
	json_object_set_new(o, "net_rules", json_integer(ll->n_net_rules));
	for (i = 0; i < ll->n_notes; i++) {
		char *s;
		if (asprintf(&s, "landlock: %s", ll->notes[i]) >= 0) {
			json_array_append_new(degr, json_string(s));
			free(s);
		}
	}
	return o;
}

static void hex(const unsigned char *b, size_t n, char *out)
{
	size_t i;
	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* The filter's SHA-256 as 64 hex digits and a NUL. */
static void digest_hex(const struct sc_filter *f, char out[65])
{
	unsigned char d[32];

	sc_digest(f, d);
	hex(d, sizeof d, out);
}

static json_t *seccomp_json(const struct evidence_src *e, json_t *degr)
{
	const struct sc_policy *p = &e->cfg->seccomp;
	const char *names[96];
	char h[65];
	json_t *o, *deny;
	size_t i, n;

	if (!e->sc) {
		json_array_append_new(degr, json_string("seccomp: off (no [seccomp] section or mode = off)"));
		return json_pack("{s:b}", "enabled", 0);
	}
	digest_hex(e->sc, h);
	o = json_pack("{s:b,s:s,s:s,s:i,s:i}", "enabled", 1, "mode", "default", "sha256", h,
		      "bpf_instructions", e->sc->len, "rules", e->sc->n_rules);
	deny = json_array();
	n = sc_default_names(names, 96, 0);
	for (i = 0; i < n; i++) {
		int j, allowed = 0;
		for (j = 0; j < p->n_allow; j++)
			allowed |= strcmp(p->allow[j], names[i]) == 0;
		if (!allowed)
			json_array_append_new(deny, json_string(names[i]));
	}
	for (i = 0; i < (size_t)p->n_deny; i++)
		json_array_append_new(deny, json_string(p->deny[i]));
	json_object_set_new(o, "denied", deny);
	return o;
}

/* Routes as configured, secrets left out: only the names of added headers. */
static json_t *bridge_json(const struct evidence_src *e)
{
	const struct bridgeproc *b = e->bridge;
	json_t *o, *routes = json_array();
	int i, h, m;

	for (i = 0; i < b->routes.n; i++) {
		const struct bridge_route *r = &b->routes.v[i];
		json_t *methods, *headers;
		if (r->proxy) {
			json_array_append_new(routes, json_proxy(&e->cfg->proxy));
			continue;
		}
		if (r->hidden) /* a login's token route: no listener, the bridge its only client */
			continue;
		methods = json_array();
		headers = json_array();
		for (m = 0; m < 32; m++)
			if (r->http.methods & (1u << m))
				json_array_append_new(methods, json_string(http_method_str((enum http_method)m)));
		for (h = 0; h < r->n_headers; h++)
			json_array_append_new(headers, json_stringn(r->headers[h], (size_t)(strchr(r->headers[h], ':') - r->headers[h])));
		if (r->cred) /* a login's access token, refreshed (refresh.h) */
			json_array_append_new(headers, json_string("Authorization"));
		if (r->stream) { /* bytes as they come: nothing pinned, nothing added */
			json_decref(methods);
			json_decref(headers);
			json_array_append_new(routes, json_pack("{s:s,s:i,s:o,s:s}", "name", r->name, "listen", r->port,
								 "upstream", jstr(r->up.desc), "protocol", "stream"));
			continue;
		}
		json_array_append_new(routes, json_pack("{s:s,s:i,s:o,s:s,s:o,s:o,s:o,s:o}", "name", r->name, "listen",
							 r->port, "upstream", jstr(r->up.desc), "protocol", "http",
							 "path", jstr(r->http.path), "host", jstr(r->http.host), "methods",
							 methods, "adds_headers", headers));
	}
	o = json_pack("{s:i,s:i,s:i,s:o}", "pid", e->bridge_pid ? (int)*e->bridge_pid : 0, "uid",
		      (int)b->confine.user.uid, "upstreams_answering", b->health_ok, "routes", routes);
	if (e->bridge_pid && *e->bridge_pid > 0)
		json_object_set_new(o, "status", proc_status(*e->bridge_pid));
	if (b->sc.prog) {
		char h2[65];
		digest_hex(&b->sc, h2);
		json_object_set_new(o, "seccomp_sha256", json_string(h2));
	}
	{
		/* its Landlock is best effort: what this kernel left out */
		json_t *notes = json_array();
		for (i = 0; i < b->ll.n_notes; i++)
			json_array_append_new(notes, json_string(b->ll.notes[i]));
		json_object_set_new(o, "landlock_degraded", notes);
	}
	return o;
}

/* How the agent's TCP and UDP egress is held, from the kernel where it
 * can be read: the listener PID 1 holds is the kernel's "seccomp notify"
 * file (the agent's Seccomp_filters counts the guard's filter too). */
static json_t *egress_json(const struct evidence_src *e, const struct start_notes *notes, json_t *degr)
{
	const struct guardproc *g = e->guard;
	int level = e->confine ? e->confine->egress : 0;
	json_t *o = json_pack("{s:s,s:b}", "mode", egress_names[e->cfg->egress], "required", level > 1);

	if (e->egress_no_route) {
		json_object_set_new(o, "enforced_by", json_string("the network namespace: no route but the loopback's "
								  "(no guard: gVisor has no seccomp user notification)"));
		return o;
	}
	if (!level || !g || !g->active) {
		json_object_set_new(o, "enforced_by", json_string("landlock ports (any address)"));
		if (e->confine && e->cfg->has_landlock && e->cfg->landlock.mode != LL_OFF)
			json_array_append_new(degr, json_string("egress: by port only (egress = ports): the "
								"agent's TCP reaches any address on an allowed port"));
		return o;
	}
	if (notes->egress_err || !notes->egress_listener || guardproc_newest(g) < 0) {
		json_object_set_new(o, "enforced_by", json_string("landlock ports (any address)"));
		json_object_set_new(o, "error", json_string(notes->egress_err ? strerror(notes->egress_err)
									 : "no listener arrived"));
		json_array_append_new(degr, json_string("egress: the guard's filter is not in force (best_effort): "
							"by port only, on any address"));
		return o;
	}
	{
		char link[64], target[128];
		ssize_t n;
		snprintf(link, sizeof link, "/proc/self/fd/%d", guardproc_newest(g));
		n = readlink(link, target, sizeof target - 1);
		target[n > 0 ? n : 0] = '\0';
		json_object_set_new(o, "enforced_by", json_string("guard: every inet socket made by it, bound to lo"));
		json_object_set_new(o, "device", json_string("lo"));
		json_object_set_new(o, "listener", json_string(target));
		json_object_set_new(o, "agent_starts", json_integer(g->handed));
		json_object_set_new(o, "answers", json_string("socket(): made and bound to lo; connect() and Fast Open "
							       "to an address that is not local: ENETUNREACH at once"));
		/* the guard reads each socket's range back before handing it over */
		if (g->guard.port_range)
			json_object_set_new(o, "ephemeral_ports", json_pack("[i,i]", (int)(g->guard.port_range & 0xffff),
									    (int)(g->guard.port_range >> 16)));
		/* best_effort went on without keeping them off an upstream's port */
		if (e->eph && e->eph->n_kept && (e->eph->unsupported || e->eph->unreadable)) {
			char why[200];
			snprintf(why, sizeof why, "egress: listen() is not kept off tcp: upstream port %u (%s)",
				 e->eph->kept[0], e->eph->unreadable ? "the ephemeral range could not be read"
								     : "IP_LOCAL_PORT_RANGE needs Linux 6.3");
			json_array_append_new(degr, json_string(why));
		}
	}
	{
		/* PID 1 answers the listener: its own pid, the ids it makes the
		 * sockets with, and whether a refused connect fails at once */
		json_t *gs = json_pack("{s:s,s:i,s:i,s:i,s:b,s:o}", "in", "ward (PID 1's loop)", "pid", (int)getpid(),
				       "socket_uid", (int)g->guard.uid, "socket_gid", (int)g->guard.gid,
				       "connect_check", g->guard.rtnl >= 0,
				       "refusals",
				       e->cfg->refusals && g->guard.refusals.fd >= 0 ? json_string(e->cfg->refusals) : json_null());
		json_object_set_new(gs, "refused_so_far", json_integer((json_int_t)g->guard.refused));
		json_object_set_new(o, "guard", gs);
		if (g->guard.rtnl < 0)
			json_array_append_new(degr, json_string("egress: no route query: a refused connect waits on lo "
								"instead of failing at once"));
	}
	return o;
}

/* The owner of /proc/PID/environ: root's (0) once the process is not
 * dumpable, whatever its uid; -1 when it cannot be read. */
static int environ_owner(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	return stat(path, &st) == 0 ? (int)st.st_uid : -1;
}

/* How ward was started, and what keeps the agent from ward and the bridge
 * when they share one uid (a start without root): read from /proc. */
static json_t *start_json(const struct evidence_src *e, json_t *degr)
{
	json_t *o = json_pack("{s:b,s:i}", "root", geteuid() == 0, "uid", (int)getuid());

	if (!e->unprivileged) {
		json_object_set_new(o, "separation", json_string("uids"));
		return o;
	}
	json_object_set_new(o, "separation", json_string("one uid: Landlock domain and scopes, not dumpable, "
							 "the agent's seccomp filter"));
	json_object_set_new(o, "ward_environ_owner", json_integer(environ_owner(getpid())));
	if (e->bridge_pid && *e->bridge_pid > 0)
		json_object_set_new(o, "bridge_environ_owner", json_integer(environ_owner(*e->bridge_pid)));
	json_array_append_new(degr, json_string(
		"start: without root: the agent, the bridge and ward share one uid; the bridge's secret files "
		"are that uid's to read but for the agent's Landlock rules; unix: upstreams are the agent's "
		"to connect to"));
	return o;
}

char *evidence_json(const struct evidence_src *e, pid_t agent, const struct start_notes *notes)
{
	json_t *root, *degr = json_array(), *groups;
	char h[65], *text;
	int i;

	root = json_pack("{s:s,s:i}", "ward", WARD_VERSION, "agent_pid", (int)agent);
	/* the agent as the kernel sees it */
	json_object_set_new(root, "agent", proc_status(agent));
	json_object_set_new(root, "rlimits", proc_limits(agent));
	if (e->confine) {
		groups = json_array();
		for (i = 0; i < e->confine->user.ngroups; i++)
			json_array_append_new(groups, json_integer(e->confine->user.groups[i]));
		json_object_set_new(root, "user",
				    json_pack("{s:o,s:i,s:i,s:o}", "name", jstr(e->confine->user.name),
					      "uid", (int)e->confine->user.uid, "gid",
					      (int)e->confine->user.gid, "groups", groups));
	} else {
		json_array_append_new(degr, json_string("user: no privilege drop (no [agent] user)"));
	}
	if (notes->bounding_kept)
		json_array_append_new(degr, json_string(
			"capabilities: the bounding set is not empty (the runtime gave ward no CAP_SETPCAP); "
			"no_new_privs keeps it from being used"));
	if (notes->securebits_err)
		json_array_append_new(degr, json_string("capabilities: securebits not locked"));
	json_object_set_new(root, "landlock", landlock_json(e, degr));
	json_object_set_new(root, "seccomp", seccomp_json(e, degr));
	json_object_set_new(root, "egress", egress_json(e, notes, degr));
	if (e->sc_init) {
		/* the hash only of a filter that was loaded: /proc says the rest */
		json_t *self = json_pack("{s:o}", "status", proc_status(getpid()));
		if (e->self_filter_loaded) {
			digest_hex(e->sc_init, h);
			json_object_set_new(self, "seccomp_sha256", json_string(h));
		} else {
			json_array_append_new(degr, json_string("ward itself: its own seccomp filter is not loaded"));
		}
		json_object_set_new(root, "ward_self", self);
	}
	if (e->self_caps_kept)
		json_array_append_new(degr, json_string("ward itself: it kept all its capabilities"));
	if (e->bridge && e->bridge->active) {
		json_object_set_new(root, "bridge", bridge_json(e));
		if (e->bridge->health_ok < e->bridge->routes.n)
			json_array_append_new(degr, json_string("bridge: an upstream did not answer at start"));
	}
	json_object_set_new(root, "start", start_json(e, degr));
	json_object_set_new(root, "runtime", json_string(e->rt ? e->rt->name : "linux"));
	for (i = 0; e->rt && i < e->rt->n_notes; i++) {
		char line[400];
		snprintf(line, sizeof line, "%s: %s", e->rt->name, e->rt->notes[i]);
		json_array_append_new(degr, json_string(line));
	}
	json_object_set_new(root, "degradations", degr);
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return text;
}

/* Apart from evidence_open, so that its path buffer is on the stack only
 * when there is evidence to write (a plain init writes none). */
static __attribute__((noinline)) int evidence_create(struct evidence_src *e)
{
	char dir[4096], *slash;

	snprintf(dir, sizeof dir, "%s", e->path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
			return -errno;
	}
	/* Not blocking on a FIFO planted there, and only a regular file
	 * that ward itself owns and no one else may write (a file an
	 * earlier agent owns would stay the agent's to forge). */
	e->fd = open(e->path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
	if (e->fd < 0)
		return errno == ENXIO ? -EINVAL : -errno; /* a FIFO no one reads */
	{
		struct stat st;
		int err = fstat(e->fd, &st) != 0	      ? errno
			  : !S_ISREG(st.st_mode)	      ? EINVAL
			  : st.st_uid != geteuid() || st.st_mode & 022 ? EPERM
							      : 0;
		if (err || fcntl(e->fd, F_SETFL, 0) != 0) {
			close(e->fd);
			e->fd = -1;
			return -(err ? err : errno);
		}
	}
	return 0;
}

int evidence_open(struct evidence_src *e)
{
	e->fd = -1;
	return e->path ? evidence_create(e) : 0;
}

/* One JSON object replaces the file's content at every start. */
static int write_evidence(int fd, const char *text)
{
	size_t len = strlen(text);

	if (ftruncate(fd, 0) != 0)
		return -errno;
	errno = EIO; /* a short write sets none */
	if (pwrite(fd, text, len, 0) != (ssize_t)len || pwrite(fd, "\n", 1, (off_t)len) != 1)
		return -(errno ? errno : EIO);
	return 0;
}

void evidence_on_start(void *arg, pid_t agent, const struct start_notes *notes)
{
	const struct evidence_src *e = arg;
	char *text;
	int rc;

	if (!e->to_stderr && !e->path)
		return;
	text = evidence_json(e, agent, notes);
	if (!text) {
		log_error("evidence: cannot build the JSON");
		return;
	}
	if (e->to_stderr) {
		size_t len = strlen(text);
		/* the whole document or a warning: a cut one is not JSON */
		text[len] = '\n';
		rc = log_write(text, len + 1, 1000);
		text[len] = '\0';
		if (rc != 0)
			log_warn("evidence: cannot write to stderr");
	}
	if (e->fd >= 0 && (rc = write_evidence(e->fd, text)) != 0)
		log_error("evidence: %s: %s", e->path, strerror(-rc));
	free(text);
}
