#define _GNU_SOURCE
#include "seccomp/sysfilter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <mbedtls/sha256.h>
#include <sched.h>
#include <stddef.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* newer_nr() and SC_FIRST_NEWER number system calls as x86_64 and arm64 do */
#if !defined(__x86_64__) && !defined(__aarch64__)
#error "ward's seccomp filter is written for x86_64 and arm64"
#endif

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
/* Linux 6.3 (glibc 2.36's headers predate it) */
#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE 51
#endif

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

enum rule_kind {
	R_ALL,		/* every call */
	R_NS_FLAGS,	/* arg0 carries a CLONE_NEW* flag */
	R_SOCKET,	/* families other than unix, inet, inet6, netlink(route); raw inet */
	R_IOCTL_TTY,	/* TIOCSTI, TIOCLINUX */
	R_PERSONALITY,	/* anything but the query: flags could weaken ASLR or make data executable */
	R_FASTOPEN,	/* MSG_FASTOPEN: a TCP connect Landlock does not see */
	R_NEWER,	/* every number past the newest call the table knows */
	R_UDP,		/* datagram sockets on inet and inet6: UDP, ping */
	R_SOCKOPT,	/* the agent's own ephemeral ports (IP_LOCAL_PORT_RANGE), a TCP upper layer (TCP_ULP) */
	R_OTHERS,	/* a process other than the caller named: its limits, priority, scheduling */
};

/* The newest system call this table judges is file_setattr (469, Linux
 * 6.17; x86_64 and arm64 number new calls alike from 424 on). A deny list
 * lets through whatever a later kernel adds, unseen: every number from 470
 * up answers ENOSYS instead, as on a kernel without the call, so callers
 * fall back to what they used before. */
#define SC_FIRST_NEWER 470

/* The default deny list for an agent running Node, bash and git
 * (sandbox research §D, measured against Pi 1.6). pid1: PID 1 never needs
 * it either, so its own filter denies it too. A group of an opt-in kind
 * (optin()) is not in the default list: deny = NAME adds it. */
