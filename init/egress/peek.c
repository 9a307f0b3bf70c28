#define _GNU_SOURCE
#include "init/egress/peek.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int peek_open(pid_t tid)
{
	char path[40];
	int fd;

	snprintf(path, sizeof path, "/proc/%d/mem", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

int peek_read(int mem, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;

	/* user addresses end below 2^63: a larger one is no address */
	if (addr > (uint64_t)INT64_MAX - len)
		return -EFAULT;
	do
		n = pread(mem, buf, len, (off_t)addr);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EIO ? -EFAULT : -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}
