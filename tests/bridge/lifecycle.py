"""The bridge as a process PID 1 supervises: its first check of the
upstreams, stalls, accept limits, parent death, a freezer, restarts."""
import fcntl
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import kernel  # noqa: E402
from proctree import alive, child_running, children, kill_quietly  # noqa: E402
from results import report  # noqa: E402
from harness import (  # noqa: E402
    BusyUpstream,
    bridge_pids,
    cpu_s,
    exchange,
    recv_all,
    recv_until,
    req,
    status,
    stop_ward,
    wait_bridge,
    wait_port,
)


def health_case(a, work):
    """The start-up health check is advisory: upstreams that hang (a TCP
    listener whose accept queue is full) are tried all at once, within a
    second in all, and reported; the agent still starts. A restarted bridge
    skips the check: PID 1 waits for it only as long as it takes to start."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(0)
    port = ls.getsockname()[1]
    fillers = []
    for _ in range(4):  # the accept queue full: further SYNs go unanswered
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex(("127.0.0.1", port))
        fillers.append(c)
    time.sleep(0.2)
    sock = os.path.join(work, "health.sock")
    up = BusyUpstream(sock)
    conf = os.path.join(work, "health.conf")
    with open(conf, "w") as f:
        for i in range(6):
            f.write(f"[route hang{i}]\nlisten = 127.0.0.1:{17881 + i}\nupstream = tcp:127.0.0.1:{port}\npath = /\n")
        f.write(f"[route fine]\nlisten = 127.0.0.1:17887\nupstream = unix:{sock}\npath = /\n")
    t0 = time.monotonic()
    w = subprocess.Popen([a.ward, "-c", conf, "--evidence", "--", "sh", "-c", "echo started; exec sleep 30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = w.stdout.readline().decode().strip()
        took = time.monotonic() - t0
        report("health: 6 hanging upstreams and 1 that answers: the agent starts, in under 4.5 s",
               line == "started" and took < 4.5, f"agent said {line!r} after {took:.1f} s (it was 5 s, then exit 3)")
        first = bridge_pids(w.pid)
        t1 = time.monotonic()
        if first:
            os.kill(first[0], signal.SIGKILL)
        again = []
        while time.monotonic() - t1 < 5 and not again:
            time.sleep(0.02)
            again = [p for p in bridge_pids(w.pid) if p not in first]
        took = time.monotonic() - t1
        r = exchange(17887, req("GET", "/plain")) if again else b""
        report("health: a killed bridge is back at once (no health check on restart) and serves",
               bool(again) and took < 4.0 and status(r) == 200, f"new bridge after {took:.2f} s, status {status(r)}")
    finally:
        err = stop_ward(w)
        up.close()
        for c in fillers:
            c.close()
        ls.close()
    warned = [l for l in err.splitlines() if "does not answer" in l]
    ev = [json.loads(l) for l in err.splitlines() if l.startswith("{")]
    answering = ev[0].get("bridge", {}).get("upstreams_answering") if ev else None
    report("health: each hanging upstream named in the log, the one that answers counted in the evidence",
           len(warned) == 6 and all("hang" in l for l in warned) and answering == 1,
           f"{len(warned)} warning(s), upstreams_answering {answering}")


def stall_case(a, work):
    """Upstreams that stop without closing: a TLS upstream that accepts and
    never answers the handshake, and one that reads the head of a request
    and then nothing more. Each gets 502 after its 10 s, instead of holding
    the client (and a slot of the shared connection limit) for ever."""
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(16)
    hang_port = hang.getsockname()[1]
    held = []

    def hold():
        """Accept and keep every connection, until the case closes the socket."""
        try:
            while True:
                held.append(hang.accept()[0])
        except OSError:
            pass
    threading.Thread(target=hold, daemon=True).start()
    sock = os.path.join(work, "stall.sock")
    us = socket.socket(socket.AF_UNIX)
    us.bind(sock)
    os.chmod(sock, 0o666)
    us.listen(16)

    def reads_head_only():
        while True:
            try:
                c, _ = us.accept()
            except OSError:
                return
            recv_until(c, b"\r\n\r\n", 4096)
            held.append(c)  # open, never read again

    threading.Thread(target=reads_head_only, daemon=True).start()
    conf = os.path.join(work, "stall.conf")
    with open(conf, "w") as f:
        f.write(f"[route hs]\nlisten = 127.0.0.1:17891\nupstream = tls:127.0.0.1:{hang_port}\npath = /v1/\n"
                f"host = upstream.test\ntls_pin = sha256:{'00' * 32}\n"
                f"[route noread]\nlisten = 127.0.0.1:17892\nupstream = unix:{sock}\npath = /\n")
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "120"], stderr=subprocess.PIPE)
    wait_port(17891)
    res = {}

    def timed(name, port, body_len):
        t0 = time.monotonic()
        c = socket.create_connection(("127.0.0.1", port))
        c.sendall(b"POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % body_len)
        c.setblocking(False)
        chunk, sent = b"b" * 65536, 0
        while sent < body_len and time.monotonic() - t0 < 2:  # until every buffer is full
            try:
                sent += c.send(chunk)
            except BlockingIOError:
                time.sleep(0.05)
        c.settimeout(25)
        r, _ = recv_all(c)
        res[name] = (status(r), time.monotonic() - t0)
        c.close()

    ts = [threading.Thread(target=timed, args=("handshake", 17891, 10)),
          threading.Thread(target=timed, args=("noread", 17892, 64 << 20))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(40)
    ward_up = w.poll() is None
    log = stop_ward(w)
    for c in held:
        c.close()
    hang.close()
    us.close()
    st, took = res.get("handshake", (None, 0))
    report("stall: a TLS upstream that never answers the handshake: 502 after 10 s",
           st == 502 and 9 <= took < 20 and "did not complete the TLS handshake in time" in log,
           f"status {st} after {took:.1f} s (it held the client for ever)")
    st, took = res.get("noread", (None, 0))
    report("stall: an upstream that stops reading the request (open, no answer): 502 after 10 s",
           st == 502 and 9 <= took < 20 and ward_up and "upstream stopped reading the request" in log,
           f"status {st} after {took:.1f} s (it held the client until the upstream closed)")


def accept_case(a, work):
    """No client can be accepted (accept4 fails as when the system is out
    of file descriptors, ENFILE, for ever): the bridge rests its listeners
    instead of spinning on a client that stays queued, and says so once."""
    if not a.helper or not os.path.exists(a.helper):
        report("accept: failing accept4", None, f"the test helper is not built ({a.helper})")
        return
    conf = os.path.join(work, "accept.conf")
    with open(conf, "w") as f:
        f.write("[route acc]\nlisten = 127.0.0.1:17895\nupstream = unix:/nonexistent.sock\npath = /x\n")
    w = subprocess.Popen([a.helper, "no-accept", "23", a.ward, "-c", conf, "--", "sleep", "60"],
                         stderr=subprocess.PIPE)
    spent, bp, queued = -1, [], None
    try:
        wait_port(17895)  # the kernel completes the handshake: the client is queued
        queued = socket.create_connection(("127.0.0.1", 17895), timeout=2)
        time.sleep(0.5)
        bp = bridge_pids(w.pid)
        t0 = cpu_s(bp[0]) if bp else 0
        time.sleep(1.5)
        spent = cpu_s(bp[0]) - t0 if bp else -1
        bridge_up = bool(bp) and os.path.exists(f"/proc/{bp[0]}")
    finally:
        if queued:
            queued.close()
        err = stop_ward(w)
    report("accept: failing with ENFILE, the bridge waits instead of spinning (CPU in 1.5 s under 0.3 s)",
           bp and bridge_up and 0 <= spent < 0.3, f"{spent:.2f} s, bridge alive {bool(bp) and bridge_up}")
    said = [l for l in err.splitlines() if "cannot accept a connection" in l]
    report("accept: it says why, once (not once a retry)", len(said) == 1 and "Too many open files in system" in said[0],
           f"{len(said)} line(s): {said[0] if said else ''}")


def pdeath_case(a, work):
    """ward killed outright (SIGKILL, the OOM killer): its bridge, which
    holds the routes' secrets and ports, must not live on. The kernel
    clears the parent-death signal when credentials change, so it has to
    be set after the bridge takes its own user."""
    conf = os.path.join(work, "pdeath.conf")
    with open(conf, "w") as f:
        f.write("[route pd]\nlisten = 127.0.0.1:17896\nupstream = unix:/nonexistent.sock\npath = /x\n")
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "30"], stderr=subprocess.DEVNULL)
    bp, gone, agent = [], False, []
    try:
        wait_port(17896)
        bp = wait_bridge(w.pid)
        for _ in range(500):  # the agent, forked after the bridge: the sleep, orphaned below
            agent = [p for p in children(w.pid) if p not in bp]
            if agent:
                break
            time.sleep(0.02)
        sig = [l.split()[1] for l in open(f"/proc/{bp[0]}/status") if l.startswith("Uid:")] if bp else []
        w.kill()
        w.wait()
        for _ in range(500):
            if not bp or not alive(bp[0]):
                gone = True
                break
            time.sleep(0.02)
    finally:
        for pid in ([] if gone else bp) + agent:
            kill_quietly(pid, signal.SIGKILL)
    report("ward killed with SIGKILL: its bridge (own user) goes with it", bool(bp) and gone,
           f"bridge {bp} uid {sig}, gone: {gone}")


def no_children_file_case(a, work):
    """A kernel without CONFIG_PROC_CHILDREN has no /proc/PID/task/PID/children,
    which tells ward, beside its bridge, whether the agent left processes
    behind; ward then counts them from /proc/PID/stat. strace fails that
    open with ENOENT for ward as PID 1 of a pid namespace: the agent's
    leftover must get TERM and ward exit with the agent's status at once,
    neither leaving it (no TERM) nor waiting out the 20 s grace."""
    name = "no /proc/PID/task/PID/children: the agent's leftover counted from /proc, TERMed, ward exits with its status"
    if not shutil.which("strace") or not shutil.which("unshare"):
        report(name, None, "SKIP: needs strace and unshare")
        return
    conf = os.path.join(work, "nochildren.conf")
    with open(conf, "w") as f:
        f.write("[ward]\nlog_level = debug\n[supervise]\ngrace = 20s\n"
                "[route nc]\nlisten = 127.0.0.1:17897\nupstream = unix:/nonexistent.sock\npath = /x\n")
    trace = os.path.join(work, "nochildren.strace")
    t0 = time.monotonic()
    try:
        p = subprocess.run(["strace", "-f", "-qq", "-o", trace, "-P", "/proc/1/task/1/children", "-e", "trace=openat",
                            "-e", "inject=openat:error=ENOENT", "unshare", "-fp", "--mount-proc", a.ward, "-c", conf,
                            "--", "sh", "-c", "sleep 60 & exit 3"], capture_output=True, text=True, timeout=60)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = "timeout", ""
    took = time.monotonic() - t0
    injected = sum("INJECTED" in l for l in open(trace)) if os.path.exists(trace) else 0
    termed = "sending TERM to what it left behind" in err
    report(name, rc == 3 and termed and injected >= 1 and took < 15,
           f"exit {rc} after {took:.1f} s (grace 20 s); TERM sent: {termed}; opens failed by strace: {injected}")


def frozen_case(a, work):
    """A bridge that SIGKILL does not end (frozen by a cgroup freezer, as
    in uninterruptible sleep): ward stops without it, 1 s after TERM and
    2 s after KILL, and says so, instead of waiting for ever. As a
    subreaper: a PID 1's exit waits in the kernel for its whole namespace."""
    name = "bridge frozen: ward stops without it (TERM, 1 s, KILL, 2 s) and says so"
    if not kernel.freezer_usable():
        report(name, None, "SKIP: no writable cgroup v1 freezer to freeze the bridge with")
        return
    conf = os.path.join(work, "frozen.conf")
    with open(conf, "w") as f:
        f.write("[route fr]\nlisten = 127.0.0.1:17889\nupstream = unix:/nonexistent.sock\npath = /x\n")
    errf = tempfile.TemporaryFile()
    # ward's writes always at the end, whatever this side's reads do to the shared offset
    fcntl.fcntl(errf.fileno(), fcntl.F_SETFL, fcntl.fcntl(errf.fileno(), fcntl.F_GETFL) | os.O_APPEND)
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "30"], stderr=errf)
    bp, rc, took, frozen = [], None, 0.0, False
    try:
        with kernel.Freezer("ward-bridge-test") as fz:
            wait_port(17889)
            bp = wait_bridge(w.pid)
            # frozen once it is ready: frozen before, ward's first start
            # waits for it (5 s) and stops with 3, another case than this one
            for _ in range(250):
                errf.seek(0)
                if b"serves 1 route(s)" in errf.read():
                    break
                time.sleep(0.02)
            if bp:
                fz.add(bp[0])
                frozen = fz.freeze()
            t0 = time.monotonic()
            w.send_signal(signal.SIGTERM)
            rc = w.wait(timeout=15)
            took = time.monotonic() - t0
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
    errf.seek(0)
    said = [l for l in errf.read().decode(errors="replace").splitlines() if "survives SIGKILL" in l]
    report(name, bool(bp) and frozen and rc == 143 and 2.5 <= took < 12 and len(said) == 1,
           f"bridge frozen: {frozen}; exit {rc} (want 143) {took:.1f} s after TERM; "
           f"{said[0] if said else 'no message'}")