static const struct rule {
	const char *name;
	int err;
	enum rule_kind kind;
	int pid1;
} rules[] = {
	/* namespaces */
	{ "unshare", EPERM, R_NS_FLAGS, 1 },
	{ "clone", EPERM, R_NS_FLAGS, 1 },
	{ "setns", EPERM, R_ALL, 1 },
	/* clone3 and io_uring must fail with ENOSYS: glibc and libuv fall
	 * back only on ENOSYS (EPERM from clone3 aborts Node) */
	{ "clone3", ENOSYS, R_ALL, 0 },
	{ "io_uring_setup", ENOSYS, R_ALL, 1 },
	{ "io_uring_enter", ENOSYS, R_ALL, 1 },
	{ "io_uring_register", ENOSYS, R_ALL, 1 },
	/* mount API */
	{ "mount", EPERM, R_ALL, 1 },
	{ "umount2", EPERM, R_ALL, 1 },
	{ "pivot_root", EPERM, R_ALL, 1 },
	{ "chroot", EPERM, R_ALL, 1 },
	{ "fsopen", EPERM, R_ALL, 1 },
	{ "fsconfig", EPERM, R_ALL, 1 },
	{ "fsmount", EPERM, R_ALL, 1 },
	{ "fspick", EPERM, R_ALL, 1 },
	{ "move_mount", EPERM, R_ALL, 1 },
	{ "open_tree", EPERM, R_ALL, 1 },
	{ "mount_setattr", EPERM, R_ALL, 1 },
	/* newer than libseccomp 2.5.4 (Linux 6.8, 6.15): ENOSYS, as from a
	 * kernel without them, so that callers fall back to /proc */
	{ "statmount", ENOSYS, R_ALL, 1 },
	{ "listmount", ENOSYS, R_ALL, 1 },
	{ "open_tree_attr", ENOSYS, R_ALL, 1 },
	/* Linux 6.17: a file's fsxattr flags by path, with no open that
	 * Landlock could refuse; callers fall back to the ioctl on an open
	 * file, which it can */
	{ "file_getattr", ENOSYS, R_ALL, 1 },
	{ "file_setattr", ENOSYS, R_ALL, 1 },
	/* and whatever comes after them (not a system call's name: the
	 * group's, for allow = newer-syscalls) */
	{ "newer-syscalls", ENOSYS, R_NEWER, 1 },
	/* introspection of other processes */
	{ "ptrace", EPERM, R_ALL, 1 },
	{ "process_vm_readv", EPERM, R_ALL, 1 },
	{ "process_vm_writev", EPERM, R_ALL, 1 },
	{ "process_madvise", EPERM, R_ALL, 1 },
	{ "kcmp", EPERM, R_ALL, 1 },
	{ "pidfd_getfd", EPERM, R_ALL, 1 },
	/* Another process's resource limits, priority, scheduling and I/O
	 * class: the kernel asks only for the same uid, which ward and the
	 * bridge have when started without root (the egress guard, once a
	 * process of the agent's uid, is PID 1's own now), and neither
	 * Landlock's signal scope nor dumpability covers these calls. A
	 * hard RLIMIT_CPU set on the guard had the kernel kill it, an
	 * RLIMIT_NOFILE of 3 starved it. The caller's own (pid 0, as glibc's
	 * setrlimit, nice and Node's os.setPriority() pass it) stays
	 * allowed, and so does reading another's limits. */
	{ "prlimit64", EPERM, R_OTHERS, 0 },
	{ "setpriority", EPERM, R_OTHERS, 0 },
	{ "ioprio_set", EPERM, R_OTHERS, 0 },
	{ "sched_setattr", EPERM, R_OTHERS, 0 },
	{ "sched_setscheduler", EPERM, R_OTHERS, 0 },
	{ "sched_setparam", EPERM, R_OTHERS, 0 },
	{ "sched_setaffinity", EPERM, R_OTHERS, 0 },
	/* kernel attack surface */
	{ "bpf", EPERM, R_ALL, 1 },
	{ "perf_event_open", EPERM, R_ALL, 1 },
	{ "userfaultfd", EPERM, R_ALL, 1 },
	{ "keyctl", EPERM, R_ALL, 1 },
	{ "add_key", EPERM, R_ALL, 1 },
	{ "request_key", EPERM, R_ALL, 1 },
	{ "fanotify_init", EPERM, R_ALL, 1 },
	{ "open_by_handle_at", EPERM, R_ALL, 1 },
	{ "name_to_handle_at", EPERM, R_ALL, 1 },
	/* administration */
	{ "init_module", EPERM, R_ALL, 1 },
	{ "finit_module", EPERM, R_ALL, 1 },
	{ "delete_module", EPERM, R_ALL, 1 },
	{ "kexec_load", EPERM, R_ALL, 1 },
	{ "kexec_file_load", EPERM, R_ALL, 1 },
	{ "reboot", EPERM, R_ALL, 1 }, /* PID 1 of a VM keeps it */
	{ "swapon", EPERM, R_ALL, 1 },
	{ "swapoff", EPERM, R_ALL, 1 },
	{ "acct", EPERM, R_ALL, 1 },
	{ "quotactl", EPERM, R_ALL, 1 },
	{ "quotactl_fd", EPERM, R_ALL, 1 },
	{ "sethostname", EPERM, R_ALL, 1 },
	{ "setdomainname", EPERM, R_ALL, 1 },
	{ "settimeofday", EPERM, R_ALL, 1 },
	{ "clock_settime", EPERM, R_ALL, 1 },
	{ "clock_adjtime", EPERM, R_ALL, 1 },
	{ "syslog", EPERM, R_ALL, 1 },
	{ "vhangup", EPERM, R_ALL, 1 },
	{ "iopl", EPERM, R_ALL, 1 },
	{ "ioperm", EPERM, R_ALL, 1 },
	{ "lookup_dcookie", EPERM, R_ALL, 1 },
	{ "uselib", EPERM, R_ALL, 1 },
	/* x86's per-process segment table: 16-bit code and old threading
	 * libraries only, and a history of kernel bugs */
	{ "modify_ldt", EPERM, R_ALL, 1 },
	/* memory hidden from the kernel's own direct map (Linux 5.14): no
	 * agent tool uses it, and what is in it no dump can show */
	{ "memfd_secret", ENOSYS, R_ALL, 1 },
	/* Linux 6.8: a process's LSM attributes (its AppArmor or SELinux
	 * label) set by a call, where the /proc/self/attr files it replaces
	 * are writes Landlock judges */
	{ "lsm_set_self_attr", ENOSYS, R_ALL, 1 },
	/* NUMA placement of memory, other processes' and its own: Node, git
	 * and bash never ask (measured with Pi 1.6's session and workloads) */
	{ "mbind", EPERM, R_ALL, 0 },
	{ "migrate_pages", EPERM, R_ALL, 0 },
	{ "move_pages", EPERM, R_ALL, 0 },
	{ "set_mempolicy", EPERM, R_ALL, 1 },
	{ "get_mempolicy", EPERM, R_ALL, 1 },
	{ "set_mempolicy_home_node", EPERM, R_ALL, 1 },
	/* argument-dependent */
	{ "socket", EAFNOSUPPORT, R_SOCKET, 0 },
	{ "socketpair", EAFNOSUPPORT, R_SOCKET, 0 },
	{ "ioctl", EPERM, R_IOCTL_TTY, 0 },
	{ "personality", EPERM, R_PERSONALITY, 0 },
	/* EOPNOTSUPP, as when the system has TCP Fast Open off: callers
	 * fall back to connect, which Landlock checks */
	{ "sendto", EOPNOTSUPP, R_FASTOPEN, 0 },
	{ "sendmsg", EOPNOTSUPP, R_FASTOPEN, 0 },
	{ "sendmmsg", EOPNOTSUPP, R_FASTOPEN, 0 },
	/* The egress guard narrows each socket's ephemeral ports so that a
	 * listen() on a socket never bound cannot take a tcp: upstream's
	 * port (init/sandbox/ephemeral.h): the agent may not widen them
	 * again. TCP_ULP attaches kTLS or another upper layer to a socket,
	 * kernel code no agent tool needs. */
	{ "setsockopt", EPERM, R_SOCKOPT, 0 },
	/* Landlock governs TCP ports only: an agent that needs no DNS (its
	 * model and MCP reached by address or through the bridge) can be
	 * kept from every UDP and ICMP send with deny = udp */
	{ "udp", EACCES, R_UDP, 0 },
};

