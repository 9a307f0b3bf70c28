#!/usr/bin/python3
"""What the egress guard costs, side by side in one run.

  egress_bench.py --ward build/ward --connect-lat build/bench/connect-lat [--node N] [--out F] [--json F]

Three ways of running the same client: bare (no ward), under ward with
`egress = ports` (Landlock's ports alone) and with `egress = loopback`
(the guard makes every socket). The client (tests/bench/connect_lat.c)
opens N loopback connections one after another and times socket() and
connect() apart; the guard's cost is in both (it makes the socket, and
reads each connect's address). Then the time to the error of a refused
connect (an address the guard refuses, under the guard only: it never
leaves lo). Then a Node workload
opens 10 000 loopback connections, timed whole, under ports and under the
guard. Medians, p99 and spreads (interquartile), and ratios; nothing is
asserted.
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import write_results  # noqa: E402

AGENT = 4242


def listener():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(4096)

    def run():
        while True:
            c, _ = s.accept()
            c.close()
    threading.Thread(target=run, daemon=True).start()
    return s.getsockname()[1]


def conf(work, port, egress):
    path = os.path.join(work, f"{egress}.conf")
    with open(path, "w") as f:
        f.write(f"""[agent]
user = {AGENT}:{AGENT}
env = PATH=/usr/bin:/bin
[landlock]
mode = hard_requirement
read = {work} /usr /etc /proc
connect = {port}
egress = {egress}
[seccomp]
mode = default
""")
    return path


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def run_lat(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise RuntimeError(f"{cmd}: {out.stderr[-300:]}")
    rows = [tuple(map(int, l.split())) for l in out.stdout.splitlines() if l and l[0].isdigit()]
    return [r[0] / 1000 for r in rows], [r[1] / 1000 for r in rows]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--connect-lat", required=True)
    ap.add_argument("--node")
    ap.add_argument("--notify-floor", help="tests/bench/notify_floor.c, built: the least a seccomp "
                    "user-notification check costs, beside the guard")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out")
    ap.add_argument("--json")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ward-egress-bench-")
    os.chmod(work, 0o755)
    probe = os.path.join(work, "connect-lat")
    subprocess.run(["cp", a.connect_lat, probe], check=True)
    port = listener()
    ways = {
        "bare": [probe, str(port), str(a.n)],
        "ports": [a.ward, "-c", conf(work, port, "ports"), "--", probe, str(port), str(a.n)],
        "guard": [a.ward, "-c", conf(work, port, "loopback"), "--", probe, str(port), str(a.n)],
    }
    floor = []
    if a.notify_floor:
        floor = [os.path.abspath(a.notify_floor)]
        ways["notify floor"] = floor + [probe, str(port), str(a.n)]
    res = {k: ([], []) for k in ways}
    for _ in range(a.rounds):  # interleaved, so drift hits all three alike
        for k, cmd in ways.items():
            s, c = run_lat(cmd)
            res[k][0].extend(s)
            res[k][1].extend(c)
    lines = ["\n## Egress guard: the cost of one connection\n",
             f"{a.n} loopback connections per run, {a.rounds} runs of each, interleaved; microseconds. "
             "`socket()` under the guard is a round trip to ward's PID 1 (seccomp user "
             "notification, the socket made and bound to lo there, installed with ADDFD); "
             "`connect()` under the guard is a second round trip (PID 1 reads the address from the caller's "
             "memory and lets a local one go on with SECCOMP_USER_NOTIF_FLAG_CONTINUE), the kernel's alone in "
             "the other columns. `notify floor` (tests/bench/notify_floor.c, no "
             "ward) sends each socket() to a supervisor process that answers it with "
             "SECCOMP_USER_NOTIF_FLAG_CONTINUE at once, nothing made or checked: the least any check by seccomp user "
             "notification costs on this machine, the round trip itself.\n",
             "| | socket() p50 | p99 | IQR | connect() p50 | p99 | socket+connect p50 vs bare | vs ports |",
             "|---|---|---|---|---|---|---|---|"]
    data = {}
    base = {k: statistics.median([s + c for s, c in zip(*res[k])]) for k in res}
    for k in ways:
        s, c = res[k]
        data[k] = {"socket_p50": statistics.median(s), "socket_p99": pct(s, 0.99),
                   "connect_p50": statistics.median(c), "connect_p99": pct(c, 0.99)}
        lines.append(f"| {k} | {statistics.median(s):.1f} | {pct(s, 0.99):.1f} | "
                     f"{pct(s, 0.75) - pct(s, 0.25):.1f} | {statistics.median(c):.1f} | {pct(c, 0.99):.1f} | "
                     f"{base[k] / base['bare']:.2f}x | {base[k] / base['ports']:.2f}x |")
    lines.append(f"\nAdded by the guard at p50: {statistics.median(res['guard'][0]) - statistics.median(res['ports'][0]):.1f} us "
                 f"per socket() (the goal: under 50 us), "
                 f"{statistics.median(res['guard'][1]) - statistics.median(res['ports'][1]):.1f} us per connect().\n")
    # a refused connect: the time to its error (192.0.2.1, TEST-NET-1: refused
    # by PID 1 before any packet, and held to lo were it not)
    refused = []
    for _ in range(a.rounds):
        refused.extend(run_lat([a.ward, "-c", conf(work, port, "loopback"), "--", probe, str(port),
                                str(a.n // 4), "192.0.2.1"])[1])
    lines.append("| refused connect, time to error (ENETUNREACH) | p50 | p99 | IQR | max |\n|---|---|---|---|---|")
    lines.append(f"| guard | {statistics.median(refused):.1f} us | {pct(refused, 0.99):.1f} us | "
                 f"{pct(refused, 0.75) - pct(refused, 0.25):.1f} us | {max(refused):.1f} us |")
    lines.append(f"\n{len(refused)} refused connects (the goal: under 1 ms at p99). Before the check a refused "
                 "connect waited for the kernel's SYN retries on lo: about two minutes blocking, or the caller's "
                 "own timeout.\n")
    data["refused"] = {"p50": statistics.median(refused), "p99": pct(refused, 0.99), "max": max(refused)}
    if a.node and os.path.exists(a.node):
        node = os.path.join(work, "node")
        subprocess.run(["cp", a.node, node], check=True)
        js = ("const net=require('net');let n=0;const t0=process.hrtime.bigint();"
              f"function one(){{if(n++===10000){{console.log(Number(process.hrtime.bigint()-t0)/1e6);return}}"
              f"const s=net.connect({port},'127.0.0.1',()=>{{s.destroy();one()}});s.on('error',e=>{{console.error(e);process.exit(1)}})}}one()")
        runs = {"ports": [a.ward, "-c", conf(work, port, "ports"), "--", node, "-e", js],
                "guard": [a.ward, "-c", conf(work, port, "loopback"), "--", node, "-e", js]}
        if floor:
            runs = {"bare": [node, "-e", js], "notify floor": floor + [node, "-e", js], **runs}
        times = {k: [] for k in runs}
        for _ in range(a.rounds):
            for k, cmd in runs.items():
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
                if out.returncode:
                    raise RuntimeError(out.stderr[-300:])
                times[k].append(float(out.stdout.split()[-1]))
        mp, mg = statistics.median(times["ports"]), statistics.median(times["guard"])
        lines.append("| Node 22, 10 000 loopback connections, one after another | median ms | spread (min-max) |\n|---|---|---|")
        for k in times:
            lines.append(f"| {k} | {statistics.median(times[k]):.0f} | {min(times[k]):.0f}-{max(times[k]):.0f} |")
        lines.append(f"\nUnder the guard / under ports only: {mg / mp:.2f}x (the goal: at most 1.2x).")
        if floor:
            mb, mf = statistics.median(times["bare"]), statistics.median(times["notify floor"])
            lines.append(f" A check that does nothing but the notification's round trip: {mf / mb:.2f}x bare "
                         f"(+{(mf - mb) / 10:.1f} us per connection; the guard: +{(mg - mp) / 10:.1f} us over ports "
                         "only).")
        lines.append("")
        data["node"] = times
    write_results("\n".join(lines) + "\n", a.out, a.json, data)
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
