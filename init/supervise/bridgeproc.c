#define _GNU_SOURCE
#include "init/supervise/bridgeproc.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fds.h"
#include "common/log.h"
#include "common/record.h"
#include "common/envref.h"
#include "common/source.h"
#include "init/config/names.h"
#include "mcp-bridge/refresh.h"

/* "@PATH" or "@fd:N": read once, as root; a trailing newline is dropped.
 * NULL with err when it cannot be read or is not one line. */
static char *read_secret(const char *src, char *err, size_t errsize)
{
	char *buf;
	size_t got;

	if (source_read(src, SOURCE_MAX_SECRET, &buf, &got, err, errsize) != 0)
		return NULL;
	while (got && (buf[got - 1] == '\n' || buf[got - 1] == '\r'))
		got--;
	if (got >= SOURCE_MAX_SECRET || memchr(buf, '\n', got) || memchr(buf, '\r', got) || !got) {
		explicit_bzero(buf, got);
		free(buf);
		snprintf(err, errsize, "the secret must be one non-empty line under 8 KiB");
		return NULL;
	}
	buf[got] = '\0'; /* the read left room: got < SOURCE_MAX_SECRET */
	return buf;
}

/* A route's login (config_cred): its file opened read-write and checked
 * now, as root (a file that is no login stops the start, before anything
 * runs); its token route appended to the bridge's routes, without a
 * listener. */
static int build_cred(struct bridgeproc *b, int i, const struct route *c, const struct ward_config *cfg)
{
	const struct config_cred *k = c->cred;
	struct bridge_route *r = &b->routes.v[i], *tr = &b->routes.v[b->routes.n];
	struct cred_route *cr;
	struct cred_tokens tok;
	struct stat st;
	char why[300], name[256] = "", *buf = NULL;
	size_t got = 0;
	int j, fd = open(k->path, O_RDWR | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)CRED_MAX_FILE) {
		log_error("%s:%d: [route %s] credential %s: %s", cfg->path, c->line, c->name, k->path,
			  fd < 0 ? strerror(errno) : "not a regular file of at most 256 KiB");
		if (fd >= 0)
			close(fd);
		return 2;
	}
	/* read under the file's lock, shared: not while another ward's
	 * bridge is writing a refresh back (a few ms; 5 s at most) */
	{
		struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
		struct timespec pause = { 0, 50000000L };
		int tries = 0;
		while (fcntl(fd, F_SETLK, &fl) != 0 && (errno == EAGAIN || errno == EACCES) && ++tries < 100)
			nanosleep(&pause, NULL);
	}
	buf = fd_read_file(fd, CRED_MAX_FILE, &got);
	{
		struct flock un = { .l_type = F_UNLCK, .l_whence = SEEK_SET };
		(void)fcntl(fd, F_SETLK, &un);
	}
	if (!buf || credfile_parse(k->format, buf, got, k->entry, &tok, why, sizeof why) != 0) {
		log_error("%s:%d: [route %s] credential %s: %s", cfg->path, c->line, c->name, k->path,
			  buf ? why : "cannot read it");
		if (buf)
			explicit_bzero(buf, got);
		free(buf);
		close(fd);
		return 2;
	}
	explicit_bzero(buf, got);
	explicit_bzero(&tok, sizeof tok);
	free(buf);
	cr = calloc(1, sizeof *cr);
	if (!cr) {
		close(fd);
		return 3;
	}
	*cr = (struct cred_route){ .fd = fd, .path = k->path, .format = k->format, .entry = k->entry,
				   .client_id = k->client_id, .token_host = k->token_host, .token_path = k->token_path,
				   .token_route = b->routes.n, .sock = -1 };
	/* one lock holder among the routes of one file (refresh.h) */
	for (j = 0; j < i && !cr->held; j++)
		if (b->routes.v[j].cred && strcmp(b->routes.v[j].cred->path, k->path) == 0)
			cr->held = b->routes.v[j].cred->held;
	if (!cr->held && !(cr->held = calloc(1, sizeof *cr->held))) {
		close(fd);
		free(cr);
		return 3;
	}
	r->cred = cr;
	r->drop = k->key_header;
	/* the token endpoint: POST to its one path, by name, TLS verified
	 * against the system's roots; the refresh is its only client */
	tr->name = c->name;
	tr->up = k->up;
	tr->lfd = -1;
	tr->line = c->line;
	tr->hidden = 1;
	tr->http.name = c->name;
	tr->http.methods = 1u << HTTP_POST;
	tr->http.path = k->token_path;
	tr->http.exact = 1;
	tr->http.host = k->token_host;
	tr->headers = calloc(1, sizeof *tr->headers);
	/* TLS, but for an MCP sign-in's endpoint on the host's loopback (its relay) */
	tr->tls = k->up.kind == UP_TLS ? calloc(1, sizeof *tr->tls) : NULL;
	if (!tr->headers || (k->up.kind == UP_TLS && !tr->tls))
		return 3;
	b->routes.n++;
	if (tr->tls && (host_server_name(k->token_host, name, sizeof name) != 0 ||
			tls_route_init(tr->tls, name, c->tls_ca, NULL, why, sizeof why) != 0)) {
		log_error("%s:%d: [route %s] credential: %s", cfg->path, c->line, c->name, why);
		return 2;
	}
	return 0;
}

