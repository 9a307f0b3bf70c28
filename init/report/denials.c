#define _GNU_SOURCE
#include "init/report/denials.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"

#ifndef AUDIT_LANDLOCK_ACCESS
#define AUDIT_LANDLOCK_ACCESS 1423
#endif
#ifndef AUDIT_LANDLOCK_DOMAIN
#define AUDIT_LANDLOCK_DOMAIN 1424
#endif
#ifndef AUDIT_NLGRP_READLOG
#define AUDIT_NLGRP_READLOG 1
#endif

/* The counters only: every read of the buffers is bounded by them. */
void denials_init(struct denials *d)
{
	d->fd = -1;
	d->n_domains = d->next_domain = d->n_pending = 0;
}

/* Asks the kernel whether audit is on: 1, 0, or -1 if it does not say. */
static int audit_enabled(void)
{
	struct {
		struct nlmsghdr h;
		struct audit_status s;
	} req;
	char buf[8192];
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	struct timeval tv = { 1, 0 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT), rc = -1, tries;

	if (fd < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	memset(&req, 0, sizeof req);
	req.h.nlmsg_len = NLMSG_LENGTH(0);
	req.h.nlmsg_type = AUDIT_GET;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = 1;
	if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&k, sizeof k) < 0)
		goto out;
	for (tries = 0; tries < 4 && rc < 0; tries++) {
		ssize_t n = recv(fd, buf, sizeof buf, 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		if (n < (ssize_t)NLMSG_LENGTH(0))
			break;
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n))
			if (h->nlmsg_type == AUDIT_GET && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct audit_status)))
				rc = ((struct audit_status *)NLMSG_DATA(h))->enabled ? 1 : 0;
			else if (h->nlmsg_type == NLMSG_ERROR && ((struct nlmsgerr *)NLMSG_DATA(h))->error)
				goto out;
	}
out:
	close(fd);
	return rc;
}

/* Is ward in the initial pid namespace? The kernel's records carry its
 * pids; in any other namespace they would not be ward's. */
static int initial_pid_ns(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	int ok = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *p = line + 6;
			p += strspn(p, " \t");
			p += strcspn(p, " \t\n");
			ok = *p == '\n' || *p == '\0' || strspn(p, " \t\n") == strlen(p);
		}
	fclose(f);
	return ok;
}

int denials_open(struct denials *d)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1) };
	int on;

	if (!initial_pid_ns()) {
		log_debug("denials: ward is not in the initial pid namespace, the audit log's pids are not "
			  "its own; use ward --explain PATH");
		return -1;
	}

	d->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT);
	if (d->fd < 0 || bind(d->fd, (struct sockaddr *)&a, sizeof a) != 0) {
		/* a container: no audit outside the initial namespaces */
		log_debug("denials: cannot read the kernel's audit log (%s); use ward --explain PATH",
			  strerror(errno));
		if (d->fd >= 0)
			close(d->fd);
		d->fd = -1;
		return -1;
	}
	on = audit_enabled();
	if (on == 0)
		log_debug("denials: kernel audit is off, so Landlock logs no denial (auditctl -e 1 turns it "
			  "on); use ward --explain PATH");
	else
		log_debug("denials: reporting the agent's Landlock denials from the kernel's audit log");
	return d->fd;
}

/* The value of key= in a record (quotes kept off), or "" */
static void field(const char *rec, const char *key, char *out, size_t size)
{
	const char *p = rec;
	size_t kl = strlen(key), n;

	out[0] = '\0';
	while ((p = strstr(p, key)) != NULL) {
		if ((p == rec || p[-1] == ' ') && p[kl] == '=') {
			p += kl + 1;
			if (*p == '"') {
				p++;
				n = strcspn(p, "\"");
			} else {
				n = strcspn(p, " ");
			}
			if (n >= size)
				n = size - 1;
			memcpy(out, p, n);
			out[n] = '\0';
			return;
		}
		p += kl;
	}
}

static int is_agent(const pid_t *agents, int n, long pid)
{
	int i;
	for (i = 0; i < n; i++)
		if (agents[i] > 0 && agents[i] == pid)
			return 1;
	return 0;
}

static int ours(const struct denials *d, const char *domain)
{
	int i;
	for (i = 0; i < d->n_domains; i++)
		if (strcmp(d->domains[i], domain) == 0)
			return 1;
	return 0;
}

