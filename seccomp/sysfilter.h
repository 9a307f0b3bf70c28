/* sysfilter: seccomp: the agent's deny-list filter and PID 1's own, built once with
 * libseccomp and exported to BPF; the child loads the BPF with one raw
 * syscall, so a restart compiles nothing. */
#ifndef WARD_SYSFILTER_H
#define WARD_SYSFILTER_H

#include <linux/filter.h>
#include <stddef.h>

struct sc_filter {
	struct sock_filter *prog; /* NULL: no filter */
	unsigned short len;
	int n_rules; /* syscall rules added */
};

struct sc_policy {
	int enabled;
	char **deny; /* extra names -> EPERM */
	int n_deny;
	char **allow; /* names taken out of the default list */
	int n_allow;
};

/* The SHA-256 of the filter's BPF, for the evidence (computed when asked:
 * a start without evidence does not pay for it). */
void sc_digest(const struct sc_filter *f, unsigned char out[32]);

/* Is this name in the default deny list (the rule groups by syscall)? */
int sc_default_has(const char *name);

/* Is this the name of a group deny = NAME adds (udp)? */
int sc_optin_has(const char *name);

/* When the default list denies name and with which errno, e.g.
 * "always (EPERM)"; NULL if it is not in the list. */
const char *sc_default_describe(const char *name, char *buf, size_t size);

/* Does libseccomp know this syscall on the native arch? */
int sc_known_syscall(const char *name);

/* The default list as "name:errno" lines, for --check and the evidence. */
size_t sc_default_names(const char **names, size_t max, int pid1);

/* The agent's filter. Without allow/deny lines this is the filter
 * precompiled at build time (from this same table), so a start compiles
 * nothing; otherwise libseccomp compiles it now. */
int sc_build_agent(const struct sc_policy *p, struct sc_filter *f, char *err, size_t errsize);

/* PID 1's own filter: the part of the agent's list PID 1 never needs
 * (minus what the config allows), and reboot unless ward is a VM's init. */
int sc_build_init(const struct sc_policy *p, int vm, struct sc_filter *f, char *err, size_t errsize);

/* Always with libseccomp (the build-time generator and the tests use it). */
int sc_compile(const struct sc_policy *p, int pid1, int vm, struct sc_filter *f, char *err, size_t errsize);

/* The bridge's allowlist (default EPERM); the build-time copy is taken by
 * sc_build_bridge(). resolver: a route names its upstream by DNS name, and
 * the bridge also makes UDP sockets (queries) and IPv6 TCP ones (an AAAA
 * answer's), and writev (a query over TCP). */
int sc_compile_bridge(struct sc_filter *f, int resolver, char *err, size_t errsize);
int sc_build_bridge(struct sc_filter *f, int resolver, char *err, size_t errsize);

/* A filter from BPF already compiled. */
int sc_from_bpf(const struct sock_filter *prog, unsigned short len, int n_rules, struct sc_filter *f);

/* Loads the filter into the calling thread (needs NO_NEW_PRIVS). 0 or -errno. */
int sc_load(const struct sc_filter *f);

void sc_free(struct sc_filter *f);

#endif
