/* notify: the agent's second seccomp filter, which hands every inet and
 * inet6 socket(), inet-sized connect() and Fast Open send to the egress
 * guard (init/egress/guard.h, in PID 1) through a user-notification
 * listener. A separate program, so the deny list's
 * answers (raw sockets, MPTCP, SCTP, ...: ERRNO) still come first: the
 * kernel takes the strongest action of all the filters, and ERRNO beats
 * USER_NOTIF. */
#ifndef WARD_NOTIFY_H
#define WARD_NOTIFY_H

#include <linux/seccomp.h>

/* Linux 6.6: the caller and the supervisor hand the CPU to each other on
 * each notification instead of waking through the scheduler (the headers
 * of Debian 12 predate it). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* Loads the filter into the calling thread (needs no_new_privs) and
 * returns its listener (CLOEXEC), or -errno. */
int sc_load_egress(void);

/* The filter's length in instructions, for the evidence. */
unsigned sc_egress_len(void);

#endif
