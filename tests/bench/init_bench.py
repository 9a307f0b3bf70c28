#!/usr/bin/python3
"""ward against tini-static, dumb-init and catatonit, side by side in one run.

Measures, for each init (as PID 1 of a new pid namespace unless noted):
  start    wall time of `INIT -- /bin/true` (hyperfine, not PID 1, like the research;
           10 rounds of every command, so a drift of the machine is shared)
  hwm      VmHWM of the init while its child sleeps (kB)
  siglat   kill(init, TERM) -> the child's TERM handler runs (microseconds)
  reap     time until 10 000 orphans released at once are all reaped (ms)
(the last three in 5 rounds of every init) and prints medians, spreads and
ratios ward/anchor (below 1.0: ward is ahead).
No thresholds: this reports, it does not assert.
"""
import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from proctree import children  # noqa: E402

ANCHORS = ["tini-static", "dumb-init", "catatonit"]


def init_pid(unshare_pid, binary, timeout=5):
    want = os.path.realpath(shutil.which(binary) or binary)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        c = children(unshare_pid)
        if c:
            try:
                if os.path.realpath(f"/proc/{c[0]}/exe") == want and children(c[0]):
                    return c[0]
            except OSError:
                pass
        time.sleep(0.001)
    return None


CONFINED = """[agent]
user = 65534
env = PATH=/usr/bin:/bin
[landlock]
read = /usr /etc
scope = abstract signal
[seccomp]
"""


