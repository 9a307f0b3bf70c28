#!/usr/bin/python3
"""Black-box behaviour tests of a container init.

Runs every case against ward and, for comparison, against tini-static,
dumb-init and catatonit (Debian packages), and prints one table of who
passes what. Only ward's results decide the exit status: the anchors'
failures are the point of the comparison, not defects of this suite.

Each case starts the init either as PID 1 of a fresh PID + mount namespace
(`unshare -fp --mount-proc`, what a container runtime gives it) or as a
plain child (subreaper mode), sends signals to it from outside and checks
what the kernel reports: exit statuses, /proc state, what the child saw.
"""
import argparse
import atexit
import hashlib
import json
import os
import pty
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import termios
import threading
import time
import fcntl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import kernel  # noqa: E402
from proctree import alive, children, kill_quietly  # noqa: E402

PASS, FAIL, NA = "pass", "FAIL", "n/a"
HERE = os.path.dirname(os.path.abspath(__file__))


class Init:
    def __init__(self, name, cmd, subreaper_argv=None, rewrite_flags=None, is_ward=False):
        self.name = name
        self.cmd = cmd                        # how to run it, e.g. ["valgrind", ..., "ward"]
        self.argv = cmd + ["--"]
        self.subreaper_argv = subreaper_argv or self.argv
        self.rewrite_flags = rewrite_flags    # argv with its rewrite options, or None
        self.is_ward = is_ward


class Lines:
    """Line reader over a pipe with timeouts (no buffered-file surprises)."""

    def __init__(self, f):
        self.fd = f.fileno()
        self.buf = b""
        self.eof = False  # the writers have all closed (not merely a timeout)

    def readline(self, timeout=3.0):
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.eof = True
                if self.buf:
                    break
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode(errors="replace")


def status_field(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None


class Run:
    """One init run. pid1=True: PID 1 of a new pid+mount namespace."""

    def __init__(self, init_argv, cmd, pid1=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, cwd=None, pass_fds=(), preexec_fn=None,
                 start_new_session=False, env=None, wait_ready=True):
        argv = (["unshare", "-fp", "--mount-proc"] if pid1 else []) + list(init_argv) + list(cmd)
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd,
                                  pass_fds=pass_fds, preexec_fn=preexec_fn,
                                  start_new_session=start_new_session, env=env)
        self.out = Lines(self.p.stdout) if stdout == subprocess.PIPE else None
        self.pid = self._find_init(pid1) if wait_ready else None

    def _find_init(self, pid1):
        """The init's pid in our namespace, once it runs its child: every
        init here sets up its signal handling before it forks, and unshare's
        own child has no child until it has become the init."""
        end = time.monotonic() + 20
        while time.monotonic() < end:
            if self.p.poll() is not None:
                return None
            cand = children(self.p.pid)[:1] if pid1 else [self.p.pid]
            if cand and children(cand[0]):
                return cand[0]
            time.sleep(0.002)
        return None

    def readline(self, timeout=3.0):
        return self.out.readline(timeout)

    def at_eof(self, timeout=5.0):
        """True at end of file within timeout; False for a line or a timeout."""
        return self.out.readline(timeout) is None and self.out.eof

    def kill(self, sig):
        if self.pid:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def wait(self, timeout=10):
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.abort()
            return "TIMEOUT"
        return rc

    def stderr(self):
        return self.p.stderr.read().decode(errors="replace") if self.p.stderr else ""

    def abort(self):
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.p.kill()
            self.p.wait(timeout=5)
        except Exception:
            pass


_SCRATCH = []


def scratch():
    """The run's directory for config files and logs, removed at exit
    (files left in /tmp, a dozen a run, piled up)."""
    if not _SCRATCH:
        _SCRATCH.append(tempfile.mkdtemp(prefix="ward-behave-"))
        os.chmod(_SCRATCH[0], 0o755)
        atexit.register(shutil.rmtree, _SCRATCH[0], True)
    return _SCRATCH[0]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ward_config(text):
    fd, path = tempfile.mkstemp(prefix="ward-test-", suffix=".conf", dir=scratch())
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def with_config(init, text):
    """ward's argv with a config file (anchors: None)."""
    if not init.is_ward:
        return None
    return init.cmd + ["-c", ward_config(text), "--"]


# ---------------------------------------------------------------- cases
# Each case takes (ctx, init) and returns (PASS|FAIL|NA, detail).

def case_exit_codes(ctx, init):
    bad = []
    for code in [0, 1, 2, 32, 64, 126, 127, 128, 254, 255]:
        rc = Run(init.argv, ["sh", "-c", f"exit {code}"]).wait()
        if rc != code:
            bad.append(f"{code}->{rc}")
    return (PASS, "0..255 sample equal") if not bad else (FAIL, ",".join(bad))


def case_signal_deaths(ctx, init):
    out, ok = [], True
    for s in [signal.SIGHUP, signal.SIGINT, signal.SIGKILL, signal.SIGTERM, signal.SIGUSR1,
              signal.SIGSEGV]:
        rc = Run(init.argv, [ctx.helper, "selfkill", str(int(s))]).wait()
        ok &= rc == 128 + int(s)
        out.append(f"{s.name[3:]}->{rc}")
    return (PASS if ok else FAIL), " ".join(out)


def case_exec_failures(ctx, init):
    rcs = []
    for path in ["/nonexistent-binary", "/etc", "/etc/passwd"]:
        rcs.append(Run(init.argv, [path]).wait())
    return (PASS if rcs == [127, 126, 126] else FAIL), "ENOENT/EACCES dir/EACCES file -> " + "/".join(map(str, rcs))


def case_exec_error_vs_exit(ctx, init):
    """ward reports exec failures through a CLOEXEC pipe: an exit 127 of a
    program that ran is not taken for 'not found'."""
    if not init.is_ward:
        return NA, "ward-specific message"
    r1 = Run(init.argv, ["sh", "-c", "exit 127"])
    rc1, err1 = r1.wait(), r1.stderr()
    r2 = Run(init.argv, ["/nonexistent-binary"])
    rc2, err2 = r2.wait(), r2.stderr()
    ok = rc1 == 127 and "cannot run" not in err1 and rc2 == 127 and \
        "cannot run /nonexistent-binary: No such file or directory" in err2
    return (PASS if ok else FAIL), f"exit 127 -> {rc1} silent={'cannot run' not in err1}; ENOENT -> {rc2} reported={'cannot run' in err2}"


def case_no_command(ctx, init):
    r = Run(init.cmd, [], wait_ready=False)
    rc, err = r.wait(), r.stderr()
    return (PASS if rc not in (0, "TIMEOUT") and err.strip() else FAIL), f"rc={rc} message={bool(err.strip())}"


def catcher(init_argv, pid1=True):
    r = Run(init_argv, [CTX.helper, "catch"], pid1=pid1)
    line = r.readline(5)
    if line != "ready":
        r.abort()
        return None
    return r


def forward_check(r, sigs, timeout=1.0):
    """Each signal in turn, then what the child says it caught. A late
    answer counts for its own signal, not as a wrong one for the next; a
    line for a signal not sent yet (one delivered as another) is a fault."""
    seen, strays, sent, died = set(), [], set(), False
    for s in sigs:
        r.kill(s)
        sent.add(str(int(s)))
        end = time.monotonic() + timeout
        while str(int(s)) not in seen and time.monotonic() < end:
            line = r.readline(max(0.0, end - time.monotonic()))
            if line is None:
                break
            (seen.add if line in sent else strays.append)(line)
        if str(int(s)) not in seen and not alive(r.pid):
            died = True
            break
    if not died and any(str(int(s)) not in seen for s in sigs):
        while (line := r.readline(timeout)) is not None:  # stragglers
            (seen.add if line in sent else strays.append)(line)
    got = [s for s in sigs if str(int(s)) in seen]
    missing = [f"{int(s)}" for s in sigs if str(int(s)) not in seen] + (["INIT-DIED"] if died else []) + \
        [f"(unexpected {x})" for x in strays]
    return got, missing


def case_forward_each_signal(ctx, init):
    r = catcher(init.argv)
    if not r:
        return FAIL, "child not ready"
    skip = {signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD}
    sigs = [s for s in range(1, 32) if s not in skip]
    got, missing = forward_check(r, sigs)
    r.abort()
    return (PASS if not missing else FAIL), f"forwarded {len(got)}/{len(sigs)}" + (f"; missing {' '.join(missing)}" if missing else "")


