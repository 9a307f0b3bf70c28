/* vmtest: the guest side of the VM test (tests/vm/vm.py).
 *
 *   vmtest init      as the VM's /init: load the vsock modules from
 *                    /modules, start the host-side stand-in (an HTTP server
 *                    on AF_VSOCK port 5000, reached over vsock_loopback at
 *                    CID 1), then exec /sbin/ward, which stays PID 1
 *   vmtest agent     as ward's confined agent: one request through the
 *                    bridge, then the checks; prints "vmtest: ..." lines
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

static int do_init(void)
{
	static const char *const mods[] = { "/modules/vsock.ko", "/modules/vmw_vsock_virtio_transport_common.ko",
					    "/modules/vsock_loopback.ko" };
	char *const argv[] = { "/sbin/ward", NULL };
	char *const envp[] = { "WARD_VM_TOKEN=vm-secret", NULL };
	size_t i;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (i = 0; i < sizeof mods / sizeof mods[0]; i++)
		if (load(mods[i]) != 0)
			printf("vmtest: cannot load %s: %s\n", mods[i], strerror(errno));
	if (fork() == 0)
		server();
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
