#define _GNU_SOURCE
#include "init/supervise/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child/exec.h"

pid_t spawn_child(const struct spawn_req *req, int *errfd, int *relfd)
{
	int p[2], h[2] = { -1, -1 };
	pid_t pid;

	/* a socket, not a pipe: the egress guard's listener rides on a
	 * record; a packet each, so a record still arrives whole or not */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) != 0)
		return -1;
	if (req->hold && pipe2(h, O_CLOEXEC) != 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		if (h[0] >= 0) {
			close(h[0]);
			close(h[1]);
		}
		errno = e;
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		if (h[1] >= 0)
			close(h[1]);
		exec_child(req, p[1], h[0]);
	}
	close(p[1]);
	if (h[0] >= 0)
		close(h[0]);
	*relfd = h[1];
	/* Also from the parent, so signals forwarded to the group right
	 * after fork find it; EACCES once the child has exec'd is fine. */
	(void)setpgid(pid, pid);
	(void)fcntl(p[0], F_SETFL, O_NONBLOCK);
	*errfd = p[0];
	return pid;
}