def case_realtime_signals(ctx, init):
    r = catcher(init.argv)
    if not r:
        return FAIL, "child not ready"
    sigs = [34, 35, 40, 50, 64]
    got, missing = forward_check(r, sigs)
    r.abort()
    return (PASS if not missing else FAIL), f"forwarded {len(got)}/{len(sigs)}" + (f"; missing {' '.join(missing)}" if missing else "")


def case_glibc_internal_signals(ctx, init):
    """32 and 33 (glibc's SIGCANCEL and SIGSETXID, which its sigfillset and
    sigprocmask leave out): forwarded like any other, as PID 1 and as a
    subreaper, and the init is still there afterwards."""
    notes, bad = [], []
    for pid1 in (True, False):
        r = catcher(init.argv, pid1=pid1)
        if not r:
            return FAIL, "child not ready"
        got, missing = forward_check(r, [32, 33])
        alive_after = alive(r.pid)
        r.abort()
        where = "PID 1" if pid1 else "subreaper"
        notes.append(f"{where}: forwarded {len(got)}/2" + (f"; missing {' '.join(missing)}" if missing else ""))
        if missing or not alive_after:
            bad.append(where)
    return (PASS if not bad else FAIL), "; ".join(notes)


def case_term_shell_child(ctx, init):
    r = Run(init.argv, ["sh", "-c", "sleep 100; echo done"])
    time.sleep(0.2)
    r.kill(signal.SIGTERM)
    rc = r.wait(timeout=5)
    return (PASS if rc == 143 else FAIL), f"rc={rc}"


def case_int_to_init(ctx, init):
    r = Run(init.argv, ["sleep", "100"])
    time.sleep(0.2)
    r.kill(signal.SIGINT)
    rc = r.wait(timeout=5)
    return (PASS if rc == 130 else FAIL), f"rc={rc}"


def case_kill_1_from_inside(ctx, init):
    r = Run(init.argv, ["sh", "-c", "trap 'echo got-TERM; exit 0' TERM; (sleep 0.2; kill -TERM 1) & "
                        "while :; do sleep 0.05; done"])
    line = r.readline(3)
    rc = r.wait(timeout=3)
    return (PASS if line == "got-TERM" and rc == 0 else FAIL), f"{line} rc={rc}"


def case_orphans_pid1(ctx, init):
    r = Run(init.argv, [ctx.helper, "orphans", "3000"])
    line = r.readline(30)
    rc = r.wait(timeout=30)
    return (PASS if rc == 0 else FAIL), f"{line} rc={rc}"


def case_coalesced_sigchld(ctx, init, n=50):
    hangs = bad = 0
    for i in range(n):
        d = f"{0.005 + (i % 10) * 0.001:.4f}"
        rc = Run(init.argv, ["bash", "-c", f"bash -c 'sleep 0.01 & kill -9 $BASHPID'; sleep {d}"]).wait(timeout=5)
        if rc == "TIMEOUT":
            hangs += 1
        elif rc != 0:
            bad += 1
    return (PASS if hangs == bad == 0 else FAIL), f"x{n}: hangs={hangs} wrong_rc={bad}"


def sigset_names(hexmask):
    m = int(hexmask, 16)
    return sorted(signal.Signals(i + 1).name for i in range(31) if m >> i & 1)


def child_sigstate(init_argv, preexec_fn=None):
    r = Run(init_argv, ["grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"], preexec_fn=preexec_fn)
    out = r.p.stdout.read().decode()
    r.wait()
    d = dict(l.split(":\t") for l in out.strip().splitlines())
    return sigset_names(d.get("SigBlk", "0")), sigset_names(d.get("SigIgn", "0"))


def case_sigmask_inherited(ctx, init):
    def pre():
        for s in (signal.SIGTTOU, signal.SIGUSR2, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTIN, signal.SIGILL, signal.SIGTERM})
    blk, ign = child_sigstate(init.argv, pre)
    ok = blk == ["SIGILL", "SIGTERM", "SIGTTIN"] and ign == ["SIGINT", "SIGTTOU", "SIGUSR2"]
    return (PASS if ok else FAIL), f"blocked={','.join(blk) or '-'} ignored={','.join(ign) or '-'}"


def case_sigmask_clean(ctx, init):
    blk, ign = child_sigstate(init.argv)
    return (PASS if not blk and not ign else FAIL), f"blocked={','.join(blk) or '-'} ignored={','.join(ign) or '-'}"


def gone(fd):
    """Shell: wait (at most 3 s) until the init ($PPID) has closed fd, which it
    may do after it forks; an init that keeps it spends the 3 s."""
    return f"i=0; while [ -e /proc/$PPID/fd/{fd} ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done"


def case_cwd(ctx, init):
    # the init may chdir after it forks: up to 3 s for it (anchors that do not spend them)
    r = Run(init.argv, ["sh", "-c", "i=0; while [ \"$(readlink /proc/$PPID/cwd)\" != / ] && [ $i -lt 30 ]; do "
                        "sleep 0.1; i=$((i+1)); done; readlink /proc/$$/cwd; readlink /proc/$PPID/cwd"], cwd="/usr")
    child, initcwd = r.readline(6), r.readline(3)
    r.wait()
    return (PASS if child == "/usr" and initcwd == "/" else FAIL), f"child={child} init={initcwd}"


def case_fds(ctx, init):
    extra = os.open("/dev/null", os.O_RDONLY)
    high = 57
    os.dup2(extra, high)
    os.close(extra)
    r = Run(init.argv, ["sh", "-c", f"{gone(high)}; {ctx.helper} fds $PPID; ls /proc/$$/fd | tr '\\n' ' '"],
            pass_fds=(high,))
    init_fds = (r.readline(6) or "").split()
    child_fds = (r.readline(3) or "").split()
    r.wait()
    os.close(high)
    ok = str(high) not in init_fds and str(high) in child_fds
    return (PASS if ok else FAIL), f"init holds {' '.join(init_fds)}; child got fd {high}: {str(high) in child_fds}"


def case_fds_no_close_range(ctx, init):
    """Without close_range (kernels before 5.9; its CLOEXEC flag is 5.11;
    or a runtime's filter that refuses it with EPERM): ward still keeps
    none of the inherited descriptors, and an [agent] gets fds 0-2 only."""
    if not init.is_ward:
        return NA, "ward's fallback"
    bad, notes = [], []
    high = 57
    for err, name in ((38, "ENOSYS"), (1, "EPERM")):
        for agent in (False, True):
            extra = os.open("/dev/null", os.O_RDONLY)
            os.dup2(extra, high)
            os.close(extra)
            argv = [ctx.helper, "no-close-range", str(err)] + \
                (with_config(init, "[agent]\numask = 0022\nenv_pass = PATH\n") if agent else init.argv)
            r = Run(argv, ["sh", "-c", f"{gone(high)}; {ctx.helper} fds $PPID; {ctx.helper} fds $$"],
                    pass_fds=(high,))
            init_fds = (r.readline(6) or "").split()
            child_fds = sorted((r.readline(3) or "").split(), key=lambda x: int(x) if x.isdigit() else -1)
            rc = r.wait()
            os.close(high)
            what = f"{name} {'[agent]' if agent else 'plain'}"
            want_child = (str(high) not in child_fds and child_fds == ["0", "1", "2"]) if agent \
                else str(high) in child_fds
            if rc != 0 or str(high) in init_fds or not want_child:
                bad.append(f"{what}: rc={rc} init holds {' '.join(init_fds)}; child {' '.join(child_fds)}")
            else:
                notes.append(f"{what}: child {' '.join(child_fds)}")
    return (PASS if not bad else FAIL), "; ".join(bad or notes) + " (ward holds none)"


def case_stream(ctx, init):
    data = os.urandom(64 << 20)
    r = Run(init.argv, ["cat"], stdin=subprocess.PIPE)
    out, _ = r.p.communicate(data, timeout=60)
    rc = r.p.returncode
    ok = rc == 0 and hashlib.sha256(out).digest() == hashlib.sha256(data).digest()
    return (PASS if ok else FAIL), f"64 MiB through cat: equal={ok} rc={rc}"


def case_stdin_eof(ctx, init):
    r = Run(init.argv, ["sh", "-c", "cat; echo eof"], stdin=subprocess.PIPE)
    out, _ = r.p.communicate(b"x\n", timeout=10)
    rc = r.p.returncode
    return (PASS if rc == 0 and out == b"x\neof\n" else FAIL), f"rc={rc} out={out!r}"


