/* notify-floor: the least a seccomp user-notification check can cost, for
 * the egress bench to set beside the guard. It runs CMD with a filter that
 * sends every socket() to a supervisor process, which answers each one
 * with SECCOMP_USER_NOTIF_FLAG_CONTINUE at once: no socket made, nothing
 * read, nothing decided (as a check this would be worthless; seccomp_unotify(2)
 * says why). What is left is the round trip itself: the caller stopped,
 * the supervisor woken, its answer, the caller woken. The supervisor asks
 * for the same synchronous wake-up the guard does.
 *
 *   notify-floor CMD [ARG...] */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp/notify.h" /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP where the headers lack it */

/* socket() to the supervisor, everything else allowed (x86_64 only: the
 * bench runs there; another architecture is killed, not misread). */
static int install(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof f / sizeof f[0], .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

/* Each notification answered "go on" until the listener ends. */
static void supervise(int listener)
{
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	for (;;) {
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;

		memset(&req, 0, sizeof req);
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			_exit(0); /* the filter's processes are gone */
		}
		memset(&resp, 0, sizeof resp);
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

int main(int argc, char **argv)
{
	int listener;
	pid_t sup;

	if (argc < 2) {
		fprintf(stderr, "usage: notify-floor CMD [ARG...]\n");
		return 2;
	}
	listener = install();
	if (listener < 0) {
		perror("notify-floor: seccomp");
		return 1;
	}
	/* the supervisor: a process of its own, as the guard is; it made no
	 * socket() before the filter, and makes none after */
	sup = fork();
	if (sup < 0) {
		perror("notify-floor: fork");
		return 1;
	}
	if (sup == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		supervise(listener);
		_exit(0);
	}
	close(listener);
	execvp(argv[1], argv + 1);
	perror("notify-floor: exec");
	return 127;
}
