#define _GNU_SOURCE
#include "init/report/explain.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init/config/names.h"
#include "landlock/landlock.h"
#include "common/addr.h"
#include "common/parse.h"

/* Runs access(2) as the agent user in a child: bit 0 read, 1 write, 2
 * execute; -1 when that cannot be asked (ward is not root, and the agent
 * is another uid). */
static int dac_access(const struct user_ids *u, const char *path)
{
	pid_t pid;
	int st;

	/* not root: only ward's own uid (a start without root, where it is
	 * the agent's) can be asked */
	if (geteuid() != 0 && u->uid != getuid())
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int bits = 0;
		if (users_setgroups(u) != 0 || setresgid(u->gid, u->gid, u->gid) != 0 ||
		    setresuid(u->uid, u->uid, u->uid) != 0)
			_exit(64);
		if (access(path, R_OK) == 0)
			bits |= 1;
		if (access(path, W_OK) == 0)
			bits |= 2;
		if (access(path, X_OK) == 0)
			bits |= 4;
		_exit(bits);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) > 7)
		return -1;
	return WEXITSTATUS(st);
}

static int explain_path(const struct confine *agent, const struct ll_ruleset *ll, const struct ward_config *cfg,
			const char *what, FILE *out)
{
	char real[PATH_MAX], parent[PATH_MAX], names[512];
	const struct ll_ruleset *rs = ll;
	uint64_t granted = 0, relevant;
	const char *obj = real, *leaf = NULL;
	struct stat st;
	int i, exists, is_dir, dac;

	exists = realpath(what, real) != NULL;
	if (!exists) {
		/* a file to be created: what matters is its directory */
		char *slash;
		snprintf(parent, sizeof parent, "%s", what);
		slash = strrchr(parent, '/');
		if (slash == parent)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
		else
			snprintf(parent, sizeof parent, ".");
		if (!realpath(parent, real)) {
			fprintf(out, "%s: neither it nor its directory exists (%s)\n", what, strerror(errno));
			return 1;
		}
		leaf = strrchr(what, '/') ? strrchr(what, '/') + 1 : what;
	}
	is_dir = stat(real, &st) == 0 && S_ISDIR(st.st_mode);
	if (leaf)
		fprintf(out, "%s: does not exist; creating it is decided by its directory %s\n", what, real);
	else
		fprintf(out, "%s: %s%s%s\n", what, is_dir ? "directory" : "file", strcmp(real, what) ? ", really " : "",
			strcmp(real, what) ? real : "");

	if (!cfg->has_landlock || cfg->landlock.mode == LL_OFF) {
		fprintf(out, "  landlock: %s, no path is refused by it\n", cfg->has_landlock ? "off" : "absent");
	} else if (rs->fd < 0 || !rs->handled_fs) {
		fprintf(out, "  landlock: not in force on this kernel (ABI %d), no path is refused by it\n", rs->abi);
	} else {
		fprintf(out, "  landlock: %s, kernel ABI %d\n",
			ll_mode_names[cfg->landlock.mode], rs->abi);
		for (i = 0; i < rs->n_rules; i++) {
			const struct ll_rule *r = &rs->rules[i];
			if (!ll_covers(real, r->path))
				continue;
			granted |= r->access;
			fprintf(out, "    covered by %s = %s: %s\n",
				(r->access & LL_FS_WRITE_FILE) ? "write" : "read", r->path,
				ll_fs_names(r->access, names, sizeof names));
		}
		relevant = rs->handled_fs;
		if (!is_dir)
			relevant &= LL_FS_FILE_RIGHTS;
		if (leaf)
			relevant = rs->handled_fs & (LL_FS_MAKE_REG | LL_FS_MAKE_DIR | LL_FS_MAKE_SYM);
		fprintf(out, "    allowed: %s\n", (granted & relevant) ? ll_fs_names(granted & relevant, names, sizeof names)
								      : "nothing");
		if (relevant & ~granted) {
			fprintf(out, "    DENIED:  %s\n", ll_fs_names(relevant & ~granted, names, sizeof names));
			if (!leaf && !(granted & LL_FS_READ_FILE) && !(granted & LL_FS_READ_DIR))
				fprintf(out, "    to allow reading, add under [landlock]: read = %s\n", real);
			if (!(granted & (leaf ? LL_FS_MAKE_REG : LL_FS_WRITE_FILE)))
				fprintf(out, "    to allow writing, add under [landlock]: write = %s\n", real);
		}
	}
	if (agent && (dac = dac_access(&agent->user, obj)) >= 0)
		fprintf(out, "  file permissions of %s for uid %d: read %s, write %s, execute/search %s\n", obj,
			(int)agent->user.uid, dac & 1 ? "yes" : "no", dac & 2 ? "yes" : "no",
			dac & 4 ? "yes" : "no");
	return 0;
}

