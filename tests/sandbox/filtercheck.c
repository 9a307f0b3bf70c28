/* filtercheck: proves from the kernel that the agent's seccomp filter, not
 * a missing capability, refuses what ward's deny list names.
 *
 * The escape probe runs as the agent (uid 4242, no capabilities), where the
 * kernel's own permission checks answer EPERM to mount or kexec_load before
 * any filter would: those checks pass with no filter at all. Here:
 *
 *   filtercheck dump PID FILE
 *     reads the classic BPF programs the kernel holds for PID
 *     (PTRACE_SECCOMP_GET_FILTER, the tracee interrupted, then let go) into
 *     FILE: per program a 32-bit count and its instructions, newest first.
 *   filtercheck run FILE
 *     for each call below, in a child of its own, as root with every
 *     capability: once under the programs from FILE (loaded oldest first)
 *     and once without them. Arguments are chosen so the kernel itself
 *     fails the call after its capability checks (a path that does not
 *     exist, a bad flag, a pid that is not there) or so that it does
 *     nothing lasting in the child. A line per call:
 *       ok NAME: with the filter ERR, without it ERR2
 *       FAIL NAME: ...
 *       skip NAME: ... (the kernel alone answers as the filter would here,
 *       e.g. no vsock: nothing to tell them apart by)
 *     and "filtercheck: N passed, N failed[, N skipped]". Needs root and
 *     CAP_SYS_ADMIN (dump) on the host. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

#define NOPATH ((long)"/nonexistent-ward-filtercheck")
#define NOPID 0x3ffffff0L

static const struct call {
	const char *name;
	long nr;
	long a[6];
	int want; /* the filter's answer */
} calls[] = {
	{ "mount", SYS_mount, { NOPATH, NOPATH, (long)"tmpfs", 0, 0 }, EPERM },
	{ "umount2", SYS_umount2, { NOPATH, 0 }, EPERM },
	{ "pivot_root", SYS_pivot_root, { NOPATH, NOPATH }, EPERM },
	{ "chroot", SYS_chroot, { NOPATH }, EPERM },
	{ "unshare(CLONE_NEWNS)", SYS_unshare, { CLONE_NEWNS }, EPERM },
	{ "unshare(CLONE_NEWUSER)", SYS_unshare, { CLONE_NEWUSER }, EPERM },
	{ "setns", SYS_setns, { -1, 0 }, EPERM },
	{ "clone3", SYS_clone3, { 0, 0 }, ENOSYS },
	{ "fsopen", SYS_fsopen, { (long)"tmpfs", ~0L }, EPERM }, /* bad flags: no module asked for */
	{ "open_tree", SYS_open_tree, { -1, NOPATH, 0 }, EPERM },
	{ "ptrace", SYS_ptrace, { PTRACE_ATTACH, NOPID, 0, 0 }, EPERM },
	{ "process_vm_readv", SYS_process_vm_readv, { NOPID, 0, 0, 0, 0, 0 }, EPERM },
	{ "kcmp", SYS_kcmp, { NOPID, NOPID, 0, 0, 0 }, EPERM },
	{ "pidfd_getfd", SYS_pidfd_getfd, { -1, 0, 0 }, EPERM },
	{ "bpf", SYS_bpf, { -1, 0, 0 }, EPERM },
	{ "perf_event_open", SYS_perf_event_open, { 0, -1, -1, -1, 0 }, EPERM },
	{ "userfaultfd", SYS_userfaultfd, { ~0L }, EPERM },
	{ "keyctl", SYS_keyctl, { -1, 0, 0, 0, 0 }, EPERM },
	{ "add_key", SYS_add_key, { 0, 0, 0, 0, 0 }, EPERM },
	{ "fanotify_init", SYS_fanotify_init, { ~0L, 0 }, EPERM },
	{ "open_by_handle_at", SYS_open_by_handle_at, { -1, 0, 0 }, EPERM },
	{ "init_module", SYS_init_module, { 0, 0, (long)"" }, EPERM },
	{ "finit_module", SYS_finit_module, { -1, (long)"", 0 }, EPERM },
	{ "delete_module", SYS_delete_module, { (long)"ward_no_such_module", O_NONBLOCK }, EPERM },
	{ "kexec_load", SYS_kexec_load, { 0, 0, 0, ~0L }, EPERM },
	{ "reboot", SYS_reboot, { 0, 0, 0, 0 }, EPERM }, /* no magic: EINVAL without the filter */
	{ "swapon", SYS_swapon, { NOPATH, 0 }, EPERM },
	{ "acct", SYS_acct, { NOPATH }, EPERM },
	{ "sethostname", SYS_sethostname, { 0, -1 }, EPERM },
	{ "clock_settime", SYS_clock_settime, { -1, 0 }, EPERM },
	{ "syslog", SYS_syslog, { -1, 0, 0 }, EPERM },
	{ "iopl", SYS_iopl, { 4 }, EPERM },
	{ "ioperm", SYS_ioperm, { ~0L, 1, 1 }, EPERM },
	{ "io_uring_setup", SYS_io_uring_setup, { 0, 0 }, ENOSYS },
	{ "modify_ldt", SYS_modify_ldt, { 0, 0, 0 }, EPERM },		  /* a read of nothing: 0 */
	{ "memfd_secret", 447, { ~0L }, ENOSYS },			  /* bad flags: EINVAL */
	{ "set_mempolicy", SYS_set_mempolicy, { ~0L, 0, 0 }, EPERM },	  /* bad mode: EINVAL */
	{ "get_mempolicy", SYS_get_mempolicy, { 0, 0, 0, 0, ~0L }, EPERM }, /* bad flags: EINVAL */
	{ "lsm_set_self_attr", 460, { 0, 0, 0, ~0L }, ENOSYS },		  /* bad flags: EINVAL */
	{ "setsockopt(IP_LOCAL_PORT_RANGE)", SYS_setsockopt, { -1, 0, 51, 0, 4 }, EPERM }, /* EBADF */
	{ "setsockopt(TCP_ULP)", SYS_setsockopt, { -1, 6, 31, 0, 3 }, EPERM },		   /* EBADF */
	{ "socket(AF_VSOCK)", SYS_socket, { AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0 }, EAFNOSUPPORT },
	{ "socket(AF_PACKET)", SYS_socket, { 17 /* AF_PACKET */, SOCK_RAW | SOCK_CLOEXEC, 0 }, EAFNOSUPPORT },
	{ "socket(SOCK_RAW inet)", SYS_socket, { AF_INET, SOCK_RAW | SOCK_CLOEXEC, 1 }, EPERM },
};