def restart_caps_case(a, work):
    """With a bridge, PID 1 drops its own capabilities before the agent
    first runs. An agent nothing confines must still get at every restart
    what it had at its first run (a review expected it to lose them: it
    does not, and this keeps it so)."""
    caps = os.path.join(work, "caps.txt")
    conf = os.path.join(work, "restart-caps.conf")
    with open(conf, "w") as f:
        f.write(f"[supervise]\nrestart = on-failure\nrestart_delay = 50ms\n"
                f"[agent]\ncommand = sh -c 'grep CapEff /proc/self/status >> {caps}; [ $(wc -l < {caps}) -ge 2 ]'\n"
                "[route rc]\nlisten = 127.0.0.1:17898\nupstream = unix:/nonexistent.sock\npath = /x\n")
    # stdin held open: ward does not restart once it has reached its end
    log = os.path.join(work, "restart-caps.log")
    with open(log, "w") as errf:
        p = subprocess.Popen([a.ward, "-c", conf], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errf)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        p.stdin.close()
    err = open(log, errors="replace").read()
    lines = open(caps).read().split("\n")[:2] if os.path.exists(caps) else []
    report("an unconfined agent restarted beside a bridge keeps the capabilities of its first run",
           p.returncode == 0 and len(lines) == 2 and lines[0] == lines[1] and
           lines[0].split()[-1].strip("0") != "",  # the first run had capabilities to keep
           f"rc {p.returncode}, {lines}" + ("" if p.returncode == 0 else f"\n{err[-600:]}"))