/* The bridge's own copy of each route of the table: secrets read, each
 * header joined into the line it sends, CA roots read (the bridge opens
 * no file later); a login's token route after them. */
static int build_routes(struct bridgeproc *b, const struct route_table *t, const struct ward_config *cfg)
{
	int i, h, n_cred = 0;

	for (i = 0; i < t->n; i++)
		n_cred += t->v[i].cred != NULL;
	b->routes.v = calloc((size_t)(unsigned)t->n + (size_t)(unsigned)n_cred, sizeof *b->routes.v);
	if (!b->routes.v)
		return 3;
	b->routes.n = t->n;
	for (i = 0; i < t->n; i++) {
		const struct route *c = &t->v[i];
		struct bridge_route *r = &b->routes.v[i];

		r->name = c->name;
		r->up = *c->up;
		r->port = (uint16_t)c->port;
		r->lfd = -1;
		r->line = c->line;
		r->tools = c->tools;
		r->stream = c->stream;
		if (c->proxy) {
			b->proxy = (struct proxy_policy){ c->proxy->allow,
							  c->proxy->n_allow,
							  c->proxy->methods,
							  c->proxy->max_tunnels,
							  c->proxy->max_bytes,
							  c->proxy->has_ask ? &c->proxy->ask : NULL,
							  c->proxy->ask_timeout_s,
							  c->proxy->ask_rate,
							  c->proxy->has_ask && c->proxy->ask_terminal,
							  -1,
							  -1 };
			r->proxy = &b->proxy;
		}
		r->headers = calloc((size_t)c->n_headers + 1, sizeof *r->headers);
		if (!r->headers)
			return 3;
		for (h = 0; h < c->n_headers; h++) {
			const struct header *hd = &c->headers[h];
			char *secret = NULL;
			if (hd->env) {
				/* ${VAR}s: the whole value, from ward's environment */
				char why[256];
				secret = envref_expand(hd->value, why, sizeof why);
				if (!secret) {
					log_error("%s:%d: [route %s] header %s: %s", cfg->path, c->line, c->name, hd->name,
						  why);
					return 2;
				}
			} else if (hd->source) {
				char why[512];
				secret = read_secret(hd->source, why, sizeof why);
				if (!secret) {
					log_error("%s:%d: [route %s] header: @%s: %s", cfg->path, c->line, c->name,
						  hd->source, why);
					return 2;
				}
			}
			/* with a source, value is the prefix before the secret (or none);
			 * expanded, it is the secret's whole line */
			if (asprintf(&r->headers[h], "%s: %s%s", hd->name,
				     secret && hd->value && !hd->env ? hd->value : "", secret ? secret : hd->value) < 0)
				r->headers[h] = NULL;
			if (secret) {
				explicit_bzero(secret, strlen(secret));
				free(secret);
			}
			if (!r->headers[h])
				return 3;
			r->n_headers++;
		}
		r->http.name = r->name;
		r->http.methods = c->methods;
		r->http.path = c->path;
		r->http.exact = c->exact;
		r->http.host = c->host ? c->host : c->up->default_host;
		r->http.inject = r->headers;
		r->http.n_inject = r->n_headers;
		if (c->up->kind == UP_TLS) {
			char name[256], err[512];
			if (host_server_name(r->http.host, name, sizeof name) != 0) {
				log_error("%s:%d: [route %s] the Host it sends names no TLS server (HOST, HOST:PORT "
					  "or [IPV6]:PORT)", cfg->path, c->line, c->name);
				return 2;
			}
			r->tls = calloc(1, sizeof *r->tls);
			if (!r->tls)
				return 3;
			if (tls_route_init(r->tls, name, c->tls_ca, c->tls_pin, err, sizeof err) != 0) {
				log_error("%s:%d: [route %s] %s", cfg->path, c->line, c->name, err);
				return 2;
			}
		}
	}
	for (i = 0; i < t->n; i++) {
		int rc = t->v[i].cred ? build_cred(b, i, &t->v[i], cfg) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* Opens every route's listener (PID 1, before the agent exists: a
 * restarted bridge finds its ports queued, not closed). */
static int listen_routes(struct bridge_routes *r, char *err, size_t errsize)
{
	int i, one = 1;

	for (i = 0; i < r->n; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(r->v[i].port) };
		int fd;

		if (r->v[i].hidden)
			continue;
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
		    bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 128) != 0) {
			snprintf(err, errsize, "route %s: listen 127.0.0.1:%u: %s", r->v[i].name, r->v[i].port,
				 strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		r->v[i].lfd = fd;
	}
	return 0;
}

