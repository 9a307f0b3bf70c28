#!/usr/bin/python3
"""Confinement tests: the escape probe run as ward's agent, and the evidence
checked against /proc, on the host, in runc and in docker.

  sandbox.py --ward W --probe P [--runtimes host,runc,docker]

Each runtime runs the same static probe (tests/sandbox/escape.c) under the
same policy; every escape must fail with its exact errno and every control
must work. Runtimes whose tools are missing report SKIP with the reason; CI
installs them (scripts/install-deps.sh containers), so there they run.
"""
import argparse
import json
import os
import pwd
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from dockerd import Dockerd  # noqa: E402
from proctree import alive, child_running, children  # noqa: E402
import netns  # noqa: E402
from podmanconf import podman_setup  # noqa: E402

AGENT_UID = 4242
HERE = os.path.dirname(os.path.abspath(__file__))
from results import RESULTS, report  # noqa: E402


class Listener:
    """A loopback TCP listener that accepts and closes, in a thread."""

    def __init__(self):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.s.bind(("127.0.0.1", 0))
        self.s.listen(16)
        self.port = self.s.getsockname()[1]
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                c, _ = self.s.accept()
                c.close()
            except OSError:
                return


def as_agent():
    os.setgroups([])
    os.setresgid(AGENT_UID, AGENT_UID, AGENT_UID)
    os.setresuid(AGENT_UID, AGENT_UID, AGENT_UID)


def policy(root, allowed, extra=""):
    """The policy every runtime uses; root is where ro/rw/secret live."""
    return f"""[agent]
user = {AGENT_UID}:{AGENT_UID}
env = PATH=/usr/bin:/bin
[landlock]
mode = hard_requirement
read = {root}/ro /proc /usr
write = {root}/rw
connect = {allowed}
scope = abstract signal
[seccomp]
mode = default
{extra}"""


def make_tree(root, probe):
    for d in ("ro", "rw", "secret"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    with open(os.path.join(root, "ro", "file"), "w") as f:
        f.write("read me\n")
    with open(os.path.join(root, "secret", "file"), "w") as f:
        f.write("secret\n")
    # owned by the agent: only Landlock stands between it and the file
    # (DAC and protected_hardlinks would refuse a root-owned one anyway)
    os.chown(os.path.join(root, "secret", "file"), AGENT_UID, AGENT_UID)
    shutil.copy(probe, os.path.join(root, "ro", "escape"))
    os.chmod(os.path.join(root, "ro", "escape"), 0o755)
    os.chown(os.path.join(root, "rw"), AGENT_UID, AGENT_UID)
    os.chmod(root, 0o755)


def policy_tree(a, prefix):
    """Two loopback listeners (an allowed and a denied port), the probe's
    tree and the test policy written next to it: (root, conf, allowed, denied)."""
    allowed, denied = Listener(), Listener()
    root = tempfile.mkdtemp(prefix=prefix)
    os.chmod(root, 0o755)
    make_tree(root, a.probe)
    conf = os.path.join(root, "ward.conf")
    with open(conf, "w") as f:
        f.write(policy(root, allowed.port))
    return root, conf, allowed, denied


def probe_status(out):
    """The probe's own /proc/self/status lines ("status KEY: VALUE")."""
    st = {}
    for l in out.splitlines():
        if l.startswith("status "):
            k, _, v = l[len("status "):].partition(":")
            st[k] = " ".join(v.split())
    return st


def check_probe_output(name, rc, out):
    lines = out.splitlines()
    fails = [l for l in lines if l.startswith("FAIL")]
    summary = [l for l in lines if l.startswith("escape:")]
    checks = sum(1 for l in lines if l.startswith("ok ") or l.startswith("FAIL"))
    ok = rc == 0 and not fails and summary and checks >= 50
    report(name, "pass" if ok else "FAIL",
           (summary[0] if summary else f"no summary (rc={rc})") + ("; " + "; ".join(fails) if fails else ""))
    if not ok:
        print(out)


# ---------------------------------------------------------------- host

def host(a):
    root, conf, allowed, denied = policy_tree(a, "ward-escape-")
    try:
        host_cases(a, root, conf, allowed, denied)
    finally:
        shutil.rmtree(root, ignore_errors=True)  # also after a harness error


def host_cases(a, root, conf, allowed, denied):
    tag = f"h{os.getpid()}"
    evidence = os.path.join(root, "evidence.json")
    outsider = subprocess.Popen([os.path.join(root, "ro", "escape"), "outsider", tag], preexec_fn=as_agent,
                                stdout=subprocess.PIPE)
    outsider.stdout.readline()
    try:
        p = subprocess.run([a.ward, "-c", conf, "--", os.path.join(root, "ro", "escape"), "probe", root,
                            str(allowed.port), str(denied.port), tag], capture_output=True, timeout=120,
                           cwd=os.path.join(root, "rw"))
        check_probe_output("host: escape probe as the agent", p.returncode, p.stdout.decode())
        outsider_alive = outsider.poll() is None
        report("host: the outsider survived the probe's kill()", "pass" if outsider_alive else "FAIL",
               f"alive={outsider_alive}")
    finally:
        outsider.kill()
        outsider.wait()

    # the evidence JSON equals what /proc shows for the running agent
    text = policy(root, allowed.port).replace("[agent]\n", f"[agent]\nrlimit_nofile = 1024:2048\n")
    text = text.replace("[landlock]", f"[ward]\nevidence = {evidence}\n[landlock]")
    with open(conf, "w") as f:
        f.write(text)
    w = subprocess.Popen([a.ward, "-c", conf, "--evidence", "--", "sleep", "30"], stderr=subprocess.PIPE,
                         cwd=os.path.join(root, "rw"))
    ev = None
    for _ in range(100):
        # created at start, written in place once the agent is confined:
        # taken when it is a whole document
        try:
            ev = json.load(open(evidence))
            break
        except (OSError, ValueError):
            time.sleep(0.05)
    if not ev:
        report("host: evidence written", "FAIL", "no evidence file")
    else:
        pid = ev["agent_pid"]
        status = {}
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                status[k] = v.strip()
        keys = ["Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
                "Seccomp", "Seccomp_filters"]
        diff = [k for k in keys if ev["agent"].get(k, "").split() != status.get(k, "").split()]
        zero = all(ev["agent"][k] == "0000000000000000" for k in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"])
        ok = not diff and zero and ev["agent"]["NoNewPrivs"] == "1" and ev["agent"]["Seccomp"] == "2" \
            and ev["agent"]["Uid"].split()[0] == str(AGENT_UID)
        report("host: evidence matches /proc/PID/status", "pass" if ok else "FAIL",
               f"uid {ev['agent']['Uid'].split()[0]}, caps all zero={zero}, NoNewPrivs {ev['agent']['NoNewPrivs']}, "
               f"Seccomp {ev['agent']['Seccomp']}" + (f"; differs: {diff}" if diff else ""))
        ll = ev["landlock"]
        ok = ll["abi"] >= 1 and ll["enabled"] and len(ll["handled_fs"]) == 16 and \
            ll["scoped"] == ["abstract_unix_socket", "signal"] and ev["rlimits"]["nofile"] == ["1024", "2048"] \
            and ev["rlimits"]["core"] == ["0", "0"] and len(ev["seccomp"]["sha256"]) == 64 \
            and ev["degradations"] == [] and ev["ward_self"]["status"]["Seccomp"] == "2"
        report("host: evidence shows Landlock, seccomp hash, rlimits, no degradation", "pass" if ok else "FAIL",
               f"ABI {ll['abi']}, {len(ll['handled_fs'])} fs rights, rules {len(ll['rules'])}, "
               f"seccomp {ev['seccomp']['sha256'][:12]}…, nofile {ev['rlimits']['nofile']}, "
               f"degradations {ev['degradations']}")
        # the limits as the kernel holds them for the agent, not as reported
        with open(f"/proc/{pid}/limits") as f:
            lim = {l[:26].strip(): l[26:].split()[:2] for l in f.read().splitlines()[1:]}
        ok = lim.get("Max open files") == ["1024", "2048"] and lim.get("Max core file size") == ["0", "0"]
        report("host: the agent's rlimits in /proc/PID/limits (nofile as set, core 0 by default)",
               "pass" if ok else "FAIL", f"open files {lim.get('Max open files')}, core {lim.get('Max core file size')}")
        with open(f"/proc/{w.pid}/status") as f:
            wstat = {k: v.strip() for k, _, v in (l.partition(":") for l in f)}
        # CAP_KILL; and CAP_SETGID, CAP_SETUID, CAP_SETPCAP (6, 7, 8): the
        # egress guard in PID 1 makes the agent's sockets and reads their
        # addresses as the agent's user (fsuid, fsgid); no CAP_SYS_PTRACE
        # (this host has no Yama: the agent's own uid reads it)
        kept = 1 << 5 | 1 << 6 | 1 << 7 | 1 << 8
        ok = int(wstat["CapEff"], 16) == kept and int(wstat["CapPrm"], 16) == kept and \
            int(wstat["CapInh"], 16) == 0 and int(wstat["CapAmb"], 16) == 0 and \
            wstat["NoNewPrivs"] == "1" and wstat["Seccomp"] == "2"
        report("host: PID 1 keeps only CAP_KILL and the guard's ids (SETUID/SETGID/SETPCAP), and runs its own filter",
               "pass" if ok else "FAIL", f"ward CapEff {wstat['CapEff']} CapPrm {wstat['CapPrm']} "
               f"CapInh {wstat['CapInh']} CapAmb {wstat['CapAmb']} NoNewPrivs {wstat['NoNewPrivs']} Seccomp {wstat['Seccomp']}")
        # The probe's EPERMs for mount, kexec_load and the like would come
        # from the kernel's capability checks alone (it has none): here the
        # agent's filter, as the kernel holds it, is run as root with every
        # capability, each call once with it and once without
        fc = os.path.join(os.path.dirname(a.probe), "filtercheck")
        bpf = os.path.join(root, "agent-filter.bpf")
        d = subprocess.run([fc, "dump", str(pid), bpf], capture_output=True, text=True, timeout=20)
        r = subprocess.run([fc, "run", bpf], capture_output=True, text=True, timeout=120) \
            if d.returncode == 0 else None
        lines = r.stdout.splitlines() if r else []
        summary = [l for l in lines if l.startswith("filtercheck:")]
        ok = r is not None and r.returncode == 0 and summary and not any(l.startswith("FAIL") for l in lines)
        report("host: the agent's filter read from the kernel refuses each listed call to root with every "
               "capability; without it the kernel answers otherwise", "pass" if ok else "FAIL",
               f"{d.stdout.strip()}; " + (summary[0] if summary else d.stderr.strip()) +
               ("" if ok else "\n" + (r.stdout + r.stderr if r else "")))
    w.send_signal(signal.SIGTERM)
    w.wait(timeout=15)
    err = w.stderr.read().decode()
    printed = [l for l in err.splitlines() if l.startswith("{")]
    report("host: --evidence prints the same JSON on stderr", "pass" if printed and json.loads(printed[0]) == ev else "FAIL",
           f"{len(printed)} JSON line(s)")

    # the agent's stderr cannot land inside (or before) the evidence: strace
    # holds each of PID 1's writes for 0.3 s while the agent writes 2 MB at once
    if not shutil.which("strace"):
        report("host: --evidence comes whole, before the agent's first byte", "SKIP", "no strace")
    else:
        with open(conf, "w") as f:
            f.write(policy(root, allowed.port))
        flood = "yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx | head -c 2000000 >&2"
        p = subprocess.run(["strace", "-qq", "-o", "/dev/null", "-e", "trace=write", "-e",
                            "inject=write:delay_enter=300000", a.ward, "-c", conf, "--evidence", "--",
                            "sh", "-c", flood], capture_output=True, cwd=os.path.join(root, "rw"), timeout=60)
        lines = p.stderr.decode(errors="replace").splitlines()
        first_x = next((i for i, l in enumerate(lines) if l.startswith("x")), None)
        js = [i for i, l in enumerate(lines) if l.startswith("{")]
        whole = False
        if js:
            try:
                whole = json.loads(lines[js[0]])["agent"]["NoNewPrivs"] == "1"
            except (ValueError, KeyError):
                pass
        xs = sum(1 for l in lines if l.startswith("x"))
        ok = p.returncode == 0 and len(js) == 1 and whole and first_x is not None and js[0] < first_x and xs >= 42000
        report("host: --evidence comes whole, before the agent's first byte", "pass" if ok else "FAIL",
               f"exit {p.returncode}, JSON line(s) at {js[:3]}, parses {whole}, first agent line {first_x}, "
               f"{xs} agent lines")

        # ward killed while the agent waits for the evidence: the agent
        # does not run (it is let go by a byte, never by end of file)
        marker = os.path.join(root, "rw", "held-ran")
        quiet = os.path.join(root, "quiet.conf")  # no log line before the evidence: only it waits
        with open(quiet, "w") as f:
            f.write(policy(root, allowed.port) + "[ward]\nlog_level = error\n")
        w = subprocess.Popen(["strace", "-qq", "-o", "/dev/null", "-e", "trace=write", "-e",
                              "inject=write:delay_enter=3000000", a.ward, "-c", quiet, "--evidence", "--",
                              "touch", marker], stderr=subprocess.DEVNULL, cwd=os.path.join(root, "rw"))
        ward_pid, agent = child_running(w.pid, a.ward), None
        for _ in range(1500 if ward_pid else 0):
            held = children(ward_pid)  # the agent, forked, not yet exec'd
            if held:
                agent = held[0]
                break
            time.sleep(0.02)
        if agent:
            time.sleep(0.5)  # held: ward's evidence write is delayed 3 s
            os.kill(ward_pid, signal.SIGKILL)
        w.wait(timeout=20)
        gone = False
        for _ in range(100):
            if not agent or not alive(agent):
                gone = True
                break
            time.sleep(0.05)
        ran = os.path.exists(marker)
        report("host: ward killed while the agent is held for the evidence: the agent never runs",
               "pass" if agent and gone and not ran else "FAIL",
               f"agent pid {agent}, gone {gone}, ran {ran}")

    # An inherited descriptor above a lower rlimit_nofile, on a kernel
    # without close_range (strace fails it with ENOSYS) and without /proc:
    # the fallback marks every number up to the limit close-on-exec, so it
    # must run before the agent's limit is lowered
    name = "host: no close_range, no /proc, rlimit_nofile = 64: an inherited fd 900 does not reach the agent"
    if not shutil.which("strace") or not shutil.which("bash"):
        report(name, "SKIP", "needs strace and bash")
    elif a.label == "asan":
        report(name, "SKIP", "the ASan runtime needs /proc before main")
    else:
        nofile = os.path.join(root, "nofile.conf")
        with open(nofile, "w") as f:
            f.write("[agent]\nrlimit_nofile = 64:64\n")
        probe = "if { echo x >&900; } 2>/dev/null; then echo fd900-open; else echo fd900-closed; fi; ulimit -n"
        p = subprocess.run(["unshare", "-m", "bash", "-c",
                            'umount -l /proc && ulimit -n 4096 && exec 900>/dev/null && exec strace -f -qq -o /dev/null '
                            '-e trace=close_range -e inject=close_range:error=ENOSYS "$0" -c "$1" -- bash -c "$2"',
                            a.ward, nofile, probe], capture_output=True, timeout=60)
        out = p.stdout.decode().split()
        report(name, "pass" if p.returncode == 0 and out == ["fd900-closed", "64"] else "FAIL",
               f"exit {p.returncode}, agent says {out}")

    # hard_requirement refuses what it cannot enforce; best_effort degrades
    marker = os.path.join(root, "rw", "started")
    text = policy(root, allowed.port).replace(f"read = {root}/ro /proc", f"read = {root}/ro /proc /nonexistent-ward")
    assert "/nonexistent-ward" in text
    with open(conf, "w") as f:
        f.write(text)
    p = subprocess.run([a.ward, "-c", conf, "--", "touch", marker], capture_output=True, timeout=20)
    err = p.stderr.decode()
    ok = p.returncode == 3 and "landlock: /nonexistent-ward: No such file or directory" in err and not os.path.exists(marker)
    report("host: hard_requirement with a missing path: exit 3, agent never runs", "pass" if ok else "FAIL",
           f"rc={p.returncode} {err.strip().splitlines()[-1] if err.strip() else ''}")
    with open(conf, "w") as f:
        f.write(text.replace("mode = hard_requirement", "mode = best_effort") +
                f"[ward]\nevidence = {evidence}\n")
    p = subprocess.run([a.ward, "-c", conf, "--", "touch", marker], capture_output=True, timeout=20,
                       cwd=os.path.join(root, "rw"))
    ev = json.load(open(evidence))
    ok = p.returncode == 0 and os.path.exists(marker) and \
        any("/nonexistent-ward" in d for d in ev["degradations"])
    report("host: best_effort with a missing path: runs, degradation recorded", "pass" if ok else "FAIL",
           f"rc={p.returncode} degradations={ev['degradations']}")
    # the filters are compiled at most once: three starts each; the default
    # list is precompiled (no compile at all), a custom one compiles once
    if shutil.which("strace"):
        for extra, want in (("", 0), ("deny = chmod\n", 1)):
            log = os.path.join(root, "strace.log")
            with open(conf, "w") as f:
                f.write(policy(root, allowed.port, extra) +
                        "[supervise]\nrestart = on-failure\nrestart_delay = 10ms\nrestart_limit = 2\n")
            # stdin a pipe held open: ward restarts only while its stdin
            # has a peer (make -j gives all but one job a dead stdin)
            p = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=memfd_create,landlock_create_ruleset", "-o",
                                  log, a.ward, "-c", conf, "--", os.path.join(root, "ro", "escape"), "no-such-mode"],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 cwd=os.path.join(root, "rw"))
            err = p.stderr.read().decode()
            p.wait(60)
            p.stdin.close()
            text = open(log).read()
            starts = err.count("restarting") + 1
            compiles = text.count("memfd_create(")
            rulesets = sum(1 for l in text.splitlines() if "landlock_create_ruleset(0x" in l or
                           "landlock_create_ruleset({" in l)
            # one ruleset, the agent's, built once (the guard is PID 1's own)
            ok = starts == 3 and compiles == want and rulesets == 1
            report(f"host: {'custom' if extra else 'default'} filter compiled {want}x, rulesets built once, 3 starts",
                   "pass" if ok else "FAIL", f"starts={starts}, seccomp compiles={compiles}, rulesets={rulesets}")
    else:
        report("host: filters and ruleset built once for 3 starts", "SKIP", "strace is not installed")


