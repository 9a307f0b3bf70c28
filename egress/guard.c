#define _GNU_SOURCE
#include "egress/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child/privdrop.h"
#include "egress/blocked.h"
#include "common/clock.h"
#include "common/fds.h"
#include "common/log.h"
#include "common/record.h"
#include "seccomp/notify.h"

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE 51 /* Linux 6.3 */
#endif

#define LOOPBACK_DEVICE "lo"

/* Answers the call with an error (ENOENT: the caller is gone already). */
static int answer_error(int listener, __u64 id, int err)
{
	struct seccomp_notif_resp resp = { .id = id, .error = -err };

	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) != 0)
		return -errno;
	return 0;
}

/* The socket's own ephemeral ports, read back. */
static int set_port_range(int s, uint32_t range)
{
	uint32_t got = 0;
	socklen_t len = sizeof got;

	return setsockopt(s, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range, sizeof range) == 0 &&
			       getsockopt(s, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &got, &len) == 0 && got == range
		       ? 0
		       : -1;
}

/* The socket the caller asked for, made here, held to lo and kept off the
 * upstreams' ports. Each setting is read back: a socket the kernel did
 * not pin is never handed over. */
static int make_socket(int domain, int type, int protocol, uint32_t port_range)
{
	char dev[IFNAMSIZ] = { 0 };
	socklen_t len = sizeof dev;
	int s = socket(domain, type | SOCK_CLOEXEC, protocol), e;

	if (s < 0)
		return -errno;
	errno = 0;
	if (setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, LOOPBACK_DEVICE, sizeof LOOPBACK_DEVICE) != 0 ||
	    getsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, dev, &len) != 0 || strcmp(dev, LOOPBACK_DEVICE) != 0 ||
	    (port_range && set_port_range(s, port_range) != 0)) {
		e = errno ? errno : EACCES;
		close(s);
		return -(e == ENODEV ? ENETUNREACH : EACCES);
	}
	return s;
}

int guard_answer(int listener, const struct seccomp_notif *req, uint32_t port_range)
{
	/* the kernel reads each argument as an int */
	int domain = (int)req->data.args[0], type = (int)req->data.args[1], protocol = (int)req->data.args[2];
	struct seccomp_notif_addfd add = { .id = req->id, .flags = SECCOMP_ADDFD_FLAG_SEND };
	int s, r;

	if (req->data.nr != __NR_socket || (domain != AF_INET && domain != AF_INET6))
		return answer_error(listener, req->id, EACCES); /* not ours: the filter sends no other */
	/* TCP only. A datagram socket is routed per message, not by its
	 * device: IP_PKTINFO or IPV6_PKTINFO naming another interface, a
	 * link-local scope id or a multicast group joined on one sends past
	 * SO_BINDTODEVICE (UDP, ping's ICMP, IGMP and MLD reports, all seen
	 * arriving outside). EACCES, as deny = udp answers. */
	if ((type & 0xf) != SOCK_STREAM || (protocol != 0 && protocol != IPPROTO_TCP))
		return answer_error(listener, req->id, EACCES);
	s = make_socket(domain, type, protocol, port_range);
	if (s < 0)
		return answer_error(listener, req->id, -s);
	add.srcfd = (__u32)s;
	add.newfd_flags = (type & SOCK_CLOEXEC) ? O_CLOEXEC : 0;
	/* installs it at the caller's lowest free descriptor and makes that
	 * number socket()'s return value, in one step */
	r = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	close(s);
	if (r >= 0)
		return 0;
	r = errno;
	if (r == ENOENT)
		return -ENOENT; /* the caller went away (a signal, its death) */
	return answer_error(listener, req->id, r == EMFILE ? EMFILE : EACCES);
}

/* One waiting notification. A failure to receive (the caller died in
 * between) is no failure of the guard's. newest: the listener PID 1
 * holds, whose last id is noted for it (guard.h) before the answer. */
static void serve_one(int listener, uint32_t port_range, struct guard_shared *shared, int newest)
{
	struct seccomp_notif req;

	memset(&req, 0, sizeof req); /* RECV wants it zeroed */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0)
		return;
	if (shared && newest) {
		shared->last_id = req.id;
		__atomic_store_n(&shared->have, 1, __ATOMIC_RELEASE);
	}
	(void)guard_answer(listener, &req, port_range);
}

/* A listener sent by PID 1 (one per agent start); -1 at end of file. */
static int take_listener(int ctl)
{
	struct record rec;
	int fd = -1, r = record_read_fd(ctl, &rec, &fd);

	if (r == 0 || (r == 1 && rec.kind == RECORD_FAILED))
		return -1;
	if (r == 1 && (rec.kind != RECORD_LISTENER || fd < 0)) {
		if (fd >= 0)
			close(fd);
		return -2; /* not a listener: ignored */
	}
	return r == 1 ? fd : -2;
}

static void serve(int ctl, uint32_t port_range, struct blocked *b, struct guard_shared *shared)
{
	struct pollfd p[GUARD_MAX_LISTENERS + 1];
	int n = 0, i;

	p[0] = (struct pollfd){ .fd = ctl, .events = POLLIN };
	for (;;) {
		int r = poll(p, (nfds_t)n + 1, blocked_timeout(b, now_ms()));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		/* the connects that lo leaves waiting, named (blocked.h) */
		blocked_look(b, now_ms());
		if (r == 0)
			continue;
		for (i = 1; i <= n; i++) {
			if (p[i].revents & POLLIN) {
				serve_one(p[i].fd, port_range, shared, i == n);
				blocked_poke(b, now_ms());
			} else if (p[i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
				/* every process of that agent is gone */
				close(p[i].fd);
				p[i] = p[n--];
				i--;
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			int l = take_listener(ctl);
			if (l == -1)
				_exit(0); /* PID 1 is gone */
			if (l >= 0) {
				if (n == GUARD_MAX_LISTENERS) {
					/* the oldest agent's: its calls now fail (ENOSYS), never pass */
					close(p[1].fd);
					memmove(&p[1], &p[2], (size_t)(n - 1) * sizeof p[0]);
					n--;
				}
				/* best effort: older kernels answer EINVAL, and are slower only */
				(void)ioctl(l, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
				p[++n] = (struct pollfd){ .fd = l, .events = POLLIN };
			}
		}
	}
}

void guard_main(const struct guard_start *s, int rfd, pid_t parent)
{
	struct blocked blocked;
	int keep[4], nk = 0;
	sigset_t none;

	prctl(PR_SET_NAME, "ward-guard", 0, 0, 0);
	keep[nk++] = s->ctl;
	keep[nk++] = rfd;
	keep[nk++] = log_fd();
	if (s->ll_fd >= 0)
		keep[nk++] = s->ll_fd;
	close_fds_except(keep, nk);
	if (privdrop_detach() != 0)
		_exit(3);
	if (privdrop_credentials(s->confine, rfd) != 0)
		_exit(3);
	/* as the agent's user (a netlink socket keeps its opener's credentials
	 * for the kernel's capability checks), before its filter, which allows
	 * no netlink socket: without it the guard still holds every socket to
	 * lo, and says so */
	if (blocked_open(&blocked) != 0)
		log_warn("egress guard: no socket table query (%s): refused connects go unlogged", strerror(errno));
	/* after the change of user, which clears it (as the bridge does) */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent || privdrop_lock(s->confine, rfd) != 0)
		_exit(3);
	record_send(rfd, RECORD_READY, 0);
	close(rfd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL); /* TERM ends it */
	serve(s->ctl, s->port_range, &blocked, s->shared);
	_exit(1);
}
