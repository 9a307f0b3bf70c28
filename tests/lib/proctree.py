"""Processes found by their parent, from /proc."""
import os
import time


def children(pid):
    """pid's children (/proc/PID/task/PID/children); [] once it is gone."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


def alive(pid):
    """Running: neither gone nor a zombie (of whoever took it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
        return s[s.rindex(")") + 2] != "Z"
    except (OSError, ValueError, IndexError):
        return False


def child_running(parent, binary, timeout=30):
    """The child of parent that has exec'd binary, or None after timeout.

    A tracer's first child is not always the traced program: strace forks
    short-lived children of its own at start to probe ptrace, so "the first
    child" can be one of those, gone a moment later. The program is known
    by its executable."""
    want = os.path.realpath(binary)
    end = time.monotonic() + timeout
    while time.monotonic() < end and os.path.exists(f"/proc/{parent}"):
        for c in children(parent):
            try:
                if os.readlink(f"/proc/{c}/exe") == want:
                    return c
            except OSError:
                pass
        time.sleep(0.02)
    return None


def kill_quietly(pid, sig):
    """Signal pid if it is still there (cleanup must not turn a result into a harness error)."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
