/* envheap: the environment moved off the bytes /proc/PID/environ shows.
 * The kernel reads that file from the process's first environment block
 * (its stack), and Linux holds it to ptrace access, so only root and the
 * process itself read PID 1's. gVisor does not: any user in the sandbox
 * reads /proc/1/environ, a provider's key among it. Once moved, every
 * getenv and setenv works on heap copies and the first block is zeros. */
#ifndef WARD_ENVHEAP_H
#define WARD_ENVHEAP_H

/* Copies each string of environ to the heap, points environ at the
 * copies, then zeroes the originals. 0, or -1 without memory (environ
 * unchanged). */
int envheap_move(void);

#endif
