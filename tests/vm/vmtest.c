/* vmtest: the guest side of the VM test (tests/vm/vm.py).
 *
 *   vmtest init      as the VM's /init: load the vsock modules from
 *                    /modules, start the host-side stand-in (an HTTP server
 *                    on AF_VSOCK port 5000, reached over vsock_loopback at
 *                    CID 1), then exec /sbin/ward, which stays PID 1
 *   vmtest agent     as ward's confined agent: one request through the
 *                    bridge, then the checks; prints "vmtest: ..." lines
 *
 * With /t/node/mcp-server.mjs in the initramfs (the SDK boot), init runs
 * the fixture MCP server (Node) on a unix socket instead of the stand-in,
 * and relays AF_VSOCK port 5000 to it: the official SDK client, as ward's
 * agent, then has a whole MCP session through the bridge over vsock.
 *
 * Static, no libc extras: the initramfs holds nothing else. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int load(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = (int)syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	return rc == 0 || errno == EEXIST ? 0 : -1;
}

/* Answers every request with the headers it received, as JSON-ish text. */
static void __attribute__((noreturn)) server(void)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY, .svm_port = 5000 };
	int s = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	prctl(PR_SET_NAME, "vsock-upstream", 0, 0, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 16) != 0) {
		printf("vmtest: upstream: %s\n", strerror(errno));
		_exit(1);
	}
	for (;;) {
		char buf[8192], out[9000];
		size_t n = 0;
		ssize_t r;
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC), len;

		if (c < 0)
			continue;
		while (n < sizeof buf - 1 && (r = read(c, buf + n, sizeof buf - 1 - n)) > 0) {
			n += (size_t)r;
			buf[n] = '\0';
			if (strstr(buf, "\r\n\r\n"))
				break;
		}
		buf[n] = '\0';
		len = snprintf(out, sizeof out, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s", n, buf);
		if (write(c, out, (size_t)len) < 0)
			(void)0;
		close(c);
	}
}

/* The approver of the proxy's questions ([proxy] ask = vsock:1:5002), as a
 * daemon on the host would be: each question printed and denied. */
static void __attribute__((noreturn)) approver(void)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY, .svm_port = 5002 };
	int s = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	prctl(PR_SET_NAME, "vsock-approver", 0, 0, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 4) != 0) {
		printf("vmtest: approver: %s\n", strerror(errno));
		_exit(1);
	}
	for (;;) {
		char buf[8192], *line, *nl, *id;
		size_t n = 0;
		ssize_t r;
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0)
			continue;
		while (n < sizeof buf - 1 && (r = read(c, buf + n, sizeof buf - 1 - n)) > 0) {
			n += (size_t)r;
			buf[n] = '\0';
			/* each whole line: a question is printed and denied */
			while ((nl = strchr(buf, '\n'))) {
				*nl = '\0';
				line = buf;
				if (strstr(line, "\"type\":\"question\"") && (id = strstr(line, "\"id\":"))) {
					printf("vmtest: approver asked over AF_VSOCK: %s\n", line);
					dprintf(c, "{\"id\":%ld,\"answer\":\"deny\"}\n", strtol(id + 5, NULL, 10));
				}
				n -= (size_t)(nl + 1 - buf);
				memmove(buf, nl + 1, n + 1);
			}
		}
		close(c);
	}
}

/* Copies both ways between a and b until both sides are done. */
static void relay(int a, int b)
{
	struct pollfd p[2] = { { a, POLLIN, 0 }, { b, POLLIN, 0 } };
	char buf[65536];
	int open_ = 2, i;

	while (open_ > 0 && poll(p, 2, -1) > 0) {
		for (i = 0; i < 2; i++) {
			ssize_t n;
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(p[i].fd, buf, sizeof buf);
			if (n <= 0) {
				shutdown(p[1 - i].fd, SHUT_WR);
				p[i].fd = -1;
				open_--;
			} else if (write(p[1 - i].fd, buf, (size_t)n) != n) {
				return;
			}
		}
	}
}

/* AF_VSOCK port 5000 -> the MCP server's unix socket, one child per connection. */
static void __attribute__((noreturn)) vsock_relay(const char *path)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY, .svm_port = 5000 };
	int s = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	prctl(PR_SET_NAME, "vsock-relay", 0, 0, 0);
	signal(SIGCHLD, SIG_IGN);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 64) != 0) {
		printf("vmtest: relay: %s\n", strerror(errno));
		_exit(1);
	}
	for (;;) {
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		if (fork() == 0) {
			struct sockaddr_un u = { .sun_family = AF_UNIX };
			int up = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			snprintf(u.sun_path, sizeof u.sun_path, "%s", path);
			if (up >= 0 && connect(up, (struct sockaddr *)&u, sizeof u) == 0)
				relay(c, up);
			_exit(0);
		}
		close(c);
	}
}

/* The SDK boot: the fixture MCP server (Node) on /srv/mcp.sock, demanding
 * the token and the Host the route sends; then the relay. */