#define N_RULES (sizeof rules / sizeof rules[0])

static int optin(const struct rule *r)
{
	return r->kind == R_UDP;
}

static const struct rule *find_rule(const char *name)
{
	size_t i;
	for (i = 0; i < N_RULES; i++)
		if (strcmp(rules[i].name, name) == 0)
			return &rules[i];
	return NULL;
}

int sc_default_has(const char *name)
{
	const struct rule *r = find_rule(name);
	return r && !optin(r);
}

int sc_optin_has(const char *name)
{
	const struct rule *r = find_rule(name);
	return r && optin(r);
}

const char *sc_default_describe(const char *name, char *buf, size_t size)
{
	static const char *const when[] = {
		[R_ALL] = "always",
		[R_NS_FLAGS] = "when it asks for a new namespace (a CLONE_NEW* flag)",
		[R_SOCKET] = "for families other than unix, inet, inet6 and netlink route, for raw inet sockets, and for inet protocols other than TCP, UDP and ICMP (MPTCP, SCTP, SMC: Landlock's TCP rules do not cover them)", // NOLINT(bugprone-suspicious-missing-comma)
		[R_IOCTL_TTY] = "for TIOCSTI and TIOCLINUX (typing into a terminal)",
		[R_PERSONALITY] = "unless it only reads the persona (0xffffffff): setting it could turn ASLR off or make data executable",
		[R_FASTOPEN] = "with MSG_FASTOPEN (a TCP connect that Landlock's connect rules do not see)",
		[R_UDP] = "for datagram sockets on inet and inet6: UDP and ICMP (ping), which Landlock does not cover",
		[R_SOCKOPT] = "for IP_LOCAL_PORT_RANGE (the egress guard sets the socket's ephemeral ports) and TCP_ULP (kTLS and other upper layers in the kernel)",
		[R_OTHERS] = "when it names a process other than the caller (pid 0): started without root, ward and the bridge share the agent's uid, and their limits, priority and scheduling are not the agent's to change (prlimit64 may still read another's limits)",
		[R_NEWER] = "for every system call number from 470 up: calls added after file_setattr (Linux 6.17), which this list cannot judge", // NOLINT(bugprone-suspicious-missing-comma)
	};
	const struct rule *r = find_rule(name);

	if (!r)
		return NULL;
	snprintf(buf, size, "%s (%s)", when[r->kind],
		 r->err == ENOSYS ? "ENOSYS" : r->err == EAFNOSUPPORT ? "EAFNOSUPPORT"
		 : r->err == EOPNOTSUPP ? "EOPNOTSUPP" : r->err == EACCES ? "EACCES" : "EPERM");
	return buf;
}

int sc_known_syscall(const char *name)
{
	return seccomp_syscall_resolve_name(name) != __NR_SCMP_ERROR;
}

