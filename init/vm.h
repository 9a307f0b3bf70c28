/* vm: ward as PID 1 of a virtual machine (the kernel's init). */
#ifndef WARD_VM_H
#define WARD_VM_H

/* True when ward is PID 1 of the initial pid namespace: /proc shows it
 * there (an initramfs moved its /proc in), or, with no procfs at /proc,
 * kthreadd is pid 2 (a new pid namespace has no pid 2 yet). */
int vm_detect(void);

/* Mounts proc, sys, dev (+pts, shm), run and tmp, brings up lo; logs
 * what fails. */
void vm_mount(void);

/* sync and power off; never returns. */
void vm_poweroff(void) __attribute__((noreturn));

#endif
