/* asagent: a try as the agent's user, before anything runs: in a child that
 * has become that user with no capability (a root agent without
 * CAP_DAC_OVERRIDE, as it runs), whether it could create a file in a
 * directory, read a file, connect to a unix socket. The kernel's answer,
 * not a reading of modes. */
#ifndef WARD_ASAGENT_H
#define WARD_ASAGENT_H

#include "common/users.h"

/* What as_agent() answers when it could not try at all (no fork, no
 * change of user, a crash): no errno is this high. */
#define AS_AGENT_FAILED 250

/* op(path) in that child: 0, the errno it ended with, or AS_AGENT_FAILED. */
int as_agent(const struct user_ids *u, int (*op)(const char *), const char *path);

/* The tries, each 0 or the errno: a file made (and removed) in dir; path
 * opened for reading; a connect to the unix socket at path that the
 * kernel let through (ECONNREFUSED and EAGAIN count: there, allowed, with
 * no one taking it). */
int try_make_file(const char *dir);
int try_read(const char *path);
int try_append(const char *path);
int try_connect_unix(const char *path);

#endif
