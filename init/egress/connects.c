#define _GNU_SOURCE
#include "init/egress/connects.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init/egress/guard.h"
#include "init/egress/peek.h"
#include "init/egress/route.h"

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

#define ADDR_MAX 128 /* sizeof(struct sockaddr_storage): the kernel takes no more */

enum judged connects_judge(const void *sa, size_t len, struct dest *d)
{
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const unsigned char any6[16], one6[16] = { [15] = 1 };
	sa_family_t family;

	memset(d, 0, sizeof *d);
	if (len < sizeof family)
		return JUDGED_PASS;
	memcpy(&family, sa, sizeof family);
	if (family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in a;
		memcpy(&a, sa, sizeof a);
		d->family = AF_INET;
		memcpy(d->addr, &a.sin_addr, 4);
		d->port = ntohs(a.sin_port);
	} else if (family == AF_INET6 && len >= 24 /* SIN6_LEN_RFC2133: no scope id */) {
		struct sockaddr_in6 a;
		memset(&a, 0, sizeof a);
		memcpy(&a, sa, len < sizeof a ? len : sizeof a);
		d->port = ntohs(a.sin6_port);
		if (memcmp(a.sin6_addr.s6_addr, mapped, 12) == 0) {
			d->family = AF_INET;
			memcpy(d->addr, a.sin6_addr.s6_addr + 12, 4);
		} else {
			d->family = AF_INET6;
			memcpy(d->addr, a.sin6_addr.s6_addr, 16);
			/* ::1, and :: (which Linux connects to loopback) */
			if (memcmp(d->addr, one6, 16) == 0 || memcmp(d->addr, any6, 16) == 0)
				return JUDGED_PASS;
			return JUDGED_ROUTE;
		}
	} else {
		return JUDGED_PASS; /* unix, AF_UNSPEC (a disconnect), short: the kernel's to judge */
	}
	/* 127.0.0.0/8, and 0.0.0.0 (loopback to Linux) */
	if (d->addr[0] == 127 || (d->addr[0] | d->addr[1] | d->addr[2] | d->addr[3]) == 0)
		return JUDGED_PASS;
	return JUDGED_ROUTE;
}

static int answer(int listener, uint64_t id, int err)
{
	struct seccomp_notif_resp resp;

	memset(&resp, 0, sizeof resp);
	resp.id = id;
	if (err)
		resp.error = -err;
	else
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0 ? 0 : -errno;
}

/* Where the call keeps its address: (pointer, length) from its registers,
 * or from the msghdr sendmsg() points at. 0 when there is none to judge. */
static int address_of(int mem, const struct seccomp_notif *req, uint64_t *ptr, uint64_t *len)
{
	const __u64 *a = req->data.args;

	switch (req->data.nr) {
	case __NR_connect:
		*ptr = a[1];
		*len = (uint32_t)a[2];
		return 1;
	case __NR_sendto:
		*ptr = a[4];
		*len = (uint32_t)a[5];
		return 1;
	case __NR_sendmsg: {
		struct msghdr m;
		if (peek_read(mem, a[1], &m, sizeof m) != 0)
			return 0;
		*ptr = (uint64_t)(uintptr_t)m.msg_name;
		*len = m.msg_namelen;
		return 1;
	}
	default:
		return 0;
	}
}

int guard_answer_connect(struct guard *g, int listener, const struct seccomp_notif *req, uint64_t now)
{
	unsigned char sa[ADDR_MAX];
	uint64_t ptr = 0, len = 0, id = req->id;
	struct dest d;
	int mem, local;

	g->connects++;
	guard_as_agent(g, 1);
	mem = peek_open((pid_t)req->pid);
	guard_as_agent(g, 0);
	if (mem < 0) {
		g->unjudged++; /* not dumpable, or gone: the kernel's, held to lo */
		return answer(listener, id, 0);
	}
	/* until the call is known to wait still, the pid may be another's */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0 || !address_of(mem, req, &ptr, &len) ||
	    !ptr || len < sizeof(sa_family_t) || len > ADDR_MAX || peek_read(mem, ptr, sa, (size_t)len) != 0) {
		close(mem);
		return answer(listener, id, 0);
	}
	close(mem);
	if (connects_judge(sa, (size_t)len, &d) == JUDGED_PASS)
		return answer(listener, id, 0);
	local = route_local(g->rtnl, d.family, d.addr);
	if (local != 0) {
		if (local < 0)
			g->unjudged++; /* cannot tell: the kernel's, held to lo */
		return answer(listener, id, 0);
	}
	/* leaving: refused now, and said where the agent can read it */
	g->refused++;
	{
		struct refusal f = { req->data.nr == __NR_connect ? "connect" : "fast open", d.family, { 0 }, d.port,
				     ENETUNREACH, (pid_t)req->pid };
		memcpy(f.addr, d.addr, sizeof f.addr);
		/* said before it is answered: when the agent's connect
		 * returns, its line is in the agent's file already */
		refusals_note(&g->refusals, &f, now);
		if (answer(listener, id, ENETUNREACH) != 0)
			return -ENOENT; /* the caller went away meanwhile */
	}
	return 0;
}