size_t sc_default_names(const char **names, size_t max, int pid1)
{
	size_t i, n = 0;
	for (i = 0; i < N_RULES && n < max; i++)
		if (!optin(&rules[i]) && (!pid1 || rules[i].pid1))
			names[n++] = rules[i].name;
	return n;
}

static int listed(char *const *v, int n, const char *name)
{
	int i;
	for (i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return 1;
	return 0;
}

/* One argument comparison, every field spelled out (libseccomp's SCMP_An
 * macros leave datum_b implicit). For MASKED_EQ a is the mask, b the value. */
static struct scmp_arg_cmp cmp(unsigned arg, enum scmp_compare op, scmp_datum_t a, scmp_datum_t b)
{
	struct scmp_arg_cmp c = { arg, op, a, b };
	return c;
}

/* Numbers of the calls in the table that libseccomp 2.5.4 does not know
 * (numbers past 424 are the same on x86_64 and arm64). */
static int newer_nr(const char *name)
{
	static const struct {
		const char *name;
		int nr;
	} newer[] = { { "statmount", 457 },	 { "listmount", 458 },	  { "open_tree_attr", 467 },
		      { "file_getattr", 468 },	 { "file_setattr", 469 }, { "lsm_set_self_attr", 460 },
		      { "memfd_secret", 447 },	 { "set_mempolicy_home_node", 450 } };
	size_t i;

	for (i = 0; i < sizeof newer / sizeof newer[0]; i++)
		if (strcmp(newer[i].name, name) == 0)
			return newer[i].nr;
	return __NR_SCMP_ERROR;
}

/* Adds one rule group. Returns the number of rules added or -errno. */
static int add_rule(scmp_filter_ctx ctx, const struct rule *r)
{
	static const unsigned long ns_flags[] = { CLONE_NEWNS,	CLONE_NEWCGROUP, CLONE_NEWUTS,
						  CLONE_NEWIPC, CLONE_NEWUSER,	 CLONE_NEWPID,
						  CLONE_NEWNET, CLONE_NEWTIME };
	int nr = r->kind == R_UDP ? SCMP_SYS(socket) : seccomp_syscall_resolve_name(r->name);
	uint32_t act = SCMP_ACT_ERRNO((uint32_t)r->err);
	int rc = 0, n = 0;
	size_t i;

	if (nr == __NR_SCMP_ERROR)
		nr = newer_nr(r->name);
	if (nr == __NR_SCMP_ERROR && r->kind != R_NEWER)
		return 0; /* not a syscall on this arch (e.g. uselib on new kernels) */
	switch (r->kind) {
	case R_NEWER:
		break; /* not a libseccomp rule: newer_prefix() */
	case R_UDP: {
		/* the type's low nibble: SOCK_NONBLOCK and SOCK_CLOEXEC ride above */
		static const int fams[] = { AF_INET, AF_INET6 };
		for (i = 0; i < 2 && rc == 0; i++, n++)
			rc = seccomp_rule_add(ctx, act, nr, 2, cmp(0, SCMP_CMP_EQ, (scmp_datum_t)fams[i], 0),
					      cmp(1, SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM));
		break;
	}
	case R_ALL:
		rc = seccomp_rule_add(ctx, act, nr, 0);
		n = 1;
		break;
	case R_NS_FLAGS:
		for (i = 0; i < sizeof ns_flags / sizeof ns_flags[0] && rc == 0; i++, n++)
			rc = seccomp_rule_add(ctx, act, nr, 1,
					      cmp(0, SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
		break;
	case R_SOCKET: {
		/* Allowed families: AF_UNIX 1, AF_INET 2, AF_INET6 10,
		 * AF_NETLINK 16. Everything else, AF_VSOCK and AF_PACKET
		 * included, gets EAFNOSUPPORT. */
		static const int bad[] = { 0, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15 };
		for (i = 0; i < sizeof bad / sizeof bad[0] && rc == 0; i++, n++)
			rc = seccomp_rule_add(ctx, act, nr, 1, cmp(0, SCMP_CMP_EQ, (scmp_datum_t)bad[i], 0));
		if (rc == 0) {
			rc = seccomp_rule_add(ctx, act, nr, 1, cmp(0, SCMP_CMP_GT, AF_NETLINK, 0));
			n++;
		}
		if (rc == 0 && strcmp(r->name, "socket") == 0) {
			/* netlink other than NETLINK_ROUTE (0) */
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2,
					      cmp(0, SCMP_CMP_EQ, AF_NETLINK, 0), cmp(2, SCMP_CMP_NE, 0, 0));
			n++;
			/* raw and packet sockets on inet (the type's low nibble) */
			for (i = 0; i < 4 && rc == 0; i++, n++)
				rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2,
						      cmp(0, SCMP_CMP_EQ, i < 2 ? AF_INET : AF_INET6, 0),
						      cmp(1, SCMP_CMP_MASKED_EQ, 0xf, i % 2 ? SOCK_PACKET : SOCK_RAW));
			/* Landlock's TCP rules cover TCP only: an MPTCP (262) or
			 * SMC (256) socket connects to any port, falling back to
			 * plain TCP, and SCTP (132) or DCCP (33) are not covered.
			 * On inet only TCP, UDP and ICMP (ping) are left: a
			 * protocol above ICMPv6 (58) or DCCP, and the socket
			 * types that default to another protocol (RDM,
			 * SEQPACKET: SCTP; DCCP), get EPROTONOSUPPORT, which
			 * makes callers that try MPTCP first fall back to TCP.
			 * A family with bits above the low 32 never gets here:
			 * it is more than AF_NETLINK (above). */
			for (i = 0; i < 2 && rc == 0; i++) {
				static const int types[] = { SOCK_RDM, SOCK_SEQPACKET, SOCK_DCCP };
				const scmp_datum_t fam = i ? AF_INET6 : AF_INET;
				const uint32_t no = SCMP_ACT_ERRNO(EPROTONOSUPPORT);
				size_t t;
				rc = seccomp_rule_add(ctx, no, nr, 2, cmp(0, SCMP_CMP_EQ, fam, 0),
						      cmp(2, SCMP_CMP_GT, IPPROTO_ICMPV6, 0));
				n++;
				if (rc == 0) {
					rc = seccomp_rule_add(ctx, no, nr, 2, cmp(0, SCMP_CMP_EQ, fam, 0),
							      cmp(2, SCMP_CMP_EQ, IPPROTO_DCCP, 0));
					n++;
				}
				for (t = 0; t < sizeof types / sizeof types[0] && rc == 0; t++, n++)
					rc = seccomp_rule_add(ctx, no, nr, 2, cmp(0, SCMP_CMP_EQ, fam, 0),
							      cmp(1, SCMP_CMP_MASKED_EQ, 0xf, (scmp_datum_t)types[t]));
			}
		}
		break;
	}
	case R_FASTOPEN: {
		/* the flags: sendto's and sendmmsg's fourth argument, sendmsg's third */
		unsigned arg = strcmp(r->name, "sendmsg") == 0 ? 2 : 3;
		rc = seccomp_rule_add(ctx, act, nr, 1, cmp(arg, SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN));
		n = 1;
		break;
	}
	case R_IOCTL_TTY:
		/* the kernel reads the command as 32 bits: compare only those */
		rc = seccomp_rule_add(ctx, act, nr, 1, cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCSTI));
		if (rc == 0)
			rc = seccomp_rule_add(ctx, act, nr, 1,
					      cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCLINUX));
		n = 2;
		break;
	case R_SOCKOPT: {
		/* level and name, each read by the kernel as an int */
		static const struct {
			int level, name;
		} opts[] = { { IPPROTO_IP, IP_LOCAL_PORT_RANGE }, { IPPROTO_TCP, TCP_ULP } };
		for (i = 0; i < sizeof opts / sizeof opts[0] && rc == 0; i++, n++)
			rc = seccomp_rule_add(ctx, act, nr, 2,
					      cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffUL, (scmp_datum_t)opts[i].level),
					      cmp(2, SCMP_CMP_MASKED_EQ, 0xffffffffUL, (scmp_datum_t)opts[i].name));
		break;
	}
	case R_OTHERS:
		/* The pid compared on all 64 bits: a pid 0 with high bits set
		 * is refused too, which only errs on the strict side. */
		if (strcmp(r->name, "prlimit64") == 0) {
			/* setting (new limits given) for another process */
			rc = seccomp_rule_add(ctx, act, nr, 2, cmp(0, SCMP_CMP_NE, 0, 0), cmp(2, SCMP_CMP_NE, 0, 0));
			n = 1;
		} else if (strcmp(r->name, "setpriority") == 0 || strcmp(r->name, "ioprio_set") == 0) {
			/* (which, who): only PRIO_PROCESS (0) or IOPRIO_WHO_PROCESS
			 * (1) with who 0; a process group or a user would take in
			 * ward's processes of that uid */
			scmp_datum_t self = strcmp(r->name, "setpriority") == 0 ? 0 : 1;
			rc = seccomp_rule_add(ctx, act, nr, 1, cmp(0, SCMP_CMP_NE, self, 0));
			if (rc == 0)
				rc = seccomp_rule_add(ctx, act, nr, 1, cmp(1, SCMP_CMP_NE, 0, 0));
			n = 2;
		} else {
			rc = seccomp_rule_add(ctx, act, nr, 1, cmp(0, SCMP_CMP_NE, 0, 0));
			n = 1;
		}
		break;
	case R_PERSONALITY:
		/* Only the query (0xffffffff) is let through: the persona is
		 * read, never changed. Refusing the flags that weaken ASLR or
		 * make data executable one by one took 36 rules, since the
		 * kernel stores any value with bit 31 set but the query
		 * (0x80040000 turned ASLR off), and a filter compares one
		 * argument once per rule; the agent's programs never set it. */
		rc = seccomp_rule_add(ctx, act, nr, 1, cmp(0, SCMP_CMP_NE, 0xffffffffUL, 0));
		n = 1;
		break;
	}
	return rc < 0 ? rc : n;
}