static int in_ranges(const struct port_range *v, int n, unsigned port)
{
	int i;
	for (i = 0; i < n; i++)
		if (port >= v[i].lo && port <= v[i].hi)
			return 1;
	return 0;
}

static int explain_port(const struct confine *agent, const struct ll_ruleset *ll, const struct route_table *routes, const struct ward_config *cfg,
			unsigned port, FILE *out)
{
	const struct route *route;
	const struct ll_ruleset *rs = ll;

	fprintf(out, "tcp port %u:\n", port);
	/* what listens there, whatever Landlock can say */
	if ((route = routes_on_port(routes, port)))
		fprintf(out, "  bridge route %s listens on 127.0.0.1:%u (%s%s%s)\n", route->name, port,
			route->proxy ? "" : "relayed to ", route->up->desc, route->stream ? ", a stream: nothing checked" : "");
	if (!cfg->has_landlock || cfg->landlock.mode == LL_OFF || rs->fd < 0) {
		fprintf(out, "  landlock: not in force, no port is refused by it\n");
		return 0;
	}
	if (!rs->handled_net) {
		fprintf(out, "  landlock: TCP rules need ABI 4 (kernel has %d): connect and bind are not restricted\n",
			rs->abi);
		return 0;
	}
	if (in_ranges(rs->connect, rs->n_connect, port))
		fprintf(out, "  connect: allowed\n");
	else
		fprintf(out, "  connect: DENIED (EACCES); to allow it add under [landlock]: connect = %u\n", port);
	if (in_ranges(rs->bind, rs->n_bind, port))
		fprintf(out, "  bind: allowed\n");
	else
		fprintf(out, "  bind: DENIED (EACCES); to allow it add under [landlock]: bind = %u\n", port);
	fprintf(out, "  (UDP is not restricted by Landlock%s)\n",
		agent && agent->egress ? "; the guard holds UDP sockets to lo too" : "");
	return 0;
}

/* The stream route whose tcp: or tls: upstream is d (address and port),
 * or NULL: the one way a guarded agent reaches an address off loopback. */
static const struct route *stream_to(const struct route_table *routes, const struct tcp_dest *d)
{
	int i;

	for (i = 0; i < routes->n; i++) {
		const struct route *r = &routes->v[i];
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&r->up->addr;
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&r->up->addr;

		if (!r->stream || (r->up->kind != UP_TCP && r->up->kind != UP_TLS))
			continue;
		if (d->family == AF_INET && r->up->addr.ss_family == AF_INET && ntohs(s4->sin_port) == d->port &&
		    s4->sin_addr.s_addr == d->addr4.s_addr)
			return r;
		if (d->family == AF_INET6 && r->up->addr.ss_family == AF_INET6 && ntohs(s6->sin6_port) == d->port &&
		    memcmp(&s6->sin6_addr, &d->addr6, sizeof d->addr6) == 0)
			return r;
	}
	return NULL;
}

/* Where an address is let out, before what its port gets. */
static void explain_address(const struct confine *agent, const struct route_table *routes,
			    const struct ward_config *cfg, const struct tcp_dest *d, FILE *out)
{
	char a[64];
	int guarded = agent && agent->egress;
	const struct route *via = stream_to(routes, d);

	addr_text(d, a, sizeof a);
	if (addr_loopback(d)) {
		fprintf(out, "address %s: loopback: Landlock's port rules decide (below)\n", a);
		return;
	}
	if (guarded)
		fprintf(out, "address %s: NEVER REACHED directly: the egress guard makes every inet socket of the "
			"agent and binds it to lo, so nothing goes out but on loopback (a connect there fails at once "
			"with ENETUNREACH%s; egress = loopback under [landlock]%s)\n",
			a, cfg->refusals ? ", and the agent's refusals file names it" : "",
			agent->egress > 1 ? ", required" : ", best_effort: ports only if the guard cannot be installed");
	if (guarded && via)
		fprintf(out, "  but the bridge reaches it: [route %s] (protocol = stream) relays 127.0.0.1:%u to %s\n",
			via->name, via->port, via->up->desc);
	else if (guarded)
		fprintf(out, "  to let the agent reach it, add a [route NAME] with protocol = stream, upstream = "
			"tcp:%s%s%s:%u and a listen port, and connect to that port\n",
			d->family == AF_INET6 ? "[" : "", a, d->family == AF_INET6 ? "]" : "", d->port);
	else
		fprintf(out, "address %s: reached on any port Landlock allows (below): %s\n", a,
			!cfg->has_landlock || cfg->landlock.mode == LL_OFF ? "Landlock is not in force"
			: cfg->egress == EGRESS_PORTS ? "egress = ports under [landlock]"
						       : "no [agent] user, so no guard");
}

