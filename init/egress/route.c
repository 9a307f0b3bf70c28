#define _GNU_SOURCE
#include "init/egress/route.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int route_open(void)
{
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_ROUTE);

	return nl < 0 ? -errno : nl;
}

int route_parse(const void *buf, size_t len, unsigned seq)
{
	const struct nlmsghdr *h = buf;

	if (len < sizeof *h || h->nlmsg_len < sizeof *h || h->nlmsg_len > len || h->nlmsg_seq != seq)
		return -EPROTO;
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);
		if (h->nlmsg_len < NLMSG_LENGTH(sizeof *e))
			return -EPROTO;
		/* no route at all (ENETUNREACH, EHOSTUNREACH...): not local */
		return e->error < 0 ? 0 : -EPROTO;
	}
	if (h->nlmsg_type != RTM_NEWROUTE || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg)))
		return -EPROTO;
	return ((const struct rtmsg *)NLMSG_DATA(h))->rtm_type == RTN_LOCAL;
}

int route_local(int nl, int family, const unsigned char *addr)
{
	static unsigned seq;
	size_t alen = family == AF_INET ? 4 : 16;
	struct {
		struct nlmsghdr h;
		struct rtmsg r;
		struct rtattr a;
		unsigned char dst[16];
	} req;
	char buf[1024] __attribute__((aligned(NLMSG_ALIGNTO)));
	ssize_t n;

	if (nl < 0)
		return -EBADF;
	memset(&req, 0, sizeof req);
	req.h.nlmsg_len = (unsigned)(NLMSG_LENGTH(sizeof req.r) + RTA_LENGTH(alen));
	req.h.nlmsg_type = RTM_GETROUTE;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = ++seq;
	req.r.rtm_family = (unsigned char)family;
	req.r.rtm_dst_len = (unsigned char)(alen * 8);
	req.a.rta_type = RTA_DST;
	req.a.rta_len = (unsigned short)RTA_LENGTH(alen);
	memcpy(req.dst, addr, alen);
	if (send(nl, &req, req.h.nlmsg_len, 0) != (ssize_t)req.h.nlmsg_len)
		return -errno;
	/* the kernel answers within send(); an answer to an older request
	 * (one given up on) is skipped by its sequence number */
	for (;;) {
		int r;
		n = recv(nl, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		r = route_parse(buf, (size_t)n, seq);
		if (r != -EPROTO || (size_t)n < sizeof(struct nlmsghdr) ||
		    ((const struct nlmsghdr *)buf)->nlmsg_seq == seq)
			return r;
	}
}
