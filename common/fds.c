#define _GNU_SOURCE
#include "common/fds.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int fd_range_by_proc(unsigned lo, unsigned hi, unsigned flags)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int *v = NULL, n = 0, cap = 0, i, rc = 0;

	if (!d && errno != ENOENT)
		return -1; /* /proc is there: EMFILE or the like, not a reason to guess */
	if (!d) {
		/* no /proc: every number up to the descriptor limit */
		long max = sysconf(_SC_OPEN_MAX);
		unsigned top = max > 0 && (unsigned long)max - 1 < hi ? (unsigned)(max - 1) : hi;
		unsigned fd;
		if (max <= 0 && hi == ~0U)
			return errno = ENOSYS, -1;
		for (fd = lo; fd <= top && fd >= lo; fd++) {
			if (flags & CLOSE_RANGE_CLOEXEC) {
				int f = fcntl((int)fd, F_GETFD);
				if (f >= 0)
					(void)fcntl((int)fd, F_SETFD, f | FD_CLOEXEC);
			} else {
				close((int)fd);
			}
		}
		return 0;
	}
	/* read the whole list first: closing while reading it could skip some */
	while ((e = readdir(d))) {
		char *end;
		unsigned long fd = strtoul(e->d_name, &end, 10);
		if (*end || e->d_name[0] < '0' || e->d_name[0] > '9' || (int)fd == dirfd(d) || fd < lo || fd > hi)
			continue;
		if (n == cap) {
			int *nv = realloc(v, (size_t)(cap = cap ? cap * 2 : 64) * sizeof *v);
			if (!nv) {
				rc = -1;
				break;
			}
			v = nv;
		}
		v[n++] = (int)fd;
	}
	closedir(d);
	for (i = 0; i < n; i++) {
		if (flags & CLOSE_RANGE_CLOEXEC) {
			int f = fcntl(v[i], F_GETFD);
			if (f >= 0 && fcntl(v[i], F_SETFD, f | FD_CLOEXEC) != 0)
				rc = -1;
		} else {
			close(v[i]);
		}
	}
	free(v);
	return rc;
}

int fd_range(unsigned lo, unsigned hi, unsigned flags)
{
	/* close_range is Linux 5.9, CLOSE_RANGE_CLOEXEC 5.11 (EINVAL before) */
	if (close_range(lo, hi, (int)flags) == 0)
		return 0;
	if (errno != ENOSYS && errno != EINVAL && errno != EPERM)
		return -1;
	return fd_range_by_proc(lo, hi, flags);
}

void close_fds_except(const int *keep, int n_keep)
{
	unsigned lo = 3;
	int sorted[n_keep > 0 ? n_keep : 1], n = 0, i, j; /* every one is kept, however many */

	for (i = 0; i < n_keep; i++) {
		if (keep[i] < 3)
			continue;
		for (j = n; j > 0 && sorted[j - 1] > keep[i]; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = keep[i];
		n++;
	}
	for (i = 0; i < n; i++) {
		if ((unsigned)sorted[i] > lo)
			(void)fd_range(lo, (unsigned)sorted[i] - 1, 0);
		lo = (unsigned)sorted[i] + 1;
	}
	(void)fd_range(lo, ~0U, 0);
}

int fd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

char *fd_read_file(int fd, size_t max, size_t *len)
{
	struct stat st;
	size_t size, got = 0;
	char *buf;

	if (fstat(fd, &st) != 0)
		return NULL;
	if (!S_ISREG(st.st_mode) || st.st_size < 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((unsigned long long)st.st_size > max) {
		errno = EFBIG;
		return NULL;
	}
	size = (size_t)st.st_size;
	buf = malloc(size + 1);
	if (!buf)
		return NULL;
	while (got < size) {
		ssize_t n = pread(fd, buf + got, size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return NULL;
		}
		if (n == 0)
			break; /* cut shorter meanwhile: what there is */
		got += (size_t)n;
	}
	buf[got] = '\0';
	*len = got;
	return buf;
}

void std_fds_open(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int null = open("/dev/null", O_RDWR);
			if (null > fd)
				close(null);
		}
}