/* The kernel writes a path with blanks or unusual bytes as hex, unquoted. */
static void unhex(char *path)
{
	size_t n = strlen(path), i;

	if (!n || n % 2 || strspn(path, "0123456789ABCDEFabcdef") != n)
		return;
	for (i = 0; i < n / 2; i++) {
		unsigned v;
		char h[3] = { path[2 * i], path[2 * i + 1], 0 };
		v = (unsigned)strtoul(h, NULL, 16);
		/* the agent chose the name: no control byte reaches the log
		 * line (a newline would start a forged one) */
		if (v >= 0x20 && v != 0x7f)
			path[i] = (char)v;
		else
			path[i] = '?';
	}
	path[n / 2] = '\0';
}

static void report(const char *rec)
{
	char blockers[256], path[512], fix[1200];

	field(rec, "blockers", blockers, sizeof blockers);
	field(rec, "path", path, sizeof path);
	unhex(path);
	if (path[0] && strstr(blockers, "fs."))
		snprintf(fix, sizeof fix, "; a rule that would allow it: %s = %s under [landlock] (ward --explain %s)",
			 strstr(blockers, "write") || strstr(blockers, "make_") || strstr(blockers, "remove") ||
					 strstr(blockers, "truncate") || strstr(blockers, "refer")
				 ? "write"
				 : "read",
			 path, path);
	else if (strstr(blockers, "net."))
		snprintf(fix, sizeof fix, "; a rule that would allow it: connect or bind = PORT under [landlock]");
	else
		fix[0] = '\0';
	log_warn("denied by landlock: %s%s%s%s", blockers, path[0] ? " on " : "", path, fix);
}

void denials_record(struct denials *d, int type, const char *rec, const pid_t *agents, int n_agents)
{
	char domain[32], status[32], pid[24], other[32];
	int i, j;

	field(rec, "domain", domain, sizeof domain);
	if (!domain[0])
		return;
	if (type == AUDIT_LANDLOCK_DOMAIN) {
		field(rec, "status", status, sizeof status);
		field(rec, "pid", pid, sizeof pid);
		if (strcmp(status, "allocated") != 0)
			return;
		/* the agent's domain: created by a process ward started */
		if (is_agent(agents, n_agents, strtol(pid, NULL, 10)) && !ours(d, domain)) {
			snprintf(d->domains[d->next_domain], sizeof d->domains[0], "%s", domain);
			d->next_domain = (d->next_domain + 1) % DENIALS_DOMAINS;
			d->n_domains += d->n_domains < DENIALS_DOMAINS;
		}
		/* its denials waiting for this description: report or forget */
		for (i = j = 0; i < d->n_pending; i++) {
			field(d->pending[i], "domain", other, sizeof other);
			if (strcmp(other, domain) != 0) {
				if (i != j)
					memcpy(d->pending[j], d->pending[i], sizeof d->pending[0]);
				j++;
			} else if (ours(d, domain)) {
				report(d->pending[i]);
			}
		}
		d->n_pending = j;
		return;
	}
	if (ours(d, domain)) {
		report(rec);
		return;
	}
	/* a domain not described yet: the description follows in the same
	 * event; the oldest waiting record makes room */
	if (d->n_pending == DENIALS_PENDING) {
		memmove(d->pending[0], d->pending[1], sizeof d->pending[0] * (DENIALS_PENDING - 1));
		d->n_pending--;
	}
	snprintf(d->pending[d->n_pending++], sizeof d->pending[0], "%s", rec);
}

void denials_read(struct denials *d, const pid_t *agents, int n_agents)
{
	char buf[16384];
	int budget = 64;

	/* The audit log sends one record per datagram, and its nlmsg_len is
	 * not to be trusted for walking further (libaudit does not either):
	 * read the one header, bound the text by what arrived. At most 64 a
	 * turn: an agent denied in a loop must not keep PID 1 from its work
	 * (epoll brings ward back for the rest). */
	while (budget-- > 0) {
		ssize_t n = recv(d->fd, buf, sizeof buf, 0);
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
		char rec[1024];
		size_t len;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < (ssize_t)NLMSG_HDRLEN)
			return; /* drained (EAGAIN), or nothing usable */
		if (h->nlmsg_type != AUDIT_LANDLOCK_ACCESS && h->nlmsg_type != AUDIT_LANDLOCK_DOMAIN)
			continue;
		len = (size_t)n - NLMSG_HDRLEN;
		if (h->nlmsg_len >= NLMSG_HDRLEN && h->nlmsg_len - NLMSG_HDRLEN < len)
			len = h->nlmsg_len - NLMSG_HDRLEN;
		if (len >= sizeof rec)
			len = sizeof rec - 1;
		memcpy(rec, buf + NLMSG_HDRLEN, len);
		rec[len] = '\0';
		denials_record(d, h->nlmsg_type, rec, agents, n_agents);
	}
}

void denials_close(struct denials *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}