static int export(scmp_filter_ctx ctx, struct sc_filter *f, char *err, size_t errsize)
{
	int fd = memfd_create("ward-seccomp", MFD_CLOEXEC);
	off_t size;
	int rc;

	if (fd < 0) {
		snprintf(err, errsize, "seccomp: memfd_create: %s", strerror(errno));
		return -1;
	}
	rc = seccomp_export_bpf(ctx, fd);
	size = lseek(fd, 0, SEEK_END);
	if (rc < 0 || size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 ||
	    size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
		snprintf(err, errsize, "seccomp: cannot export the filter: %s", strerror(rc < 0 ? -rc : EINVAL));
		close(fd);
		return -1;
	}
	f->prog = malloc((size_t)size);
	if (!f->prog || pread(fd, f->prog, (size_t)size, 0) != (ssize_t)size) {
		snprintf(err, errsize, "seccomp: cannot read the exported filter");
		close(fd);
		return -1;
	}
	close(fd);
	f->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	return 0;
}

/* A filter context with ward's attributes: other architectures kill the
 * process, no_new_privs is ward's own business (set and verified where the
 * filter is loaded), and the rules become a binary tree over the syscall
 * numbers. The kernel runs that tree at load time too, once per syscall,
 * to find the ones it may allow without running the filter: a linear list
 * made ward's two loads cost 97 and 73 us on these machines, the tree 48
 * and 35 (tests/bench/seccomp_load.c). */
