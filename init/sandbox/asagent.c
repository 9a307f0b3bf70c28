#define _GNU_SOURCE
#include "init/sandbox/asagent.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* op(path) in a child that has become the agent user, as the agent runs
 * (a root agent without CAP_DAC_OVERRIDE): 0, the errno it ended with, or
 * AS_AGENT_FAILED. */
int as_agent(const struct user_ids *u, int (*op)(const char *), const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return AS_AGENT_FAILED;
	if (pid == 0) {
		if (users_setgroups(u) != 0 || setresgid(u->gid, u->gid, u->gid) != 0 ||
		    setresuid(u->uid, u->uid, u->uid) != 0)
			_exit(AS_AGENT_FAILED);
		capng_clear(CAPNG_SELECT_CAPS);
		if (capng_apply(CAPNG_SELECT_CAPS) != 0)
			_exit(AS_AGENT_FAILED);
		_exit(op(path) & 0xff);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return AS_AGENT_FAILED;
	return WEXITSTATUS(st);
}

/* Can the file be opened for reading? 0, or the errno. */
int try_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Can the file be opened for writing (appending: nothing is changed)?
 * 0, or the errno; ENOENT when it is not there (then its directory is
 * what to judge). */
int try_append(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Can a file be created in dir? 0, or the errno. */
int try_make_file(const char *dir)
{
	char path[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof path, "%s/.ward-writable-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return errno;
	close(fd);
	unlink(path);
	return 0;
}

/* A connect to the unix socket at path: 0 when the kernel let it through
 * (ECONNREFUSED, EAGAIN: there, and allowed, with no one taking it), else
 * the errno (EACCES: refused by its modes). */
int try_connect_unix(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), r;

	if (s < 0)
		return errno;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	r = connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : errno;
	close(s);
	return r == ECONNREFUSED || r == EAGAIN || r == EINPROGRESS ? 0 : r;
}
