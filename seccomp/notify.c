#define _GNU_SOURCE
#include "seccomp/notify.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "ward's seccomp filter is written for x86_64 and arm64"
#endif

#define X32_BIT 0x40000000 /* x86's x32 calls; no arm64 call number is this high */
#define IP_LOCAL_PORT_RANGE_OPT 51

/* The guard's filter stands on its own: the deny list may be off ([seccomp]
 * mode = off, or allow = setsockopt), and what it closes must not reopen.
 * Another architecture's calls (i386's socketcall) and x32's would make a
 * socket the guard never sees: they kill. io_uring makes sockets too
 * (IORING_OP_SOCKET): ENOSYS, as from a kernel without it (libuv falls
 * back). The guard's own setting of a socket's ephemeral ports may not be
 * changed (init/sandbox/ephemeral.h): EPERM. The kernel reads socket()'s
 * domain, connect()'s length and setsockopt()'s level and name as ints:
 * only the low 32 bits of each argument are compared (an agent's
 * 0x100000002 is AF_INET to the kernel, and here).
 *
 * To the guard: every inet and inet6 socket() (the boundary: guard.h);
 * each connect() whose address is as long as an inet one (16 to 28 bytes,
 * or a whole sockaddr_storage, 128: what programs pass), and each sendto()
 * and sendmsg() with MSG_FASTOPEN, so that a refused destination fails at
 * once (connects.h). A connect of another length goes on unjudged (a unix
 * socket's, mostly): an inet socket's is still held to lo. Everything
 * else is allowed here and judged by the deny list. */
#define T(pc, target) ((target) - (pc)-1) /* a jump from pc to target */
enum { NOTIFY = 25, DENY_EPERM, DENY_ENOSYS, KILL, ALLOW };
static const struct sock_filter egress_prog[] = {
	/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, T(1, KILL)),
	/* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	/* 3 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, T(3, KILL), 0),
	/* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, T(4, 8)),
	/* 5 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
	/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, T(6, NOTIFY), 0),
	/* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, T(7, NOTIFY), T(7, ALLOW)),
	/* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_connect, 0, T(8, 13)),
	/* 9 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	/* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 128, T(10, NOTIFY), 0),
	/* 11 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 16, 0, T(11, ALLOW)),
	/* 12 */ BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 28, T(12, ALLOW), T(12, NOTIFY)),
	/* 13 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendto, 0, T(13, 16)),
	/* 14 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
	/* 15 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MSG_FASTOPEN, T(15, NOTIFY), T(15, ALLOW)),
	/* 16 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendmsg, 0, T(16, 19)),
	/* 17 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	/* 18 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MSG_FASTOPEN, T(18, NOTIFY), T(18, ALLOW)),
	/* 19 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, T(19, DENY_ENOSYS), 0),
	/* 20 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setsockopt, 0, T(20, ALLOW)),
	/* 21 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
	/* 22 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0 /* IPPROTO_IP */, 0, T(22, ALLOW)),
	/* 23 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	/* 24 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IP_LOCAL_PORT_RANGE_OPT, T(24, DENY_EPERM), T(24, ALLOW)),
	[NOTIFY] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	[DENY_EPERM] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	[DENY_ENOSYS] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	[KILL] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	[ALLOW] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
#undef T

int sc_load_egress(void)
{
	struct sock_fprog prog = { sizeof egress_prog / sizeof egress_prog[0], (struct sock_filter *)egress_prog };
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);

	return fd < 0 ? -errno : (int)fd;
}

unsigned sc_egress_len(void)
{
	return sizeof egress_prog / sizeof egress_prog[0];
}