static int explain_syscall(const struct confine *agent, const struct ward_config *cfg, const char *name, FILE *out)
{
	char how[256];
	int i;

	/* the egress guard makes stream sockets only (init/egress/guard.c) */
	if (strcmp(name, "udp") == 0 && agent && agent->egress) {
		fprintf(out, "udp: DENIED (EACCES) by the egress guard: under egress = loopback it makes the agent's inet "
			"and inet6 stream sockets only, since the kernel routes a datagram past the loopback binding%s; "
			"egress = ports under [landlock] would allow UDP (and let it out)\n",
			agent->egress > 1 ? "" : " (best_effort: if the guard cannot be installed, UDP is allowed unless "
						 "[seccomp] deny = udp)");
		return 0;
	}

	if (!cfg->has_seccomp || !cfg->seccomp.enabled) {
		fprintf(out, "%s: seccomp is %s, no system call is refused by it\n", name,
			cfg->has_seccomp ? "off" : "absent");
		return 0;
	}
	for (i = 0; i < cfg->seccomp.n_deny; i++)
		if (strcmp(cfg->seccomp.deny[i], name) == 0) {
			if (sc_optin_has(name) && sc_default_describe(name, how, sizeof how))
				fprintf(out, "%s: DENIED %s by [seccomp] deny = %s\n", name, how, name);
			else
				fprintf(out, "%s: DENIED always (EPERM) by [seccomp] deny = %s\n", name, name);
			return 0;
		}
	for (i = 0; i < cfg->seccomp.n_allow; i++)
		if (strcmp(cfg->seccomp.allow[i], name) == 0) {
			fprintf(out, "%s: allowed: [seccomp] allow = %s takes it out of the default list\n", name, name);
			return 0;
		}
	if (sc_optin_has(name))
		fprintf(out, "%s: allowed: not in the default list (Landlock does not cover it either); to refuse "
			"it add under [seccomp]: deny = %s\n", name, name);
	else if (sc_default_describe(name, how, sizeof how))
		fprintf(out, "%s: DENIED %s by the default list; to allow it (weakening the sandbox) add "
			"under [seccomp]: allow = %s\n", name, how, name);
	else
		fprintf(out, "%s: allowed by the seccomp filter\n", name);
	return 0;
}

int explain(const struct confine *agent, const struct ll_ruleset *ll, const struct route_table *routes,
	    const struct ward_config *cfg, const char *what, FILE *out)
{
	const char *why = NULL;

	if (what[0] == '/' || what[0] == '.')
		return explain_path(agent, ll, cfg, what, out);
	if (strncmp(what, "tcp:", 4) == 0 || (what[0] >= '0' && what[0] <= '9')) {
		const char *p = strncmp(what, "tcp:", 4) == 0 ? what + 4 : what;
		struct tcp_dest d;
		if (addr_parse(p, strlen(p), &d, &why) != 0) {
			fprintf(stderr, "ward: --explain %s: %s\n", what, why);
			return 2;
		}
		if (d.has_addr)
			explain_address(agent, routes, cfg, &d, out);
		return explain_port(agent, ll, routes, cfg, d.port, out);
	}
	if (sc_known_syscall(what) || sc_default_has(what) || sc_optin_has(what)) /* or a group */
		return explain_syscall(agent, cfg, what, out);
	fprintf(stderr, "ward: --explain %s: not a path (/... or ./...), a port (tcp:N) or a system call name\n",
		what);
	return 2;
}
