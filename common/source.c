#define _GNU_SOURCE
#include "common/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int source_fd(const char *spec)
{
	char *end;
	long v;

	if (strncmp(spec, "fd:", 3) != 0 || spec[3] < '0' || spec[3] > '9')
		return -1;
	errno = 0;
	v = strtol(spec + 3, &end, 10);
	return *end || errno || v < 3 || v > 65535 ? -1 : (int)v;
}

int source_read(const char *source, size_t max, char **buf, size_t *len, char *err, size_t errsize)
{
	size_t cap = max < 65536 ? max + 1 : 65536, n = 0;
	ssize_t got = 0;
	int fd;

	*buf = NULL;
	if (strncmp(source, "fd:", 3) == 0) {
		fd = source_fd(source);
		if (fd < 0) {
			snprintf(err, errsize, "source %s: want fd:N with N >= 3", source);
			return -1;
		}
		if (fcntl(fd, F_GETFD) < 0) {
			snprintf(err, errsize, "source %s: no such descriptor (runc/podman --preserve-fds)", source);
			return -1;
		}
	} else {
		fd = open(source, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0) {
			snprintf(err, errsize, "source %s: %s", source, strerror(errno));
			return -1;
		}
	}
	*buf = malloc(cap);
	while (*buf && ((got = read(fd, *buf + n, cap - n)) > 0 || (got < 0 && errno == EINTR))) {
		if (got < 0)
			continue;
		n += (size_t)got;
		if (n == cap) {
			char *nb;
			/* room for one byte past the limit: 1 MiB exactly is fine */
			if (n > max) {
				if (max >= ((size_t)1 << 20) && max % ((size_t)1 << 20) == 0)
					snprintf(err, errsize, "source %s: larger than %zu MiB", source, max >> 20);
				else
					snprintf(err, errsize, "source %s: larger than %zu bytes", source, max);
				free(*buf);
				*buf = NULL;
				close(fd);
				return -1;
			}
			cap = cap * 2 > max ? max + 1 : cap * 2;
			nb = realloc(*buf, cap);
			if (!nb)
				free(*buf);
			*buf = nb;
		}
	}
	if (*buf && got < 0) {
		/* a directory, an I/O error: not an empty file */
		snprintf(err, errsize, "source %s: %s", source, strerror(errno));
		free(*buf);
		*buf = NULL;
		close(fd);
		return -1;
	}
	close(fd); /* read once: the descriptor is gone afterwards */
	if (!*buf) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	*len = n;
	return 0;
}