#define DNS_PORT 53

int bridgeproc_user(const struct ward_config *cfg, const struct user_ids *agent, struct user_ids *user)
{
	const char *why = NULL, *spec = cfg->bridge_user ? cfg->bridge_user : BRIDGE_USER_DEFAULT;

	/* Started without root, ward cannot give the bridge a uid of its own:
	 * it runs as ward's (the agent's too), kept apart by being outside the
	 * agent's Landlock domain (its scopes: no signal, no abstract socket),
	 * not dumpable (no ptrace, no /proc/PID/mem or environ for that uid)
	 * and by the agent's seccomp filter (no ptrace, process_vm_readv). */
	if (geteuid() != 0) {
		users_self(user, "/etc/passwd");
		return 0;
	}
	if (users_resolve(spec, "/etc/passwd", "/etc/group", user, &why) != 0) {
		if (cfg->bridge_user)
			log_error("%s:%d: bridge_user: '%s': %s", cfg->path, cfg->bridge_user_line, spec, why);
		else /* the default: no line of the config to name */
			log_error("%s: the bridge's default user " BRIDGE_USER_DEFAULT ": %s; set [ward] bridge_user", cfg->path, why);
		return 2;
	}
	if ((user->uid == 0 || (agent && user->uid == agent->uid)) && !cfg->bridge_user) {
		log_error("%s: the bridge's default user " BRIDGE_USER_DEFAULT " is the agent's; set [ward] bridge_user to a uid "
			  "of its own (not 0, not the agent's)", cfg->path);
		return 2;
	}
	if (user->uid == 0 || (agent && user->uid == agent->uid)) {
		log_error("%s:%d: bridge_user: '%s': the bridge needs a uid of its own (not 0, not the "
			  "agent's %d); set [ward] bridge_user", cfg->path, cfg->bridge_user_line, spec,
			  agent ? (int)agent->uid : 0);
		return 2;
	}
	return 0;
}

int bridgeproc_prepare(struct bridgeproc *b, const struct route_table *t, const struct ward_config *cfg,
		       const struct user_ids *agent)
{
	struct port_range *up_ports;
	struct ll_policy pol;
	char err[1024];
	int rc, i, n = 0, named = 0;

	memset(b, 0, sizeof *b);
	b->ll.fd = -1;
	if (!t->n)
		return 0;
	b->active = 1;
	if ((rc = bridgeproc_user(cfg, agent, &b->confine.user)) != 0)
		return rc;
	b->confine.enabled = 1;
	if ((rc = build_routes(b, t, cfg)) != 0)
		return rc;
	if (listen_routes(&b->routes, err, sizeof err) != 0) {
		log_error("bridge: %s", err);
		return 3;
	}
	/* its own Landlock: no file at all, TCP connect to its tcp upstreams
	 * only (the proxy's: the ports of its allow rules), and to port 53
	 * when it resolves names (a DNS answer too long for UDP comes over
	 * TCP) */
	up_ports = calloc((size_t)(unsigned)b->routes.n + (size_t)(unsigned)b->proxy.n_allow + 2, sizeof *up_ports);
	if (!up_ports)
		return 3;
	for (i = 0; i < b->routes.n; i++) {
		const struct upstream *u = &b->routes.v[i].up;
		if (u->kind == UP_TCP || u->kind == UP_TLS) {
			up_ports[n].lo = up_ports[n].hi = (uint16_t)u->port;
			n++;
		}
		named += u->name[0] != '\0' || u->kind == UP_PROXY;
	}
	for (i = 0; i < b->proxy.n_allow; i++) {
		up_ports[n].lo = (uint16_t)b->proxy.allow[i].port_lo;
		up_ports[n].hi = (uint16_t)b->proxy.allow[i].port_hi;
		n++;
	}
	if (named) {
		up_ports[n].lo = up_ports[n].hi = DNS_PORT;
		n++;
	}
	/* [proxy] ask: the person may approve a host on any port */
	if (b->proxy.ask) {
		up_ports[0].lo = 1;
		up_ports[0].hi = 65535;
		n = 1;
	}
	memset(&pol, 0, sizeof pol);
	/* Best effort whatever the agent's mode: the bridge asks for more
	 * than the agent's config does (TCP rules, scopes), and a kernel
	 * that has the agent's hard requirements but not these must not
	 * stop ward; what is left out is logged below. */
	pol.mode = LL_BEST_EFFORT;
	pol.connect = up_ports;
	pol.n_connect = n;
	pol.scopes = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
	rc = ll_build(&pol, ll_abi(), &b->ll, err, sizeof err);
	free(up_ports);
	if (rc != 0) {
		log_error("bridge: landlock: %s", err);
		return 3;
	}
	for (i = 0; i < b->ll.n_notes; i++)
		log_warn("bridge: landlock: %s", b->ll.notes[i]);
	if (b->ll.fd >= 0)
		b->confine.ll = &b->ll;
	if (sc_build_bridge(&b->sc, named > 0, err, sizeof err) != 0) {
		log_error("bridge: %s", err);
		return 3;
	}
	b->confine.sc = &b->sc;
	return 0;
}

