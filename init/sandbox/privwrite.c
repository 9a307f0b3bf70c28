#define _GNU_SOURCE
#include "init/sandbox/privwrite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fds.h"

/* A directory just made by mkdirat(0700): ward's, no rights for others.
 * Else (EEXIST) another was renamed into its name before it was opened.
 * (Its link count is not asked: btrfs gives every directory 1.) */
static int made_here(int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return 0;
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		errno = EEXIST;
		return 0;
	}
	return 1;
}

/* Walks dir component by component from '/', never following a symlink,
 * creating what is missing (mode 0700, owned by uid:gid) if create. */
static int open_dir_nofollow(const char *dir, int create, uid_t uid, gid_t gid, char *err, size_t errsize)
{
	char buf[4096], *comp, *save = NULL;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf || fd < 0) {
		snprintf(err, errsize, "target directory %s: name too long", dir);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (comp = strtok_r(buf, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		int next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			/* chown what was opened, not the name: in a directory the
			 * agent can write, the name may be another inode by then.
			 * What was opened must still look as made here (ward's,
			 * 0700, empty): not a directory renamed into the name */
			if (mkdirat(fd, comp, 0700) != 0 ||
			    (next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
			    !made_here(next) || fchown(next, uid, gid) != 0) {
				snprintf(err, errsize, "target directory %s: mkdir %s: %s", dir, comp, strerror(errno));
				if (next >= 0)
					close(next);
				close(fd);
				return -1;
			}
		}
		if (next < 0) {
			snprintf(err, errsize, "target directory %s: %s: %s%s", dir, comp, strerror(errno),
				 errno == ENOTDIR || errno == ELOOP ? " (a symlink is not followed)" : "");
			close(fd);
			return -1;
		}
		close(fd);
		fd = next;
	}
	return fd;
}

/* The directory of target, opened by open_dir_nofollow(); *base is the
 * file's name in it. -1 with err set if target is no absolute file path. */
static int open_parent(const char *target, int create, uid_t uid, gid_t gid, const char **base, char *err,
		       size_t errsize)
{
	char dir[4096];

	*base = strrchr(target, '/');
	if (!*base || !(*base)[1] || *base - target >= (long)sizeof dir) {
		snprintf(err, errsize, "target %s: want an absolute file path", target);
		return -1;
	}
	memcpy(dir, target, (size_t)(*base - target));
	dir[*base - target] = '\0';
	return open_dir_nofollow(dir[0] ? dir : "/", create, uid, gid, err, errsize);
}

/* The directory of target as a directory one can create in (openat with
 * an O_PATH descriptor cannot), by open_parent()'s walk. */
static int open_parent_dir(const char *target, uid_t uid, gid_t gid, const char **base, char *err, size_t errsize)
{
	int dfd = open_parent(target, 1, uid, gid, base, err, errsize), fd;

	if (dfd < 0)
		return -1;
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		snprintf(err, errsize, "target %s: %s", target, strerror(errno));
	return fd;
}

/* Writes len bytes (and a newline if nl) to target atomically: a
 * temporary file in the same directory, owned uid:gid with mode, then
 * rename; no component of the path is followed if it is a symlink. */
static int write_private(const char *target, const char *data, size_t len, int nl, unsigned mode, uid_t uid,
			 gid_t gid, char *err, size_t errsize)
{
	char tmp[64];
	const char *base;
	int dfd = open_parent_dir(target, uid, gid, &base, err, errsize), fd;

	if (dfd < 0)
		return -1;
	snprintf(tmp, sizeof tmp, ".ward-%d.tmp", (int)getpid());
	(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fd_write_all(fd, data, len) != 0 || (nl && fd_write_all(fd, "\n", 1) != 0) ||
	    fchown(fd, uid, gid) != 0 || fchmod(fd, (mode_t)mode) != 0 || fsync(fd) != 0) {
		snprintf(err, errsize, "target %s: %s", target, strerror(errno));
		if (fd >= 0)
			close(fd);
		(void)unlinkat(dfd, tmp, 0);
		close(dfd);
		return -1;
	}
	close(fd);
	if (renameat(dfd, tmp, dfd, base + 1) != 0) {
		snprintf(err, errsize, "target %s: %s", target, strerror(errno));
		(void)unlinkat(dfd, tmp, 0);
		close(dfd);
		return -1;
	}
	close(dfd);
	return 0;
}

int private_file_remove(const char *target)
{
	char err[64];
	const char *base;
	int dfd = open_parent(target, 0, 0, 0, &base, err, sizeof err), rc;

	if (dfd < 0)
		return -1;
	rc = unlinkat(dfd, base + 1, 0);
	close(dfd);
	return rc;
}

int mcp_write_target(const char *target, const char *text, uid_t uid, gid_t gid, char *err, size_t errsize)
{
	return write_private(target, text, strlen(text), 1, 0600, uid, gid, err, errsize);
}

int private_file_write(const char *target, const char *data, size_t len, unsigned mode, uid_t uid, gid_t gid,
		       char *err, size_t errsize)
{
	return write_private(target, data, len, 0, mode, uid, gid, err, errsize);
}

int private_file_append(const char *target, unsigned mode, uid_t uid, gid_t gid, uid_t dir_uid, gid_t dir_gid,
			char *err, size_t errsize)
{
	const char *base;
	int dfd = open_parent_dir(target, dir_uid, dir_gid, &base, err, errsize), fd;

	if (dfd < 0)
		return -1;
	/* a new inode each start: whatever had the name (an earlier run's
	 * file, or a link the agent left there) is unlinked, not opened */
	if (unlinkat(dfd, base + 1, 0) != 0 && errno != ENOENT) {
		snprintf(err, errsize, "target %s: %s", target, strerror(errno));
		close(dfd);
		return -1;
	}
	fd = openat(dfd, base + 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0 || fchown(fd, uid, gid) != 0 || fchmod(fd, (mode_t)mode) != 0) {
		snprintf(err, errsize, "target %s: %s", target, strerror(errno));
		if (fd >= 0) {
			close(fd);
			(void)unlinkat(dfd, base + 1, 0);
		}
		close(dfd);
		return -1;
	}
	close(dfd);
	return fd;
}