static scmp_filter_ctx new_ctx(uint32_t def)
{
	scmp_filter_ctx ctx;

	/* ward loads the exported program itself: libseccomp's probe of the
	 * kernel only decides which actions it may write. gVisor answers
	 * none of the probe's calls (SECCOMP_GET_ACTION_AVAIL), so libseccomp
	 * takes it for a kernel without SECCOMP_RET_KILL_PROCESS, though
	 * gVisor runs that action; a Linux since 4.14 passes the probe. */
	if (seccomp_api_get() < 3)
		(void)seccomp_api_set(3);
	ctx = seccomp_init(def);

	if (ctx && (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0 ||
		    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) != 0 ||
		    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) != 0)) {
		seccomp_release(ctx);
		ctx = NULL;
	}
	return ctx;
}

/* Puts "every native number from SC_FIRST_NEWER up: ENOSYS" in front of
 * the program libseccomp exported: its rules name one call each, and a
 * range has no name. Another architecture's calls and x32's (numbers
 * with bit 30 set) go on to libseccomp's program unchanged, which kills
 * them; so do the numbers below. Its jumps are relative, so they still
 * land where they did. 0, or -1 out of memory. */
static int newer_prefix(struct sc_filter *f)
{
#if defined(__x86_64__)
	const __u32 native = AUDIT_ARCH_X86_64;
#else
	const __u32 native = AUDIT_ARCH_AARCH64;
#endif
	const struct sock_filter pre[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, native, 0, 4),	    /* other arch: to 6 */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 2, 0),	    /* x32: to 6 */
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SC_FIRST_NEWER, 0, 1), /* older: to 6 */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
	};
	const size_t n = sizeof pre / sizeof pre[0];
	struct sock_filter *prog;

	if (f->len + n > BPF_MAXINSNS)
		return -1;
	prog = malloc((f->len + n) * sizeof *prog);
	if (!prog)
		return -1;
	memcpy(prog, pre, sizeof pre);
	memcpy(prog + n, f->prog, f->len * sizeof *prog);
	free(f->prog);
	f->prog = prog;
	f->len = (unsigned short)(f->len + n);
	f->n_rules++;
	return 0;
}

