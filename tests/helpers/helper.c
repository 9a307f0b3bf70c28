/* helper: small, fast child programs for the behaviour tests and benches.
 *
 *   helper no-close-range ERRNO CMD...  run CMD with close_range failing
 *                             as ERRNO (an old kernel, a runtime's filter)
 *   helper no-accept ERRNO CMD...  run CMD with accept and accept4 failing
 *                             as ERRNO (descriptors or memory run out)
 *   helper catch              block every signal (all 64), print "ready", then print
 *                             each signal number received, one per line
 *   helper selfkill SIG       kill itself with SIG (unblocked, default action)
 *   helper ignore-term SECS   ignore TERM, print "ready", sleep SECS
 *   helper orphans N          fork N grandchildren through an intermediate
 *                             that exits (so they are orphans), release them
 *                             at once, wait until all are reaped, then print
 *                             "reaped N zombies Z" (Z: zombies among init's
 *                             children right after) and exit 0 if Z == 0
 *   helper churn N            N short-lived orphans, 500 at a time (pids are
 *                             recycled: pid_max may be 32768): an intermediate
 *                             forks 500 children that exit at once and exits
 *                             itself without waiting, so init reaps them all;
 *                             then waits (up to 60 s) for init's zombies to go
 *                             and prints "churned DONE of N zombies Z ms T",
 *                             exit 0 if all N ran and Z == 0
 *   helper leave-child LOG SECS  fork a child that logs each signal it gets to
 *                             LOG ("TERM" ...), exits on TERM unless SECS>0 in
 *                             which case it ignores TERM and sleeps SECS; the
 *                             parent exits 3 once the child is ready
 *   helper forker MAX FILE    fork a spawner in a session of its own (the
 *                             agent's group kill misses it) that ignores
 *                             TERM, then forks a child every 200 us (each
 *                             ignores TERM and waits, for 60 s at most),
 *                             MAX at most, writing how many so far to FILE;
 *                             the parent prints "ready PID" once it has
 *                             forked 200 (or MAX) and exits 3
 *   helper fds PID            print the open fds of process PID
 *   helper recv FD            for benches: TERM handler writes CLOCK_MONOTONIC
 *                             ns to FD; writes "R" to FD when ready
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

static int __attribute__((noreturn)) do_catch(void)
{
	/* all 64, by system call: glibc's sigfillset and sigprocmask leave out
	 * its internal 32 and 33, which would then kill the helper */
	uint64_t all = ~(uint64_t)0;
	siginfo_t si;
	pid_t parent = getppid();

	/* it ignores every signal but KILL: gone with the init that runs it,
	 * or once nobody reads what it says (a test that was cut short left
	 * it running, an orphan, for good) */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, sizeof all);
	printf("ready\n");
	if (fflush(stdout) != 0)
		_exit(0);
	for (;;) {
		int sig = (int)syscall(SYS_rt_sigtimedwait, &all, &si, NULL, sizeof all);
		if (sig < 0)
			continue;
		if (sig == SIGCHLD)
			continue;
		printf("%d\n", sig);
		if (fflush(stdout) != 0)
			_exit(0);
	}
}

static int __attribute__((noreturn)) do_selfkill(int sig)
{
	sigset_t s;

	signal(sig, SIG_DFL);
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	kill(getpid(), sig);
	for (;;)
		pause();
}

static int do_ignore_term(int secs)
{
	signal(SIGTERM, SIG_IGN);
	printf("ready\n");
	fflush(stdout);
	sleep((unsigned)secs);
	return 0;
}

static int count_zombie_children(pid_t parent)
{
	char path[300], buf[512];
	struct dirent *de;
	DIR *d = opendir("/proc");
	int z = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		FILE *f;
		char *p;
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(buf, sizeof buf, f) && (p = strrchr(buf, ')')) && p[1]) {
			char st = p[2];
			long ppid = strtol(p + 4, NULL, 10);
			if (st == 'Z' && ppid == parent)
				z++;
		}
		fclose(f);
	}
	closedir(d);
	return z;
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	pid_t ppid = -1;
	char *p;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(buf, sizeof buf, f) && (p = strrchr(buf, ')')) && p[1])
		ppid = (pid_t)strtol(p + 4, NULL, 10);
	fclose(f);
	return ppid;
}

