/* fds: closing descriptors in ranges, in PID 1 and in every child ward
 * forks before it execs or serves. */
#ifndef WARD_FDS_H
#define WARD_FDS_H

#include <stddef.h>

/* close_range(lo, hi, flags) (flags 0 or CLOSE_RANGE_CLOEXEC), and where
 * the kernel lacks it (before 5.9; its CLOEXEC before 5.11) or a filter
 * refuses it, the same descriptor by descriptor from /proc/self/fd (or up
 * to the descriptor limit without /proc). 0 or -1. */
int fd_range(unsigned lo, unsigned hi, unsigned flags);

/* The fallback itself (tests). */
int fd_range_by_proc(unsigned lo, unsigned hi, unsigned flags);

/* Closes every descriptor above 2 except those listed. */
void close_fds_except(const int *keep, int n_keep);

/* write(2) until all of buf is written (EINTR retried): 0, or -1. */
int fd_write_all(int fd, const void *buf, size_t len);

/* A regular file's whole text from offset 0 (pread: the descriptor's
 * offset is not moved, and one shared with another process is not
 * raced), NUL-terminated, *len its length: a malloc'd buffer, or NULL
 * with errno (EFBIG over max bytes, EINVAL not a regular file). */
char *fd_read_file(int fd, size_t max, size_t *len);

/* 0, 1 and 2 that the runtime left closed get /dev/null (the lowest free
 * number is each one in turn): else the first descriptor ward opens would
 * take the number, and its log lines would go into the evidence file, or
 * the bridge's own dup2 would replace a listener. Again after a VM's
 * mounts: an initramfs may have had no /dev/null before. */
void std_fds_open(void);

#endif
