/* vm: ward as PID 1 of a virtual machine (the kernel's init). */
#ifndef WARD_VM_H
#define WARD_VM_H

/* True when ward is PID 1 and /proc is not mounted, or /proc shows it in
 * the initial pid namespace (an initramfs moved its /proc in). */
int vm_detect(void);

/* Mounts proc, sys, dev (+pts, shm), run and tmp, brings up lo; logs
 * what fails. */
void vm_mount(void);

/* sync and power off; never returns. */
void vm_poweroff(void) __attribute__((noreturn));

#endif