pid_t bridgeproc_spawn(struct bridgeproc *b, int *note_fd)
{
	int fds[2], ask[2] = { -1, -1 }, who[2] = { -1, -1 };
	pid_t pid, self = getpid();

	if (pipe2(fds, O_CLOEXEC) != 0) {
		log_error("bridge: pipe: %s", strerror(errno));
		return -1;
	}
	/* [proxy] ask = terminal, with a terminal: a new pair for each start
	 * of the bridge, one end each (the agent never has either) */
	if (b->proxy.ask_terminal && b->on_ask &&
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, ask) != 0)
		log_warn("bridge: [proxy] ask = terminal: socketpair: %s: nothing will be asked", strerror(errno));
	/* [proxy] ask: the bridge asks PID 1 which process made a request
	 * (common/who.h); one message each way, so a datagram pair */
	if (b->proxy.ask && b->on_who &&
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, who) != 0)
		log_warn("bridge: [proxy] ask: socketpair: %s: questions name no process", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		if (ask[0] >= 0) {
			close(ask[0]);
			close(ask[1]);
		}
		if (who[0] >= 0) {
			close(who[0]);
			close(who[1]);
		}
		log_error("bridge: fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		struct bridge_start s = { &b->routes, &b->confine, b->ll.fd, !b->started };
		close(fds[0]);
		if (ask[0] >= 0)
			close(ask[0]);
		b->proxy.ask_fd = ask[1];
		if (who[0] >= 0)
			close(who[0]);
		b->proxy.who_fd = who[1];
		bridge_main(&s, fds[1], self);
	}
	if (ask[0] >= 0) {
		close(ask[1]);
		b->on_ask(b->on_ask_arg, ask[0]);
	}
	if (who[0] >= 0) {
		close(who[1]);
		b->on_who(b->on_who_arg, who[0]);
	}
	close(fds[1]);
	/* a record is written whole or not at all (it is far below PIPE_BUF):
	 * a read that gets less saw the bridge end */
	(void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
	*note_fd = fds[0];
	return pid;
}

int bridgeproc_note(struct bridgeproc *b, int fd, pid_t pid)
{
	int r = record_ready(fd, "bridge", &b->health_ok);

	if (r != 1)
		return r;
	if (!b->started)
		log_info("bridge: pid %d serves %d route(s), %d upstream(s) answer", (int)pid, b->routes.n,
			 b->health_ok);
	else
		log_info("bridge: pid %d serves %d route(s) again", (int)pid, b->routes.n);
	b->started = 1;
	return 1;
}

int bridgeproc_fds(const struct bridgeproc *b, int *fds, int max)
{
	int i, n = 0;

	for (i = 0; i < b->routes.n && n < max; i++) {
		if (b->routes.v[i].lfd >= 0)
			fds[n++] = b->routes.v[i].lfd;
		if (b->routes.v[i].cred && n < max)
			fds[n++] = b->routes.v[i].cred->fd;
	}
	if (b->ll.fd >= 0 && n < max)
		fds[n++] = b->ll.fd;
	return n;
}

void bridgeproc_free(struct bridgeproc *b)
{
	int i, h;

	for (i = 0; i < b->routes.n; i++) {
		if (b->routes.v[i].lfd >= 0)
			close(b->routes.v[i].lfd);
		for (h = 0; h < b->routes.v[i].n_headers; h++) {
			explicit_bzero(b->routes.v[i].headers[h], strlen(b->routes.v[i].headers[h]));
			free(b->routes.v[i].headers[h]);
		}
		free(b->routes.v[i].headers);
		if (b->routes.v[i].tls) {
			tls_route_free(b->routes.v[i].tls);
			free(b->routes.v[i].tls);
		}
		if (b->routes.v[i].cred) {
			close(b->routes.v[i].cred->fd);
			explicit_bzero(b->routes.v[i].cred, sizeof *b->routes.v[i].cred);
			free(b->routes.v[i].cred);
		}
	}
	free(b->routes.v);
	ll_free(&b->ll);
	sc_free(&b->sc);
	memset(b, 0, sizeof *b);
	b->ll.fd = -1;
}
