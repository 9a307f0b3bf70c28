#define _GNU_SOURCE
#include "mcp-bridge/bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "child/privdrop.h"
#include "mcp-bridge/pool.h"
#include "common/fds.h"
#include "common/log.h"
#include "common/record.h"
#include "mcp-bridge/refresh.h"
#include "mcp-bridge/resolve.h"


/* Before the bridge is locked down: raises its soft RLIMIT_NOFILE to the
 * hard one and returns how many connections fit (a client, an upstream and
 * a request pipe each), at most BRIDGE_MAX_CONNS. */
static int conn_limit(int n_routes)
{
	struct rlimit rl;
	rlim_t fds;
	long room;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return BRIDGE_MAX_CONNS;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t want = rl.rlim_max;
		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0)
			rl.rlim_cur = 0;
	}
	fds = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 20) ? (1u << 20) : rl.rlim_cur;
	/* the listeners, each route's kept upstream connections (pool.h), the
	 * log, epoll, the spare and a margin, then 4 a connection */
	room = ((long)fds - (long)n_routes * (1 + POOL_MAX) - 16) / 4;
	return room < 1 ? 1 : room < BRIDGE_MAX_CONNS ? (int)room : BRIDGE_MAX_CONNS;
}

void bridge_main(const struct bridge_start *s, int rfd, pid_t parent)
{
	const struct bridge_routes *r = s->routes;
	int *keep = calloc(4 * (size_t)r->n + 4, sizeof *keep), nk = 0, i, max_conns, health_ok = 0;
	struct resolver res;
	char err[256];
	sigset_t none;

	prctl(PR_SET_NAME, "ward-bridge", 0, 0, 0);
	if (!keep)
		_exit(3);
	/* every listener, however many routes there are */
	for (i = 0; i < r->n; i++) {
		if (!r->v[i].hidden)
			keep[nk++] = r->v[i].lfd;
		/* a credential file, PID 1's open descriptor (refresh.h) */
		if (r->v[i].cred)
			keep[nk++] = r->v[i].cred->fd;
		/* the proxy's approver at ward's terminal (ask.h) */
		if (r->v[i].proxy && r->v[i].proxy->ask_fd >= 0)
			keep[nk++] = r->v[i].proxy->ask_fd;
		/* PID 1's answers to "who asked?" (common/who.h) */
		if (r->v[i].proxy && r->v[i].proxy->who_fd >= 0)
			keep[nk++] = r->v[i].proxy->who_fd;
	}
	keep[nk++] = rfd;
	keep[nk++] = log_fd();
	if (log_copy_fd() >= 0)
		keep[nk++] = log_copy_fd();
	if (s->ll_fd >= 0)
		keep[nk++] = s->ll_fd;
	close_fds_except(keep, nk);
	free(keep);
	/* nothing of PID 1's but what it serves with */
	if (privdrop_detach() != 0)
		_exit(3);
	sigemptyset(&none);
	for (i = 0; i < r->n; i++)
		if (r->v[i].tls && tls_route_reseed(r->v[i].tls) != 0) {
			log_error("bridge: route %s: cannot reseed its random generator", r->v[i].name);
			_exit(3);
		}
	max_conns = conn_limit(r->n);
	if (max_conns < BRIDGE_MAX_CONNS)
		log_warn("bridge: at most %d connections at once (the file descriptor limit)", max_conns);
	if (privdrop_credentials(s->confine, rfd) != 0)
		_exit(3);
	/* as its user and before its lock-down: resolv.conf and /etc/hosts
	 * are read now, never again (resolve.h) */
	if (resolver_init(&res, r, err, sizeof err) != 0) {
		log_error("bridge: %s", err);
		_exit(3);
	}
	/* Gone with ward. Set after the change of user, which clears it (the
	 * kernel resets the parent-death signal when credentials change);
	 * and before the filter, which has no prctl. A ward that died before
	 * this line is seen as a new parent. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent || privdrop_lock(s->confine, rfd) != 0)
		_exit(3);
	/* at the first start only: a restart keeps PID 1 waiting no longer
	 * than the bridge takes to confine itself */
	if (s->check_health)
		health_ok = bridge_health(r, &res);
	record_send(rfd, RECORD_READY, health_ok);
	close(rfd);
	sigprocmask(SIG_SETMASK, &none, NULL); /* TERM ends the bridge */
	if (bridge_run(r, &res, max_conns) != 0)
		log_error("bridge: event loop: %s", strerror(errno));
	_exit(1);
}
