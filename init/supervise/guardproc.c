#define _GNU_SOURCE
#include "init/supervise/guardproc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/record.h"
#include "egress/guard.h"

int guardproc_prepare(struct guardproc *g, const struct user_ids *agent, uint32_t port_range)
{
	struct ll_policy pol;
	char err[1024];
	int i;

	memset(g, 0, sizeof *g);
	g->ll.fd = g->ctl = g->listener = -1;
	g->active = 1;
	g->port_range = port_range;
	/* The agent's own user: a socket it makes is the agent's in
	 * /proc/net/tcp, and it can reach nothing the agent cannot. It is
	 * not dumpable and outside the agent's Landlock domain, so the agent
	 * cannot trace it; a kill (same uid, where Landlock has no signal
	 * scope) only makes PID 1 start another. */
	g->confine.enabled = 1;
	g->confine.user = *agent;
	/* its Landlock: no file, no TCP bind or connect (it only makes sockets) */
	memset(&pol, 0, sizeof pol);
	pol.mode = LL_BEST_EFFORT;
	pol.scopes = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
	if (ll_build(&pol, ll_abi(), &g->ll, err, sizeof err) != 0) {
		log_error("egress guard: landlock: %s", err);
		return 3;
	}
	for (i = 0; i < g->ll.n_notes; i++)
		log_debug("egress guard: landlock: %s", g->ll.notes[i]);
	if (g->ll.fd >= 0)
		g->confine.ll = &g->ll;
	if (sc_build_guard(&g->sc, err, sizeof err) != 0) {
		log_error("egress guard: %s", err);
		return 3;
	}
	g->confine.sc = &g->sc;
	/* the page the guard notes its last call in (no page: a call a dying
	 * guard took waits for the agent's end, as before) */
	g->shared = mmap(NULL, sizeof *g->shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g->shared == MAP_FAILED) {
		log_warn("egress guard: no shared page (%s): a call a dying guard took is not answered", strerror(errno));
		g->shared = NULL;
	}
	return 0;
}

/* A guard died: the call it had received and not answered, if any, gets
 * ENOBUFS now (as when the kernel has no memory for a socket), so that
 * nothing waits for an answer no later guard can give. Its id is the one
 * noted or the next (guard.h); ID_VALID tells which one still waits, and
 * an id that waits for no one is never answered. */
static void answer_stuck(struct guardproc *g)
{
	uint64_t id, k;

	if (!g->shared || g->listener < 0 || !__atomic_load_n(&g->shared->have, __ATOMIC_ACQUIRE))
		return;
	for (k = 0; k < 2; k++) {
		struct seccomp_notif_resp resp;
		id = g->shared->last_id + k;
		if (ioctl(g->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0)
			continue;
		memset(&resp, 0, sizeof resp);
		resp.id = id;
		resp.error = -ENOBUFS;
		if (ioctl(g->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0)
			log_warn("egress guard: a socket() it had taken when it died answered ENOBUFS");
	}
}

/* Hands the current listener to the guard on ctl; a guard that is gone
 * gets it again when it is restarted. */
static void hand_over(struct guardproc *g)
{
	int rc;

	if (g->ctl < 0 || g->listener < 0)
		return;
	rc = record_send_fd(g->ctl, RECORD_LISTENER, g->listener);
	if (rc != 0)
		log_warn("egress guard: cannot hand it the agent's listener: %s", strerror(-rc));
}

pid_t guardproc_spawn(struct guardproc *g, int *note_fd)
{
	int fds[2], ctl[2];
	pid_t pid, self = getpid();

	answer_stuck(g); /* (the last guard is gone: nothing answers what it took) */

	if (pipe2(fds, O_CLOEXEC) != 0) {
		log_error("egress guard: pipe: %s", strerror(errno));
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) != 0) {
		log_error("egress guard: socketpair: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		log_error("egress guard: fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		close(ctl[0]);
		close(ctl[1]);
		return -1;
	}
	if (pid == 0) {
		struct guard_start s = { &g->confine, g->ll.fd, ctl[1], g->port_range, g->shared };
		close(fds[0]);
		close(ctl[0]);
		guard_main(&s, fds[1], self);
	}
	close(fds[1]);
	close(ctl[1]);
	if (g->ctl >= 0)
		close(g->ctl);
	g->ctl = ctl[0];
	hand_over(g); /* queued until it serves */
	(void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
	*note_fd = fds[0];
	return pid;
}

int guardproc_note(struct guardproc *g, int fd, pid_t pid)
{
	int ignored, r = record_ready(fd, "egress guard", &ignored);

	if (r != 1)
		return r;
	log_info("egress guard: pid %d holds the agent's inet sockets to lo%s", (int)pid,
		 g->started ? " again" : "");
	g->started = 1;
	return 1;
}

void guardproc_attach(struct guardproc *g, int fd)
{
	if (g->listener >= 0)
		close(g->listener);
	g->listener = fd;
	g->handed++;
	hand_over(g);
}

int guardproc_fds(const struct guardproc *g, int *fds, int max)
{
	int n = 0;

	if (g->ctl >= 0 && n < max)
		fds[n++] = g->ctl;
	if (g->listener >= 0 && n < max)
		fds[n++] = g->listener;
	if (g->ll.fd >= 0 && n < max)
		fds[n++] = g->ll.fd;
	return n;
}

void guardproc_free(struct guardproc *g)
{
	if (g->ctl >= 0)
		close(g->ctl);
	if (g->listener >= 0)
		close(g->listener);
	ll_free(&g->ll);
	sc_free(&g->sc);
	if (g->shared)
		munmap(g->shared, sizeof *g->shared);
	memset(g, 0, sizeof *g);
	g->ll.fd = g->ctl = g->listener = -1;
}
