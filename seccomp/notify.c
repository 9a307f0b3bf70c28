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

/* The kernel reads socket()'s domain as an int: only the low 32 bits of
 * the argument count, so only they are compared (an agent's 0x100000002
 * is AF_INET to the kernel, and here). Everything else is allowed by this
 * filter and judged by the deny list; another architecture's calls and
 * x32's never match __NR_socket here, and the deny list kills them. */
static const struct sock_filter egress_prog[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 6),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 4),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
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