def bench_start(inits, runs, confined_conf, ports_conf, rounds=10):
    """hyperfine runs each command's samples back to back: in rounds of all
    the commands, a machine that slows down during the run slows them all
    alike instead of whichever ran then."""
    cmds = ["/bin/true"] + [f"{argv[0]} -- /bin/true" for argv in inits.values()] + \
        [f"{inits['ward'][0]} -c {confined_conf} -- /bin/true", f"{inits['ward'][0]} -c {ports_conf} -- /bin/true"]
    times = [[] for _ in cmds]
    for _ in range(rounds):
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            subprocess.run(["hyperfine", "-N", "--warmup", "10", "--runs", str(max(runs // rounds, 2)),
                            "--export-json", out.name] + cmds,
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for t, r in zip(times, json.load(open(out.name))["results"]):
                t += r["times"]
    table = {"/bin/true": times[0]}
    for name, t in zip(inits, times[1:]):
        table[name] = t
    table["ward confined"] = times[-2]
    table["ward confined, ports"] = times[-1]
    return {k: [t * 1000 for t in v] for k, v in table.items()}  # ms


def bench_hwm(argv, helper, n):
    """VmHWM, and the anonymous memory (what the init itself owns; the
    rest of its RSS is shared, read-only pages of its binary)."""
    vals, private = [], []
    for _ in range(n):
        p = subprocess.Popen(["unshare", "-fp", "--mount-proc"] + argv + ["sleep", "1"],
                             stderr=subprocess.DEVNULL)
        pid = init_pid(p.pid, argv[0])
        time.sleep(0.2)
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    vals.append(int(line.split()[1]))
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Anonymous:"):
                    private.append(int(line.split()[1]))
        p.wait()
    return vals, private


def bench_siglat(argv, helper, n):
    vals = []
    for _ in range(n):
        r, w = os.pipe()
        p = subprocess.Popen(["unshare", "-fp", "--mount-proc"] + argv + [helper, "recv", str(w)],
                             pass_fds=(w,), stderr=subprocess.DEVNULL)
        os.close(w)
        if os.read(r, 1) != b"R":
            p.kill()
            continue
        pid = init_pid(p.pid, argv[0])
        t0 = time.monotonic_ns()
        os.kill(pid, signal.SIGTERM)
        data = os.read(r, 8)
        os.close(r)
        p.wait()
        if len(data) == 8:
            vals.append((int.from_bytes(data, sys.byteorder) - t0) / 1000)
    return vals


def bench_reap(argv, helper, n, orphans):
    vals = []
    for _ in range(n):
        p = subprocess.run(["unshare", "-fp", "--mount-proc"] + argv + [helper, "orphans", str(orphans)],
                           capture_output=True, timeout=120)
        out = p.stdout.decode().split()
        if p.returncode == 0 and "ms" in out:
            vals.append(float(out[out.index("ms") + 1]))
    return vals


def bench_seccomp_load(prog, n):
    """[(filter, BPF instructions, median ns, p10 ns, p90 ns)] from seccomp-load."""
    out = subprocess.run([prog, str(n)], capture_output=True, text=True, check=True).stdout
    return [(f[0], int(f[1]), int(f[2]), int(f[3]), int(f[4])) for f in (line.split() for line in out.splitlines())]


def med(v):
    return statistics.median(v) if v else float("nan")


def spread(v):
    if len(v) < 4:
        return "-"
    q = statistics.quantiles(v, n=4)
    return f"{q[0]:.3g}..{q[2]:.3g}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--helper", required=True)
    ap.add_argument("--out", default="build/bench-init.md")
    ap.add_argument("--seccomp-load", help="build/bench/seccomp-load: also time the kernel's load of "
                    "ward's built-in seccomp filters")
    ap.add_argument("--quick", action="store_true", help="fewer samples")
    ap.add_argument("--json", help="also write the samples here (for tests/bench/plot.py)")
    a = ap.parse_args()
    q = a.quick
    helper = os.path.abspath(a.helper)
    inits = {"ward": [os.path.abspath(a.ward), "--"]}
    for name in ANCHORS:
        if shutil.which(name):
            inits[name] = [name, "--"]
        else:
            print(f"bench: {name} not installed, left out", file=sys.stderr)
    os.environ.pop("WARD_CONFIG", None)

    metrics = {}
    print("bench: start-up (hyperfine)...", file=sys.stderr)
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as cf:
        cf.write(CONFINED)
    # the same without the egress guard (Landlock's ports alone): what
    # the guard adds to a start
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as pf:
        pf.write(CONFINED.replace("[seccomp]", "egress = ports\n[seccomp]"))
    start = bench_start(inits, 100 if q else 500, cf.name, pf.name)
    os.unlink(cf.name)
    os.unlink(pf.name)
    confined = start.pop("ward confined")
    confined_ports = start.pop("ward confined, ports")
    metrics["start"] = {k: v for k, v in start.items() if k != "/bin/true"}
    # in rounds, each init in turn, as the start row: the machine's drift
    # is shared rather than landing on whichever init ran then
    rounds = 2 if q else 5
    for m in ("hwm", "private", "siglat", "reap"):
        metrics[m] = {name: [] for name in inits}
    for r in range(rounds):
        print(f"bench: memory, TERM latency, reaping: round {r + 1} of {rounds}...", file=sys.stderr)
        for name, argv in inits.items():
            hwm, private = bench_hwm(argv, helper, 1)
            metrics["hwm"][name] += hwm
            metrics["private"][name] += private
            metrics["siglat"][name] += bench_siglat(argv, helper, 25 if q else 60)
            metrics["reap"][name] += bench_reap(argv, helper, 1 if q else 2, 10000)

    rows = [
        ("start", "`INIT -- /bin/true` wall time", "ms", f"/bin/true alone: {med(start['/bin/true']):.3f} ms"),
        ("hwm", "VmHWM as PID 1, child sleeping", "kB", ""),
        ("private", "anonymous memory (heap, stack, data), same moment", "kB", ""),
        ("siglat", "TERM to init -> child's handler", "µs", ""),
        ("reap", "10 000 orphans released -> all reaped", "ms", ""),
    ]
    names = list(inits)
    lines = ["# Init benchmark: ward and the anchors, one run", "",
             f"Machine: {platform.node()}, {platform.machine()}, kernel {platform.release()}, "
             f"{os.cpu_count()} CPUs. Command: `make bench` (or `{' '.join(sys.argv)}`).", "",
             "Medians (interquartile range); ratio = ward / anchor, below 1.0 means ward is ahead.", "",
             "| metric | unit | " + " | ".join(names) + " | " + " | ".join(f"ward/{n}" for n in names[1:]) + " |",
             "|---|---|" + "---|" * (2 * len(names) - 1)]
    for key, label, unit, note in rows:
        m = metrics[key]
        cells = [f"{med(m[n]):.4g} ({spread(m[n])})" for n in names]
        ratios = [f"{med(m['ward']) / med(m[n]):.2f}" if med(m[n]) else "-" for n in names[1:]]
        lines.append(f"| {label} | {unit} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    tini = metrics["start"].get("tini-static")
    if tini:
        lines += ["", "Fully confined start (user 65534, no capabilities, Landlock with 2 rules and "
                  "both scopes, seccomp), `ward -c confined.conf -- /bin/true`, in the same hyperfine rounds: "
                  f"{med(confined):.3f} ms ({spread(confined)}), "
                  f"**{med(confined) / med(tini):.2f}×** bare `tini-static -- /bin/true` "
                  f"({med(tini):.3f} ms); goal ≤ 1.5×. The egress guard is PID 1's own (no process to "
                  "start and wait for; it was 2.07× when it was one): with `egress = ports` (Landlock's ports "
                  f"alone, no guard) {med(confined_ports):.3f} ms ({spread(confined_ports)}), "
                  f"**{med(confined_ports) / med(tini):.2f}×**."]
    loads = bench_seccomp_load(a.seccomp_load, 100 if q else 500) if a.seccomp_load else []
    if loads:
        lines += ["", "Loading a filter is the kernel's work, part of that start: the `seccomp()` call, "
                  "timed alone in a fresh process (median, 10th–90th percentile): " +
                  "; ".join(f"{name} filter ({insns} BPF instructions) {m / 1000:.1f} µs "
                            f"({lo / 1000:.1f}–{hi / 1000:.1f})" for name, insns, m, lo, hi in loads) +
                  ". The agent's filter is loaded by the agent's process before exec; ward's own, after the "
                  "agent is forked. The rules are a binary tree over the syscall numbers: the kernel runs "
                  "each filter once per syscall number at load time, and with the rules as a list "
                  "these loads took twice as long."]
    if "tini-static" in names:
        ahead = [label for key, label, _, _ in rows if med(metrics[key]["ward"]) < 0.95 * med(metrics[key]["tini-static"])]
        behind = [f"{label} ({med(metrics[key]['ward']) / med(metrics[key]['tini-static']):.2f}×)"
                  for key, label, _, _ in rows if med(metrics[key]["ward"]) > 1.05 * med(metrics[key]["tini-static"])]
        lines += ["", "Against tini-static, beyond ±5 %: ahead on " + (", ".join(ahead) or "nothing") +
                  "; behind on " + (", ".join(behind) or "nothing") + "."]
    lines += ["", "Reading the memory rows: VmHWM counts every page of the binary the kernel mapped, "
              "and it maps file pages 64 KiB at a time around each fault. ward's static binary carries "
              "libseccomp, libcap-ng, jansson, mbedTLS and c-ares, and is linked by lld with what a plain "
              "init runs and reads laid out first (tools/ward.order, `make order`), so those faults fill a "
              "few windows of it rather than most of its 1.4 MB of text. The anonymous row is what the "
              "init itself owns (heap, stack, written data): a plain init takes its own short path "
              "(init/start/plain.c), which reads no config and builds no sandbox state, and formats its "
              "log line in one buffer. In the start row ward starts a plain init's child with posix_spawn "
              "(the child borrows ward's memory until its exec: no page table is copied, no page copied "
              "on write), where the anchors fork; libcap-ng's constructor and the epoll loop's "
              "descriptors are also in it."]
    lines += ["", "Baseline: " + rows[0][3] + ". Samples: start " + str(len(start["/bin/true"])) +
              f", memory {len(metrics['hwm']['ward'])}, latency {len(metrics['siglat']['ward'])}, "
              f"reaping {len(metrics['reap']['ward'])} per init.", ""]
    text = "\n".join(lines)
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write(text)
    if a.json:
        save_json(a.json, {"names": names, "rows": [[k, label, unit] for k, label, unit, _ in rows],
                           "metrics": metrics, "confined": confined, "seccomp_load": loads})
    return 0


def save_json(path, data):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f)


if __name__ == "__main__":
    sys.exit(main())
