/* privwrite: PID 1, as root, writes the agent's private files ([file],
 * the agent's mcp.json) where the agent's user can read them, following
 * no symlink on the way: the directories on the path may be the agent's
 * own (a workspace), and a link there must not send root's write
 * elsewhere. */
#ifndef WARD_PRIVWRITE_H
#define WARD_PRIVWRITE_H

#include <stddef.h>
#include <sys/types.h>

/* Writes the agent's copy to target atomically (temp file + rename), mode
 * 0600, owned by uid:gid, creating missing directories (0700, same owner)
 * and following no symlink on the way. 0 or -1 with err. */
int mcp_write_target(const char *target, const char *text, uid_t uid, gid_t gid, char *err, size_t errsize);

/* The same for a [file NAME]: the bytes as read, with the given mode. */
int private_file_write(const char *target, const char *data, size_t len, unsigned mode, uid_t uid, gid_t gid,
		       char *err, size_t errsize);

/* A new, empty file at target opened for appending (the agent's file of
 * refusals): owned uid:gid with mode, missing directories made for
 * dir_uid:dir_gid, no symlink followed; whatever had the name is unlinked
 * first. The descriptor, or -1 with err. */
int private_file_append(const char *target, unsigned mode, uid_t uid, gid_t gid, uid_t dir_uid, gid_t dir_gid,
			char *err, size_t errsize);

/* Removes a target written above (a start that failed after it), by the
 * same walk that follows no symlink. 0, or -1. */
int private_file_remove(const char *target);

#endif