static void start_sdk_host(void)
{
	char *const argv[] = { "/node/bin/node", "/t/node/mcp-server.mjs", "/srv/mcp.sock", "/mcp", NULL };
	char *const envp[] = { "MCP_TOKEN=vm-secret", "MCP_ALLOWED_HOSTS=mcp.host:6767", "HOME=/srv", NULL };
	struct stat st;
	int i;

	/* Node wants /proc and /dev before ward (PID 1 later) mounts them */
	mkdir("/srv", 0755);
	(void)mount("proc", "/proc", "proc", 0, NULL);
	(void)mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	if (fork() == 0) {
		execve(argv[0], argv, envp);
		printf("vmtest: exec node: %s\n", strerror(errno));
		_exit(127);
	}
	for (i = 0; i < 1200 && stat("/srv/mcp.sock", &st) != 0; i++)
		usleep(100000);
	printf("vmtest: MCP server %s after %d.%d s\n", i < 1200 ? "listening" : "NOT listening", i / 10, i % 10);
	/* /proc and /dev stay mounted, as an initramfs leaves them: ward
	 * must know it is the VM's init from its pid namespace (the other
	 * boots start it with no /proc) */
	if (fork() == 0)
		vsock_relay("/srv/mcp.sock");
}

/* Yama's ptrace_scope set to scope, then the egress probe's peek run as
 * uid 4242, each of its lines printed as "vmtest: yama=N peek: ...". */
