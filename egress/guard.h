/* guard: the egress guard, a process of its own beside the agent. Every
 * inet and inet6 socket() the agent or a descendant makes stops in the
 * kernel (seccomp/notify.c) until the guard has made that socket itself,
 * bound it to the loopback device with SO_BINDTODEVICE, and installed it
 * in the caller (SECCOMP_IOCTL_NOTIF_ADDFD, which also answers the call).
 * Changing a socket's device takes CAP_NET_RAW, which the agent lacks, so
 * whatever address the agent connects, sends or binds to afterwards, its
 * packets only ever go out on lo: the kernel routes nothing else. The
 * guard reads no memory of the agent's (socket()'s arguments are
 * registers, copied by the kernel), so there is nothing to race. It makes
 * stream sockets only: a datagram socket is routed per message (a
 * packet-info control message, a link-local scope, a multicast join on
 * another interface), past any device binding. */
#ifndef WARD_GUARD_H
#define WARD_GUARD_H

#include <stdint.h>
#include <sys/types.h>

struct confine;

/* The most listeners served at once: the agent's, and for a moment an
 * agent's that was restarted (its last processes going). */
#define GUARD_MAX_LISTENERS 8

/* A page PID 1 and the guard share (MAP_SHARED, made before the fork):
 * the id of the last notification the guard received from the newest
 * listener, the one PID 1 holds. A guard that dies between receiving a
 * call and answering it leaves that call waiting, and no later guard can
 * receive it again; PID 1 answers it (guardproc.c). Ids of one listener
 * are sequential, so the call is that id or, when the guard died before
 * noting it, the next. */
struct guard_shared {
	volatile uint64_t last_id;
	volatile int have; /* last_id was written */
};

/* What PID 1 hands the forked guard. */
struct guard_start {
	const struct confine *confine; /* the agent's user, its own Landlock and seccomp */
	int ll_fd;		       /* its Landlock ruleset, until it is applied */
	int ctl;		       /* listeners come from PID 1 on this socket */
	uint32_t port_range;	       /* IP_LOCAL_PORT_RANGE for each socket, or 0 (init/sandbox/ephemeral.h) */
	struct guard_shared *shared;   /* or NULL */
};

/* In the forked child: confine, report ready on rfd, serve. Never returns. */
void guard_main(const struct guard_start *s, int rfd, pid_t parent) __attribute__((noreturn));

/* One notification, already received: the socket made, bound to lo (and
 * given port_range, unless 0) and installed, or the call answered with an
 * error. 0, or -errno when the answer could not be given (the caller went
 * away). For tests. */
struct seccomp_notif;
int guard_answer(int listener, const struct seccomp_notif *req, uint32_t port_range);

#endif
