#define _GNU_SOURCE
#include "init/egress/blocked.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"

#define TCP_SYN_SENT_STATE 2 /* the kernel's TCP_SYN_SENT */

int blocked_open(struct blocked *b)
{
	unsigned lo = if_nametoindex("lo");

	memset(b, 0, sizeof *b);
	b->lo_index = lo ? lo : 1; /* every namespace's loopback is 1 */
	b->nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	return b->nl < 0 ? -errno : 0;
}

void blocked_poke(struct blocked *b, uint64_t now)
{
	if (b->nl >= 0 && !b->due)
		b->due = now + BLOCKED_FIRST_MS;
}

int blocked_timeout(const struct blocked *b, uint64_t now)
{
	if (b->nl < 0 || !b->due)
		return -1;
	return b->due <= now ? 0 : (int)(b->due - now);
}

/* 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104 */
static int loopback(int family, const unsigned char *a)
{
	static const unsigned char one[16] = { [15] = 1 };
	return family == AF_INET ? a[0] == 127 : memcmp(a, one, 16) == 0;
}

static int parse_one(const struct nlmsghdr *h, unsigned lo_index,
		     void (*found)(void *, const struct blocked_conn *), void *ctx)
{
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	struct blocked_conn c;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof *m)) {
		errno = EPROTO;
		return -1;
	}
	if (m->idiag_state != TCP_SYN_SENT_STATE || m->id.idiag_if != lo_index ||
	    (m->idiag_family != AF_INET && m->idiag_family != AF_INET6))
		return 0;
	memset(&c, 0, sizeof c);
	c.family = m->idiag_family;
	memcpy(c.dst, m->id.idiag_dst, 16);
	if (c.family == AF_INET6 && memcmp(c.dst, mapped, 12) == 0) {
		c.family = AF_INET;
		memmove(c.dst, c.dst + 12, 4);
		memset(c.dst + 4, 0, 12);
	}
	if (loopback(c.family, c.dst))
		return 0;
	c.port = ntohs(m->id.idiag_dport);
	c.inode = m->idiag_inode;
	c.uid = m->idiag_uid;
	found(ctx, &c);
	return 0;
}

int blocked_parse(const void *buf, size_t len, unsigned lo_index,
		  void (*found)(void *ctx, const struct blocked_conn *c), void *ctx)
{
	const struct nlmsghdr *h = buf;
	size_t left = len;

	/* NLMSG_OK and NLMSG_NEXT, with the length kept unsigned */
	while (left > 0) {
		size_t step;
		if (left < sizeof *h || h->nlmsg_len < sizeof *h || h->nlmsg_len > left) {
			errno = EPROTO; /* cut short, or a length that cannot be */
			return -1;
		}
		if (h->nlmsg_type == NLMSG_DONE) {
			/* the dump's own status: an int after the header, negative on an error */
			int status = 0;
			if (h->nlmsg_len >= NLMSG_LENGTH(sizeof status))
				memcpy(&status, NLMSG_DATA(h), sizeof status);
			if (status < 0) {
				/* an errno, or (INT_MIN, no errno) EPROTO: never negated past int */
				errno = status > -4096 ? -status : EPROTO;
				return -1;
			}
			return 1;
		}
		if (h->nlmsg_type == NLMSG_ERROR) {
			/* its errno, for the warning: ENOENT when sock_diag has no
			 * TCP module (inet_diag, tcp_diag not loaded) */
			const struct nlmsgerr *e = NLMSG_DATA(h);
			errno = h->nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error < 0 && e->error > -4096 ? -e->error
												      : EPROTO;
			return -1;
		}
		if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY && parse_one(h, lo_index, found, ctx) != 0)
			return -1;
		step = NLMSG_ALIGN(h->nlmsg_len);
		if (step >= left)
			return 0;
		left -= step;
		h = (const struct nlmsghdr *)((const char *)h + step);
	}
	return 0;
}

struct look {
	struct blocked *b;
	uint64_t now;
	int waiting; /* connects still waiting, named before or not */
};

static int seen(const struct blocked *b, unsigned inode)
{
	unsigned i;

	/* the ring holds the last BLOCKED_SEEN named; unused slots are 0, no inode */
	for (i = 0; i < BLOCKED_SEEN; i++)
		if (b->seen[i] == inode)
			return 1;
	return 0;
}

static void name_it(void *ctx, const struct blocked_conn *c)
{
	struct look *l = ctx;
	struct blocked *b = l->b;
	char a[INET6_ADDRSTRLEN];

	l->waiting++;
	if (c->inode && seen(b, c->inode))
		return;
	b->seen[b->n_seen++ % BLOCKED_SEEN] = c->inode;
	if (!b->window || l->now - b->window >= BLOCKED_WINDOW_MS) {
		b->window = l->now;
		b->in_window = 0;
	}
	if (b->in_window >= BLOCKED_BURST) {
		b->dropped++;
		return;
	}
	b->in_window++;
	inet_ntop(c->family, c->dst, a, sizeof a);
	log_warn("egress: refused proto=tcp dst=%s%s%s:%u uid=%u reason=held to lo: no route out of the sandbox",
		 c->family == AF_INET6 ? "[" : "", a, c->family == AF_INET6 ? "]" : "", c->port, c->uid);
}

/* One dump of a family's waiting connects. -1 when the query failed. */
static int dump(struct blocked *b, int family, struct look *l)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req;
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	ssize_t n;
	int r = 0;

	memset(&req, 0, sizeof req);
	req.h.nlmsg_len = sizeof req;
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.r.sdiag_family = (unsigned char)family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = 1u << TCP_SYN_SENT_STATE;
	if (write(b->nl, &req, sizeof req) != (ssize_t)sizeof req)
		return -1;
	while (r == 0) {
		n = read(b->nl, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EPROTO;
			return -1;
		}
		r = blocked_parse(buf, (size_t)n, b->lo_index, name_it, l);
	}
	return r < 0 ? -1 : 0;
}

/* The count of a window that is over. */
static void window_end(struct blocked *b, uint64_t now)
{
	if (!b->dropped || now - b->window < BLOCKED_WINDOW_MS)
		return;
	log_warn("egress: %u more refused connect(s) not shown (at most %d per %d s)", b->dropped, BLOCKED_BURST,
		 BLOCKED_WINDOW_MS / 1000);
	b->dropped = 0;
}

void blocked_look(struct blocked *b, uint64_t now)
{
	struct look l = { b, now, 0 };

	if (b->nl < 0 || !b->due || now < b->due)
		return;
	window_end(b, now);
	if (dump(b, AF_INET, &l) != 0 || dump(b, AF_INET6, &l) != 0) {
		log_warn("egress: the kernel's socket table cannot be read (%s): refused connects go unlogged",
			 strerror(errno));
		close(b->nl);
		b->nl = -1;
		b->due = 0;
		return;
	}
	/* again while connects wait, and at the window's end to give its count */
	b->due = l.waiting ? now + BLOCKED_AGAIN_MS : b->dropped ? b->window + BLOCKED_WINDOW_MS : 0;
}