# ---------------------------------------------------------------- cli

def explain(a, conf, what, cwd):
    p = subprocess.run([a.ward, "-c", conf, "--explain", what], capture_output=True, text=True, timeout=20, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def verdict(out, right):
    """From --explain's output: is the Landlock right allowed?"""
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("allowed:") and right in line.split(":", 1)[1].split(","):
            return True
        if line.startswith("DENIED:") and right in line.split(":", 1)[1].strip().split(","):
            return False
    return None


def cli(a):
    """--check (table and JSON, warnings for weak settings) and --explain,
    whose verdicts are compared with what the kernel does to the agent."""
    root, conf, allowed, denied = policy_tree(a, "ward-cli-")
    rw = os.path.join(root, "rw")
    # ro bound elsewhere: Landlock's rule is on ro's inode, and the alias's
    # mount root is that inode (--explain must not judge by the spelling)
    alias = os.path.join(root, "ro-alias")
    os.mkdir(alias)
    bound = subprocess.run(["mount", "--bind", os.path.join(root, "ro"), alias], capture_output=True).returncode == 0
    try:
        p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, text=True, timeout=20, cwd=rw)
        j = subprocess.run([a.ward, "-c", conf, "--check", "--json"], capture_output=True, text=True, timeout=20,
                           cwd=rw)
        doc = json.loads(j.stdout) if j.returncode == 0 else {}
        ok = p.returncode == 0 and p.stdout.startswith("ward --check: ") and "\nLAYER " in p.stdout and \
            p.stdout.rstrip().endswith("no warnings") and doc.get("warnings") == [] and \
            doc["agent"]["user"]["uid"] == AGENT_UID and doc["landlock"]["write"] == [rw] and \
            doc["landlock"]["connect"] == [str(allowed.port)] and doc["seccomp"]["mode"] == "default" and \
            doc["kernel"]["landlock_abi"] >= 1
        report("cli: --check table and --json for the test policy, no warnings", "pass" if ok else "FAIL",
               f"rc={p.returncode}/{j.returncode}, warnings={doc.get('warnings')}" + ("" if ok else "\n" + p.stdout + p.stderr))

        weak = {
            "[agent]\nenv = A=1\n": ["no [agent] user", "landlock is absent", "seccomp is absent"],
            f"[agent]\nuser = {AGENT_UID}\n[landlock]\nmode = best_effort\nread = /\nwrite = / /proc\n"
            "connect = 1-65535\n[seccomp]\nmode = default\nallow = ptrace\n":
                ["write = /:", "write = /proc:", "read = /:", "every TCP port", "scope lacks signal",
                 "scope lacks abstract", "allow = ptrace"],
            f"[agent]\nuser = {AGENT_UID}\n[landlock]\nmode = off\n[seccomp]\nmode = off\n":
                ["landlock is off", "seccomp is off"],
        }
        bad = []
        for text, want in weak.items():
            with open(conf, "w") as f:
                f.write(text)
            t = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, text=True, timeout=20, cwd=rw)
            j = subprocess.run([a.ward, "-c", conf, "--check", "--json"], capture_output=True, text=True,
                               timeout=20, cwd=rw)
            warns = json.loads(j.stdout)["warnings"] if j.returncode == 0 else []
            tw = [l[len("warning: "):] for l in t.stdout.splitlines() if l.startswith("warning: ")]
            missing = [w for w in want if not any(w in x for x in warns)]
            if t.returncode != 0 or missing or tw != warns or len(warns) != len(want):
                bad.append(f"{text!r}: missing {missing}, json {warns}, table {tw}")
        report("cli: --check warns about each weak setting (table = JSON)", "pass" if not bad else "FAIL",
               f"{sum(len(w) for w in weak.values())} warnings in 3 configs" if not bad else "; ".join(bad))

        # --explain's verdicts against what the kernel does to the agent
        with open(conf, "w") as f:
            f.write(policy(root, allowed.port))
        probes = [
            # (what to explain, Landlock right, command run as the agent)
            (f"{root}/ro/file", "read_file", f"cat {root}/ro/file"),
            (f"{root}/ro/file", "write_file", f"echo x >> {root}/ro/file"),
            (f"{root}/secret/file", "read_file", f"cat {root}/secret/file"),
            (f"{root}/rw/new", "make_reg", f": > {root}/rw/new"),
            (f"{root}/ro/new", "make_reg", f": > {root}/ro/new"),
            (f"{root}/secret/new", "make_reg", f": > {root}/secret/new"),
        ] + ([(f"{alias}/file", "read_file", f"cat {alias}/file"),
              (f"{alias}/file", "write_file", f"echo x >> {alias}/file")] if bound else [])
        bad, n_denied = [], 0
        for what, right, cmd in probes:
            rc, out, err = explain(a, conf, what, rw)
            said = verdict(out, right)
            r = subprocess.run([a.ward, "-c", conf, "--", "sh", "-c", cmd], capture_output=True, text=True,
                               timeout=20, cwd=rw)
            did = r.returncode == 0
            n_denied += not did
            if rc != 0 or said is None or said != did or (not did and "Permission denied" not in r.stderr):
                bad.append(f"{what} {right}: explain says {said}, agent rc={r.returncode} {r.stderr.strip()!r}")
            if said is False and "add under [landlock]" not in out:
                bad.append(f"{what}: no fix suggested")
        for port, lst in ((allowed.port, "allowed"), (denied.port, "denied")):
            rc, out, err = explain(a, conf, f"tcp:{port}", rw)
            said = "connect: allowed" in out if ("connect: " in out) else None
            r = subprocess.run([a.ward, "-c", conf, "--", "bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{port}"],
                               capture_output=True, text=True, timeout=20, cwd=rw)
            did = r.returncode == 0
            if said is None or said != did:
                bad.append(f"tcp:{port} ({lst}): explain says {said}, connect rc={r.returncode} {r.stderr.strip()!r}")
        rc, out, err = explain(a, conf, "unshare", rw)
        r = subprocess.run([a.ward, "-c", conf, "--", "unshare", "--user", "true"], capture_output=True, text=True,
                           timeout=20, cwd=rw)
        if "DENIED" not in out or "EPERM" not in out or r.returncode == 0 or "Operation not permitted" not in r.stderr:
            bad.append(f"unshare: explain {out.strip()!r}, agent rc={r.returncode} {r.stderr.strip()!r}")
        rc, out, err = explain(a, conf, "getpid", rw)
        if "allowed" not in out:
            bad.append(f"getpid: {out.strip()!r}")
        rc, out, err = explain(a, conf, "no-such-thing", rw)
        if rc != 2 or len(err.strip().splitlines()) != 1:
            bad.append(f"bad WHAT: rc={rc} {err!r}")
        report("cli: --explain agrees with the kernel (paths, ports, syscalls)", "pass" if not bad else "FAIL",
               f"{len(probes)} paths ({n_denied} refused by the kernel, as explained), 2 ports, 2 syscalls"
               if not bad else "; ".join(bad))
        alias_bad = [b for b in bad if alias in b]
        report("cli: --explain judges a bind mount of a rule's directory as the kernel does",
               ("pass" if not alias_bad else "FAIL") if bound else "SKIP",
               "; ".join(alias_bad) if alias_bad else "read through it: allowed, write: denied, as the agent found"
               if bound else "mount --bind failed (needs CAP_SYS_ADMIN)")
        # deny = udp (UDP is beyond Landlock): the kernel refuses the
        # agent's datagram sockets, TCP still opens; without it UDP opens
        # (with egress = ports: the guard, by default, refuses them too)
        got = {}
        for extra, ports in (("", True), ("deny = udp\n", True), ("", False)):
            with open(conf, "w") as f:
                text = policy(root, allowed.port, extra)
                f.write(text.replace("scope = abstract signal\n", "scope = abstract signal\negress = ports\n")
                        if ports else text)
            r = subprocess.run([a.ward, "-c", conf, "--", os.path.join(root, "ro", "escape"), "datagram"],
                               capture_output=True, text=True, timeout=20, cwd=rw)
            rc, out, err = explain(a, conf, "udp", rw)
            got[(extra, ports)] = (r.returncode, dict(w.split("=", 1) for w in r.stdout.split()), out.strip())
        (rc0, open0, said0), (rc1, open1, said1) = got[("", True)], got[("deny = udp\n", True)]
        ok = rc0 == 0 and rc1 == 0 and all(open0.get(k) == "ok" for k in ("udp4", "udp6", "udp4-nonblock", "tcp4")) and \
            all(open1.get(k) == "EACCES" for k in ("udp4", "udp6", "udp4-nonblock")) and open1.get("tcp4") == "ok" and \
            said0.startswith("udp: allowed") and said1.startswith("udp: DENIED") and "EACCES" in said1
        report("cli: deny = udp (egress = ports): the agent's UDP sockets refused (EACCES), TCP still opens; "
               "--explain agrees", "pass" if ok else "FAIL",
               f"default: {open0} ({said0[:40]!r}); deny = udp: {open1} ({said1[:40]!r})")
        rc2, open2, said2 = got[("", False)]
        ok = rc2 == 0 and all(open2.get(k) == "EACCES" for k in ("udp4", "udp6", "udp4-nonblock")) and \
            open2.get("tcp4") == "ok" and said2.startswith("udp: DENIED") and "egress guard" in said2
        report("cli: the egress guard (egress = loopback, the default) refuses UDP sockets without deny = udp "
               "(EACCES), TCP still opens; --explain names the guard", "pass" if ok else "FAIL",
               f"{open2} ({said2[:80]!r})")
        with open(conf, "w") as f:
            f.write(policy(root, allowed.port))
        denials_from_audit(a, root, conf, rw)
    finally:
        # never rmtree through a mount that is still there
        if not bound or subprocess.run(["umount", "-l", alias], capture_output=True).returncode == 0:
            shutil.rmtree(root, ignore_errors=True)


