"""What the running kernel offers, asked of the kernel itself, and a
cgroup v1 freezer group for tests that need a process SIGKILL cannot end."""
import ctypes
import os
import time

FREEZER = "/sys/fs/cgroup/freezer"


def landlock_abi():
    """The kernel's Landlock ABI version (landlock_create_ruleset with
    LANDLOCK_CREATE_RULESET_VERSION); -1 when Landlock is not there."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))


def freezer_usable():
    """A writable cgroup v1 freezer (v2's lets SIGKILL through: a frozen
    task there still dies, so it cannot stand in for one that does not)."""
    return os.path.isdir(FREEZER) and os.access(FREEZER, os.W_OK)


def remove_group(cg):
    """rmdir a cgroup v1 group, for up to 5 s while its last tasks leave."""
    for _ in range(50):
        try:
            os.rmdir(cg)
            return
        except OSError:
            time.sleep(0.1)


class Freezer:
    """A freezer group of its own, thawed and removed on exit:

        with Freezer("name") as fz:
            fz.add(pid)          # or a process writes itself to fz.tasks
            fz.freeze()          # True once every task is frozen
    """

    def __init__(self, name):
        self.cg = os.path.join(FREEZER, f"{name}-{os.getpid()}")
        self.tasks = os.path.join(self.cg, "tasks")

    def __enter__(self):
        os.makedirs(self.cg, exist_ok=True)
        return self

    def add(self, pid):
        with open(self.tasks, "w") as f:
            f.write(str(pid))

    def freeze(self, timeout=2.0):
        with open(os.path.join(self.cg, "freezer.state"), "w") as f:
            f.write("FROZEN")
        end = time.monotonic() + timeout
        while time.monotonic() < end:  # FREEZING until every task is
            with open(os.path.join(self.cg, "freezer.state")) as f:
                if f.read().strip() == "FROZEN":
                    return True
            time.sleep(0.02)
        return False

    def __exit__(self, *exc):
        with open(os.path.join(self.cg, "freezer.state"), "w") as f:
            f.write("THAWED")  # a pending SIGKILL ends its tasks now
        remove_group(self.cg)
        return False


PIDS = "/sys/fs/cgroup/pids"


def pids_usable():
    """A writable cgroup v1 pids controller."""
    return os.path.isdir(PIDS) and os.access(PIDS, os.W_OK)


class PidsGroup:
    """A pids group of its own, its limit lifted and the group removed on
    exit:

        with PidsGroup("name") as pg:
            Popen(..., preexec_fn=pg.join_self)
            pg.limit(1)          # no fork in the group succeeds past 1 task
    """

    def __init__(self, name):
        self.cg = os.path.join(PIDS, f"{name}-{os.getpid()}")

    def __enter__(self):
        os.makedirs(self.cg, exist_ok=True)
        return self

    def join_self(self):
        with open(os.path.join(self.cg, "tasks"), "w") as f:
            f.write(str(os.getpid()))

    def limit(self, n):
        with open(os.path.join(self.cg, "pids.max"), "w") as f:
            f.write(str(n))

    def __exit__(self, *exc):
        self.limit("max")
        remove_group(self.cg)
        return False
