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

#endif