def audit(enabled=None):
    """The kernel's audit switch: returns it, or sets it (needs root)."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9)  # NETLINK_AUDIT
    s.settimeout(2)
    try:
        if enabled is None:
            s.send(struct.pack("=IHHII", 16, 1000, 1, 1, 0))  # AUDIT_GET
            d = s.recv(8192)
            return struct.unpack("=I", d[20:24])[0]  # audit_status.enabled
        st = struct.pack("=IIIIIIII", 1, enabled, 0, 0, 0, 0, 0, 0) + b"\0" * 16
        s.send(struct.pack("=IHHII", 16 + len(st), 1001, 5, 2, 0) + st)  # AUDIT_SET
        s.recv(8192)
    finally:
        s.close()


def denials_from_audit(a, root, conf, rw):
    """log_level = debug on a kernel with Landlock ABI 7 and audit on: ward
    reports the agent's denial (right, path, the rule to add) as it happens,
    from the kernel's own audit record; and stays up (the agent's code)."""
    try:
        was = audit()
    except OSError as e:
        report("cli: log_level = debug reports Landlock denials from the audit log", "SKIP",
               f"no audit netlink here ({e})")
        return
    text = open(conf).read() + "[ward]\nlog_level = debug\n"
    dconf = os.path.join(root, "debug.conf")
    with open(dconf, "w") as f:
        f.write(text)
    # a directory whose name holds control bytes (the audit record carries
    # it in hex): the log line shows them as '?', never raw
    ctl = os.path.join(root, "ro", "d\x01\x1b[31m")
    os.makedirs(ctl, exist_ok=True)
    try:
        audit(1)
        r = subprocess.run([a.ward, "-c", dconf, "--", "sh", "-c",
                            f"echo x > {root}/ro/new; echo x > \"$1/new\"; sleep 2; exit 5", "sh", ctl],
                           capture_output=True, text=True, timeout=20, cwd=rw)
    finally:
        audit(was)
    line = [l for l in r.stderr.splitlines() if "denied by landlock" in l]
    want = f"denied by landlock: fs.make_reg on {root}/ro; a rule that would allow it: write = {root}/ro"
    hit = [l for l in line if want in l]
    ok = r.returncode == 5 and len(hit) == 1
    report("cli: log_level = debug reports Landlock denials from the audit log", "pass" if ok else "FAIL",
           f"rc={r.returncode}: {hit[0] if hit else line or r.stderr.strip()[-300:]!r} "
           f"({len(line)} denial(s) reported; audit restored to {was})")
    want = f"denied by landlock: fs.make_reg on {root}/ro/d??[31m;"
    hit = [l for l in line if want in l]
    raw = [l for l in r.stderr.splitlines() if l.startswith("ward:") and ("\x1b" in l or "\x01" in l)]
    report("cli: a denied path with control bytes is logged with '?' in their place", "pass" if hit and not raw else "FAIL",
           f"{hit[0] if hit else line!r}; {len(raw)} line(s) with raw control bytes {raw!r}")


# ---------------------------------------------------------------- node

def node_workload(a):
    """Node 22 + bash + git under the default policy: everything must work."""
    name = "host: Node 22 workload (bash, git, workers, inotify, netlink, npm) under the default policy"
    if not a.node or not os.path.exists(a.node):
        report(name, "SKIP", "no Node 22 at --node (make fetches it with npm ci in tests/node)")
        return
    root = tempfile.mkdtemp(prefix="ward-node-")
    os.chmod(root, 0o755)
    dirs = {d: os.path.join(root, d) for d in ("ws", "tmp", "home", "bin")}
    for d in dirs.values():
        os.makedirs(d)
    for d in ("ws", "tmp", "home"):
        os.chown(dirs[d], AGENT_UID, AGENT_UID)
    shutil.copy(a.node, os.path.join(dirs["bin"], "node"))
    shutil.copy(os.path.join(HERE, "..", "node", "workload.mjs"), os.path.join(dirs["bin"], "workload.mjs"))
    npm = shutil.which("npm")
    npm_cli = os.path.join(os.path.dirname(os.path.realpath(npm)), "npm-cli.js") if npm else None
    env_npm = f"env = WARD_TEST_NPM_CLI={npm_cli}\n" if npm_cli and os.path.exists(npm_cli) else ""
    conf = os.path.join(root, "ward.conf")
    with open(conf, "w") as f:
        f.write(f"""[agent]