def case_own_pgrp(ctx, init):
    r = Run(init.argv, ["sh", "-c", "cut -d' ' -f1,5 /proc/$$/stat; cut -d' ' -f5 /proc/$PPID/stat"])
    mine, initpg = (r.readline(3) or "").split(), r.readline(3)
    r.wait()
    ok = len(mine) == 2 and mine[0] == mine[1] and initpg != mine[1]
    return (PASS if ok else FAIL), f"child pid/pgid={'/'.join(mine)} init pgid={initpg}"


def case_tty_job_control(ctx, init):
    master, slave = os.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(slave, termios.TCSANOW, attrs)

    def pre():
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    r = Run(init.argv, ["bash", "--norc", "--noprofile", "-i"], stdin=slave, stdout=slave,
            stderr=slave, start_new_session=True, preexec_fn=pre)
    os.close(slave)
    os.write(master, b'echo "flags are: [[$-]]"\nexit 0\n')
    buf = b""
    end = time.time() + 5
    while time.time() < end:
        rl, _, _ = select.select([master], [], [], 0.3)
        if rl:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
        elif r.p.poll() is not None:
            break
    rc = r.wait(timeout=5)
    os.close(master)
    txt = buf.decode(errors="replace")
    m = re.search(r"flags are: \[\[([a-zA-Z]+)\]\]", txt)
    ok = bool(m and "m" in m.group(1)) and "no job control" not in txt and rc == 0
    return (PASS if ok else FAIL), f"flags={m.group(1) if m else None} rc={rc}"


def case_subreaper(ctx, init):
    r = Run(init.subreaper_argv, [ctx.helper, "orphans", "500"], pid1=False)
    line = r.readline(20)
    rc = r.wait(timeout=20)
    return (PASS if rc == 0 else FAIL), f"{line} rc={rc}" + (" (with -s)" if init.subreaper_argv != init.argv else "")


def leftover(ctx, init_argv, pid1, secs, extra_wait=0.0):
    fd, log = tempfile.mkstemp(prefix="ward-leftover-")
    os.close(fd)
    r = Run(init_argv, [ctx.helper, "leave-child", log, str(secs)], pid1=pid1)
    line = r.readline(5) or ""
    gc = int(line.split()[1]) if line.startswith("ready") else None
    rc = r.wait(timeout=20)
    elapsed = time.monotonic() - r.t0
    time.sleep(0.1 + extra_wait)
    got = open(log).read().split()
    os.unlink(log)
    # pid1: the grandchild's pid is in the namespace; outside it is gone with it
    survived = (not pid1) and gc is not None and alive(gc)
    if survived:
        kill_quietly(gc, signal.SIGKILL)
    return rc, got, survived, elapsed


def case_leftovers_pid1(ctx, init):
    rc, got, _, _ = leftover(ctx, init.argv, True, 0)
    ok = rc == 3 and "TERM" in got
    return (PASS if ok else FAIL), f"rc={rc}; grandchild got {' '.join(got) or 'nothing'} before teardown"


def case_leftovers_subreaper(ctx, init):
    bystander = subprocess.Popen(["sleep", "30"])
    rc, got, survived, _ = leftover(ctx, init.subreaper_argv, False, 0)
    outsider_ok = bystander.poll() is None
    bystander.kill()
    bystander.wait()
    ok = rc == 3 and "TERM" in got and not survived and outsider_ok
    return (PASS if ok else FAIL), (f"rc={rc}; grandchild got {' '.join(got) or 'nothing'}, "
                                   f"survived={survived}; unrelated process untouched={outsider_ok}")


def case_forking_leftover(ctx, init):
    """A leftover that keeps forking while it is killed: a child born between
    the init's listing of its descendants and its signal is in no list. As a
    subreaper, the init must look again until a pass finds none to kill."""
    argv = with_config(init, "[supervise]\ngrace = 300ms\n")
    if not argv:
        return NA, "no grace period"
    fd, progress = tempfile.mkstemp(prefix="ward-forker-")
    os.close(fd)
    most = 4999

    def session(sid):
        """the spawner's session: itself and every child it forked"""
        found = []
        for d in os.listdir("/proc"):
            try:
                if d.isdigit() and int(open(f"/proc/{d}/stat").read().rpartition(")")[2].split()[3]) == sid:
                    found.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
        return found

    r = Run(argv, [ctx.helper, "forker", str(most), progress], pid1=False)
    line = r.readline(10) or ""
    rc = r.wait(timeout=30)
    sid = int(line.split()[1]) if line.startswith("ready") else None
    time.sleep(0.3)
    left = [p for p in session(sid) if alive(p)] if sid else []
    for _ in range(50):  # cleanup, until a pass finds none
        rest = session(sid) if sid else []
        if not rest:
            break
        for p in rest:
            kill_quietly(p, signal.SIGKILL)
        time.sleep(0.02)
    try:
        forked = int(open(progress).read().strip() or 0)
    except ValueError:
        forked = 0
    os.unlink(progress)
    # the scenario needs the spawner still forking when it was killed
    mid = 0 < forked < most
    ok = sid is not None and rc == 3 and mid and not left
    return (PASS if ok else FAIL), (f"rc={rc}; the spawner forked {forked} of {most} before it was killed; "
                                   f"{len(left)} of its processes outlived the init"
                                   + ("" if sid else "; the helper never got ready"))


def case_grace_escalation(ctx, init):
    argv = with_config(init, "[supervise]\ngrace = 1s\n")
    if not argv:
        return NA, "no grace period"
    rc, got, survived, elapsed = leftover(ctx, argv, False, 60)
    ok = rc == 3 and "TERM" in got and not survived and elapsed >= 1.0
    return (PASS if ok else FAIL), f"rc={rc}; grandchild ignoring TERM got {' '.join(got) or 'nothing'}, then KILL after {elapsed:.1f}s (grace 1s), survived={survived}"


def case_term_grace_kill(ctx, init):
    argv = with_config(init, "[supervise]\ngrace = 1s\n")
    if not argv:
        return NA, "no grace period"
    r = Run(argv, [ctx.helper, "ignore-term", "60"])
    r.readline(5)
    t0 = time.monotonic()
    r.kill(signal.SIGTERM)
    rc = r.wait(timeout=15)
    dt = time.monotonic() - t0
    return (PASS if rc == 137 and dt >= 1.0 else FAIL), f"child ignores TERM: rc={rc} after {dt:.1f}s (grace 1s)"


def case_survives_kill(ctx, init):
    """An agent that survives SIGKILL (frozen by a cgroup freezer, as in
    uninterruptible sleep): after the grace and 2 s more, ward stops
    without it (137) instead of waiting for ever. Run as a subreaper: a
    PID 1's exit waits in the kernel for every task of its namespace."""
    if not init.is_ward:
        return NA, "ward's give-up"
    if not kernel.freezer_usable():
        return "SKIP", "no writable cgroup v1 freezer to freeze the agent with"
    with kernel.Freezer("ward-test") as fz:
        # the frozen sleep holds stderr too: ward's goes to a file
        errf = tempfile.TemporaryFile()
        r = Run(with_config(init, "[supervise]\ngrace = 1s\n"),
                ["sh", "-c", f"echo $$ > {fz.tasks} && echo ready && exec sleep 100 >/dev/null"],
                pid1=False, stderr=errf)
        line = r.readline(5)
        fz.freeze()
        t0 = time.monotonic()
        r.kill(signal.SIGTERM)
        rc = r.wait(timeout=15)
        took = time.monotonic() - t0
        errf.seek(0)
        err = errf.read().decode(errors="replace")
    ok = line == "ready" and rc == 137 and 2.5 <= took < 12 and "survives SIGKILL" in err
    return (PASS if ok else FAIL), f"rc={rc} {took:.1f} s after TERM (grace 1 s + 2 s); " + \
        (err.strip().splitlines()[-1] if err.strip() else "no message")


def case_rewrite(ctx, init):
    if init.is_ward:
        argv = with_config(init, "[supervise]\nsignal_rewrite = INT:TERM\nsignal_rewrite = HUP:0\n")
    elif init.rewrite_flags:
        argv = init.rewrite_flags
    else:
        return NA, "no rewrite option"
    r = catcher(argv)
    if not r:
        return FAIL, "child not ready"
    r.kill(signal.SIGINT)
    first = r.readline(3.0)
    r.kill(signal.SIGHUP)
    r.kill(signal.SIGUSR1)
    second = r.readline(3.0)
    r.abort()
    third = None
    if init.is_ward:
        # TERM:0 drops TERM: no stop begins, so no KILL when the grace is over
        r = catcher(with_config(init, "[supervise]\nsignal_rewrite = TERM:0\ngrace = 1s\n"))
        if not r:
            return FAIL, "child not ready (TERM:0)"
        r.kill(signal.SIGTERM)
        time.sleep(1.5)
        r.kill(signal.SIGUSR2)
        third = r.readline(3.0)
        r.abort()
    ok = first == "15" and second == "10" and (not init.is_ward or third == "12")
    return (PASS if ok else FAIL), f"INT arrived as {first}; HUP dropped, next was {second}" + \
        (f"; TERM dropped, 1.5 s later (grace 1s) USR2 still arrived: {third}" if init.is_ward else "")


