#define _GNU_SOURCE
#include "init/supervise/vm.h"

#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/log.h"

#define PROC_MAGIC 0x9fa0

/* The initial pid namespace's inode number (PROC_PID_INIT_INO). */
#define PID_NS_INIT_INO 0xEFFFFFFCU

int vm_detect(void)
{
	struct statfs st;
	struct stat ns;

	if (getpid() != 1)
		return 0;
	/* No procfs at /proc: a VM's init, or PID 1 of a pid namespace that
	 * nobody mounted /proc for (bwrap --as-pid-1 without --proc). The
	 * machine's init has kthreadd beside it as pid 2 from boot, a child
	 * of the kernel, not of init. A new pid namespace has no pid 2 before
	 * its init forks, ward has not, and a pid 2 that a shell started
	 * before it exec'd ward is ward's child. */
	if (statfs("/proc", &st) != 0 || st.f_type != PROC_MAGIC) {
		siginfo_t si;
		if (kill(2, 0) != 0 && errno != EPERM)
			return 0;
		return waitid(P_PID, 2, &si, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD;
	}
	/* /proc is there (an initramfs moves its /proc into the new root):
	 * PID 1 of the initial pid namespace is the machine's init, where
	 * a container's PID 1 is in a namespace of its own */
	return stat("/proc/self/ns/pid", &ns) == 0 && ns.st_ino == PID_NS_INIT_INO;
}

/* Nobody else brings up lo in a VM, and the bridge listens on 127.0.0.1. */
static void loopback_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
			log_warn("vm: cannot bring up lo: %s", strerror(errno));
		else
			log_debug("vm: lo is up");
	}
	close(s);
}

void vm_mount(void)
{
	static const struct {
		const char *type, *target, *opts;
		unsigned long flags;
		mode_t mode;
	} m[] = {
		{ "proc", "/proc", NULL, MS_NOSUID | MS_NODEV | MS_NOEXEC, 0555 },
		{ "sysfs", "/sys", NULL, MS_NOSUID | MS_NODEV | MS_NOEXEC, 0555 },
		{ "devtmpfs", "/dev", "mode=0755", MS_NOSUID, 0755 },
		{ "devpts", "/dev/pts", "gid=5,mode=0620,ptmxmode=0666", MS_NOSUID | MS_NOEXEC, 0755 },
		{ "tmpfs", "/dev/shm", "mode=1777", MS_NOSUID | MS_NODEV, 01777 },
		{ "tmpfs", "/run", "mode=0755", MS_NOSUID | MS_NODEV, 0755 },
		{ "tmpfs", "/tmp", "mode=1777", MS_NOSUID | MS_NODEV, 01777 },
	};
	size_t i;

	for (i = 0; i < sizeof m / sizeof m[0]; i++) {
		if (mkdir(m[i].target, m[i].mode) != 0 && errno != EEXIST) {
			log_warn("vm: mkdir %s: %s", m[i].target, strerror(errno));
			continue;
		}
		if (mount(m[i].type, m[i].target, m[i].type, m[i].flags, m[i].opts) != 0 &&
		    errno != EBUSY)
			log_warn("vm: mount %s on %s: %s", m[i].type, m[i].target, strerror(errno));
		else
			log_debug("vm: mounted %s on %s", m[i].type, m[i].target);
	}
	loopback_up();
}

void vm_poweroff(void)
{
	/* what is still queued for the console (the exit status) first */
	(void)tcdrain(STDERR_FILENO);
	sync();
	if (reboot(RB_POWER_OFF) != 0)
		log_error("vm: power off: %s", strerror(errno));
	(void)reboot(RB_HALT_SYSTEM);
	/* PID 1 must not return: wait for the hypervisor to stop us. */
	for (;;)
		pause();
}
