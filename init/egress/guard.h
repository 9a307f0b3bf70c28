/* guard: the egress guard, PID 1's answer to the agent's sockets. The
 * agent's second seccomp filter (seccomp/notify.c) stops each inet and
 * inet6 socket(), each connect() with an inet-sized address and each Fast
 * Open send in the kernel until PID 1 answers through the filter's
 * listener:
 *
 *  - socket(): PID 1 makes the socket itself, as the agent's user (its
 *    fsuid: the socket is the agent's in /proc/net/tcp), binds it to the
 *    loopback device with SO_BINDTODEVICE, reads that back and installs it
 *    in the caller (SECCOMP_IOCTL_NOTIF_ADDFD, which also answers the
 *    call). Changing a socket's device takes CAP_NET_RAW, which the agent
 *    lacks, so whatever address it connects, sends or binds to afterwards,
 *    its packets only ever go out on lo. This is the boundary, and it reads
 *    no memory of the agent's: socket()'s arguments are registers, copied
 *    by the kernel, so nothing can race it. Stream sockets only: a
 *    datagram socket is routed per message, past any device binding.
 *
 *  - connect() and Fast Open (connects.h): the answer for a destination
 *    the kernel would drop on lo is ENETUNREACH at once, instead of a SYN
 *    that waits minutes for nothing. That check reads the address from the
 *    caller's memory, which another of its threads may change meanwhile,
 *    so it may only ever make the answer stricter: an address read as
 *    leaving is refused (the call never happens); one read as local lets
 *    the kernel go on with the call (SECCOMP_USER_NOTIF_FLAG_CONTINUE),
 *    which reads the address again, and a changed one still meets the
 *    socket's hold on lo.
 *
 * Why PID 1 and not a process of its own (as it was): only an ancestor may
 * read the agent's memory where Yama's ptrace scope is 1 (the QEMU guest's
 * kernel), a process in another Landlock domain may not read it at all,
 * and a separate guard cost a fork, a confinement and a wait at every
 * start (2.07x bare tini; 1.47x without it). What PID 1 does with the
 * agent's input is small and bounded: three integers, and at most 128
 * bytes of an address read into a buffer of its own and compared. */
#ifndef WARD_GUARD_H
#define WARD_GUARD_H

#include <stdint.h>
#include <sys/types.h>

#include "init/egress/blocked.h"
#include "init/egress/refusals.h"

struct seccomp_notif;

struct guard {
	uint32_t port_range;	/* IP_LOCAL_PORT_RANGE for each socket, or 0 (init/sandbox/ephemeral.h) */
	uid_t uid;		/* the agent's user and group: each socket is made, and */
	gid_t gid;		/* each address read, with them as PID 1's fsuid and fsgid */
	int switch_ids;		/* PID 1's own differ (a start as root) */
	uid_t own_uid;		/* PID 1's effective ids, which its fsuid and fsgid return to */
	gid_t own_gid;
	int rtnl;		/* NETLINK_ROUTE, for "is this address local?", or -1 */
	struct blocked blocked; /* the connects left waiting on lo (blocked.h) */
	struct refusals refusals; /* what is said of each refusal, and where */
	unsigned long sockets, connects, refused, unjudged;
};

/* As root, before anything runs: the netlink sockets the checks use (no
 * new ones can be made once PID 1's own filter is loaded). 0, or -errno
 * for the route socket (the connect check is then off: connects wait on lo
 * as before, and say so). */
int guard_open(struct guard *g, uid_t uid, gid_t gid, uint32_t port_range);
void guard_close(struct guard *g);

/* socket()'s answer, for a notification already received: the socket
 * made, bound to lo (and given port_range, unless 0) and installed, or the
 * call answered with an error. 0, or -errno when no answer could be given
 * (the caller went away). For tests too. */
int guard_answer_socket(const struct guard *g, int listener, const struct seccomp_notif *req);

/* fsuid and fsgid set to the agent's for what follows, and back. */
void guard_as_agent(const struct guard *g, int on);

#endif