def runs_logged(path):
    try:
        return [int(x) for x in open(path).read().split()]
    except FileNotFoundError:
        return []


def runs_log():
    """An empty file in the run's directory that each run of the child appends a line to."""
    fd, log = tempfile.mkstemp(prefix="ward-runs-", dir=scratch())
    os.close(fd)
    return log


def case_restart_on_failure(ctx, init):
    log = runs_log()
    argv = with_config(init, "[supervise]\nrestart = on-failure\nrestart_delay = 100ms\n")
    if not argv:
        return NA, "no restart"
    script = f'date +%s%N >> {log}; [ $(wc -l < {log}) -ge 3 ]'
    rc = Run(argv, ["sh", "-c", script]).wait(timeout=20)
    runs = len(runs_logged(log))
    os.unlink(log)
    return (PASS if rc == 0 and runs == 3 else FAIL), f"failed twice, then succeeded: runs={runs} rc={rc}"


def case_restart_fork_fails(ctx, init):
    """A restart whose fork fails (a pids cgroup at its limit): ward exits
    1 and says why, not with the status of the run before it (0 here)."""
    if not init.is_ward:
        return NA, "ward's restart"
    if not kernel.pids_usable():
        return "SKIP", "no writable cgroup v1 pids controller to make the fork fail with"
    with kernel.PidsGroup("ward-test") as pg:
        argv = with_config(init, "[supervise]\nrestart = always\nrestart_delay = 100ms\n")
        r = Run(argv, ["sh", "-c", "echo ready; exec sleep 1"], pid1=False, preexec_fn=pg.join_self)
        line = r.readline(5)
        pg.limit(1)  # ward alone, once the agent is gone: its next fork fails
        rc = r.wait(timeout=20)
        err = r.stderr()
    said = [l for l in err.splitlines() if "cannot start" in l]
    ok = line == "ready" and rc == 1 and said
    return (PASS if ok else FAIL), f"first run {line!r}, then exit {rc}; {said[0] if said else err.strip()[-200:]!r}"


def case_restart_backoff_limit(ctx, init):
    log = runs_log()
    argv = with_config(init, "[supervise]\nrestart = always\nrestart_delay = 200ms\nrestart_limit = 3\n")
    if not argv:
        return NA, "no restart"
    r = Run(argv, ["sh", "-c", f"date +%s%N >> {log}; exit 4"])
    rc = r.wait(timeout=30)
    err = r.stderr()
    t = runs_logged(log)
    os.unlink(log)
    gaps = [(b - a) / 1e6 for a, b in zip(t, t[1:])]
    # the timer never fires early: each gap is at least the doubled delay
    mins = [200, 400, 800]
    ok = rc == 4 and len(t) == 4 and all(g >= m - 5 for g, m in zip(gaps, mins)) and "restart_limit" in err
    return (PASS if ok else FAIL), f"runs={len(t)} gaps_ms={[round(g) for g in gaps]} (>= 200,400,800) rc={rc}"


def case_restart_not_after_eof(ctx, init):
    log = runs_log()
    argv = with_config(init, "[supervise]\nrestart = always\nrestart_delay = 50ms\n")
    if not argv:
        return NA, "no restart"
    r = Run(argv, ["sh", "-c", f"cat >/dev/null; date +%s%N >> {log}"], stdin=subprocess.PIPE)
    r.p.stdin.close()
    rc = r.wait(timeout=10)
    runs = len(runs_logged(log))
    os.unlink(log)
    return (PASS if rc == 0 and runs == 1 else FAIL), f"stdin closed: runs={runs} rc={rc}"


def case_restart_always_then_term(ctx, init):
    log = runs_log()
    argv = with_config(init, "[supervise]\nrestart = always\nrestart_delay = 50ms\nrestart_limit = 0\n")
    if not argv:
        return NA, "no restart"
    r = Run(argv, ["sh", "-c", f"date +%s%N >> {log}; sleep 0.05"], stdin=subprocess.PIPE)
    for _ in range(400):  # three runs, however slowly they come
        if len(runs_logged(log)) >= 3:
            break
        time.sleep(0.05)
    r.kill(signal.SIGTERM)
    rc = r.wait(timeout=10)
    runs = len(runs_logged(log))
    time.sleep(0.3)
    after = len(runs_logged(log))
    r.p.stdin.close()
    os.unlink(log)
    ok = runs >= 3 and after == runs and rc in (0, 143)
    return (PASS if ok else FAIL), f"runs before TERM={runs}, after TERM no more runs={after == runs}, rc={rc}"


BAD_CONFIGS = [
    ("[supervise]\ngrace = 10x\n", r"^ward: \S+:2: grace: '10x': unknown unit"),
    ("[ward]\nlog_level = loud\n", r"^ward: \S+:2: log_level: 'loud': expected"),
    ("[ward]\nnope = 1\n", r"^ward: \S+:2: nope: unknown key in \[ward\]"),
    ("[wardd]\n", r"^ward: \S+:1: \[wardd\]: unknown section"),
    ("[ward]\nlog_level = info\n[landlock]\n", r"^ward: \S+:3: \[agent\] user: required when \[landlock\]"),
    ("[mcp]\n", r"^ward: \S+:1: \[mcp\]: source is required"),
    ("[file ext]\ntarget = /x\n", r"^ward: \S+:1: \[file ext\]: source is required"),
    ("[route m]\nlisten = 127.0.0.1:7900\n", r"^ward: \S+:1: \[route m\]: upstream is required"),
    ("[agent]\nuser = no-such-user-here\n", r"^ward: \S+:2: user: 'no-such-user-here': no such user in /etc/passwd"),
    ("[agent]\nuser = root\n", r"^ward: \S+:2: user: 'root': that is uid 0; set allow_root = yes"),
    ("[supervise]\nrestart = always\nrestart = never\n", r"^ward: \S+:3: restart: set twice"),
    ("[supervise]\nthis is not ini\n", r"^ward: \S+:2: syntax: "),
    ("[supervise]\nsignal_rewrite = KILL:TERM\n", r"^ward: \S+:2: signal_rewrite: 'KILL:TERM': KILL and STOP"),
    ("[agent]\nrlimit_nofile = 10:5\n", r"^ward: \S+:2: rlimit_nofile: '10:5': soft limit exceeds"),
    ("[agent]\ncommand = 'unterminated\n", r"^ward: \S+:2: command: .*unterminated quote"),
]


def case_bad_config(ctx, init):
    if not init.is_ward:
        return NA, "no config file"
    bad = []
    marker = tempfile.mktemp(prefix="ward-started-")
    for text, pattern in BAD_CONFIGS:
        argv = with_config(init, text)
        r = Run(argv, ["sh", "-c", f"touch {marker}"], pid1=False, wait_ready=False)
        rc, err = r.wait(), r.stderr()
        lines = err.strip().splitlines()
        if rc != 2 or len(lines) != 1 or not re.search(pattern, lines[0]) or os.path.exists(marker):
            bad.append(f"{text.strip()!r}: rc={rc} {err.strip()!r}")
    missing = Run(init.cmd + ["-c", "/nonexistent.conf", "--"], ["true"], pid1=False, wait_ready=False)
    rc = missing.wait()
    if rc != 2:
        bad.append(f"missing -c file: rc={rc}")
    return (PASS if not bad else FAIL), f"{len(BAD_CONFIGS) + 1} bad configs: exit 2, one line, nothing started" if not bad else "; ".join(bad)


def case_rlimit_above_hard(ctx, init):
    """rlimit_nofile above the runtime's hard limit without CAP_SYS_RESOURCE:
    refused before anything starts (not when the agent execs)."""
    if not init.is_ward:
        return NA, "no rlimits"
    marker = tempfile.mktemp(prefix="ward-started-")
    argv = ["sh", "-c", 'ulimit -n 1024 && exec setpriv --bounding-set -sys_resource "$@"', "sh"] + \
        with_config(init, "[agent]\nrlimit_nofile = 4096\n")
    r = Run(argv, ["sh", "-c", f"touch {marker}"], pid1=False, wait_ready=False)
    rc, err = r.wait(), r.stderr().strip()
    ok = rc == 2 and len(err.splitlines()) == 1 and "CAP_SYS_RESOURCE" in err and not os.path.exists(marker)
    return (PASS if ok else FAIL), f"rc={rc} {err!r}"


