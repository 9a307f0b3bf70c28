/* seccomp_load: how long the kernel takes to load each of ward's built-in
 * seccomp filters (the seccomp() call: classic BPF checked, converted and
 * JIT-compiled, and the filter run once per syscall number to find the
 * ones it may allow without running it again). Each load is timed in a
 * fresh child, as ward's own loads are. Prints one line per filter:
 *   NAME INSTRUCTIONS MEDIAN_NS P10_NS P90_NS
 * Used by tests/bench/init_bench.py; reports, asserts nothing. */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "seccomp/filters.h"

static long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* -1 when the child could not load it */
static long load_once(const struct sock_filter *f, unsigned short len)
{
	struct sock_fprog prog = { len, (struct sock_filter *)f };
	long ns = -1;
	int p[2];
	pid_t pid;

	if (pipe(p) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		long t0, t1;

		close(p[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			_exit(1);
		t0 = now_ns();
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
			_exit(1);
		t1 = now_ns();
		ns = t1 - t0;
		_exit(write(p[1], &ns, sizeof ns) == (ssize_t)sizeof ns ? 0 : 1);
	}
	close(p[1]);
	if (pid > 0) {
		if (read(p[0], &ns, sizeof ns) != (ssize_t)sizeof ns)
			ns = -1;
		waitpid(pid, NULL, 0);
	}
	close(p[0]);
	return ns;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const struct {
		const char *name;
		const struct sock_filter *prog;
		unsigned short len;
	} filters[] = {
		{ "agent", ward_filter_agent, ward_filter_agent_len },
		{ "pid1", ward_filter_init, ward_filter_init_len },
		{ "bridge", ward_filter_bridge, ward_filter_bridge_len },
	};
	int n = argc > 1 ? atoi(argv[1]) : 500, i, k;
	long *v;

	if (n < 10) {
		fprintf(stderr, "usage: seccomp-load [RUNS >= 10]\n");
		return 2;
	}
	v = calloc((size_t)n, sizeof *v);
	if (!v)
		return 1;
	for (k = 0; k < (int)(sizeof filters / sizeof filters[0]); k++) {
		for (i = 0; i < n; i++) {
			v[i] = load_once(filters[k].prog, filters[k].len);
			if (v[i] < 0) {
				fprintf(stderr, "seccomp-load: cannot load the %s filter\n", filters[k].name);
				return 1;
			}
		}
		qsort(v, (size_t)n, sizeof *v, cmp_long);
		printf("%s %u %ld %ld %ld\n", filters[k].name, filters[k].len, v[n / 2], v[n / 10], v[n * 9 / 10]);
	}
	free(v);
	return 0;
}
