/* owner: the agent's process behind one end of a loopback TCP connection
 * (common/who.h), for the bridge's questions to an approver.
 *
 * The socket is found by its four-tuple in the kernel's socket table
 * (sock_diag: one exact lookup, on the guard's query socket; the listener
 * the kernel falls back to when no connection matches is not taken), then
 * by its inode among the processes' descriptors, read as the agent's user
 * (the guard's fsuid switch; at Yama's scope 2 PID 1 keeps CAP_SYS_PTRACE
 * for the guard, and reads any process's). The first process holding it
 * is named, its fd and cmdline read through one handle on its /proc
 * directory (a pid reused meanwhile fails), among the first 65536
 * processes and descriptors looked at (the agent chooses how many it
 * holds, and PID 1's loop waits while it looks). Nothing here
 * decides anything; a socket that is gone, or no guard, is "not found". */
#ifndef WARD_OWNER_H
#define WARD_OWNER_H

#include <sys/types.h>

#include "common/who.h"
#include "init/egress/guard.h"

/* The answer to q: a->pid and a->cmd, or a->pid 0 (a->seq is q's). */
void owner_find(const struct guard *g, const struct who_req *q, struct who_ans *a);

/* The inode of the TCP socket whose own end is (family, src, sport) and
 * whose peer is (dst, dport), bound to device dev (0: none): 0 when there
 * is none. nl: a NETLINK_SOCK_DIAG socket. */
unsigned owner_inode(int nl, int family, const unsigned char *src, unsigned sport, const unsigned char *dst,
		     unsigned dport, unsigned dev);

#endif