def case_private_files(ctx, init):
    """[file NAME]: sources read once (fd and path), written for the agent
    user with the mode, the fd gone before the agent runs; a bad source
    writes no target and starts nothing."""
    if not init.is_ward:
        return NA, "no [file] sections"
    d = tempfile.mkdtemp(prefix="ward-files-")
    os.chmod(d, 0o755)
    try:
        src = os.path.join(d, "notes.src")
        with open(src, "w") as f:
            f.write("from a path\n")
        r_fd, w_fd = os.pipe()
        os.write(w_fd, b"export const ext = 1;\n")
        os.close(w_fd)
        os.dup2(r_fd, 7)
        os.close(r_fd)
        t1, t2 = os.path.join(d, "agent", "ext.mjs"), os.path.join(d, "agent", "notes.md")
        conf = (f"[agent]\nuser = 65534:65534\n[file ext]\nsource = fd:7\ntarget = {t1}\nmode = 0400\n"
                f"[file notes]\nsource = {src}\ntarget = {t2}\n")
        r = Run(with_config(init, conf),
                ["sh", "-c", f'stat -c "%u %a" {t1} {t2}; cat {t1} {t2}; if test -e /proc/self/fd/7; then echo fd7-open; fi'],
                pid1=False, pass_fds=(7,), wait_ready=False)
        rc = r.wait()
        os.close(7)
        lines = []
        while (line := r.readline(2.0)) is not None:
            lines.append(line)
        out = "\n".join(lines)
        want = "65534 400\n65534 600\nexport const ext = 1;\nfrom a path\n"
        bad = []
        if rc != 0 or out.strip() != want.strip():
            bad.append(f"rc={rc} out={out!r} err={r.stderr().strip()!r}")
        # a descriptor that is not there: exit 2, one line, no target written, nothing run
        shutil.rmtree(os.path.join(d, "agent"))
        marker = os.path.join(d, "started")
        conf = (f"[agent]\nuser = 65534:65534\n[file notes]\nsource = {src}\ntarget = {t2}\n"
                f"[file ext]\nsource = fd:9\ntarget = {t1}\n")
        r = Run(with_config(init, conf), ["touch", marker], pid1=False, wait_ready=False)
        rc, err = r.wait(), r.stderr().strip()
        if rc != 2 or len(err.splitlines()) != 1 or "fd:9" not in err or os.path.exists(t2) or os.path.exists(marker):
            bad.append(f"bad fd: rc={rc} {err!r} notes written: {os.path.exists(t2)}")
        # a source that cannot be read (a directory): an error, not an empty file
        conf = f"[agent]\nuser = 65534:65534\n[file notes]\nsource = {d}\ntarget = {t2}\n"
        r = Run(with_config(init, conf), ["touch", marker], pid1=False, wait_ready=False)
        rc, err = r.wait(), r.stderr().strip()
        if rc != 2 or len(err.splitlines()) != 1 or "directory" not in err or os.path.exists(t2) \
                or os.path.exists(marker):
            bad.append(f"directory source: rc={rc} {err!r} written: {os.path.exists(t2)}")
        # an error found after the [file] sources were read (a bad mcp.json, a route's
        # secret file missing): exit 2 and still no target written (they were, before)
        bad_json = os.path.join(d, "mcp.json")
        with open(bad_json, "w") as f:
            f.write('{"mcpServers": {"x": {"url": "http://127.0.0.1:6767/mcp"}')
        for what, extra, word in (
                ("bad mcp.json", f"[mcp]\nsource = {bad_json}\ntarget = {d}/agent/mcp.json\n"
                                 "upstream = unix:/run/nowhere.sock\n", "[mcp]"),
                ("missing route secret", "[ward]\nbridge_user = 65533\n[route m]\nlisten = 127.0.0.1:17999\nupstream = unix:/run/nowhere.sock\n"
                                         f"path = /\nheader = Authorization: @{d}/no-such-secret\n", "no-such-secret")):
            conf = f"[agent]\nuser = 65534:65534\n[file notes]\nsource = {src}\ntarget = {t2}\n" + extra
            r = Run(with_config(init, conf), ["touch", marker], pid1=False, wait_ready=False)
            rc, err = r.wait(), r.stderr().strip()
            if rc != 2 or len(err.splitlines()) != 1 or word not in err or os.path.exists(t2) \
                    or os.path.exists(marker):
                bad.append(f"{what}: rc={rc} {err!r} notes written: {os.path.exists(t2)}")
        return (PASS if not bad else FAIL), ("two files for uid 65534 (0400, 0600), fd 7 closed; a missing "
                                             "fd, a directory as source, a bad mcp.json or a missing route "
                                             "secret: exit 2, nothing written"
                                             if not bad else "; ".join(bad))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def case_materialise_faults(ctx, init):
    """A [file] target on a read-only and on a full filesystem: one line,
    exit 2, the agent not started, no temporary file left behind."""
    if not init.is_ward:
        return NA, "no materialisation"
    d = tempfile.mkdtemp(prefix="ward-mfault-")
    os.chmod(d, 0o755)
    bad = []
    try:
        src = os.path.join(d, "src")
        with open(src, "wb") as f:
            f.write(os.urandom(64 << 10))
        for kind, opts in (("read-only", "ro,size=1m"), ("full", "size=16k")):
            mnt = os.path.join(d, kind)
            os.mkdir(mnt)
            subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", mnt], check=True)
            try:
                marker = os.path.join(d, "started")
                conf = f"[agent]\nuser = 65534:65534\n[file big]\nsource = {src}\ntarget = {mnt}/big\n"
                r = Run(with_config(init, conf), ["touch", marker], pid1=False, wait_ready=False)
                rc, err = r.wait(), r.stderr().strip()
                left = os.listdir(mnt)
                if rc != 2 or len(err.splitlines()) != 1 or os.path.exists(marker) or left:
                    bad.append(f"{kind}: rc={rc} {err!r} left={left} started={os.path.exists(marker)}")
            finally:
                subprocess.run(["umount", mnt])
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return (PASS if not bad else FAIL), ("read-only and full filesystems: exit 2, one line, nothing "
                                         "started, nothing left" if not bad else "; ".join(bad))


def case_writable_dirs(ctx, init):
    """[agent] writable: a read-only, a full, a root-owned and an uncovered
    directory each stop ward before the agent starts (one line naming the
    directory and the fix); good directories let it run."""
    if not init.is_ward:
        return NA, "no [agent] writable"
    d = tempfile.mkdtemp(prefix="ward-wr-")
    os.chmod(d, 0o755)
    bad, mounts = [], []
    try:
        for kind, opts in (("ro", "ro,size=4m"), ("full", "size=2m"), ("ok", "size=4m")):
            mnt = os.path.join(d, kind)
            os.mkdir(mnt)
            subprocess.run(["mount", "-t", "tmpfs", "-o", opts + ",mode=1777", "tmpfs", mnt], check=True)
            mounts.append(mnt)
        with open(os.path.join(d, "full", "fill"), "wb") as f:
            try:
                f.write(b"x" * (2 << 20))
            except OSError:
                pass
        rootdir = os.path.join(d, "root-owned")
        os.mkdir(rootdir, 0o755)
        marker = os.path.join(d, "ok", "started")
        cases = [
            (f"{d}/ro", 3, "read-only filesystem", ""),
            (f"{d}/full", 3, "is full", ""),
            (rootdir, 3, "uid 65534 cannot create files there", ""),
            (f"{d}/nonexistent", 3, "No such file or directory", ""),
            (f"{d}/ok", 2, "no [landlock] write rule covers it",
             f"[landlock]\nread = /usr /proc\nwrite = {d}/full\n"),
        ]
        for path, want_rc, want_msg, extra in cases:
            conf = f"[agent]\nuser = 65534:65534\nwritable = {path}\n{extra}"
            r = Run(with_config(init, conf), ["touch", marker], pid1=False, wait_ready=False)
            rc, err = r.wait(), r.stderr().strip()
            if rc != want_rc or len(err.splitlines()) != 1 or want_msg not in err or path not in err \
                    or os.path.exists(marker):
                bad.append(f"{path}: rc={rc} {err!r} started={os.path.exists(marker)}")
        # a root agent has no capabilities: the probe may not use root's
        # CAP_DAC_OVERRIDE to write where the agent cannot
        other = os.path.join(d, "nobody-owned")
        os.mkdir(other, 0o755)
        os.chown(other, 65534, 65534)
        conf = f"[agent]\nuser = root\nallow_root = yes\nwritable = {other}\n"
        r = Run(with_config(init, conf), ["touch", marker], pid1=False, wait_ready=False)
        rc, err = r.wait(), r.stderr().strip()
        if rc != 3 or len(err.splitlines()) != 1 or "uid 0 cannot create files there" not in err or \
                os.path.exists(marker):
            bad.append(f"root agent, {other}: rc={rc} {err!r} started={os.path.exists(marker)}")
        conf = f"[agent]\nuser = 65534:65534\nwritable = {d}/ok /tmp\n"
        r = Run(with_config(init, conf), ["touch", marker], pid1=False, wait_ready=False)
        rc = r.wait()
        if rc != 0 or not os.path.exists(marker) or [x for x in os.listdir(f"{d}/ok") if x.startswith(".ward")]:
            bad.append(f"good dirs: rc={rc} started={os.path.exists(marker)} {r.stderr().strip()!r}")
    finally:
        for m in mounts:
            subprocess.run(["umount", m])
        shutil.rmtree(d, ignore_errors=True)
    return (PASS if not bad else FAIL), ("read-only, full, root-owned, missing, not the root agent's: exit 3; "
                                         "not covered by "
                                         "Landlock: exit 2; good: runs, no probe file left"
                                         if not bad else "; ".join(bad))