static void yama_peek(char scope)
{
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDWR | O_CLOEXEC), p[2];
	char v[4] = { 0 }, out[512];
	ssize_t n;
	pid_t pid;

	if (fd < 0 || write(fd, &scope, 1) != 1 || pread(fd, v, sizeof v - 1, 0) <= 0) {
		printf("vmtest: no Yama ptrace_scope here (%s)\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	printf("vmtest: Yama ptrace_scope = %c\n", v[0]);
	if (access("/egress", X_OK) != 0 || pipe(p) != 0)
		return;
	pid = fork();
	if (pid == 0) {
		char *const argv[] = { "/egress", "peek", NULL }, *const envp[] = { NULL };
		dup2(p[1], 1);
		if (setgid(4242) != 0 || setuid(4242) != 0)
			_exit(1);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	close(p[1]);
	n = 0;
	while (n < (ssize_t)sizeof out - 1) {
		ssize_t r = read(p[0], out + n, sizeof out - 1 - (size_t)n);
		if (r <= 0)
			break;
		n += r;
	}
	out[n] = '\0';
	close(p[0]);
	waitpid(pid, NULL, 0);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		printf("vmtest: yama=%c %s\n", scope, line);
}

static int do_init(void)
{
	static const char *const mods[] = { "/modules/vsock.ko", "/modules/vmw_vsock_virtio_transport_common.ko",
					    "/modules/vsock_loopback.ko", "/modules/inet_diag.ko", "/modules/tcp_diag.ko" };
	char *const argv[] = { "/sbin/ward", NULL };
	char *const envp[] = { "WARD_VM_TOKEN=vm-secret", NULL };
	size_t i;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (i = 0; i < sizeof mods / sizeof mods[0]; i++)
		if (load(mods[i]) != 0)
			printf("vmtest: cannot load %s: %s\n", mods[i], strerror(errno));
	if (access("/t/node/mcp-server.mjs", F_OK) == 0) {
		start_sdk_host();
		usleep(100000);
		execve(argv[0], argv, envp);
		printf("vmtest: exec ward: %s\n", strerror(errno));
		return 1;
	}
	if (fork() == 0)
		server();
	if (fork() == 0)
		approver();
	/* Yama: what a sibling of the agent's uid may read of its memory at
	 * scopes 1 and 2 (the egress probe's peek, measured for the docs),
	 * then scope 2 (attach only with CAP_SYS_PTRACE) for ward: the egress
	 * guard must need no ptrace right over the agent. /proc is mounted
	 * for this and unmounted again: ward finds none, as at a plain boot. */
	if (mount("proc", "/proc", "proc", 0, NULL) == 0) {
		static const char scopes[] = "12";
		for (i = 0; i < 2; i++)
			yama_peek(scopes[i]);
		umount("/proc");
	}
	/* what --check says on this kernel (its warnings name each gap) */
	{
		char *const check[] = { "/sbin/ward", "--check", NULL };
		pid_t p = fork();
		if (p == 0) {
			execve(check[0], check, envp);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	usleep(100000);
	execve(argv[0], argv, envp);
	printf("vmtest: exec ward: %s\n", strerror(errno));
	return 1;
}

static int do_agent(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(7800) };
	char buf[16384];
	size_t n = 0;
	ssize_t r;
	int s, ok = 1;
	const char *req = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:7800\r\nContent-Length: 2\r\n\r\n{}";

	setvbuf(stdout, NULL, _IONBF, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	{
		/* made by the egress guard, held to lo, at whatever Yama scope */
		char dev[16] = { 0 };
		socklen_t dl = sizeof dev;
		unsigned range = 0;
		socklen_t rl = sizeof range;
		int rr = getsockopt(s, IPPROTO_IP, 51 /* IP_LOCAL_PORT_RANGE */, &range, &rl);
		printf("vmtest: the agent's socket's ephemeral ports: %s %u-%u\n", rr == 0 ? "ok" : strerror(errno),
		       range & 0xffff, range >> 16);
		if (s >= 0 && getsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, dev, &dl) == 0 && strcmp(dev, "lo") == 0)
			printf("vmtest: ok the agent's socket is held to lo (the egress guard)\n");
		else {
			printf("vmtest: FAIL the agent's socket is not held to lo ('%s')\n", dev);
			ok = 0;
		}
	}
	{
		/* a connect out of the sandbox: refused at once by PID 1's check
		 * of the address (ENETUNREACH), which at Yama scope 2 needs the
		 * CAP_SYS_PTRACE ward keeps for it; a connect the check missed
		 * would wait on lo until SO_SNDTIMEO */
		struct sockaddr_in out = { .sin_family = AF_INET, .sin_port = htons(7800) };
		struct timeval tv = { 3, 0 };
		struct timespec t0, t1;
		int o = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc, e;
		long ms;
		out.sin_addr.s_addr = htonl(0x0a090909); /* 10.9.9.9 */
		setsockopt(o, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = connect(o, (struct sockaddr *)&out, sizeof out);
		e = errno;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (rc != 0 && e == ENETUNREACH && ms < 1000)
			printf("vmtest: ok a connect out of the sandbox refused at once (ENETUNREACH, %ld ms)\n", ms);
		else {
			printf("vmtest: FAIL a connect out of the sandbox: %s after %ld ms\n", rc ? strerror(e) : "connected",
			       ms);
			ok = 0;
		}
		if (o >= 0)
			close(o);
	}
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0 || write(s, req, strlen(req)) < 0) {
		printf("vmtest: FAIL connect to the bridge: %s\n", strerror(errno));
		return 1;
	}
	while (n < sizeof buf - 1 && (r = read(s, buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(s);
	if (strncmp(buf, "HTTP/1.1 200", 12) == 0 && strstr(buf, "Authorization: Bearer vm-secret") &&
	    strstr(buf, "Host: mcp.host:6767"))
		printf("vmtest: ok bridge relayed over AF_VSOCK to CID 1 with the token and Host\n");
	else {
		printf("vmtest: FAIL bridge answer: %.200s\n", buf);
		ok = 0;
	}
	{
		/* a host no allow rule names: held while the approver over
		 * AF_VSOCK is asked; it denies, and the answer is a 403 */
		struct sockaddr_in p = { .sin_family = AF_INET, .sin_port = htons(7802) };
		struct timeval tv = { 60, 0 };
		const char *ask = "CONNECT asked.vm:443 HTTP/1.1\r\nHost: asked.vm:443\r\n\r\n";
		int q = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		p.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		setsockopt(q, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		n = 0;
		if (q >= 0 && connect(q, (struct sockaddr *)&p, sizeof p) == 0 && write(q, ask, strlen(ask)) > 0)
			while (n < sizeof buf - 1 && (r = read(q, buf + n, sizeof buf - 1 - n)) > 0)
				n += (size_t)r;
		buf[n] = '\0';
		if (q >= 0)
			close(q);
		if (strncmp(buf, "HTTP/1.1 403", 12) == 0 && strstr(buf, "denied it when asked"))
			printf("vmtest: ok the proxy asked the approver over AF_VSOCK, which denied: 403\n");
		else {
			printf("vmtest: FAIL the proxy's question over AF_VSOCK: %.300s\n", buf);
			ok = 0;
		}
	}
	errno = 0;
	if (socket(AF_VSOCK, SOCK_STREAM, 0) < 0 && errno == EAFNOSUPPORT)
		printf("vmtest: ok agent cannot open AF_VSOCK (EAFNOSUPPORT)\n");
	else {
		printf("vmtest: FAIL agent opened AF_VSOCK (%s)\n", strerror(errno));
		ok = 0;
	}
	if (open("/etc/ward/ward.conf", O_RDONLY) < 0 && errno == EACCES)
		printf("vmtest: ok Landlock (ABI 2, best effort) denies reading outside the rules\n");
	else {
		printf("vmtest: FAIL read outside the rules: %s\n", strerror(errno));
		ok = 0;
	}
	if (getuid() == 4242)
		printf("vmtest: ok agent runs as uid 4242\n");
	else {
		printf("vmtest: FAIL agent uid %d\n", (int)getuid());
		ok = 0;
	}
	printf("vmtest: agent done: %s\n", ok ? "all ok" : "failures");
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "agent") == 0)
		return do_agent();
	if (getpid() == 1 || (argc >= 2 && strcmp(argv[1], "init") == 0))
		return do_init();
	fprintf(stderr, "usage: vmtest init | agent\n");
	return 2;
}
