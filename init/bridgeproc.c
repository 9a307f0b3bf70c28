#define _GNU_SOURCE
#include "bridgeproc.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "procs.h"
#include "spawn.h"

#define NOTE_READY 150
#define SECRET_MAX 8192

/* "@PATH" or "@fd:N": read once, as root; a trailing newline is dropped. */
static char *read_secret(const char *src, const char **why)
{
	char *buf = malloc(SECRET_MAX + 1);
	size_t got = 0;
	ssize_t n = 0;
	int fd;

	if (!buf)
		return *why = "out of memory", NULL;
	if (strncmp(src, "fd:", 3) == 0) {
		fd = (int)strtol(src + 3, NULL, 10); /* "fd:N", 3 <= N <= 65535: the config's own check */
	} else {
		fd = open(src, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		free(buf);
		return *why = strerror(errno), NULL;
	}
	while (got < SECRET_MAX && ((n = read(fd, buf + got, SECRET_MAX - got)) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			got += (size_t)n;
	if (n < 0) {
		/* a pipe with nothing more yet (EAGAIN) is no shorter secret */
		int e = errno;
		close(fd);
		explicit_bzero(buf, got);
		free(buf);
		return *why = strerror(e), NULL;
	}
	close(fd); /* an fd:N source is read once and closed */
	while (got && (buf[got - 1] == '\n' || buf[got - 1] == '\r'))
		got--;
	buf[got] = '\0';
	if (got == SECRET_MAX || memchr(buf, '\n', got) || memchr(buf, '\r', got) || !got) {
		explicit_bzero(buf, got);
		free(buf);
		return *why = "the secret must be one non-empty line under 8 KiB", NULL;
	}
	return buf;
}

static int build_routes(struct bridgeproc *b, const struct ward_config *cfg)
{
	int i, h;

	b->routes.v = calloc((size_t)cfg->n_routes, sizeof *b->routes.v);
	if (!b->routes.v)
		return 3;
	b->routes.n = cfg->n_routes;
	for (i = 0; i < cfg->n_routes; i++) {
		const struct config_route *c = &cfg->routes[i];
		struct bridge_route *r = &b->routes.v[i];

		r->name = c->name;
		r->up = c->up;
		r->port = (uint16_t)c->port;
		r->lfd = -1;
		r->line = c->line;
		r->headers = calloc((size_t)c->n_headers + 1, sizeof *r->headers);
		if (!r->headers)
			return 3;
		for (h = 0; h < c->n_headers; h++) {
			const char *colon = strchr(c->headers[h], ':');
			const char *val = colon + 1 + strspn(colon + 1, " \t");
			if (*val == '@' && !c->resolved) {
				const char *why = NULL;
				char *secret = read_secret(val + 1, &why);
				if (!secret) {
					log_error("%s:%d: [route %s] header: %s: %s", cfg->path, c->line, c->name,
						  val, why);
					return 2;
				}
				if (asprintf(&r->headers[h], "%.*s: %s", (int)(colon - c->headers[h]),
					     c->headers[h], secret) < 0)
					r->headers[h] = NULL;
				explicit_bzero(secret, strlen(secret));
				free(secret);
			} else {
				r->headers[h] = strdup(c->headers[h]);
			}
			if (!r->headers[h])
				return 3;
			r->n_headers++;
		}
		r->http.name = r->name;
		r->http.methods = c->methods;
		r->http.path = c->path;
		r->http.exact = c->exact;
		r->http.host = c->host ? c->host : c->up.default_host;
		r->http.inject = r->headers;
		r->http.n_inject = r->n_headers;
		if (c->up.kind == UP_TLS) {
			/* CA roots are read now: the bridge opens no file later */
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
	return 0;
}

int bridgeproc_user(const struct ward_config *cfg, const struct user_ids *agent, struct user_ids *user)
{
	const char *why = NULL, *spec = cfg->bridge_user ? cfg->bridge_user : "65534";

	if (users_resolve(spec, "/etc/passwd", "/etc/group", user, &why) != 0) {
		if (cfg->bridge_user)
			log_error("%s:%d: bridge_user: '%s': %s", cfg->path, cfg->bridge_user_line, spec, why);
		else /* the default: no line of the config to name */
			log_error("%s: the bridge's default user 65534: %s; set [ward] bridge_user", cfg->path, why);
		return 2;
	}
	if ((user->uid == 0 || (agent && user->uid == agent->uid)) && !cfg->bridge_user) {
		log_error("%s: the bridge's default user 65534 is the agent's; set [ward] bridge_user to a uid "
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

int bridgeproc_prepare(struct bridgeproc *b, const struct ward_config *cfg, const struct user_ids *agent)
{
	struct port_range *up_ports;
	struct ll_policy pol;
	char err[1024];
	int rc, i, n = 0;

	memset(b, 0, sizeof *b);
	b->ll.fd = -1;
	if (!cfg->n_routes)
		return 0;
	b->active = 1;
	if ((rc = bridgeproc_user(cfg, agent, &b->confine.user)) != 0)
		return rc;
	b->confine.enabled = 1;
	if ((rc = build_routes(b, cfg)) != 0)
		return rc;
	if (bridge_listen(&b->routes, err, sizeof err) != 0) {
		log_error("bridge: %s", err);
		return 3;
	}
	/* its own Landlock: no file at all, TCP connect to its tcp upstreams only */
	up_ports = calloc((size_t)b->routes.n, sizeof *up_ports);
	if (!up_ports)
		return 3;
	for (i = 0; i < b->routes.n; i++) {
		const struct upstream *u = &b->routes.v[i].up;
		if (u->kind == UP_TCP || u->kind == UP_TLS) {
			unsigned port = ntohs(((const struct sockaddr_in *)&u->addr)->sin_port);
			up_ports[n].lo = up_ports[n].hi = (uint16_t)port;
			n++;
		}
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
	if (sc_build_bridge(&b->sc, err, sizeof err) != 0) {
		log_error("bridge: %s", err);
		return 3;
	}
	b->confine.sc = &b->sc;
	return 0;
}

static void __attribute__((noreturn)) bridge_child(struct bridgeproc *b, int rfd, pid_t parent)
{
	int *keep = calloc((size_t)b->routes.n + 3, sizeof *keep), nk = 0, i, max_conns, null;
	sigset_t none;

	prctl(PR_SET_NAME, "ward-bridge", 0, 0, 0);
	if (!keep)
		_exit(3);
	/* every listener, however many routes there are */
	for (i = 0; i < b->routes.n; i++)
		keep[nk++] = b->routes.v[i].lfd;
	keep[nk++] = rfd;
	keep[nk++] = log_fd();
	if (b->ll.fd >= 0)
		keep[nk++] = b->ll.fd;
	close_fds_except(keep, nk);
	free(keep);
	/* Nothing of PID 1's but what it serves with: no environment, and not
	 * the agent's stdin and stdout (its RPC channel), which it cannot
	 * need; stderr only if that is where the log goes. */
	for (i = 0; environ && environ[i]; i++) /* /proc/PID/environ shows the strings */
		explicit_bzero(environ[i], strlen(environ[i]));
	clearenv();
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || (log_fd() != 2 && dup2(null, 2) < 0))
		_exit(3);
	if (null > 2)
		close(null);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	if (setsid() < 0 && errno != EPERM)
		_exit(3);
	for (i = 0; i < b->routes.n; i++)
		if (b->routes.v[i].tls && tls_route_reseed(b->routes.v[i].tls) != 0) {
			log_error("bridge: route %s: cannot reseed its random generator", b->routes.v[i].name);
			_exit(3);
		}
	max_conns = bridge_conn_limit(b->routes.n);
	if (max_conns < BRIDGE_MAX_CONNS)
		log_warn("bridge: at most %d connections at once (the file descriptor limit)", max_conns);
	if (privdrop_credentials(&b->confine, rfd) != 0)
		_exit(3);
	/* Gone with ward. Set after the change of user, which clears it (the
	 * kernel resets the parent-death signal when credentials change);
	 * and before the filter, which has no prctl. A ward that died before
	 * this line is seen as a new parent. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent || privdrop_lock(&b->confine, rfd) != 0)
		_exit(3);
	/* at the first start only: a restart keeps PID 1 waiting no longer
	 * than the bridge takes to confine itself */
	if (!b->started)
		b->health_ok = bridge_health(&b->routes);
	spawn_report(rfd, NOTE_READY, 0, b->health_ok);
	close(rfd);
	sigprocmask(SIG_SETMASK, &none, NULL); /* TERM ends the bridge */
	if (bridge_run(&b->routes, max_conns) != 0)
		log_error("bridge: event loop: %s", strerror(errno));
	_exit(1);
}

pid_t bridgeproc_spawn(struct bridgeproc *b, int *note_fd)
{
	int fds[2];
	pid_t pid, self = getpid();

	if (pipe2(fds, O_CLOEXEC) != 0) {
		log_error("bridge: pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		log_error("bridge: fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		bridge_child(b, fds[1], self);
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
	struct spawn_error rec;

	for (;;) {
		ssize_t r = read(fd, &rec, sizeof rec);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return 0;
		if (r != (ssize_t)sizeof rec) {
			log_error("bridge: ended before it was ready");
			return -1;
		}
		if (rec.stage == NOTE_BOUNDING || rec.stage == NOTE_SECUREBITS)
			continue;
		if (rec.stage != NOTE_READY) {
			log_error("bridge: cannot start: %s: %s", spawn_stage_name(rec.stage), strerror(rec.err));
			return -1;
		}
		b->health_ok = rec.detail;
		break;
	}
	if (!b->started)
		log_info("bridge: pid %d serves %d route(s), %d upstream(s) answer", (int)pid, b->routes.n,
			 b->health_ok);
	else
		log_info("bridge: pid %d serves %d route(s) again", (int)pid, b->routes.n);
	b->started = 1;
	return 1;
}

pid_t bridgeproc_start(struct bridgeproc *b)
{
	struct pollfd p = { .events = POLLIN };
	struct timespec t0, t;
	int r = 0, left = BRIDGE_READY_MS;
	pid_t pid = bridgeproc_spawn(b, &p.fd);

	if (pid < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (r == 0 && left > 0) {
		int n = poll(&p, 1, left);

		if (n < 0 && errno != EINTR)
			break;
		if (n > 0)
			r = bridgeproc_note(b, p.fd, pid);
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = BRIDGE_READY_MS - (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
	}
	close(p.fd);
	if (r != 1) {
		if (r == 0)
			log_error("bridge: not ready after %d ms; stopping it", BRIDGE_READY_MS);
		kill(pid, SIGKILL); /* reaped by the loop, as any child */
		return -1;
	}
	return pid;
}

int bridgeproc_fds(const struct bridgeproc *b, int *fds, int max)
{
	int i, n = 0;

	for (i = 0; i < b->routes.n && n < max; i++)
		if (b->routes.v[i].lfd >= 0)
			fds[n++] = b->routes.v[i].lfd;
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
	}
	free(b->routes.v);
	ll_free(&b->ll);
	sc_free(&b->sc);
	memset(b, 0, sizeof *b);
	b->ll.fd = -1;
}