def case_signal_storm(ctx, init):
    """10 000 signals at the init while the child runs, then SIGSTOP and
    SIGCONT of the child: the init survives and returns the child's code."""
    r = Run(init.argv, ["sh", "-c", 'trap "" USR1 USR2; echo ready; i=0; while [ $i -lt 30 ]; do sleep 0.1; '
                                    'i=$((i+1)); done; exit 7'])
    # the storm starts once the child ignores the signals (it would die of them before)
    if not r.pid or r.readline(10) != "ready":
        r.kill(signal.SIGKILL)
        r.wait()
        return FAIL, "init or child did not start"
    sent = 0
    for i in range(10000):
        try:
            os.kill(r.pid, signal.SIGUSR1 if i % 2 else signal.SIGUSR2)
            sent += 1
        except ProcessLookupError:
            break
    kids = children(r.pid)
    for sig in (signal.SIGSTOP, signal.SIGCONT):
        for k in kids:
            try:
                os.kill(k, sig)
            except ProcessLookupError:
                pass
        time.sleep(0.3)
    rc = r.wait(timeout=30)
    return (PASS if rc == 7 and sent == 10000 else FAIL), f"{sent} signals sent, child stopped and continued, rc={rc}"


def case_version(ctx, init):
    """--version: ward's and every linked library's version, and the
    running kernel's Landlock ABI (compared with the kernel's answer)."""
    if not init.is_ward:
        return NA, "no library versions"
    p = subprocess.run(init.cmd + ["--version"], capture_output=True, text=True, timeout=10)
    lines = p.stdout.splitlines()
    names = [l.split()[0] for l in lines]
    abi = kernel.landlock_abi()
    want_abi = f"kernel Landlock ABI {abi}" if abi > 0 else "kernel Landlock: not available"
    ok = (p.returncode == 0 and names[:7] == ["ward", "libseccomp", "libcap-ng", "inih", "mbedTLS", "jansson",
                                              "http-parser"] and "unknown" not in p.stdout and lines[-1] == want_abi)
    return (PASS if ok else FAIL), " | ".join(lines) + ("" if ok else f" (want {want_abi})")


FORK_BOMB = r"""
import os, sys, time
n = 0
while n < 10000:
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
    except OSError as e:
        print(f"stopped at {n}: {e.strerror}", flush=True)
        break
time.sleep(60)
"""


def uid_procs(uid):
    out = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and os.stat(f"/proc/{d}").st_uid == uid:
                out.append(int(d))
        except OSError:
            pass
    return out


def case_fork_bomb(ctx, init):
    """A fork bomb under rlimit_nproc: stopped by the limit; ward still
    answers TERM, tears the whole tree down and exits 143."""
    if not init.is_ward:
        return NA, "no rlimits"
    uid = 64123
    conf = f"[agent]\nuser = {uid}:{uid}\nrlimit_nproc = 64\n[supervise]\ngrace = 2s\n"
    r = Run(with_config(init, conf), ["/usr/bin/python3", "-c", FORK_BOMB])
    line = r.readline(30) or ""
    before = len(uid_procs(uid))
    r.kill(signal.SIGTERM)
    rc = r.wait(timeout=30)
    time.sleep(0.2)
    left = uid_procs(uid)
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    ok = line.startswith("stopped at") and int(line.split()[2].rstrip(":")) <= 64 and rc == 143 and not left
    return (PASS if ok else FAIL), f"{line!r}; {before} agent processes; TERM -> rc={rc}; left {len(left)}"


def case_churn_100k(ctx, init):
    """100 000 short-lived orphans, 500 at a time (pid_max here is 32768, so
    pids are recycled under the init): every one reaped, no zombie left."""
    r = Run(init.argv, [ctx.helper, "churn", "100000"])
    line = r.readline(120)
    rc = r.wait(timeout=120)
    return (PASS if rc == 0 and line and " zombies 0 " in line else FAIL), f"{line} rc={rc}"


def case_closes_stdout(ctx, init):
    """The agent closes its own stdout and goes on: the init neither dies
    nor stops early; the reader sees EOF; the agent's code comes back."""
    r = Run(init.argv, ["sh", "-c", "echo before; exec >&-; sleep 0.5; exit 3"])
    first = r.readline(5)
    eof = r.at_eof(5)
    rc = r.wait(timeout=10)
    ok = first == "before" and eof and rc == 3
    return (PASS if ok else FAIL), f"read {first!r}, then EOF={eof}; rc={rc}"


def case_child_holds_stdout(ctx, init):
    """The agent exits while its child still holds stdout open: the init
    exits with the agent's code without waiting for that child, which is
    terminated (so the reader gets EOF) rather than left running."""
    r = Run(init.subreaper_argv, ["sh", "-c", "sleep 60 & echo $!; exit 4"], pid1=False)
    pid = r.readline(5)
    rc = r.wait(timeout=30)
    eof = r.at_eof(5)
    gone = False
    for _ in range(50 if pid and pid.isdigit() else 0):  # it may still be closing its files
        gone = not alive(int(pid))
        if gone:
            break
        time.sleep(0.1)
    ok = rc == 4 and eof and gone and pid is not None
    return (PASS if ok else FAIL), f"rc={rc}, stdout EOF={eof}, the child holding stdout gone={gone}"


def case_memory_hog(ctx, init):
    """An agent that allocates without bound, stopped by rlimit_as: it fails
    its allocation and exits; ward, whose own limit is not set, goes on to
    report its code."""
    if not init.is_ward:
        return NA, "no rlimits"
    argv = with_config(init, "[agent]\nrlimit_as = 256M\n")
    r = Run(argv, ["python3", "-c", "import os; b = []\nwhile True: b.append(bytearray(16 << 20))"], pid1=True)
    rc = r.wait(timeout=30)
    err = r.stderr()
    ok = rc == 1 and "MemoryError" in err
    return (PASS if ok else FAIL), f"rc={rc} ({'MemoryError' if 'MemoryError' in err else err.strip()[-120:]!r})"


def case_stderr_unread(ctx, init):
    """stderr that nobody reads, a pipe and a socket (journald, Node's
    child_process give a socket): PID 1 drops log lines rather than
    block, so it still reaps and a TERM still ends it."""
    if not init.is_ward:
        return NA, "ward's own log lines"
    import socket
    bad, notes = [], []
    script = 'i=0; while [ $i -lt 6000 ]; do (sleep 0 &); i=$((i+1)); done; echo spawned; sleep 1000'
    for kind in ("pipe", "socket"):
        if kind == "pipe":
            keep, w = os.pipe()
        else:
            a, b = socket.socketpair()
            keep, w = a.detach(), b.detach()
        try:
            r = Run(with_config(init, "[ward]\nlog_level = debug\n"), ["sh", "-c", script], stderr=w)
            os.close(w)
            line = r.readline(300.0)
            time.sleep(0.5)
            zombies = len([p for p in children(r.pid) if not alive(p)]) if r.pid else -1
            t0 = time.monotonic()
            r.kill(signal.SIGTERM)
            rc = r.wait(timeout=10)
            took = time.monotonic() - t0
            if line != "spawned" or rc == "TIMEOUT" or zombies > 50:
                bad.append(f"{kind}: agent said {line!r}, {zombies} zombies, after TERM rc={rc}")
            else:
                notes.append(f"{kind}: rc={rc} after TERM in {took:.1f} s")
        finally:
            os.close(keep)
    return (PASS if not bad else FAIL), "; ".join(bad or notes) + " (6000 orphans reaped, each a debug line)"


