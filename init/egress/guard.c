#define _GNU_SOURCE
#include "init/egress/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "init/egress/route.h"

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE 51 /* Linux 6.3 */
#endif

#define LOOPBACK_DEVICE "lo"

int guard_open(struct guard *g, uid_t uid, gid_t gid, uint32_t port_range)
{
	memset(g, 0, sizeof *g);
	g->uid = uid;
	g->gid = gid;
	g->own_uid = geteuid();
	g->own_gid = getegid();
	g->switch_ids = uid != g->own_uid || gid != g->own_gid;
	g->port_range = port_range;
	refusals_init(&g->refusals);
	/* as the agent's user: the socket table's answers are then the
	 * agent's own sockets and ward's alike (it reads all of the
	 * namespace's), and no capability is asked for */
	if (blocked_open(&g->blocked) != 0)
		log_warn("egress guard: no socket table query (%s): connects left waiting go unlogged", strerror(errno));
	g->rtnl = route_open();
	if (g->rtnl < 0) {
		int e = -g->rtnl;
		log_warn("egress guard: no route query (%s): a refused connect waits on lo instead of failing at once",
			 strerror(e));
		return -e;
	}
	return 0;
}

void guard_close(struct guard *g)
{
	if (g->rtnl >= 0)
		close(g->rtnl);
	if (g->blocked.nl >= 0)
		close(g->blocked.nl);
	refusals_free(&g->refusals);
	g->rtnl = g->blocked.nl = -1;
}

void guard_as_agent(const struct guard *g, int on)
{
	/* setfsgid first going in, last coming out: fsuid 0 keeps the
	 * capability setfsgid asks for (CAP_SETGID is kept, not an fs one) */
	if (!g->switch_ids)
		return;
	if (on) {
		setfsgid(g->gid);
		setfsuid(g->uid);
	} else {
		setfsuid(g->own_uid);
		setfsgid(g->own_gid);
	}
}

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

/* The socket the caller asked for, made here as the agent's user, held to
 * lo and kept off the upstreams' ports. Each setting is read back: a
 * socket the kernel did not pin is never handed over. */
static int make_socket(const struct guard *g, int domain, int type, int protocol)
{
	char dev[IFNAMSIZ] = { 0 };
	socklen_t len = sizeof dev;
	int s, e;

	/* the socket's owner is the fsuid that made it */
	guard_as_agent(g, 1);
	s = socket(domain, type | SOCK_CLOEXEC, protocol);
	e = errno;
	guard_as_agent(g, 0);
	if (s < 0)
		return -e;
	errno = 0;
	if (setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, LOOPBACK_DEVICE, sizeof LOOPBACK_DEVICE) != 0 ||
	    getsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, dev, &len) != 0 || strcmp(dev, LOOPBACK_DEVICE) != 0 ||
	    (g->port_range && set_port_range(s, g->port_range) != 0)) {
		e = errno ? errno : EACCES;
		close(s);
		return -(e == ENODEV ? ENETUNREACH : EACCES);
	}
	return s;
}

int guard_answer_socket(const struct guard *g, int listener, const struct seccomp_notif *req)
{
	/* the kernel reads each argument as an int */
	int domain = (int)req->data.args[0], type = (int)req->data.args[1], protocol = (int)req->data.args[2];
	struct seccomp_notif_addfd add = { .id = req->id, .flags = SECCOMP_ADDFD_FLAG_SEND };
	int s, r;

	if (domain != AF_INET && domain != AF_INET6)
		return answer_error(listener, req->id, EACCES); /* not ours: the filter sends no other */
	/* TCP only. A datagram socket is routed per message, not by its
	 * device: IP_PKTINFO or IPV6_PKTINFO naming another interface, a
	 * link-local scope id or a multicast group joined on one sends past
	 * SO_BINDTODEVICE (UDP, ping's ICMP, IGMP and MLD reports, all seen
	 * arriving outside). EACCES, as deny = udp answers. */
	if ((type & 0xf) != SOCK_STREAM || (protocol != 0 && protocol != IPPROTO_TCP))
		return answer_error(listener, req->id, EACCES);
	s = make_socket(g, domain, type, protocol);
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
