#define _GNU_SOURCE
#include "init/egress/owner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TCP_LISTEN_STATE 10 /* the kernel's TCP_LISTEN */

unsigned owner_inode(int nl, int family, const unsigned char *src, unsigned sport, const unsigned char *dst,
		     unsigned dport, unsigned dev)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req;
	char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	size_t alen = family == AF_INET ? 4 : 16;
	static uint32_t seq;
	const struct nlmsghdr *h;
	ssize_t n;

	if (nl < 0)
		return 0;
	memset(&req, 0, sizeof req);
	req.h.nlmsg_len = sizeof req;
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST; /* one socket, by its four-tuple: no dump */
	req.h.nlmsg_seq = ++seq;
	req.r.sdiag_family = (unsigned char)family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	req.r.id.idiag_sport = htons((uint16_t)sport);
	req.r.id.idiag_dport = htons((uint16_t)dport);
	memcpy(req.r.id.idiag_src, src, alen);
	memcpy(req.r.id.idiag_dst, dst, alen);
	/* the agent's sockets are bound to lo (guard.h): the lookup matches
	 * a bound socket only on its own device */
	req.r.id.idiag_if = dev;
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (send(nl, &req, sizeof req, MSG_NOSIGNAL) != (ssize_t)sizeof req)
		return 0;
	/* the kernel answers a request within send(): the answer is queued
	 * now, and a read that would wait means there is none. An answer of
	 * an earlier request (another sequence number) is passed over. */
	for (;;) {
		n = recv(nl, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		for (h = (const struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
			    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
				const struct inet_diag_msg *m = NLMSG_DATA(h);
				/* the lookup falls back to a listener when no
				 * connection matches: only this connection counts */
				if (m->idiag_state == TCP_LISTEN_STATE || m->id.idiag_sport != req.r.id.idiag_sport ||
				    m->id.idiag_dport != req.r.id.idiag_dport ||
				    memcmp(m->id.idiag_src, req.r.id.idiag_src, alen) != 0 ||
				    memcmp(m->id.idiag_dst, req.r.id.idiag_dst, alen) != 0)
					return 0;
				return m->idiag_inode;
			}
			return 0; /* NLMSG_ERROR: no such socket */
		}
	}
}

/* A name of /proc that is a pid, or 0. */
static pid_t pid_of(const char *name)
{
	char *end;
	long v;

	if (name[0] < '1' || name[0] > '9')
		return 0;
	errno = 0;
	v = strtol(name, &end, 10);
	return *end || errno || v <= 0 || v > 0x7fffffff ? 0 : (pid_t)v;
}

/* Descriptors and processes looked at in one search, at most: the agent
 * chooses how many it holds, and PID 1's loop waits while it looks. */
#define OWNER_LOOKS_MAX 65536

/* Whether the process whose /proc directory is pfd holds the socket
 * called want ("socket:[INODE]"); *budget counts down what is looked at. */
static int holds(int pfd, const char *want, unsigned *budget)
{
	char link[64];
	struct dirent *e;
	DIR *d;
	int found = 0, fd = openat(pfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0; /* gone, or not the agent's to read */
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while (!found && *budget && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		--*budget;
		n = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = strcmp(link, want) == 0;
	}
	closedir(d);
	return found;
}

/* The command line read through the process's own /proc directory, so a
 * pid reused meanwhile fails (ESRCH) instead of naming another: 0, or -1
 * (gone, or empty: a kernel thread, or a process that is exiting). */
static int command_line(int pfd, char *cmd, size_t size)
{
	ssize_t n;
	int fd = openat(pfd, "cmdline", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -1;
	n = read(fd, cmd, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	who_printable(cmd, (size_t)n, size);
	return 0;
}

/* The first process, other than PID 1 and ward itself, that holds the
 * socket, and its command line: its pid, or 0 if none (or none among the
 * first OWNER_LOOKS_MAX processes and descriptors). */
static pid_t holder(unsigned inode, char *cmd, size_t size)
{
	char want[32];
	struct dirent *e;
	pid_t pid = 0, p, self = getpid();
	unsigned budget = OWNER_LOOKS_MAX;
	DIR *d = opendir("/proc");
	int pfd;

	if (!d)
		return 0;
	snprintf(want, sizeof want, "socket:[%u]", inode);
	while (!pid && budget && (e = readdir(d))) {
		if ((p = pid_of(e->d_name)) <= 1 || p == self)
			continue;
		--budget; /* a process with nothing readable costs too */
		pfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0)
			continue;
		if (holds(pfd, want, &budget) && command_line(pfd, cmd, size) == 0)
			pid = p;
		close(pfd);
	}
	closedir(d);
	return pid;
}

void owner_find(const struct guard *g, const struct who_req *q, struct who_ans *a)
{
	unsigned inode;
	pid_t pid;

	memset(a, 0, sizeof *a);
	a->seq = q->seq;
	if (q->family != AF_INET && q->family != AF_INET6)
		return;
	inode = owner_inode(g->blocked.nl, q->family, q->agent_addr, q->agent_port, q->proxy_addr, q->proxy_port,
			    g->blocked.lo_index);
	if (!inode)
		return;
	/* as the agent's user: its /proc/PID/fd is then PID 1's to read */
	guard_as_agent(g, 1);
	pid = holder(inode, a->cmd, sizeof a->cmd);
	guard_as_agent(g, 0);
	a->pid = pid;
	if (!pid)
		a->cmd[0] = '\0';
}