static int do_orphans(int n)
{
	int hold[2], report[2], i;
	pid_t *pids = calloc((size_t)n, sizeof *pids), mid;
	pid_t init = getppid();
	struct timespec t0, t1;
	int adopted = 0, left = 0, late = 0;

	if (!pids || pipe(hold) || pipe(report))
		return 2;
	mid = fork();
	if (mid == 0) {
		close(hold[1]);
		close(report[0]);
		for (i = 0; i < n; i++) {
			pid_t p = fork();
			if (p == 0) {
				char c;
				close(report[1]);
				while (read(hold[0], &c, 1) < 0 && errno == EINTR)
					;
				_exit(0);
			}
			if (p < 0)
				_exit(2);
			if (write(report[1], &p, sizeof p) != sizeof p)
				_exit(2);
		}
		_exit(0);
	}
	close(hold[0]);
	close(report[1]);
	for (i = 0; i < n; i++) {
		ssize_t r = read(report[0], &pids[i], sizeof pids[i]);
		if (r != (ssize_t)sizeof pids[i])
			return 2;
	}
	waitpid(mid, NULL, 0);
	for (i = 0; i < n; i++)
		adopted += parent_of(pids[i]) == init;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	close(hold[1]); /* release them all at once */
	for (i = 0; i < n; i++) {
		while (kill(pids[i], 0) == 0 && !late) {
			usleep(200);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			late = t1.tv_sec - t0.tv_sec > 10;
		}
		left += kill(pids[i], 0) == 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	i = count_zombie_children(init);
	printf("orphans %d adopted %d unreaped %d zombies %d ms %.1f\n", n, adopted, left, i,
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	fflush(stdout);
	return i == 0 && left == 0 && adopted == n ? 0 : 1;
}

static int do_churn(int n)
{
	pid_t init = getppid();
	struct timespec t0, t1;
	int done = 0, z = -1, tries, stalls = 0, st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (done < n) {
		int k = n - done < 500 ? n - done : 500, i;
		pid_t mid = fork();
		if (mid < 0) {
			/* the pid space is full of unreaped zombies: init is behind
			 * (or does not reap at all: give up after 10 s) */
			if (++stalls > 10000)
				break;
			usleep(1000);
			continue;
		}
		if (mid == 0) {
			int fails = 0;
			for (i = 0; i < k; i++) {
				pid_t p = fork();
				if (p == 0)
					_exit(0);
				if (p < 0) {
					if (++fails > 10000)
						_exit(1);
					usleep(1000);
					i--;
				}
			}
			_exit(0);
		}
		if (waitpid(mid, &st, 0) != mid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			break;
		done += k;
	}
	for (tries = 0; tries < 6000; tries++) {
		z = count_zombie_children(init);
		if (z == 0)
			break;
		usleep(10000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("churned %d of %d zombies %d ms %.0f\n", done, n, z,
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	fflush(stdout);
	return z == 0 && done == n ? 0 : 1;
}

static volatile sig_atomic_t got_term;

static void on_sig(int sig)
{
	got_term = sig;
}

/* The parent's side of a child's "ready" byte on ready[]: prints "ready
 * PID" once it comes and returns 3 (the code the leftover cases expect), or
 * 2 if the child never sends it. */
static int parent_ready(int ready[2], pid_t p)
{
	char c;

	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		return 2;
	printf("ready %d\n", (int)p);
	fflush(stdout);
	return 3;
}

static int do_leave_child(const char *log, int secs)
{
	int ready[2];
	pid_t p;

	if (pipe(ready))
		return 2;
	p = fork();
	if (p == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		struct sigaction sa = { .sa_handler = on_sig };
		sigset_t block, old;

		/* blocked until sigsuspend: a signal between the check of
		 * got_term and the wait would otherwise be slept through */
		sigemptyset(&block);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGHUP);
		sigaddset(&block, SIGINT);
		sigprocmask(SIG_BLOCK, &block, &old);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		close(ready[0]);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		close(ready[1]);
		for (;;) {
			sigsuspend(&old);
			if (got_term) {
				dprintf(fd, "%s\n", sigabbrev_np(got_term));
				if (secs == 0)
					_exit(0);
				got_term = 0;
			}
		}
	}
	return parent_ready(ready, p);
}

static int do_forker(int max, const char *file)
{
	int ready[2], n, fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	pid_t p;

	if (fd < 0 || max < 1 || pipe(ready))
		return 2;
	p = fork();
	if (p == 0) {
		close(ready[0]);
		setsid();
		alarm(90); /* as its children: should everything else fail */
		signal(SIGTERM, SIG_IGN);
		signal(SIGCHLD, SIG_IGN); /* children reaped by the kernel */
		for (n = 1; n <= max; n++) {
			char num[16];
			int len = snprintf(num, sizeof num, "%d\n", n);
			pid_t k = fork();

			if (k == 0) {
				alarm(60);
				for (;;)
					pause();
			}
			if (pwrite(fd, num, (size_t)len, 0) != len)
				_exit(2);
			if (n == (max < 200 ? max : 200) && write(ready[1], "r", 1) != 1)
				_exit(2);
			usleep(200);
		}
		for (;;)
			pause();
	}
	close(fd);
	return parent_ready(ready, p);
}

static int do_fds(pid_t init)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/fd", (int)init);
	d = opendir(path);
	if (!d)
		return 2;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			printf("%s ", de->d_name);
	printf("\n");
	closedir(d);
	return 0;
}

static int recv_fd = -1;

static void on_term_recv(int sig)
{
	struct timespec ts;
	uint64_t ns;

	(void)sig;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	if (write(recv_fd, &ns, sizeof ns) != sizeof ns)
		_exit(2);
	_exit(0);
}

static int __attribute__((noreturn)) do_recv(int fd)
{
	struct sigaction sa = { .sa_handler = on_term_recv };

	recv_fd = fd;
	sigaction(SIGTERM, &sa, NULL);
	if (write(fd, "R", 1) != 1)
		_exit(2);
	for (;;)
		pause();
}

/* Runs argv with system calls nr1 and nr2 failing as err, e.g.
 * close_range(2) as on a kernel before 5.9 (ENOSYS) or under a runtime's
 * filter that refuses calls it does not know (EPERM). Inherited by
 * everything argv starts. */
static int do_failing(unsigned nr1, unsigned nr2, int err, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr1, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = (unsigned short)(sizeof f / sizeof f[0]), .filter = f };

	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
		perror("helper: seccomp");
		return 2;
	}
	execvp(argv[0], argv);
	perror("helper: exec");
	return 127;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "no-close-range") == 0)
		return do_failing(__NR_close_range, __NR_close_range, atoi(argv[2]), argv + 3);
	if (argc >= 4 && strcmp(argv[1], "no-accept") == 0)
		return do_failing(__NR_accept, __NR_accept4, atoi(argv[2]), argv + 3);
	if (argc >= 2 && strcmp(argv[1], "catch") == 0)
		return do_catch();
	if (argc >= 3 && strcmp(argv[1], "selfkill") == 0)
		return do_selfkill(atoi(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "ignore-term") == 0)
		return do_ignore_term(atoi(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "orphans") == 0)
		return do_orphans(atoi(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "churn") == 0)
		return do_churn(atoi(argv[2]));
	if (argc >= 4 && strcmp(argv[1], "leave-child") == 0)
		return do_leave_child(argv[2], atoi(argv[3]));
	if (argc >= 4 && strcmp(argv[1], "forker") == 0)
		return do_forker(atoi(argv[2]), argv[3]);
	if (argc >= 3 && strcmp(argv[1], "fds") == 0)
		return do_fds((pid_t)atoi(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "recv") == 0)
		return do_recv(atoi(argv[2]));
	fprintf(stderr, "helper: unknown mode\n");
	return 2;
}
