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
 * domain and setsockopt()'s level and name as ints: only the low 32 bits
 * of each argument are compared (an agent's 0x100000002 is AF_INET to the
 * kernel, and here). Everything else is allowed here and judged by the
 * deny list. Jumps count the instructions skipped. */
static const struct sock_filter egress_prog[] = {
	/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 15),		/* else kill (17) */
	/* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	/* 3 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 13, 0),		/* kill (17) */
	/* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3),		/* else 8 */
	/* 5 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
	/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 7, 0),		/* notify (14) */
	/* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 6, 10),		/* notify (14), else allow (18) */
	/* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 7, 0),	/* ENOSYS (16) */
	/* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setsockopt, 0, 8),	/* else allow (18) */
	/* 10 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
	/* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0 /* IPPROTO_IP */, 0, 6),	/* else allow (18) */
	/* 12 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	/* 13 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IP_LOCAL_PORT_RANGE_OPT, 1, 4),	/* EPERM (15), else allow (18) */
	/* 14 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	/* 15 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	/* 16 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	/* 17 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	/* 18 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

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