def case_json_logs(ctx, init):
    if not init.is_ward:
        return NA, "no JSON logging"
    argv = with_config(init, "[ward]\nlog_format = json\nlog_level = debug\n")
    r = Run(argv, ["sh", "-c", "exit 5"])
    rc, err = r.wait(), r.stderr()
    lines = [l for l in err.splitlines() if l.strip()]
    try:
        objs = [json.loads(l) for l in lines]
        ok = rc == 5 and len(objs) >= 2 and all({"time", "level", "msg"} <= o.keys() for o in objs)
    except ValueError as e:
        ok, objs = False, [str(e)]
    return (PASS if ok else FAIL), f"{len(lines)} lines, all JSON objects with time/level/msg: {ok}"


def case_vm_mode(ctx, init):
    """PID 1 with no /proc: ward mounts what a VM init needs, then powers
    off. In a child pid namespace the kernel turns reboot(POWER_OFF) into
    the namespace's init dying of SIGINT, which is what we look for. A VM's
    init has kthreadd beside it as pid 2, not its child: nsenter puts a
    process there from outside before the namespace's shell forks."""
    if not init.is_ward:
        return NA, "not a VM init"
    work = tempfile.mkdtemp(prefix="ward-vm-")
    go = os.path.join(work, "go")
    # dash's [ and : are builtins: nothing forks before the flag
    script = (f"while [ ! -e {go} ]; do :; done; umount -l /proc && exec " + " ".join(init.cmd) + " -- sh -c "
              "\"awk '{print \\$2}' /proc/mounts | grep -xE '/proc|/sys|/dev|/dev/pts|/dev/shm|/run|/tmp' | sort | tr '\\n' ' '\"")
    p = subprocess.Popen(["unshare", "-fpm", "--propagation", "private", "sh", "-c", script],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    kthreadd = None
    try:
        sh = []
        for _ in range(1000):
            sh = children(p.pid)
            if sh:
                break
            time.sleep(0.01)
        if not sh:
            return FAIL, "unshare started no shell in 10 s"
        kthreadd = subprocess.Popen(["nsenter", "-t", str(sh[0]), "-p", "--", "sleep", "30"])
        for _ in range(1000):  # nsenter forks into the namespace: that child is its pid 2
            if children(kthreadd.pid):
                break
            time.sleep(0.01)
        open(go, "w").close()
        out, _ = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if kthreadd:
            kthreadd.kill()
            kthreadd.wait()
        shutil.rmtree(work, ignore_errors=True)
    mounts = out.decode().split()
    want = sorted(["/dev", "/dev/pts", "/dev/shm", "/proc", "/run", "/sys", "/tmp"])
    ok = sorted(set(mounts)) == want and p.returncode == -signal.SIGINT
    return (PASS if ok else FAIL), f"mounted {' '.join(sorted(set(mounts)))}; ended by power-off (SIGINT): {p.returncode == -signal.SIGINT}"


def case_pidns_without_proc(ctx, init):
    """PID 1 of a new pid namespace with no /proc mounted (bwrap --as-pid-1
    without --proc) is a container's init, not a VM's: no mounts, the
    command's own status, no power-off. There is no pid 2 beside it, where
    a VM's init has kthreadd."""
    if not init.is_ward:
        return NA, "not a VM init"
    said = []
    # no pid 2 at all; and a pid 2 the shell started before exec'ing ward
    # (its child, where a VM's kthreadd is not)
    for first in ("", "sleep 30 & "):
        script = (first + "umount -l /proc && exec " + " ".join(init.cmd) +
                  " -- sh -c 'test -e /proc/self && echo mounted; exit 7'")
        p = subprocess.run(["unshare", "-fpm", "--propagation", "private", "sh", "-c", script],
                           capture_output=True, timeout=20)
        out, err = p.stdout.decode(), p.stderr.decode()
        said.append((p.returncode == 7 and "mounted" not in out and "powering off" not in err,
                     f"{'with' if first else 'without'} a pid 2: exit {p.returncode} (want 7), "
                     f"/proc mounted for it: {'mounted' in out}, powered off: {'powering off' in err}"))
    return (PASS if all(ok for ok, _ in said) else FAIL), "; ".join(d for _, d in said)


def case_tty_not_controlling(ctx, init):
    """stdin a terminal that is not the init's controlling terminal (a new
    session that never took it): making the child its foreground fails
    with ENOTTY, and the child runs all the same. ward's plain start asks
    posix_spawn for the foreground, which then fails as a whole: ward
    starts the child by fork instead."""
    master, slave = os.openpty()
    r = Run(init.argv, ["sh", "-c", "echo ran; exit 5"], stdin=slave, start_new_session=True)
    os.close(slave)
    out = r.readline(5)
    rc = r.wait(timeout=5)
    os.close(master)
    ok = out == "ran" and rc == 5
    return (PASS if ok else FAIL), f"output={out!r} rc={rc}"


def case_std_fds_closed(ctx, init):
    """A runtime that leaves 0, 1 and 2 closed: ward's own descriptors do
    not take their numbers. With stderr closed, the evidence file took fd 2
    and ward's log lines were written into it; with stdin and stdout closed,
    a bridge listener took 0 and the bridge's dup2 of /dev/null replaced it.
    Evidence stays one JSON document, and the route still answers."""
    if not init.is_ward:
        return NA, "ward's own descriptors"
    d = tempfile.mkdtemp(dir=scratch())
    os.chmod(d, 0o755)  # the bridge's own user reaches the upstream's socket
    ev = os.path.join(d, "ev.json")
    argv = with_config(init, f"[ward]\nlog_level = debug\nevidence = {ev}\n")
    p = subprocess.run(["sh", "-c", 'exec "$@" 2>&-', "sh"] + argv + ["true"], capture_output=True, timeout=20)
    try:
        doc = json.load(open(ev))
        ev_ok = isinstance(doc, dict)
    except (OSError, ValueError) as e:
        doc, ev_ok = repr(e), False
    said = [f"stderr closed: exit {p.returncode}, evidence a JSON object: {ev_ok}"]
    # stdin and stdout closed, stderr a pipe: the route answers a request
    port = free_port()
    sock = os.path.join(d, "up.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(sock)
    os.chmod(sock, 0o666)
    srv.listen(4)

    def serve():  # the bridge's health check connects first
        try:
            while True:
                c, _ = srv.accept()
                if c.recv(65536):
                    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                c.close()
        except OSError:
            pass
    threading.Thread(target=serve, daemon=True).start()
    argv = with_config(init, f"[route r]\nlisten = 127.0.0.1:{port}\nupstream = unix:{sock}\npath = /\n")
    client = ("import socket,sys\ns=socket.create_connection(('127.0.0.1',%d),timeout=5)\n"
              "s.sendall(b'GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')\nd=b''\n"
              "while True:\n  b=s.recv(4096)\n  if not b: break\n  d+=b\n"
              "sys.exit(0 if d.endswith(b'ok') else 9)\n") % port
    p = subprocess.run(["sh", "-c", 'exec "$@" <&- >&-', "sh"] + argv + [sys.executable, "-c", client],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
    srv.close()
    err = p.stderr.decode(errors="replace")
    said.append(f"stdin and stdout closed: the agent's request through the route answered (exit {p.returncode}), "
                f"the audit line on stderr: {'route=r' in err}")
    ok = ev_ok and p.returncode == 0 and "route=r" in err
    return (PASS if ok else FAIL), "; ".join(said) + ("" if ok else f"\n{err[-600:]}")


CASES = [
    ("B1", "exit code propagates (sample of 0..255)", case_exit_codes),
    ("B2", "child killed by signal N -> 128+N", case_signal_deaths),
    ("B3", "exec ENOENT -> 127, EACCES -> 126", case_exec_failures),
    ("B3b", "exec failure reported, never confused with exit 127", case_exec_error_vs_exit),
    ("B4", "no command -> non-zero + message", case_no_command),
    ("B5", "every signal 1..31 (not KILL/STOP/CHLD) forwarded", case_forward_each_signal),
    ("B6", "real-time signals forwarded", case_realtime_signals),
    ("B7", "TERM to init, child sh -c 'sleep; ...' -> 143", case_term_shell_child),
    ("B8", "INT to init -> 130", case_int_to_init),
    ("B9", "kill -TERM 1 from inside reaches the child", case_kill_1_from_inside),
    ("B10", "3000 orphans reaped as PID 1, 0 zombies", case_orphans_pid1),
    ("B11", "coalesced SIGCHLD never hangs (catatonit#4)", case_coalesced_sigchld),
    ("B12", "child gets the signal mask and ignores init inherited", case_sigmask_inherited),
    ("B13", "from a clean parent, child has nothing blocked/ignored", case_sigmask_clean),
    ("B14", "child keeps the start dir, init moves to /", case_cwd),
    ("B15", "init keeps no inherited fd; child gets it", case_fds),
    ("B16", "stdin/stdout pass-through of a 64 MiB stream", case_stream),
    ("B17", "stdin EOF reaches the child, exit 0", case_stdin_eof),
    ("B18", "child in its own process group", case_own_pgrp),
    ("B19", "pty: interactive bash gets job control", case_tty_job_control),
    ("B20", "not PID 1: subreaper, 500 orphans adopted and reaped", case_subreaper),
    ("B21", "PID 1: leftovers get TERM before init exits with child's code", case_leftovers_pid1),
    ("B22", "not PID 1: leftovers get TERM, unrelated processes untouched", case_leftovers_subreaper),
    ("B23", "leftover ignoring TERM is KILLed after grace", case_grace_escalation),
    ("B49", "not PID 1: a leftover forking while it is killed leaves no process behind", case_forking_leftover),
    ("B24", "TERM to init, child ignores it: KILL after grace -> 137", case_term_grace_kill),
    ("B25", "signal_rewrite INT:TERM, HUP:0 and TERM:0 (drop: no stop begins)", case_rewrite),
    ("B26", "restart=on-failure restarts until success", case_restart_on_failure),
    ("B27", "restart delay doubles; restart_limit gives up", case_restart_backoff_limit),
    ("B51", "a restart whose fork fails (pids cgroup): exit 1, not the last run's status", case_restart_fork_fails),
    ("B28", "never restart once stdin hit EOF", case_restart_not_after_eof),
    ("B29", "restart=always, then TERM stops it for good", case_restart_always_then_term),
    ("B30", "bad config: one line FILE:LINE: key: reason, exit 2, nothing started", case_bad_config),
    ("B33", "rlimit above the runtime's hard limit: one line, exit 2, nothing started", case_rlimit_above_hard),
    ("B34", "[file NAME]: private files for the agent user, read once, all or nothing (with [mcp], [route])",
     case_private_files),
    ("B35", "[file] target on a read-only or full filesystem: exit 2, nothing started or left", case_materialise_faults),
    ("B43", "[agent] writable: read-only, full, foreign or uncovered dirs stop ward first", case_writable_dirs),
    ("B45", "signals 32 and 33 (glibc's internal ones): forwarded, as PID 1 and as subreaper", case_glibc_internal_signals),
    ("B36", "10 000 signals at the init, child stopped and continued: child's code", case_signal_storm),
    ("B37", "--version: the linked libraries and the kernel's Landlock ABI", case_version),
    ("B38", "fork bomb stopped by rlimit_nproc; TERM still tears it all down", case_fork_bomb),
    ("B39", "100 000 short-lived orphans (pids recycled): all reaped, 0 zombies", case_churn_100k),
    ("B40", "child closes its own stdout: reader gets EOF, child's code", case_closes_stdout),
    ("B41", "child exits while its own child holds stdout: exit now, holder terminated", case_child_holds_stdout),
    ("B42", "memory hog stopped by rlimit_as: its code, ward unaffected", case_memory_hog),
    ("B47", "agent survives SIGKILL (frozen): ward stops without it after grace + 2 s", case_survives_kill),
    ("B46", "no close_range (old kernel, a filter's EPERM): inherited fds still closed", case_fds_no_close_range),
    ("B44", "stderr nobody reads (a pipe, a socket): lines dropped, PID 1 never blocks", case_stderr_unread),
    ("B31", "log_format = json: every line a JSON object", case_json_logs),
    ("B32", "VM mode (no /proc, a pid 2 not its child, as kthreadd): mounts proc/sys/dev/run/tmp, powers off",
     case_vm_mode),
    ("B48", "PID 1 of a new pid namespace without /proc: a container's init, not a VM's", case_pidns_without_proc),
    ("B50", "fds 0-2 closed by the runtime: ward's own descriptors do not take them", case_std_fds_closed),
    ("B52", "stdin a terminal that is not the controlling one: the child runs", case_tty_not_controlling),
]

CTX = None


def main():
    global CTX
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--helper", required=True)
    ap.add_argument("--report")
    ap.add_argument("--label", default="", help="suffix of the summary line")
    ap.add_argument("--only", help="substring of case ids/names to run")
    ap.add_argument("--only-ids", help="comma-separated case ids to run")
    ap.add_argument("--inits", default="ward,tini-static,dumb-init,catatonit")
    ap.add_argument("--wrap", default="", help="command ward runs under, e.g. valgrind")
    ap.add_argument("--skip", default="", help="comma-separated case ids to report as SKIP")
    ap.add_argument("--skip-why", default="", help="the reason printed for --skip")
    a = ap.parse_args()
    CTX = a
    a.helper = os.path.abspath(a.helper)
    ward = os.path.abspath(a.ward)
    os.environ.pop("WARD_CONFIG", None)
    if os.path.exists("/etc/ward/ward.conf"):
        print("behave: /etc/ward/ward.conf exists and would be used by ward; remove it", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("behave: SKIP: needs root (pid namespaces, mounts)", file=sys.stderr)
        return 2

    all_inits = {
        "ward": Init("ward", a.wrap.split() + [ward], is_ward=True),
        "tini-static": Init("tini-static", ["tini-static"], ["tini-static", "-s", "--"]),
        "dumb-init": Init("dumb-init", ["dumb-init"], rewrite_flags=["dumb-init", "-r", "2:15", "-r", "1:0", "--"]),
        "catatonit": Init("catatonit", ["catatonit"]),
    }
    inits = []
    for name in a.inits.split(","):
        if name != "ward" and not shutil.which(all_inits[name].cmd[0]):
            print(f"behave: anchor {name} not installed; its column says SKIP", file=sys.stderr)
        inits.append(all_inits[name])

    cases = [c for c in CASES if not a.only or a.only in c[0] or a.only in c[1]]
    if a.only_ids:
        cases = [c for c in cases if c[0] in a.only_ids.split(",")]
    results = {}
    for init in inits:
        installed = init.is_ward or shutil.which(init.cmd[0])
        skip = set(a.skip.split(",")) if a.skip else set()
        for cid, name, fn in cases:
            if not installed:
                res = ("SKIP", "not installed")
            elif cid in skip:
                res = ("SKIP", a.skip_why or "skipped on request")
            else:
                try:
                    res = fn(a, init)
                except Exception as e:  # a harness error is a failure, never a pass
                    res = (FAIL, f"harness error: {e!r}")
            results[(cid, init.name)] = res
            if init.is_ward:
                print(f"{res[0]:4} {cid:4} {name}: {res[1]}", flush=True)

    head = "| case | " + " | ".join(i.name for i in inits) + " |"
    rows = [head, "|" + "---|" * (len(inits) + 1)]
    for cid, name, _ in cases:
        rows.append(f"| {cid} {name} | " + " | ".join(results[(cid, i.name)][0] for i in inits) + " |")
    table = "\n".join(rows)
    details = []
    for init in inits:
        if init.is_ward:
            continue
        details.append(f"\n### {init.name}\n")
        for cid, name, _ in cases:
            st, d = results[(cid, init.name)]
            details.append(f"- {cid} {st}: {d}")
    report = ("# Behaviour report: ward and the anchors\n\nGenerated by tests/behaviour/behave.py; "
              "each init ran the same cases (as PID 1 of a new pid namespace unless the case says otherwise).\n\n"
              + table + "\n\n## Anchor details\n" + "\n".join(details) + "\n")
    print("\n" + table)
    if a.report:
        os.makedirs(os.path.dirname(os.path.abspath(a.report)), exist_ok=True)
        with open(a.report, "w") as f:
            f.write(report)
    ward_res = [results[(cid, "ward")][0] for cid, _, _ in cases if (cid, "ward") in results]
    passed = sum(r == PASS for r in ward_res)
    failed = sum(r == FAIL for r in ward_res)
    skipped = sum(r == "SKIP" for r in ward_res)
    print(f"\nbehaviour{('-' + a.label) if a.label else ''}: {passed} passed, {failed} failed"
          + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