static int dump(pid_t pid, const char *file)
{
	FILE *out = fopen(file, "we");
	int st, n = 0;
	long i;

	if (!out) {
		perror("filtercheck: open");
		return 2;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0 || ptrace(PTRACE_INTERRUPT, pid, 0, 0) != 0 ||
	    waitpid(pid, &st, __WALL) != pid) {
		perror("filtercheck: attach");
		return 2;
	}
	for (i = 0;; i++) {
		long len = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *)i, NULL);
		struct sock_filter *f;
		uint32_t count;
		if (len < 0) {
			if (errno == ENOENT)
				break;
			perror("filtercheck: PTRACE_SECCOMP_GET_FILTER");
			ptrace(PTRACE_DETACH, pid, 0, 0);
			return 2;
		}
		f = calloc((size_t)len, sizeof *f);
		if (!f || ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *)i, f) != len) {
			perror("filtercheck: PTRACE_SECCOMP_GET_FILTER");
			ptrace(PTRACE_DETACH, pid, 0, 0);
			return 2;
		}
		count = (uint32_t)len;
		fwrite(&count, sizeof count, 1, out);
		fwrite(f, sizeof *f, (size_t)len, out);
		free(f);
		n++;
	}
	ptrace(PTRACE_DETACH, pid, 0, 0);
	if (fclose(out) != 0) {
		perror("filtercheck: write");
		return 2;
	}
	printf("filters: %d\n", n);
	return n ? 0 : 1;
}

struct prog {
	struct sock_filter *f;
	uint32_t n;
};

static int load_file(const char *file, struct prog *p, int max)
{
	FILE *in = fopen(file, "re");
	int n = 0;
	uint32_t count;

	if (!in)
		return -1;
	while (n < max && fread(&count, sizeof count, 1, in) == 1) {
		p[n].f = calloc(count, sizeof *p[n].f);
		p[n].n = count;
		if (!p[n].f || fread(p[n].f, sizeof *p[n].f, count, in) != count) {
			fclose(in);
			return -1;
		}
		n++;
	}
	fclose(in);
	return n;
}

/* The call in a child: its errno (0: it succeeded), or -SIG if the child
 * was killed. */
static int try(const struct call *c, const struct prog *p, int n)
{
	pid_t pid = fork();
	int st, i;

	if (pid < 0)
		return -1000;
	if (pid == 0) {
		long r;
		/* as the kernel stacks them: the oldest first (the dump is newest first) */
		for (i = n - 1; i >= 0; i--) {
			struct sock_fprog fp = { (unsigned short)p[i].n, p[i].f };
			if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) != 0)
				_exit(254);
		}
		r = syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]);
		_exit(r >= 0 ? 0 : errno & 0xff);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1000;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

static const char *name(int e, char *buf, size_t size)
{
	if (e == 0)
		return "success";
	if (e == 254)
		return "the filter could not be loaded";
	if (e < 0) {
		snprintf(buf, size, "killed by signal %d", -e);
		return buf;
	}
	return strerrorname_np(e) ? strerrorname_np(e) : (snprintf(buf, size, "errno %d", e), buf);
}

static int run(const char *file)
{
	struct prog p[16];
	int n = load_file(file, p, 16), passed = 0, failed = 0, skipped = 0;
	size_t i;

	if (n <= 0) {
		fprintf(stderr, "filtercheck: no filter in %s\n", file);
		return 2;
	}
	for (i = 0; i < sizeof calls / sizeof calls[0]; i++) {
		char b1[48], b2[48];
		int with = try(&calls[i], p, n), without = try(&calls[i], p, 0);
		int ok = with == calls[i].want && without != calls[i].want;
		int skip = with == calls[i].want && without == calls[i].want;
		printf("%s %s: with the filter %s, without it %s\n", ok ? "ok" : skip ? "skip" : "FAIL", calls[i].name,
		       name(with, b1, sizeof b1), name(without, b2, sizeof b2));
		ok ? passed++ : skip ? skipped++ : failed++;
	}
	if (skipped)
		printf("filtercheck: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
	else
		printf("filtercheck: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "dump") == 0)
		return dump((pid_t)atoi(argv[2]), argv[3]);
	if (argc == 3 && strcmp(argv[1], "run") == 0)
		return run(argv[2]);
	fprintf(stderr, "usage: filtercheck dump PID FILE | filtercheck run FILE\n");
	return 2;
}
