#define _GNU_SOURCE
#include "common/log.h"
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct {
	enum log_format format;
	enum log_level level;
	int fd;
	int sock; /* fd is a socket: written with MSG_DONTWAIT, never blocking */
	int copy; /* [ward] log_copy's file, or -1 */
	enum log_level screen; /* lines above it go to the copy alone */
} settings = { LOG_TEXT, LOG_INFO, STDERR_FILENO, 0, -1, LOG_DEBUG };

const char *const log_level_names[4] = {
	[LOG_ERROR] = "error",
	[LOG_WARN] = "warn",
	[LOG_INFO] = "info",
	[LOG_DEBUG] = "debug",
};

void log_setup(enum log_format format, enum log_level level)
{
	settings.format = format;
	settings.level = level;
}

void log_detach_stderr(void)
{
	struct stat st;
	int fd;

	if (fstat(STDERR_FILENO, &st) != 0)
		return;
	/* A socket (journald, a socketpair from Node's child_process) cannot
	 * be re-opened: each write to it is non-blocking instead (the flag on
	 * fd 2 itself would be the agent's too). */
	if (S_ISSOCK(st.st_mode)) {
		settings.sock = 1;
		return;
	}
	/* Re-opening a regular file would write at offset 0 over what is
	 * there; only pipes and character devices get a private description. */
	if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
		return;
	fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0)
		settings.fd = fd;
}

void log_to_fd(int fd)
{
	struct stat st;

	settings.fd = fd;
	settings.sock = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

int log_fd(void)
{
	return settings.fd;
}

void log_copy_to(int fd)
{
	settings.copy = fd;
}

int log_copy_fd(void)
{
	return settings.copy;
}

void log_screen_max(enum log_level level)
{
	settings.screen = level;
}

int log_enabled(enum log_level level)
{
	return level <= settings.level;
}

/* Waits until the log's descriptor has room, until end (ms) at most: 0,
 * or -1 when it has none by then. */
static int wait_room(long long end)
{
	struct pollfd p = { .fd = settings.fd, .events = POLLOUT };
	int r;

	do {
		long long left = end - (long long)now_ms();
		r = left > 0 ? poll(&p, 1, (int)left) : 0;
	} while (r < 0 && errno == EINTR);
	return r > 0 ? 0 : -1;
}

int log_write(const char *buf, size_t len, int wait_ms)
{
	long long end = (long long)now_ms() + wait_ms;
	size_t off = 0;

	while (off < len) {
		ssize_t n = settings.sock ? send(settings.fd, buf + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL)
					  : write(settings.fd, buf + off, len - off);
		int full = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);

		if (n > 0)
			off += (size_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else if (!full || wait_ms <= 0 || wait_room(end) != 0)
			return -1;
	}
	return 0;
}

static enum log_level line_level = LOG_ERROR; /* the line being written (logmsg's) */

static void write_all(const char *buf, size_t len)
{
	/* EAGAIN, EPIPE: the line is dropped, never blocking */
	if (line_level <= settings.screen || settings.copy < 0)
		(void)log_write(buf, len, 0);
	/* a file opened O_APPEND: a line lands whole, between other writers' */
	if (settings.copy >= 0 && write(settings.copy, buf, len) < 0)
		settings.copy = -1; /* full or gone: not tried again for every line */
}

static void format_time(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

/* A JSON line: the message formatted on its own, then quoted by jansson. */
static __attribute__((noinline, format(printf, 2, 0))) void log_json_line(enum log_level level, const char *fmt, va_list ap)
{
	char msg[1024], line[1400], ts[40];
	json_t *obj;
	size_t len;

	vsnprintf(msg, sizeof msg, fmt, ap);
	format_time(ts, sizeof ts);
	obj = json_pack("{s:s,s:s,s:i,s:s}", "time", ts, "level", log_level_names[level], "pid", (int)getpid(),
			"msg", msg);
	len = obj ? json_dumpb(obj, line, sizeof line - 1, JSON_COMPACT) : 0;
	json_decref(obj);
	if (len == 0 || len >= sizeof line - 1)
		len = (size_t)snprintf(line, sizeof line, "{\"level\":\"%s\",\"msg\":\"(unprintable)\"}",
				       log_level_names[level]);
	line[len++] = '\n';
	write_all(line, len);
}

/* A text line, "ward: " and the message formatted in place in one buffer
 * (at most 1023 bytes of it): a plain init logs only text, and a second
 * buffer would deepen its stack by a page. */
static __attribute__((noinline, format(printf, 2, 0))) void log_text_line(enum log_level level, const char *fmt, va_list ap)
{
	char line[1100];
	const char *prefix = level == LOG_WARN ? "warning: " : level == LOG_DEBUG ? "debug: " : "";
	size_t n = (size_t)snprintf(line, sizeof line, "ward: %s", prefix);
	int m = vsnprintf(line + n, 1024, fmt, ap);

	n += m < 0 ? 0 : m > 1023 ? 1023 : (size_t)m;
	line[n++] = '\n';
	write_all(line, n);
}

void logmsg(enum log_level level, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	if (!log_enabled(level))
		return;
	line_level = level;
	va_start(ap, fmt);
	if (settings.format == LOG_JSON)
		log_json_line(level, fmt, ap);
	else
		log_text_line(level, fmt, ap);
	va_end(ap);
	errno = saved;
}
