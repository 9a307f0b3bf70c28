#define _GNU_SOURCE
#include "init/egress/serve.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "init/egress/connects.h"
#include "init/egress/guard.h"

/* RECV after epoll said the listener is readable does not block, even when
 * the caller died in between: the kernel counts each notification as it
 * is queued and takes the count down only in RECV, so the count is still
 * there and RECV answers ENOENT (only PID 1 receives on it). */
int guard_serve(struct guard *g, int listener, uint64_t now)
{
	struct seccomp_notif req;

	memset(&req, 0, sizeof req); /* RECV wants it zeroed */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0)
		return -errno;
	switch (req.data.nr) {
	case __NR_socket:
		g->sockets++;
		(void)guard_answer_socket(g, listener, &req);
		/* look at what connects are left waiting on lo soon (blocked.h) */
		blocked_poke(&g->blocked, now);
		break;
	case __NR_connect:
	case __NR_sendto:
	case __NR_sendmsg:
		(void)guard_answer_connect(g, listener, &req, now);
		break;
	default:
		/* the filter sends no other */
		{
			struct seccomp_notif_resp resp = { .id = req.id, .error = -EACCES };
			(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		}
		break;
	}
	return 0;
}
