/* spawn: PID 1's side of starting the agent: the record and hold pipes,
 * the fork, the process group from both sides. What the child does until
 * its exec is child/exec.c. */
#ifndef WARD_SPAWN_H
#define WARD_SPAWN_H

#include <sys/types.h>

#include "child/exec.h"

/* Forks and execs. Returns the child's pid and the read end of the record
 * pipe (non-blocking, CLOEXEC), or -1 with errno if fork failed. A child
 * with nothing to do before its exec is started by posix_spawn(), and
 * has exec'd when this returns: then *errfd is -1 (no records). With
 * req->hold, *relfd is the end to write a byte to (then close) to let
 * the held child exec (else -1). */
pid_t spawn_child(const struct spawn_req *req, int *errfd, int *relfd);

#endif