user = {AGENT_UID}:{AGENT_UID}
command = node {dirs['bin']}/workload.mjs
cwd = {dirs['ws']}
env = PATH={dirs['bin']}:/usr/bin:/bin
env = HOME={dirs['home']}
env = TMPDIR={dirs['tmp']}
env = LANG=C.UTF-8
{env_npm}[landlock]
read = /usr /etc /proc /sys/fs/cgroup /dev/urandom {dirs['bin']}
write = {dirs['ws']} {dirs['tmp']} {dirs['home']} /dev/null
scope = abstract signal
[seccomp]
""")
    p = subprocess.run([a.ward, "-c", conf], capture_output=True, timeout=120)
    lines = [json.loads(l) for l in p.stdout.decode().splitlines() if l.startswith("{")]
    checks = [l for l in lines if "name" in l]
    bad = [f"{l['name']}: {l['detail']}" for l in checks if l["ok"] is False]
    skipped = [l["name"] for l in checks if l["ok"] is None]
    # 14 checks, of which only npm's may be skipped (no npm here): it is
    # named in the line, and counts for nothing
    ok = p.returncode == 0 and not bad and len(checks) >= 14 and len(checks) - len(skipped) >= 13
    report(name, "pass" if ok else "FAIL",
           f"{sum(1 for l in checks if l['ok'])} checks ok" + (f", skipped: {skipped}" if skipped else "") +
           (f"; failed: {bad}" if bad else "") + (f"; rc={p.returncode} {p.stderr.decode()[-300:]}" if not ok else ""))
    shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------- egress

PORT_A, PORT_B = 7900, 7800  # the image's bridge ports: what a leak would use


class Listen:
    """netlisten.py in a namespace: what arrived there, by its own count."""

    def __init__(self, pair, ns, ports):
        self.p = subprocess.Popen(pair.cmd(ns, [sys.executable, os.path.join(HERE, "netlisten.py"),
                                                *map(str, ports)]),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.p.stdout.readline().strip() != "ready":
            raise RuntimeError(f"netlisten in {ns} did not start")

    def done(self):
        self.p.stdin.close()
        line = self.p.stdout.readline()
        self.p.wait(timeout=10)
        return json.loads(line)


def egress_policy(root, egress, extra="", agent=""):
    return f"""[agent]