/* The end of every build: the program exported into f (unless rc is
 * already a failure), the context released, f freed on failure. 0 or -1. */
static int finish(scmp_filter_ctx ctx, struct sc_filter *f, int rc, char *err, size_t errsize)
{
	if (rc == 0 && export(ctx, f, err, errsize) != 0)
		rc = -1;
	seccomp_release(ctx);
	if (rc != 0)
		sc_free(f);
	return rc;
}

static int build(const struct sc_policy *p, int pid1, int vm, struct sc_filter *f, char *err,
		 size_t errsize)
{
	scmp_filter_ctx ctx;
	size_t i;
	int rc = 0, n, newer = 0;

	memset(f, 0, sizeof *f);
	/* Native arch only: i386 and x32 calls kill the process. */
	ctx = new_ctx(SCMP_ACT_ALLOW);
	if (!ctx) {
		snprintf(err, errsize, "seccomp: cannot start the filter");
		return -1;
	}
	for (i = 0; i < N_RULES; i++) {
		if (optin(&rules[i]) ? pid1 || !listed(p->deny, p->n_deny, rules[i].name)
				   : listed(p->allow, p->n_allow, rules[i].name))
			continue;
		if (pid1 && (!rules[i].pid1 || (vm && strcmp(rules[i].name, "reboot") == 0)))
			continue;
		newer |= rules[i].kind == R_NEWER;
		n = add_rule(ctx, &rules[i]);
		if (n < 0) {
			snprintf(err, errsize, "seccomp: rule for %s: %s", rules[i].name, strerror(-n));
			goto fail;
		}
		f->n_rules += n;
	}
	for (i = 0; !pid1 && i < (size_t)p->n_deny; i++) {
		int nr;
		if (sc_optin_has(p->deny[i]))
			continue; /* a group: added above */
		nr = seccomp_syscall_resolve_name(p->deny[i]);
		if (nr == __NR_SCMP_ERROR || (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0)) < 0) {
			snprintf(err, errsize, "seccomp: deny %s: %s", p->deny[i],
				 nr == __NR_SCMP_ERROR ? "unknown system call" : strerror(-rc));
			goto fail;
		}
		f->n_rules++;
	}
	if (finish(ctx, f, 0, err, errsize) != 0)
		return -1;
	if (newer && newer_prefix(f) != 0) {
		snprintf(err, errsize, "seccomp: the filter for newer system calls does not fit");
		sc_free(f);
		return -1;
	}
	return 0;
fail:
	return finish(ctx, f, -1, err, errsize);
}

/* The bridge is small and fixed: everything else answers EPERM. */
static const char *const bridge_allow[] = {
	"read", "write", "close", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	"accept4", "accept", "recvfrom", "recvmsg", "connect", "getsockopt",
	"setsockopt", "shutdown", "poll", "ppoll", "mmap", "munmap", "mremap", "brk", "madvise",
	"mprotect", "futex", "rt_sigprocmask", "rt_sigreturn", "exit", "exit_group", "getpid", "gettid",
	"clock_gettime", "clock_nanosleep", "nanosleep", "getrandom", "restart_syscall", "fcntl",
	"fstat", "newfstatat", "tgkill", "sched_yield", "sigaltstack", "pipe2", "splice",
	/* a route's OAuth credential (mcp-bridge/refresh.h): the file PID 1
	 * opened, locked (fcntl), read and rewritten in place; the bridge
	 * opens none (its Landlock has no file right) */
	"pread64", "pwrite64", "ftruncate", "fsync",
	/* [proxy] ask: a request's two ends, for PID 1's "who asked?"
	 * (common/who.h) */
	"getpeername", "getsockname",
};

/* Every call of names[] that this arch has: allowed. The number of rules
 * added, or -1 with err naming the one that failed. */
static int allow_names(scmp_filter_ctx ctx, const char *const *names, size_t n, char *err, size_t errsize)
{
	size_t i;
	int added = 0;

	for (i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) != 0) {
			snprintf(err, errsize, "seccomp: allowlist rule for %s", names[i]);
			return -1;
		}
		added++;
	}
	return added;
}

