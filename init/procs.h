/* procs: find and signal ward's own descendants by walking /proc, for when
 * ward is not PID 1 of its namespace and kill(-1) would reach strangers. */
#ifndef WARD_PROCS_H
#define WARD_PROCS_H

#include <sys/types.h>

/* Sends sig to every living descendant of root, except the pids in keep
 * and their descendants. Returns how many were signalled, or -1 if /proc
 * cannot be read. */
int signal_descendants(pid_t root, int sig, const pid_t *keep, int n_keep);

/* Parses the ppid out of a /proc/PID/stat line; -1 if malformed. */
pid_t stat_ppid(const char *line);

/* close_range(lo, hi, flags) (flags 0 or CLOSE_RANGE_CLOEXEC), and where
 * the kernel lacks it (before 5.9; its CLOEXEC before 5.11) or a filter
 * refuses it, the same descriptor by descriptor from /proc/self/fd (or up
 * to the descriptor limit without /proc). 0 or -1. */
int fd_range(unsigned lo, unsigned hi, unsigned flags);

/* The fallback itself (tests). */
int fd_range_by_proc(unsigned lo, unsigned hi, unsigned flags);

/* Closes every descriptor above 2 except those listed. */
void close_fds_except(const int *keep, int n_keep);

#endif