user = {AGENT_UID}:{AGENT_UID}
env = PATH=/usr/bin:/bin
{agent}
[landlock]
mode = hard_requirement
read = {root} /proc /usr /etc
connect = {PORT_A} {PORT_B}
egress = {egress}
scope = abstract signal
[seccomp]
mode = default
{extra}"""


def quiet(pair, ns, still=1.0, limit=15):
    """ns's counters once they have not moved for `still` seconds: the last
    segments of connections an earlier case made (a FIN or its ACK sent
    again after a timeout) are in, and cannot count for the next case."""
    end = time.monotonic() + limit
    last = pair.counters(ns)
    while time.monotonic() < end:
        time.sleep(still)
        now = pair.counters(ns)
        if now == last:
            return now
        last = now
    return last


def arrived(pair, before, out_listen):
    """What reached the outside namespace: its listener's count and the
    kernel's (TCP segments, UDP datagrams, any IP packet but ND's)."""
    after = pair.counters(pair.outside)
    d = {k: after.get(k, 0) - before.get(k, 0) for k in ("TcpInSegs", "UdpInDatagrams", "UdpNoPorts")}
    got = out_listen.done()
    return d, got, d["TcpInSegs"] == 0 and d["UdpInDatagrams"] == 0 and d["UdpNoPorts"] == 0 and \
        got["connections"] == 0 and got["datagrams"] == 0 and got["bytes"] == 0


def egress(a):
    if not a.egress_probe:
        report("egress: routed namespace", "SKIP", "no --egress-probe")
        return
    root = tempfile.mkdtemp(prefix="ward-egress-")
    os.chmod(root, 0o755)
    shutil.copy(a.egress_probe, os.path.join(root, "egress"))
    node = None
    if a.node and os.path.exists(a.node):
        node = os.path.join(root, "node")
        shutil.copy(a.node, node)
    try:
        with netns.RoutedPair("we") as pair:
            egress_cases(a, pair, root, node)
            egress_stream(a, pair, root)
            egress_datagrams(a, pair, root)
            egress_others(a, pair, root)
            egress_refused(a, pair, root, node)
            egress_containers(a, pair)
        egress_listen(a, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def egress_run(a, pair, root, egress_mode, argv, timeout=120):
    conf = os.path.join(root, f"ward-{egress_mode}.conf")
    with open(conf, "w") as f:
        f.write(egress_policy(root, egress_mode))
    return subprocess.run(pair.cmd(pair.inside, [a.ward, "-c", conf, "--", *argv]), capture_output=True,
                          text=True, timeout=timeout)


def egress_cases(a, pair, root, node):
    probe = [os.path.join(root, "egress"), "tries", netns.OUT4, netns.OUT6, str(PORT_A), str(PORT_B), "20000"]
    # the control: Landlock's ports alone let the agent out (else this test could not fail)
    inside = Listen(pair, pair.inside, [PORT_A])
    outside = Listen(pair, pair.outside, [PORT_A, PORT_B])
    before = quiet(pair, pair.outside)
    p = egress_run(a, pair, root, "ports", probe[:6] + ["200"])
    d, got, none = arrived(pair, before, outside)
    inside.done()
    report("egress: control, egress = ports: the agent reaches the outside host on the bridge's port",
           "pass" if not none and got["connections"] > 0 else "FAIL",
           f"outside got {got}, kernel {d}")

    # the guard: nothing arrives, whatever the agent tries (counted from
    # when the control's 200 connections have gone quiet)
    inside = Listen(pair, pair.inside, [PORT_A])
    outside = Listen(pair, pair.outside, [PORT_A, PORT_B])
    before = quiet(pair, pair.outside)
    t0 = time.monotonic()
    p = egress_run(a, pair, root, "loopback", probe)
    took = time.monotonic() - t0
    d, got, none = arrived(pair, before, outside)
    loop_in = inside.done()
    fails = [l for l in p.stdout.splitlines() if l.startswith("FAIL")]
    # refused connects named, none of them loopback
    audit = [l for l in p.stderr.splitlines() if "egress: refused proto=tcp" in l]
    wrong = [l for l in audit if f"dst={netns.OUT4}:" not in l and f"dst=[{netns.OUT6}]:" not in l]
    report("egress: the static probe's refused connects named, never a loopback one",
           "pass" if audit and not wrong else "FAIL",
           f"{len(audit)} lines in {took:.0f} s" + (f"; wrong: {wrong[:3]}" if wrong else ""))
    # 30 at once, held 1.5 s: 10 named, then the rest counted when the 10 s window ends
    fl = egress_run(a, pair, root, "loopback", [os.path.join(root, "egress"), "flood", netns.OUT4, str(PORT_B),
                                                 "30", "1500", "10500"])
    audit = [l for l in fl.stderr.splitlines() if "egress: refused proto=tcp" in l]
    counted = [l for l in fl.stderr.splitlines() if "more refused connect(s) not shown" in l]
    report("egress: refused connects rate-limited: 30 at once, 10 named, 20 counted",
           "pass" if fl.returncode == 0 and len(audit) == 10 and len(counted) == 1 and "20 more" in counted[0]
           else "FAIL", f"{len(audit)} named; {counted}" + ("" if fl.returncode == 0 else f"; rc={fl.returncode}"))
    report("egress: static probe: direct, IPv6, IPv4-mapped, Fast Open, UDP, device undone, 20000 raced connects",
           "pass" if p.returncode == 0 and not fails and none else "FAIL",
           f"outside got {got}, kernel {d}; loopback listener got {loop_in['connections']} connections; "
           f"{[l for l in p.stdout.splitlines() if l.startswith('egress:')]}" + (f"; {fails}" if fails else "") +
           (f"; rc={p.returncode} {p.stderr[-400:]}" if p.returncode else ""))
    report("egress: the agent still reaches loopback on its port (the bridge's)",
           "pass" if loop_in["connections"] >= 2 else "FAIL", f"{loop_in['connections']} connections arrived")

    if node:
        js = ("const net=require('net');let out=[];function t(h,p){return new Promise(r=>{const s=net.connect({host:h,port:p});"
              "s.setTimeout(1500);s.on('connect',()=>{s.write('leak');s.end();r(h+':connected')});"
              "s.on('timeout',()=>{s.destroy();r(h+':timeout')});s.on('error',e=>r(h+':'+e.code))})}"
              f"(async()=>{{for(const h of ['127.0.0.1','{netns.OUT4}','::ffff:{netns.OUT4}','{netns.OUT6}'])"
              f"out.push(await t(h,{PORT_A}));console.log(out.join(' '))}})()")
        inside = Listen(pair, pair.inside, [PORT_A])
        outside = Listen(pair, pair.outside, [PORT_A])
        before = quiet(pair, pair.outside)
        p = egress_run(a, pair, root, "loopback", [node, "-e", js])
        d, got, none = arrived(pair, before, outside)
        loop_in = inside.done()
        words = p.stdout.split()
        ok = p.returncode == 0 and words[:1] == ["127.0.0.1:connected"] and none and \
            not any(w.endswith(":connected") for w in words[1:])
        report("egress: real Node 22: loopback connects, the outside host (v4, mapped, v6) never hears of it",
               "pass" if ok else "FAIL", f"{p.stdout.strip()}; outside got {got}, kernel {d}" +
               (f"; rc={p.returncode} {p.stderr[-300:]}" if p.returncode else ""))
        # each outside one refused at once (ENETUNREACH) and named, not the loopback one
        audit = [l for l in p.stderr.splitlines() if "egress: refused proto=tcp" in l]
        v4 = sum(f"dst={netns.OUT4}:{PORT_A} " in l for l in audit)
        v6 = sum(f"dst=[{netns.OUT6}]:{PORT_A} " in l for l in audit)
        report("egress: one audit line per refused connect, naming the destination (v4, mapped as v4, v6), "
               "each refused at once (ENETUNREACH)",
               "pass" if v4 == 2 and v6 == 1 and len(audit) == 3 and "comm=node" in audit[0] and
               p.stdout.split()[1:] == [f"{h}:ENETUNREACH" for h in (netns.OUT4, f"::ffff:{netns.OUT4}", netns.OUT6)]
               else "FAIL", f"{audit}; {p.stdout.strip()}")
    else:
        report("egress: real Node 22 in the routed namespace", "SKIP", "no Node 22 at --node")


class Sniff:
    """sniff.py on DEV in a namespace: the frames that arrived, by their content."""

    def __init__(self, pair, ns, dev):
        self.p = subprocess.Popen(pair.cmd(ns, [sys.executable, os.path.join(HERE, "sniff.py"), dev]),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.p.stdout.readline().strip() != "ready":
            raise RuntimeError(f"sniff in {ns} did not start")

    def done(self):
        self.p.stdin.close()
        line = self.p.stdout.readline()
        self.p.wait(timeout=10)
        return json.loads(line)


def egress_datagrams(a, pair, root):
    """Datagrams past the device binding (issue 43): UDP by IP_PKTINFO and
    IPV6_PKTINFO, connected and by sendmmsg, ping's ICMP, UDPv6 to a
    link-local address, IGMP and MLD reports from group joins. Counted at
    an AF_PACKET sniffer outside, frame by frame. The control (egress =
    ports, the default deny list) shows each arriving; under the guard,
    in a root and a non-root start, none does: every inet datagram
    socket is refused."""
    from nonroot import unprivileged
    # as docker's default network has it: ping sockets for every group
    subprocess.run(pair.cmd(pair.inside, ["sysctl", "-qw", "net.ipv4.ping_group_range=0 2147483647"]), check=True)
    ll = ""
    for _ in range(100):  # the outside's link-local address, once DAD is done with it
        out = subprocess.run(["ip", "-n", pair.outside, "-6", "-o", "addr", "show", "dev", "veth1", "scope", "link"],
                             capture_output=True, text=True).stdout
        if "fe80::" in out and "tentative" not in out:
            ll = out.split("inet6 ")[1].split("/")[0]
            break
        time.sleep(0.1)
    if not ll:
        report("egress: datagrams past the device binding", "FAIL", "the outside's link-local address never settled")
        return
    probe = [os.path.join(root, "egress"), "datagrams", netns.OUT4, ll, str(PORT_A)]
    # (the control last: a group it joined is left when it ends, and the
    # kernel repeats that report for a while, which a run after it would see)
    for label, mode, prefix in (("the guard, root start", "loopback", []),
                                ("the guard, non-root start", "loopback", unprivileged(AGENT_UID, AGENT_UID)),
                                ("control, egress = ports", "ports", [])):
        conf = os.path.join(root, f"ward-dgram-{mode}.conf")
        with open(conf, "w") as f:
            f.write(egress_policy(root, mode))
        os.chmod(conf, 0o644)
        sniff = Sniff(pair, pair.outside, "veth1")
        p = subprocess.run(pair.cmd(pair.inside, prefix + [a.ward, "-c", conf, "--", *probe]), capture_output=True,
                           text=True, timeout=60)
        got = sniff.done()
        lines = [l for l in p.stdout.splitlines() if l.startswith(("ok", "FAIL"))]
        if mode == "ports":
            ok = got["marker"] >= 5 and got["igmp"] >= 1 and got["mld"] >= 1
            what = "each way arrives outside (else this test could not fail)"
        else:
            ok = p.returncode == 0 and len(lines) == 8 and got["marker"] == 0 and got["igmp"] == 0 and \
                got["mld"] == 0 and all("EACCES" in l for l in lines)
            what = "every inet datagram socket refused (EACCES), no frame of them outside"
        report(f"egress: datagrams ({label}): {what}", "pass" if ok else "FAIL",
               f"sniffer {got}; {lines}" + ("" if ok else f"; rc {p.returncode} {p.stderr[-300:]}"))


PORT_OFF = 7555  # a port Landlock does not list


def egress_refused(a, pair, root, node):
    """Refusals that answer at once (issue 38): every way a program
    connects to the outside host, from C (blocking and not, v4, v6,
    mapped, a port Landlock allows and one it does not, Fast Open by
    sendto and sendmsg), Python, Node (net.connect, fetch without a
    proxy), curl and git, gets ENETUNREACH, the documented errno, in
    the time it takes to ask PID 1: nothing waits for a SYN that lo
    drops (its first retransmission alone would come after 1 s, so the
    bound below separates the two answers by construction, not by speed).
    Nothing arrives outside, and the agent's own file of refusals, which
    it may read and not write, names each one."""
    probe = os.path.join(root, "egress")
    refusals = os.path.join(root, "refusals.log")
    agent = f"refusals = {refusals}"
    runs = (("the deny list's Fast Open refusal", "", "95"),  # EOPNOTSUPP
            ("Fast Open let through the deny list", "allow = sendto sendmsg\n", "101"))  # ENETUNREACH
    for label, extra, fo in runs:
        conf = os.path.join(root, "ward-refused.conf")
        with open(conf, "w") as f:
            f.write(egress_policy(root, "loopback", extra, agent))
        outside = Listen(pair, pair.outside, [PORT_A, PORT_OFF])
        before = quiet(pair, pair.outside)
        script = (f"{probe} refused {netns.OUT4} {netns.OUT6} {PORT_A} {PORT_OFF} {fo}; rc=$?; "
                  f"echo \"file: $(wc -l < {refusals})\"; "
                  f"if echo forged >> {refusals}; then echo 'file: WRITABLE'; fi 2>/dev/null; exit $rc")
        p = subprocess.run(pair.cmd(pair.inside, [a.ward, "-c", conf, "--", "/bin/sh", "-c", script]),
                           capture_output=True, text=True, timeout=120)
        d, got, none = arrived(pair, before, outside)
        fails = [l for l in p.stdout.splitlines() if l.startswith("FAIL")]
        try:
            lines = open(refusals).read().splitlines()
            st = os.stat(refusals)
        except OSError as e:
            lines, st = [f"unreadable: {e}"], None
        guarded = 14 if fo == "101" else 12
        named = [l for l in lines if "refused=" in l and "errno=ENETUNREACH" in l and
                 (f"dst={netns.OUT4}:" in l or f"dst=[{netns.OUT6}]:" in l) and "allow=" in l]
        read_back = f"file: {guarded}" in p.stdout and "file: WRITABLE" not in p.stdout
        ok = p.returncode == 0 and not fails and none and len(named) == guarded == len(lines) and read_back and \
            st is not None and st.st_uid == 0 and st.st_mode & 0o777 == 0o640
        report(f"egress: refused at once ({label}): C connects blocking and not, v4, v6 and mapped, on an allowed "
               "port and another, Fast Open: ENETUNREACH each, nothing outside; the agent's own file names each "
               "one (it reads it, cannot write it)", "pass" if ok else "FAIL",
               f"{[l for l in p.stdout.splitlines() if l.startswith(('ok', 'FAIL'))][:3]}...; {fails}; "
               f"{len(named)}/{len(lines)} lines named; outside got {got}, kernel {d}; "
               f"{[l for l in p.stdout.splitlines() if l.startswith('file:')]}" +
               ("" if ok else f"; rc={p.returncode} {p.stderr[-300:]} {lines[:2]}"))

    # real programs: each sees the refusal at once, with its own words for ENETUNREACH
    py = ("import socket, errno, time\n"
          "def t(name, f):\n"
          "    t0 = time.monotonic()\n"
          "    try:\n"
          "        r = f(); w = errno.errorcode.get(r, str(r)) if isinstance(r, int) else 'connected'\n"
          "    except OSError as e:\n"
          "        w = errno.errorcode.get(e.errno or 0, type(e).__name__)\n"
          "    print(f'{name}:{w}:{(time.monotonic() - t0) * 1000:.1f}')\n"
          f"t('py-v4', lambda: socket.create_connection(('{netns.OUT4}', {PORT_A}), timeout=20))\n"
          f"t('py-v6', lambda: socket.create_connection(('{netns.OUT6}', {PORT_A}), timeout=20))\n"
          "def nb(host, fam):\n"
          "    s = socket.socket(fam); s.setblocking(False)\n"
          f"    return s.connect_ex((host, {PORT_A}))\n"
          f"t('py-nonblocking-v4', lambda: nb('{netns.OUT4}', socket.AF_INET))\n"
          f"t('py-nonblocking-mapped', lambda: nb('::ffff:{netns.OUT4}', socket.AF_INET6))\n")
    sh = ("ms() { echo $(( $(date +%s%N) / 1000000 )); }; "
          f"for u in http://{netns.OUT4}:{PORT_A}/ 'http://[{netns.OUT6}]:{PORT_A}/'; do t0=$(ms); "
          "e=$(curl -v -sS --max-time 20 \"$u\" 2>&1 >/dev/null); rc=$?; "
          "echo \"curl:$rc:$(( $(ms) - t0 )):$(echo \"$e\" | grep -m1 -o 'Network is unreachable')\"; done; "
          f"t0=$(ms); e=$(git ls-remote git://{netns.OUT4}:{PORT_A}/x 2>&1 >/dev/null); rc=$?; "
          "echo \"git:$rc:$(( $(ms) - t0 )):$(echo \"$e\" | grep -m1 -o 'Network is unreachable')\"")
    conf = os.path.join(root, "ward-refused-tools.conf")
    with open(conf, "w") as f:
        f.write(egress_policy(root, "loopback", "", agent)
                .replace("env = PATH=/usr/bin:/bin", "env = PATH=/usr/bin:/bin\nenv = HOME=/tmp")
                .replace("scope = abstract signal", "write = /dev/null\nscope = abstract signal"))
    outside = Listen(pair, pair.outside, [PORT_A])
    before = quiet(pair, pair.outside)
    p = subprocess.run(pair.cmd(pair.inside, [a.ward, "-c", conf, "--", "/bin/sh", "-c",
                                              f"/usr/bin/python3 -c \"$0\"; {sh}", py]),
                       capture_output=True, text=True, timeout=180)
    res = [l.split(":", 3) for l in p.stdout.splitlines() if l.startswith(("py", "curl", "git"))]
    if node:
        js = ("const net=require('net');const t0=()=>process.hrtime.bigint();"
              "function c(n,h){return new Promise(r=>{const s=t0();const k=net.connect({host:h,port:%d});"
              "k.on('connect',()=>{k.destroy();r(n+':connected:0')});"
              "k.on('error',e=>r(n+':'+e.code+':'+Number((t0()-s)/1000000n)))})}"
              "(async()=>{const o=[];o.push(await c('node-v4','%s'));o.push(await c('node-v6','%s'));"
              "const s=t0();try{await fetch('http://%s:%d/');o.push('fetch:connected:0')}"
              "catch(e){o.push('fetch:'+(e.cause&&e.cause.code)+':'+Number((t0()-s)/1000000n))}"
              "console.log(o.join('\\n'))})()") % (PORT_A, netns.OUT4, netns.OUT6, netns.OUT4, PORT_A)
        q = subprocess.run(pair.cmd(pair.inside, [a.ward, "-c", conf, "--", node, "-e", js]),
                           capture_output=True, text=True, timeout=120)
        res += [l.split(":", 3) for l in q.stdout.splitlines() if l.startswith(("node", "fetch"))]
    d, got, none = arrived(pair, before, outside)

    def good(r):
        kind, what, ms = r[0], r[1], float(r[2]) if len(r) > 2 else 1e9
        if kind.startswith(("py", "node", "fetch")):
            return what == "ENETUNREACH" and ms < 1000
        # curl exits 7 (could not connect) and git 128, each saying the network is unreachable
        return what in ("7", "128") and "unreachable" in (r[3] if len(r) > 3 else "") and ms < 1000
    want = 4 + 3 + (3 if node else 0)
    ok = len(res) == want and all(good(r) for r in res) and none
    report("egress: refused at once for real programs: Python (blocking, non-blocking, v6, mapped), curl (v4, v6), "
           "git (git://), Node (net.connect v4 and v6, fetch without a proxy): ENETUNREACH, each in under 1 s "
           "(ms shown), nothing outside", "pass" if ok else "FAIL",
           f"{[':'.join(r[:3]) for r in res]}; outside got {got}, kernel {d}" +
           ("" if ok else f"; {p.stdout[-300:]} {p.stderr[-300:]}"))


def egress_others(a, pair, root):
    """The agent and ward's processes (issue 43): prlimit, setpriority,
    ioprio_set, sched_setaffinity and sched_setattr on ward (which answers
    the guard's calls) refused, in a root start and a non-root one (where
    ward shares the agent's uid); ward's limits unchanged, read from the
    kernel; the caller's own still allowed."""
    from nonroot import unprivileged
    conf = os.path.join(root, "ward-others.conf")
    with open(conf, "w") as f:
        f.write(egress_policy(root, "loopback"))
    os.chmod(conf, 0o644)
    for label, prefix in (("root start", []), ("non-root start", unprivileged(AGENT_UID, AGENT_UID))):
        script = (f"{os.path.join(root, 'egress')} others; "
                  "grep -E 'open files|cpu time' /proc/$PPID/limits")
        p = subprocess.run(pair.cmd(pair.inside, prefix + [a.ward, "-c", conf, "--", "/bin/sh", "-c", script]),
                           capture_output=True, text=True, timeout=60)
        lines = [l for l in p.stdout.splitlines() if l.startswith(("ok", "FAIL"))]
        limits = [l.split() for l in p.stdout.splitlines() if l.startswith(("Max open files", "Max cpu time"))]
        unchanged = bool(limits) and all(l[-3] not in ("3",) for l in limits)
        ok = "egress: 7 passed, 0 failed" in p.stdout and unchanged
        report(f"egress: ward's processes out of the agent's reach ({label}): limits, priority, I/O class, "
               "affinity and scheduling of ward refused (EPERM), its limits unchanged",
               "pass" if ok else "FAIL", f"{[l for l in lines if l.startswith('FAIL')]}; limits {limits}"
               + ("" if ok else f"; {p.stdout[-600:]} {p.stderr[-300:]}"))


def egress_stream(a, pair, root):
    """The exception an operator makes: a stream route to one outside
    address and port. The agent reaches it through the bridge, and still
    not directly; what arrives outside is the agent's bytes and no more."""
    db = PORT_B  # a port Landlock lets the agent connect to: the guard alone keeps it in
    if not os.access("/usr/bin/python3", os.X_OK):  # the agent's, under read = /usr
        report("egress: a stream route to one outside address", "SKIP", "no /usr/bin/python3 to run as the agent")
        return
    conf = os.path.join(root, "ward-stream.conf")
    with open(conf, "w") as f:
        f.write(egress_policy(root, "loopback", f"[route db]\nlisten = 127.0.0.1:{PORT_A}\n"
                              f"upstream = tcp:{netns.OUT4}:{db}\nprotocol = stream\n"))
    py = ("import socket\n"
          f"s = socket.create_connection(('127.0.0.1', {PORT_A}), timeout=10)\n"
          "s.sendall(b's' * 1000); s.shutdown(socket.SHUT_WR)\n"
          "print('bridge:end' if s.recv(10) == b'' else 'bridge:data')\n"
          "t = socket.socket(); t.settimeout(1.5)\n"
          "try:\n"
          f"    t.connect(('{netns.OUT4}', {db})); t.sendall(b'leak'); print('direct:connected')\n"
          "except OSError as e:\n"
          "    import errno; print('direct:' + errno.errorcode.get(e.errno or 0, type(e).__name__))\n")
    outside = Listen(pair, pair.outside, [db, PORT_A])
    p = subprocess.run(pair.cmd(pair.inside, [a.ward, "-c", conf, "--", "/usr/bin/python3", "-c", py]),
                       capture_output=True, text=True, timeout=60)
    got = outside.done()
    audit = [l for l in p.stderr.splitlines() if "route=db stream" in l]
    # the bridge's start-up health check is a connection with no byte
    ok = p.returncode == 0 and p.stdout.split() == ["bridge:end", "direct:ENETUNREACH"] and \
        got["bytes"] == 1000 and 1 <= got["connections"] <= 2 and any("in=1000 " in l for l in audit)
    report("egress: a stream route to one outside address: the agent reaches it through the bridge, "
           "never directly, and only its bytes arrive", "pass" if ok else "FAIL",
           f"{p.stdout.split()}; outside got {got}; {audit}" + ("" if ok else f"; rc={p.returncode} {p.stderr[-400:]}"))


def egress_rootfs(a, rootfs):
    """A minimal image for the routed namespace: static ward and the
    egress probe, passwd, the policy of the host cases."""
    for d in ("sbin", "etc/ward", "t", "usr", "proc", "dev", "tmp"):
        os.makedirs(os.path.join(rootfs, d), exist_ok=True)
    shutil.copy(a.ward, os.path.join(rootfs, "sbin", "ward"))
    shutil.copy(a.egress_probe, os.path.join(rootfs, "t", "egress"))
    with open(os.path.join(rootfs, "etc", "passwd"), "w") as f:
        f.write(f"root:x:0:0:root:/:/bin/sh\nagent:x:{AGENT_UID}:{AGENT_UID}:agent:/t:/bin/sh\n")
    with open(os.path.join(rootfs, "etc", "group"), "w") as f:
        f.write(f"root:x:0:\nagent:x:{AGENT_UID}:\n")
    with open(os.path.join(rootfs, "etc", "ward", "ward.conf"), "w") as f:
        f.write(egress_policy("/t", "loopback"))


def egress_containers(a, pair):
    """The same probe as ward's image entrypoint under runc and podman,
    each joining the routed namespace as a runtime's network would be:
    nothing may arrive outside."""
    probe = ["/sbin/ward", "-c", "/etc/ward/ward.conf", "--", "/t/egress", "tries", netns.OUT4, netns.OUT6,
             str(PORT_A), str(PORT_B), "2000"]
    ns_path = f"/run/netns/{pair.inside}"
    work = tempfile.mkdtemp(prefix="ward-egress-ct-")
    try:
        rootfs = os.path.join(work, "rootfs")
        egress_rootfs(a, rootfs)
        for rt in ("runc", "podman"):
            if not shutil.which(rt):
                report(f"egress: {rt} in the routed namespace", "SKIP", f"{rt} is not installed")
                continue
            inside = Listen(pair, pair.inside, [PORT_A])
            outside = Listen(pair, pair.outside, [PORT_A, PORT_B])
            before = quiet(pair, pair.outside)
            if rt == "runc":
                bundle = os.path.join(work, "bundle")
                os.makedirs(bundle, exist_ok=True)
                if not os.path.exists(os.path.join(bundle, "rootfs")):
                    os.symlink(rootfs, os.path.join(bundle, "rootfs"))
                subprocess.run(["runc", "spec"], cwd=bundle, check=True, capture_output=True)
                spec = json.load(open(os.path.join(bundle, "config.json")))
                spec["process"].update(terminal=False, args=probe, cwd="/t")
                caps = spec["process"]["capabilities"]
                for k in caps:  # runc's defaults and what switching user takes
                    caps[k] = sorted(set(caps[k]) | {"CAP_SETUID", "CAP_SETGID"})
                spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"] if n["type"] != "network"] + \
                    [{"type": "network", "path": ns_path}]
                json.dump(spec, open(os.path.join(bundle, "config.json"), "w"))
                os.unlink(os.path.join(bundle, "rootfs"))
                shutil.move(rootfs, os.path.join(bundle, "rootfs"))
                cid = f"ward-egress-{os.getpid()}"
                p = subprocess.run(["runc", "run", cid], cwd=bundle, capture_output=True, text=True,
                                   stdin=subprocess.DEVNULL, timeout=180)
                subprocess.run(["runc", "delete", "-f", cid], capture_output=True)
                shutil.move(os.path.join(bundle, "rootfs"), rootfs)
            else:
                pm, env = podman_setup(os.path.join(work, "podman"))
                p = subprocess.run(pm + ["run", "--rm", "-i", "--network", f"ns:{ns_path}", "--rootfs", rootfs] +
                                   probe, capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env,
                                   timeout=180)
                subprocess.run(pm + ["system", "reset", "-f"], env=env, capture_output=True)
                subprocess.run(["umount", "-R", os.path.join(work, "podman", "root"),
                                os.path.join(work, "podman", "run")], capture_output=True)
            d, got, none = arrived(pair, before, outside)
            loop_in = inside.done()
            out = p.stdout + p.stderr
            fails = [l for l in out.splitlines() if l.startswith("FAIL")]
            summary = [l for l in out.splitlines() if l.startswith("egress:")]
            ok = p.returncode == 0 and not fails and none and loop_in["connections"] >= 2 and \
                summary and "0 failed" in summary[-1]
            report(f"egress: {rt} in the routed namespace: ward as the entrypoint, the static probe reaches "
                   "loopback and nothing outside", "pass" if ok else "FAIL",
                   f"outside got {got}, kernel {d}; loopback got {loop_in['connections']}; {summary}" +
                   (f"; {fails}" if fails else "") + ("" if ok else f"; rc={p.returncode} {out[-600:]}"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


EPH_LO, EPH_HI, UP_PORT = 40000, 40019, 40005  # a small ephemeral range, a tcp: upstream inside it


def egress_listen(a, root):
    """listen() on a socket never bound takes an ephemeral port, which no
    Landlock rule judges: with the upstream down, the agent grabs its port
    and a request through the bridge brings it the route's secret header.
    The guard keeps the agent's sockets off that port."""
    route = (f"[route up]\nlisten = 127.0.0.1:{PORT_A}\nupstream = tcp:127.0.0.2:{UP_PORT}\npath = /v1/\n"
             "header = X-Secret: s3cret-value\n")
    private = tempfile.mkdtemp(prefix="ward-listen-")  # the config holds the header: out of the agent's reach
    with netns.Lone("wl", [f"net.ipv4.ip_local_port_range={EPH_LO} {EPH_HI}"]) as ns:
        runs = {}
        for mode in ("ports", "loopback", "loopback-no-seccomp"):
            conf = os.path.join(private, f"ward-listen-{mode}.conf")
            text = egress_policy(root, mode.split("-")[0]) + route
            if mode.endswith("no-seccomp"):  # the guard's own filter must hold the range
                text = text.replace("[seccomp]\nmode = default\n", "")
            with open(conf, "w") as f:
                f.write(text)
            p = subprocess.run(ns.cmd([a.ward, "-c", conf, "--", os.path.join(root, "egress"), "grab",
                                       str(PORT_A), str(UP_PORT)]), capture_output=True, text=True, timeout=60)
            lines = dict(l.split(":", 1) for l in p.stdout.splitlines() if ":" in l)
            runs[mode] = (p, [int(x) for x in lines.get("ports", "").split()], lines.get("caught", "").strip(),
                          lines.get("bridge", "").strip(), lines.get("widen", "").strip())
        p, ports, caught, bridge, widen = runs["ports"]
        report("egress: control, egress = ports: listen() unbound takes the down upstream's port, "
               "the bridge sends it the secret header",
               "pass" if UP_PORT in ports and "RECEIVED" in caught else "FAIL",
               f"ports {ports}; caught {caught!r}; bridge {bridge!r}" + ("" if p.returncode == 0 else
                                                                         f"; rc={p.returncode} {p.stderr[-300:]}"))
        for mode, label in (("loopback", ""), ("loopback-no-seccomp", ", with no [seccomp] (the guard's own filter)")):
            p, ports, caught, bridge, widen = runs[mode]
            ok = p.returncode == 0 and ports and UP_PORT not in ports and caught == "nothing" and \
                widen == "EPERM" and all(EPH_LO <= x <= EPH_HI for x in ports) and "ephemeral" not in p.stderr
            report("egress: the guard keeps listen() off a tcp: upstream's port (IP_LOCAL_PORT_RANGE, widening "
                   f"refused){label}, nothing reaches the agent",
                   "pass" if ok else "FAIL", f"widen {widen}; ports {ports}; caught {caught!r}; bridge {bridge!r}" +
                   ("" if ok else f"; rc={p.returncode} {p.stderr[-400:]}"))
    shutil.rmtree(private, ignore_errors=True)


# ---------------------------------------------------------------- containers

def make_rootfs(a, rootfs, allowed):
    """A minimal image: static ward and probe, passwd, the policy."""
    for d in ("sbin", "etc/ward", "proc", "dev", "tmp", "sys", "usr"):
        os.makedirs(os.path.join(rootfs, d), exist_ok=True)
    shutil.copy(a.ward, os.path.join(rootfs, "sbin", "ward"))
    make_tree(os.path.join(rootfs, "t"), a.probe)
    with open(os.path.join(rootfs, "etc", "passwd"), "w") as f:
        f.write(f"root:x:0:0:root:/:/bin/sh\nagent:x:{AGENT_UID}:{AGENT_UID}:agent:/t/rw:/bin/sh\n")
    with open(os.path.join(rootfs, "etc", "group"), "w") as f:
        f.write(f"root:x:0:\nagent:x:{AGENT_UID}:\n")
    with open(os.path.join(rootfs, "etc", "ward", "ward.conf"), "w") as f:
        f.write(policy("/t", allowed).replace(f"user = {AGENT_UID}:{AGENT_UID}", "user = agent") +
                "[ward]\nevidence = /t/evidence.json\n")


def probe_args(allowed, denied, tag):
    return ["/t/ro/escape", "probe", "/t", str(allowed), str(denied), tag]


def runc(a):
    if not shutil.which("runc"):
        report("runc: escape probe as the agent", "SKIP", "runc is not installed")
        return
    allowed, denied = Listener(), Listener()
    tag = f"r{os.getpid()}"
    bundle = tempfile.mkdtemp(prefix="ward-runc-")
    rootfs = os.path.join(bundle, "rootfs")
    make_rootfs(a, rootfs, allowed.port)
    subprocess.run(["runc", "spec"], cwd=bundle, check=True)
    spec = json.load(open(os.path.join(bundle, "config.json")))
    spec["process"]["terminal"] = False
    spec["process"]["args"] = ["/sbin/ward", "--"] + probe_args(allowed.port, denied.port, tag)
    spec["process"]["cwd"] = "/t/rw"
    # runc's default capabilities plus what switching user takes, and no
    # CAP_SETPCAP: ward cannot empty the bounding set and must say so
    caps = spec["process"]["capabilities"]
    for k in caps:
        caps[k] = sorted(set(caps[k]) | {"CAP_SETUID", "CAP_SETGID"})
    spec["root"]["readonly"] = False
    # host network, so the probe reaches the test's loopback listeners
    spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"] if n["type"] != "network"]
    json.dump(spec, open(os.path.join(bundle, "config.json"), "w"))
    cid = f"ward-escape-{os.getpid()}"
    # the outsider joins the container as the same uid, outside ward's tree
    rc, text = run_with_outsider(["runc", "run", "--bundle", bundle, cid],
                                 ["runc", "exec", "-d", "--user", f"{AGENT_UID}:{AGENT_UID}", cid, "/t/ro/escape",
                                  "outsider", tag], os.path.join(bundle, "out.txt"))
    check_probe_output("runc: escape probe as the agent", 0 if rc == 0 else rc, text)
    ev_path = os.path.join(rootfs, "t", "evidence.json")
    st = probe_status(text)  # the kernel's, read by the probe itself
    if os.path.exists(ev_path):
        ev = json.load(open(ev_path))
        bnd = st.get("CapBnd")
        noted = any("bounding set" in d for d in ev["degradations"])
        same = all(st.get(k) == " ".join(ev["agent"].get(k, "").split()) for k in ("CapEff", "CapBnd", "NoNewPrivs"))
        ok = st.get("CapEff") == st.get("CapPrm") == st.get("CapAmb") == "0000000000000000" and \
            st.get("NoNewPrivs") == "1" and st.get("Seccomp") == "2" and \
            (bnd == "0000000000000000" or noted) and same
        report("runc: the probe's /proc/self/status: no caps, NNP, seccomp; a kept bounding set is in the "
               "evidence's degradations", "pass" if ok else "FAIL",
               f"CapEff {st.get('CapEff')} CapBnd {bnd} (reported as degradation: {noted}), "
               f"Seccomp {st.get('Seccomp')}, evidence agrees: {same}")
    else:
        report("runc: evidence: no caps, NNP, seccomp; a kept bounding set is reported", "FAIL", "no evidence")
    subprocess.run(["runc", "delete", "-f", cid], capture_output=True)

    # runc's default spec as it is: no CAP_SETUID/CAP_SETGID, so no user
    # switch is possible; ward must refuse with a reason, agent not run
    for k in spec["process"]["capabilities"]:
        spec["process"]["capabilities"][k] = [c for c in spec["process"]["capabilities"][k]
                                              if c not in ("CAP_SETUID", "CAP_SETGID")]
    spec["process"]["args"] = ["/sbin/ward", "--", "/t/ro/escape", "outsider", "never-started"]
    json.dump(spec, open(os.path.join(bundle, "config.json"), "w"))
    p = subprocess.run(["runc", "run", cid + "-d"], cwd=bundle, capture_output=True, stdin=subprocess.DEVNULL,
                       timeout=30)
    err = p.stdout.decode() + p.stderr.decode()
    ok = p.returncode == 3 and "no CAP_SETUID/CAP_SETGID" in err and "outsider ready" not in err
    report("runc default spec (no CAP_SETUID): refused with exit 3, agent never runs", "pass" if ok else "FAIL",
           f"rc={p.returncode}: {err.strip().splitlines()[-1] if err.strip() else ''}")
    subprocess.run(["runc", "delete", "-f", cid + "-d"], capture_output=True)
    shutil.rmtree(bundle, ignore_errors=True)


NOBODY = 65534


def run_with_outsider(run, join, out_path):
    """A container started (run) whose probe waits for the outsider, the
    outsider joined (join, tried again until the container is there), the
    probe waited for: (its status or "TIMEOUT", its output)."""
    with open(out_path, "w+") as out:
        proc = subprocess.Popen(run, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        for _ in range(100):
            if subprocess.run(join, capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        try:
            rc = proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = "TIMEOUT"
        out.seek(0)
        return rc, out.read()


def nonroot_containers(a):
    """The escape probe with ward started as uid 65534, every capability set
    empty and no_new_privs, under runc (a non-root spec) and under
    containerd (ctr run --config with the same spec): the agent is then
    65534 too (the rootfs's ward.conf names uid 1000: a warning); the
    outsider joins each container as 65534."""
    allowed, denied = Listener(), Listener()
    bundle = tempfile.mkdtemp(prefix="ward-nonroot-rt-")
    rootfs = os.path.join(bundle, "rootfs")
    make_rootfs(a, rootfs, allowed.port)
    # the rootfs's ward.conf has ward write its evidence to /t, root's
    open(os.path.join(rootfs, "t", "evidence.json"), "w").close()
    for p in ("t/rw", "t/secret/file", "t/evidence.json"):
        os.chown(os.path.join(rootfs, p), NOBODY, NOBODY)
    subprocess.run(["runc", "spec"], cwd=bundle, check=True)
    with open(os.path.join(bundle, "config.json")) as f:
        spec = json.load(f)
    p = spec["process"]
    p["terminal"] = False
    p["cwd"] = "/t/rw"
    p["user"] = {"uid": NOBODY, "gid": NOBODY}
    p["capabilities"] = {k: [] for k in ("bounding", "effective", "inheritable", "permitted", "ambient")}
    p["noNewPrivileges"] = True
    spec["root"] = {"path": rootfs, "readonly": False}
    spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"] if n["type"] != "network"]
    ctd = None
    try:
        for rt in ("runc", "containerd"):
            if not shutil.which(rt):
                report(f"{rt} non-root: escape probe", "SKIP", f"{rt} is not installed")
                continue
            tag = f"{rt[0]}n{os.getpid()}"
            p["args"] = ["/sbin/ward", "--evidence", "--"] + probe_args(allowed.port, denied.port, tag)
            with open(os.path.join(bundle, "config.json"), "w") as f:
                json.dump(spec, f)
            cid = f"ward-escape-nr-{rt}-{os.getpid()}"
            if rt == "runc":
                run = ["runc", "run", "--bundle", bundle, cid]
                join = ["runc", "exec", "-d", "--user", f"{NOBODY}:{NOBODY}", cid]
            else:
                from containerd import Containerd
                ctd = Containerd(os.path.join(bundle, "ctd")).start()
                spec["linux"]["cgroupsPath"] = f"/{Containerd.NAMESPACE}/{cid}"
                with open(os.path.join(bundle, "config.json"), "w") as f:
                    json.dump(spec, f)
                base = ["ctr", "-a", ctd.sock, "-n", Containerd.NAMESPACE]
                run = base + ["run", "--rm", "--config", os.path.join(bundle, "config.json"), cid]
                join = base + ["tasks", "exec", "-d", "--exec-id", "outsider", "--user", f"{NOBODY}", cid]
            # ctr's stdio copy can lose a task's output when it exits (containerd
            # issue 5741): a run that exited 0 (the probe exits only after its
            # summary line) but shows no summary is run again,
            # up to three times; a probe that prints and fails is never retried
            for attempt in range(3):
                rc, text = run_with_outsider(run, join + ["/t/ro/escape", "outsider", tag],
                                             os.path.join(bundle, f"out-{rt}-{attempt}.txt"))
                if rt == "runc" or rc != 0 or "escape:" in text:
                    break
                print(f"note: {rt}: the task exited 0 and ctr gave no summary line "
                      f"({len(text)} bytes): run {attempt + 2} of 3")
            check_probe_output(f"{rt} non-root (uid {NOBODY}, no capabilities, no_new_privs): escape probe as "
                               "the agent", 0 if rc == 0 else rc, text)
            st = probe_status(text)
            ev = next((json.loads(l) for l in text.splitlines() if l.startswith("{")), {})
            start = ev.get("start", {})
            ok = st.get("CapEff") == st.get("CapBnd") == "0000000000000000" and st.get("NoNewPrivs") == "1" \
                and st.get("Seccomp") == "2" and start.get("root") is False and start.get("uid") == NOBODY \
                and start.get("ward_environ_owner") == 0
            report(f"{rt} non-root: the probe's /proc/self/status (no capability, NNP, seccomp) and the evidence "
                   "(started without root, ward not dumpable)", "pass" if ok else "FAIL",
                   f"CapEff {st.get('CapEff')} CapBnd {st.get('CapBnd')} Seccomp {st.get('Seccomp')}; "
                   f"start {json.dumps(start)}")
            if rt == "runc":
                subprocess.run(["runc", "delete", "-f", cid], capture_output=True)
    finally:
        if ctd:
            ctd.stop()
        shutil.rmtree(bundle, ignore_errors=True)


def docker(a):
    if not shutil.which("dockerd") or not shutil.which("docker"):
        report("docker: escape probe as the agent", "SKIP", "docker.io is not installed")
        return
    allowed, denied = Listener(), Listener()
    tag = f"d{os.getpid()}"
    work = tempfile.mkdtemp(prefix="ward-docker-")
    dk = Dockerd(os.path.join(work, "dk"))
    try:
        try:
            dk.start()
        except RuntimeError as e:
            report("docker: escape probe as the agent", "FAIL", str(e))
            return
        env = dk.env
        rootfs = os.path.join(work, "rootfs")
        make_rootfs(a, rootfs, allowed.port)
        if a.egress_probe:
            shutil.copy(a.egress_probe, os.path.join(rootfs, "t", "ro", "egress"))
        tar = os.path.join(work, "rootfs.tar")
        subprocess.run(["tar", "-C", rootfs, "-cf", tar, "."], check=True)
        subprocess.run(["docker", "import", "--change", 'ENTRYPOINT ["/sbin/ward"]', "--change", "WORKDIR /t/rw",
                        tar, "ward-escape:test"], env=env, check=True, capture_output=True)
        name = f"ward-escape-{os.getpid()}"
        # no extra flags but the host network (to reach the listeners)
        subprocess.run(["docker", "run", "-d", "--name", name, "--network", "host", "ward-escape:test", "--"] +
                       probe_args(allowed.port, denied.port, tag), env=env, check=True, capture_output=True)
        for _ in range(100):
            r = subprocess.run(["docker", "exec", "-d", "-u", f"{AGENT_UID}:{AGENT_UID}", name, "/t/ro/escape",
                                "outsider", tag], env=env, capture_output=True)
            if r.returncode == 0:
                break
            time.sleep(0.05)
        rc = subprocess.run(["docker", "wait", name], env=env, capture_output=True, timeout=120).stdout.decode().strip()
        logs = subprocess.run(["docker", "logs", name], env=env, capture_output=True)
        check_probe_output("docker: escape probe as the agent", int(rc) if rc.isdigit() else rc,
                           logs.stdout.decode() + logs.stderr.decode())
        cp = subprocess.run(["docker", "cp", f"{name}:/t/evidence.json", os.path.join(work, "ev.json")],
                            env=env, capture_output=True)
        if cp.returncode == 0:
            ev = json.load(open(os.path.join(work, "ev.json")))
            st = probe_status(logs.stdout.decode())  # the kernel's, read by the probe itself
            same = all(st.get(k) == " ".join(ev["agent"].get(k, "").split())
                       for k in ("CapEff", "CapBnd", "NoNewPrivs", "Seccomp_filters"))
            ok = st.get("CapEff") == st.get("CapPrm") == st.get("CapBnd") == st.get("CapAmb") == \
                "0000000000000000" and st.get("NoNewPrivs") == "1" and st.get("Seccomp") == "2" and \
                int(st.get("Seccomp_filters", "0")) >= 2 and same
            report("docker: the probe's /proc/self/status: no caps at all, ours stacked on docker's filter",
                   "pass" if ok else "FAIL", f"CapBnd {st.get('CapBnd')}, Seccomp_filters "
                   f"{st.get('Seccomp_filters')}, evidence agrees: {same}")
        else:
            report("docker: evidence: no caps at all, ours stacked on docker's filter", "FAIL", cp.stderr.decode())
        subprocess.run(["docker", "rm", "-f", name], env=env, capture_output=True)
        if a.egress_probe:
            # what an address check on connect() would need under docker's defaults: a
            # sibling of the agent's uid reading its memory or taking its socket
            p = subprocess.run(["docker", "run", "--rm", "-u", f"{AGENT_UID}:{AGENT_UID}", "--network", "none",
                                "--entrypoint", "/t/ro/egress", "ward-escape:test", "peek"], env=env,
                               capture_output=True, text=True, timeout=60)
            seen = dict(l.split(" ", 2)[1:] for l in p.stdout.splitlines() if l.startswith("peek: "))
            want = {"pidfd_getfd": "EPERM", "process_vm_readv": "EPERM", "/proc/PID/mem": "ok"}
            report("docker (measured): its default profile refuses pidfd_getfd and process_vm_readv without "
                   "CAP_SYS_PTRACE; /proc/PID/mem of a sibling is a file read (no Yama here)",
                   "pass" if seen == want else "FAIL", f"{seen}" + ("" if p.returncode == 0 else f" rc={p.returncode}"))
    finally:
        dk.stop()
        shutil.rmtree(work, ignore_errors=True)


def nonroot_cases(a):
    """ward started without root (nonroot.py): the escape probe as for a
    root start, then what keeps one uid's agent from ward and the bridge."""
    from nonroot import nonroot, unprivileged
    root, conf, allowed, denied = policy_tree(a, "ward-escape-nr-")
    tag = f"n{os.getpid()}"
    outsider = subprocess.Popen([os.path.join(root, "ro", "escape"), "outsider", tag], preexec_fn=as_agent,
                                stdout=subprocess.PIPE)
    outsider.stdout.readline()
    try:
        p = subprocess.run(unprivileged(AGENT_UID, AGENT_UID) + [a.ward, "-c", conf, "--",
                                                                os.path.join(root, "ro", "escape"), "probe", root,
                                                                str(allowed.port), str(denied.port), tag],
                           capture_output=True, timeout=120, cwd=os.path.join(root, "rw"))
        check_probe_output(f"nonroot: escape probe as the agent, ward started as uid {AGENT_UID} with no "
                           "capability and no_new_privs", p.returncode, p.stdout.decode() + p.stderr.decode()[-500:])
        report("nonroot: the same-uid outsider survived the probe's kill()",
               "pass" if outsider.poll() is None else "FAIL", "")
    finally:
        outsider.kill()
        outsider.wait()
        shutil.rmtree(root, ignore_errors=True)
    nonroot(a, AGENT_UID)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--probe", required=True)
    ap.add_argument("--runtimes", default="host,nonroot,cli,node,egress,runc,nonroot-containers,docker")
    ap.add_argument("--egress-probe", help="the static egress probe (tests/sandbox/egress.c)")
    ap.add_argument("--node", help="a Node 22 binary for the workload test")
    ap.add_argument("--label", default="", help="suffix of the summary line")
    a = ap.parse_args()
    a.ward = os.path.abspath(a.ward)
    a.probe = os.path.abspath(a.probe)
    a.egress_probe = a.egress_probe and os.path.abspath(a.egress_probe)
    if os.geteuid() != 0:
        print("sandbox: needs root")
        return 2
    for rt in a.runtimes.split(","):
        try:
            {"host": host, "nonroot": nonroot_cases, "cli": cli, "node": node_workload, "egress": egress, "runc": runc,
             "nonroot-containers": nonroot_containers, "docker": docker}[rt](a)
        except Exception as e:  # a harness error is a failure
            report(f"{rt}: harness", "FAIL", repr(e))
    return RESULTS.summary("sandbox", a.label)


if __name__ == "__main__":
    sys.exit(main())
