#!/usr/bin/python3
"""A fleet on one machine (#24): N sandboxes of the reference image started
one after another under runc and all kept running, idle, then measured;
ward as the entrypoint (every layer on: the bridge and the egress guard
run) versus the same image with tini-static as the entrypoint running the
same Pi command as the same user, unconfined. One fleet of each, the tini
fleet first.

Per start: from `runc run` to Pi's get_state response on stdout, with the
earlier sandboxes of the fleet idle beside it. Per sandbox, once all N run
and have been idle for IDLE seconds: the Pss (/proc/PID/smaps_rollup) of the
init's own processes (ward, the bridge and the guard; or tini) and of the
whole container. Reports medians, spreads (p10..p90) and ratios; asserts
nothing. Needs `make image` first.

  fleet_bench.py --image-dir build/image --node NODE --tests tests [--n 50] [--out docs/benchmarks.md] [--json F]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e  # noqa: E402  (bundle, host side, RPC session)
from benchlib import write_results  # noqa: E402
from image_bench import PI, PI_ENV, pss_kb, tree  # noqa: E402

IDLE = 5


def spread(v):
    s = sorted(v)
    return s[len(s) // 10], s[min(len(s) - 1, len(s) * 9 // 10)]


class Fleet:
    def __init__(self, a, d, run, variant):
        self.a, self.d, self.run, self.variant = a, d, run, variant
        self.members = []  # (cid, session, netns)

    def start(self, i):
        """Sandbox i: a bundle of its own (the rootfs is shared), started and
        left running once Pi has answered. Each has a network namespace of
        its own, as each pod has: the bridge's ports are per sandbox."""
        netns = f"ward-fleet-{os.getpid()}-{self.variant}-{i}"
        subprocess.run(["ip", "netns", "add", netns], check=True)
        subprocess.run(["ip", "-n", netns, "link", "set", "lo", "up"], check=True)
        b, _ = e2e.bundle(self.a, self.d, self.run, f"fleet-{self.variant}-{i}", netns)
        with open(os.path.join(b, "config.json")) as f:
            spec = json.load(f)
        if self.variant == "tini":
            tini = os.path.join(b, "rootfs", "usr", "bin", "tini-static")
            if not os.path.exists(tini):
                shutil.copy("/usr/bin/tini-static", tini)
            spec["process"]["args"] = ["/usr/bin/tini-static", "--"] + PI
            spec["process"]["env"] = PI_ENV
            spec["process"]["user"] = {"uid": e2e.AGENT_UID, "gid": e2e.AGENT_UID}
        spec["root"]["path"] = os.path.join(b, "rootfs")
        own = os.path.join(self.d, f"b-{self.variant}-{i}")
        os.makedirs(own)
        with open(os.path.join(own, "config.json"), "w") as f:
            json.dump(spec, f)
        cid = f"ward-fleet-{os.getpid()}-{self.variant}-{i}"
        t0 = time.monotonic()
        s = e2e.Session(["runc", "run", "--bundle", own, cid])
        r = s.request({"id": "s", "type": "get_state"}, timeout=300)
        t = time.monotonic() - t0
        self.members.append((cid, s, netns))
        if not r:
            raise SystemExit(f"{self.variant} {i}: no get_state response: {s.tail()}")
        return t

    def memory(self):
        """[(the init's own Pss, the container's Pss)] per sandbox, KiB."""
        out = []
        for cid, _, _ in self.members:
            st = subprocess.run(["runc", "state", cid], capture_output=True, text=True)
            procs = tree(json.loads(st.stdout)["pid"]) if st.returncode == 0 else []
            init = 0
            for p in procs:
                try:
                    exe = os.path.basename(os.readlink(f"/proc/{p}/exe"))
                except OSError:
                    continue
                if exe != "node":
                    init += pss_kb(p)
            out.append((init, sum(pss_kb(p) for p in procs)))
        return out

    def close(self):
        for cid, s, netns in self.members:
            s.close(timeout=60)
            subprocess.run(["runc", "delete", "-f", cid], capture_output=True)
            subprocess.run(["ip", "netns", "delete", netns])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--tests", required=True)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--out")
    ap.add_argument("--json")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.image_dir, "oci")) or not shutil.which("runc"):
        print(f"fleet_bench: SKIP: no {a.image_dir}/oci (make image) or no runc")
        return 0
    d = tempfile.mkdtemp(prefix="ward-fleet-")
    os.chmod(d, 0o755)
    run, procs = e2e.host_side(d, a)
    os.unlink(os.path.join(run, "mcp.json"))  # as image_bench: Pi does the same work in both
    res = {}
    try:
        for v in ("tini", "ward"):
            f = Fleet(a, d, run, v)
            try:
                starts = [f.start(i) for i in range(a.n)]
                time.sleep(IDLE)
                mem = f.memory()
            finally:
                f.close()
            res[v] = {"start_s": starts, "init_kib": [m[0] for m in mem], "container_kib": [m[1] for m in mem]}
    finally:
        for p in procs:
            p.kill()
            p.wait()
        shutil.rmtree(d, ignore_errors=True)
    med = {v: {k: statistics.median(x) for k, x in r.items()} for v, r in res.items()}
    row = lambda label, k, unit, f: (  # noqa: E731
        f"| {label} | " + " | ".join(f"{f(med[v][k])} {unit} ({f(spread(res[v][k])[0])}..{f(spread(res[v][k])[1])})"
                                     for v in ("tini", "ward")) + f" | **{med['ward'][k] / med['tini'][k]:.2f}×** |\n")
    text = (f"\n## A fleet: {a.n} idle sandboxes of the image on one machine ({time.strftime('%Y-%m-%d')})\n\n"
            f"{a.n} sandboxes under runc, started one after another and all kept running, idle for {IDLE} s, "
            "then measured (tests/bench/fleet_bench.py): ward as the entrypoint (every layer on: the bridge "
            "and the egress guard run) versus the same image with tini-static as the entrypoint running the "
            "same Pi command as the same user, unconfined. The tini fleet first, then ward's. Median "
            f"(p10..p90) over the {a.n}.\n\n"
            "| per sandbox | tini-static | ward | ward / tini |\n|---|---|---|---|\n" +
            row("start to Pi's first RPC response, the fleet's others idle", "start_s", "s", lambda x: f"{x:.2f}") +
            row("the init's own Pss (ward + bridge + guard; tini)", "init_kib", "KiB", lambda x: f"{x:.0f}") +
            row("the container's Pss (Pi included)", "container_kib", "KiB", lambda x: f"{x:.0f}") +
            f"\nPer sandbox ward costs {(med['ward']['init_kib'] - med['tini']['init_kib']) / 1024:+.2f} MiB over "
            f"tini-static ({(med['ward']['container_kib'] - med['tini']['container_kib']) / 1024:+.2f} MiB for the "
            f"whole container): {a.n} sandboxes, "
            f"{(med['ward']['container_kib'] - med['tini']['container_kib']) * a.n / 1024:+.0f} MiB.\n")
    write_results(text, a.out, a.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
