/* peek: PID 1 reads a few bytes of a caller's memory (the address a
 * connect() names) through /proc/TID/mem. The kernel lets an opener whose
 * fsuid and fsgid are the target's (guard_as_agent()) read a dumpable
 * process's memory, and Yama's scope 1 lets an ancestor: PID 1 is both,
 * and needs no CAP_SYS_PTRACE (docker's default profile has none). A
 * process that made itself non-dumpable (or exec'd a file it may not
 * read) cannot be read: its connects are not judged (they wait on lo, as
 * before). The caller must check the notification is still alive after
 * the open (SECCOMP_IOCTL_NOTIF_ID_VALID): until then TID may name another
 * process. */
#ifndef WARD_PEEK_H
#define WARD_PEEK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Opens tid's memory, read-only. A descriptor, or -errno. */
int peek_open(pid_t tid);

/* Exactly len bytes at addr. 0, or -errno (EFAULT: not mapped). */
int peek_read(int mem, uint64_t addr, void *buf, size_t len);

#endif
