/* vm: ward as PID 1 of a virtual machine (the kernel's init). */
#ifndef WARD_VM_H
#define WARD_VM_H

/* True when ward is PID 1 of the initial pid namespace: /proc shows it
 * there (an initramfs moved its /proc in), or, with no procfs at /proc,
 * a pid 2 exists that is not ward's child (kthreadd; a new pid namespace
 * has no pid 2 yet, or one its shell started, ward's child). */
int vm_detect(void);

/* Mounts proc, sys, dev (+pts, shm), run and tmp, brings up lo; logs
 * what fails. */
void vm_mount(void);

/* sync and power off; never returns. */
void vm_poweroff(void) __attribute__((noreturn));

#endif