def restart_wait_case(a, work):
    """A restarted bridge that is slow to confine itself does not hold up
    PID 1: while it starts, signals still reach the agent. strace delays
    every bridge's setsid() (only the bridge calls it) by 1.5 s; the first
    start waits that out, as it must, before the agent runs."""
    if not shutil.which("strace"):
        report("restart-wait: a slow bridge restart does not hold up PID 1", None, "SKIP: no strace")
        return
    conf = os.path.join(work, "restart-wait.conf")
    with open(conf, "w") as f:
        f.write("[route rw]\nlisten = 127.0.0.1:17894\nupstream = unix:/nonexistent.sock\npath = /x\n")
    log = os.path.join(work, "restart-wait.log")
    agent = "trap 'echo usr1' USR1; echo started; while :; do sleep 0.05; done"
    with open(log, "w") as errf:
        w = subprocess.Popen(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=setsid",
                              "-e", "inject=setsid:delay_enter=1500000", a.ward, "-c", conf, "--", "sh", "-c", agent],
                             stdout=subprocess.PIPE, stderr=errf)
    ward_pid, got, before, after, st = None, b"", None, "", 0
    try:
        first = w.stdout.readline().strip()
        ward_pid = child_running(w.pid, a.ward, timeout=2)
        old = wait_bridge(ward_pid) if ward_pid else []
        if first == b"started" and old:
            os.kill(old[0], signal.SIGKILL)
            new = []
            for _ in range(250):  # restarted after 250 ms, then held 1.5 s in setsid()
                new = [p for p in bridge_pids(ward_pid) if p not in old]
                if new:
                    break
                time.sleep(0.02)
            os.kill(ward_pid, signal.SIGUSR1)
            r, _, _ = select.select([w.stdout], [], [], 10)
            got = w.stdout.readline().strip() if r else b""
            before = open(log, errors="replace").read()
            for _ in range(250):
                after = open(log, errors="replace").read()
                if "route(s) again" in after:
                    break
                time.sleep(0.02)
            st = status(exchange(17894, req("GET", "/x")))
    finally:
        # ward itself: strace, terminated, would leave it running detached
        if ward_pid:
            kill_quietly(ward_pid, signal.SIGTERM)
        try:
            w.wait(timeout=10)
        except subprocess.TimeoutExpired:
            w.kill()
            w.wait()
            if ward_pid:
                kill_quietly(ward_pid, signal.SIGKILL)
    report("restart-wait: while a restarted bridge is still starting, a signal reaches the agent",
           got == b"usr1" and "route(s) again" not in before,
           f"agent said {got!r}; ready logged before it: {'route(s) again' in before}")
    report("restart-wait: the slow bridge then serves", "route(s) again" in after and st == 502,
           f"status {st}" + ("" if st == 502 else f"\n{after[-600:]}"))