/* socket(family, type, protocol) allowed, for each protocol given. */
static int allow_socket(scmp_filter_ctx ctx, int family, int type, const int *protos, int n)
{
	int p;

	for (p = 0; p < n; p++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 3, cmp(0, SCMP_CMP_EQ, (scmp_datum_t)family, 0),
				     cmp(1, SCMP_CMP_MASKED_EQ, 0xf, (scmp_datum_t)type),
				     cmp(2, SCMP_CMP_EQ, (scmp_datum_t)protos[p], 0)) != 0)
			return -1;
	return n;
}

int sc_compile_bridge(struct sc_filter *f, int resolver, char *err, size_t errsize)
{
	static const int tcp[] = { 0, IPPROTO_TCP }, udp[] = { 0, IPPROTO_UDP }, any[] = { 0 };
	scmp_filter_ctx ctx;
	int n;

	memset(f, 0, sizeof *f);
	ctx = new_ctx(SCMP_ACT_ERRNO(EPERM));
	if (!ctx) {
		snprintf(err, errsize, "seccomp: cannot start the bridge filter");
		return -1;
	}
	if ((n = allow_names(ctx, bridge_allow, sizeof bridge_allow / sizeof bridge_allow[0], err, errsize)) < 0)
		goto fail;
	f->n_rules += n;
	/* Sockets: its upstreams' families only, stream sockets only, and on
	 * inet TCP itself: Landlock's connect rules see neither MPTCP nor
	 * SCTP, nor a Fast Open send, which connects from sendto/sendmsg.
	 * With a resolver: DNS over UDP (Landlock does not govern UDP; the
	 * servers are resolv.conf's) and TCP (port 53, in its Landlock rules),
	 * and IPv6 TCP for an AAAA answer's addresses. */
	/* and a unix socket pair: a credential's refresh, its own client */
	if ((n = allow_socket(ctx, AF_UNIX, SOCK_STREAM, any, 1)) < 0 ||
	    (f->n_rules += n, n = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socketpair), 2,
						    cmp(0, SCMP_CMP_EQ, AF_UNIX, 0),
						    cmp(1, SCMP_CMP_MASKED_EQ, 0xf, SOCK_STREAM)) ? -1 : 1) < 0 ||
	    (f->n_rules += n, n = allow_socket(ctx, AF_INET, SOCK_STREAM, tcp, 2)) < 0 ||
	    (f->n_rules += n, n = allow_socket(ctx, AF_VSOCK, SOCK_STREAM, any, 1)) < 0) {
		snprintf(err, errsize, "seccomp: bridge rule for socket");
		goto fail;
	}
	f->n_rules += n;
	if (resolver) {
		if ((n = allow_socket(ctx, AF_INET6, SOCK_STREAM, tcp, 2)) < 0 ||
		    (f->n_rules += n, n = allow_socket(ctx, AF_INET, SOCK_DGRAM, udp, 2)) < 0 ||
		    (f->n_rules += n, n = allow_socket(ctx, AF_INET6, SOCK_DGRAM, udp, 2)) < 0 ||
		    (f->n_rules += n, seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(writev), 0)) != 0) {
			snprintf(err, errsize, "seccomp: bridge rule for its resolver");
			goto fail;
		}
		f->n_rules += n + 1;
	}
	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendto), 1, cmp(3, SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, 0)) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), 1, cmp(2, SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, 0)) != 0) {
		snprintf(err, errsize, "seccomp: bridge rule for sendto/sendmsg");
		goto fail;
	}
	f->n_rules += 2;
	return finish(ctx, f, 0, err, errsize);
fail:
	return finish(ctx, f, -1, err, errsize);
}

int sc_compile(const struct sc_policy *p, int pid1, int vm, struct sc_filter *f, char *err, size_t errsize)
{
	return build(p, pid1, vm, f, err, errsize);
}

int sc_from_bpf(const struct sock_filter *prog, unsigned short len, int n_rules, struct sc_filter *f)
{
	memset(f, 0, sizeof *f);
	f->prog = malloc(len * sizeof *prog);
	if (!f->prog)
		return -1;
	memcpy(f->prog, prog, len * sizeof *prog);
	f->len = len;
	f->n_rules = n_rules;
	return 0;
}

void sc_digest(const struct sc_filter *f, unsigned char out[32])
{
	mbedtls_sha256_ret((const unsigned char *)f->prog, f->len * sizeof *f->prog, out, 0);
}

int sc_load(const struct sc_filter *f)
{
	struct sock_fprog prog;

	if (!f->prog)
		return 0;
	prog.len = f->len;
	prog.filter = f->prog;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		return -errno;
	return 0;
}

void sc_free(struct sc_filter *f)
{
	free(f->prog);
	memset(f, 0, sizeof *f);
}
