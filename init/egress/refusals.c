#define _GNU_SOURCE
#include "init/egress/refusals.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

void refusals_init(struct refusals *r)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
}

/* The caller's name (its thread's, from /proc), or "?". Printable only:
 * the agent chose it. */
static void comm_of(pid_t pid, char *out, size_t size)
{
	char path[40];
	ssize_t n = -1;
	int fd, i;

	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, out, size - 1);
		close(fd);
	}
	if (n <= 0) {
		snprintf(out, size, "?");
		return;
	}
	out[n] = '\0';
	for (i = 0; out[i]; i++)
		if (out[i] == '\n')
			out[i] = '\0';
		else if ((unsigned char)out[i] < 0x21 || (unsigned char)out[i] > 0x7e || out[i] == '"')
			out[i] = '_';
}

int refusals_format(char *buf, size_t size, const struct refusal *f, const char *comm)
{
	char a[INET6_ADDRSTRLEN];
	int v6 = f->family == AF_INET6;

	if (!inet_ntop(f->family, f->addr, a, sizeof a))
		snprintf(a, sizeof a, "?");
	return snprintf(buf, size,
			"refused=%s dst=%s%s%s:%u errno=%s pid=%d comm=%s rule=\"egress = loopback: the sandbox reaches "
			"loopback and its own addresses only\" allow=\"a web host: through the proxy in HTTPS_PROXY once "
			"the person adds its name to [proxy] allow (ward-pi --allow NAME); a fixed address and port: a "
			"[route] with protocol = stream\"",
			f->call, v6 ? "[" : "", a, v6 ? "]" : "", f->port, strerrorname_np(f->err) ? strerrorname_np(f->err) : "?",
			(int)f->pid, comm);
}

/* A new window once the last one is over; its counts said. */
void refusals_tick(struct refusals *r, uint64_t now)
{
	if (r->window && now - r->window < REFUSALS_WINDOW_MS)
		return;
	if (r->log_dropped)
		log_warn("egress: %lu more refused connect(s) not shown (at most %d per %d s)", r->log_dropped,
			 REFUSALS_LOG_BURST, REFUSALS_WINDOW_MS / 1000);
	r->log_dropped = 0;
	r->window = now;
	r->log_n = r->file_n = 0;
}

static void to_file(struct refusals *r, const char *line)
{
	char buf[768], stamp[32];
	struct timespec ts;
	struct tm tm;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (r->file_dropped)
		n = snprintf(buf, sizeof buf, "%s %s not_shown_before=%lu\n", stamp, line, r->file_dropped);
	else
		n = snprintf(buf, sizeof buf, "%s %s\n", stamp, line);
	if (n < 0 || (size_t)n >= sizeof buf)
		return;
	/* one write of the whole line on an O_APPEND descriptor: lines never interleave */
	if (write(r->fd, buf, (size_t)n) == n) {
		r->file_n++;
		r->file_bytes += (unsigned long)n;
		r->file_dropped = 0;
	} else {
		r->file_dropped++;
	}
}

void refusals_note(struct refusals *r, const struct refusal *f, uint64_t now)
{
	char comm[32], line[640], a[INET6_ADDRSTRLEN];
	int to_log, to_agent;

	refusals_tick(r, now);
	to_log = r->log_n < REFUSALS_LOG_BURST;
	to_agent = r->fd >= 0 && r->file_n < REFUSALS_FILE_BURST && r->file_bytes < REFUSALS_FILE_MAX;
	if (!to_log)
		r->log_dropped++;
	if (r->fd >= 0 && !to_agent)
		r->file_dropped++;
	if (!to_log && !to_agent)
		return; /* a flood costs no more than its count */
	comm_of(f->pid, comm, sizeof comm);
	if (to_agent && refusals_format(line, sizeof line, f, comm) > 0)
		to_file(r, line);
	if (!to_log)
		return;
	r->log_n++;
	if (!inet_ntop(f->family, f->addr, a, sizeof a))
		snprintf(a, sizeof a, "?");
	log_warn("egress: refused proto=tcp dst=%s%s%s:%u pid=%d comm=%s call=%s errno=%s reason=not loopback: "
		 "egress = loopback",
		 f->family == AF_INET6 ? "[" : "", a, f->family == AF_INET6 ? "]" : "", f->port, (int)f->pid, comm,
		 f->call, strerrorname_np(f->err) ? strerrorname_np(f->err) : "?");
}

void refusals_free(struct refusals *r)
{
	if (r->fd >= 0)
		close(r->fd);
	refusals_init(r);
}
