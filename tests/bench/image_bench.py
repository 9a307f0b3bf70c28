#!/usr/bin/python3
"""What confinement costs the reference image: container start to Pi's first
RPC response, and the memory of everything in the container at that moment,
with ward as the entrypoint (every layer on, the bridge running) versus the
same image with tini-static as the entrypoint running the same Pi command
as the same user, unconfined. One run, runc (a bundle from the OCI layout,
as tests/e2e does), the two variants alternating.

Time: from `runc run` to the get_state response on stdout. Memory: the sum
of Pss (/proc/PID/smaps_rollup) over the container's processes. Reports
medians and ratios; asserts nothing. Needs `make image` first.

  image_bench.py --image-dir build/image --node NODE --tests tests [--runs 7] [--out docs/benchmarks.md]
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

PI = ["/usr/local/bin/node", "/opt/pi/node_modules/@earendil-works/pi-coding-agent/dist/cli.js",
      "--mode", "rpc", "--model", "fake/fake-model"]
PI_ENV = ["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/pi", "TMPDIR=/tmp",
          "PI_CODING_AGENT_DIR=/var/lib/pi/agent", "PI_OFFLINE=1", "PI_TELEMETRY=0", "LANG=C.UTF-8"]


def tree(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(e2e.children(p))
    return out


def pss_kb(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def one(a, d, run, netns, variant, i):
    b, ws = e2e.bundle(a, d, run, f"{variant}-{i}", netns)
    if variant == "tini":
        tini = os.path.join(b, "rootfs", "usr", "bin", "tini-static")
        if not os.path.exists(tini):
            shutil.copy("/usr/bin/tini-static", tini)
        with open(os.path.join(b, "config.json")) as f:
            spec = json.load(f)
        spec["process"]["args"] = ["/usr/bin/tini-static", "--"] + PI
        spec["process"]["env"] = PI_ENV
        spec["process"]["user"] = {"uid": e2e.AGENT_UID, "gid": e2e.AGENT_UID}
        with open(os.path.join(b, "config.json"), "w") as f:
            json.dump(spec, f)
    cid = f"ward-ibench-{os.getpid()}-{variant}-{i}"
    t0 = time.monotonic()
    s = e2e.Session(["runc", "run", "--bundle", b, cid])
    r = s.request({"id": "s", "type": "get_state"}, timeout=120)
    t = time.monotonic() - t0
    st = subprocess.run(["runc", "state", cid], capture_output=True, text=True)
    pid = json.loads(st.stdout)["pid"] if st.returncode == 0 else None
    procs = tree(pid) if pid else []
    mem = sum(pss_kb(p) for p in procs)
    names, init_mem = [], 0
    for p in procs:
        try:
            with open(f"/proc/{p}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            continue
        if names[-1] != "pi":
            init_mem += pss_kb(p)
    s.close()
    subprocess.run(["runc", "delete", "-f", cid], capture_output=True)
    if not r:
        raise SystemExit(f"{variant}: no get_state response: {s.tail()}")
    return t, mem, " + ".join(names), init_mem


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--tests", required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--out")
    ap.add_argument("--json", help="also write the samples here (for tests/bench/plot.py)")
    a = ap.parse_args()
    for tool in ("runc", "umoci"):
        if not shutil.which(tool):
            print(f"image_bench: SKIP: {tool} is not installed")
            return 0
    if not os.path.exists(os.path.join(a.image_dir, "oci")):
        print(f"image_bench: SKIP: no {a.image_dir}/oci (make image)")
        return 0
    d = tempfile.mkdtemp(prefix="ward-ibench-")
    os.chmod(d, 0o755)
    run, procs = e2e.host_side(d, a)
    # no mcp.json ([mcp] required = no): Pi does the same work in both variants
    # (with one, Pi under ward would also start its MCP client)
    os.unlink(os.path.join(run, "mcp.json"))
    netns = f"ward-ibench-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", netns], check=True)
    subprocess.run(["ip", "-n", netns, "link", "set", "lo", "up"], check=True)
    res = {"ward": [], "tini": []}
    try:
        one(a, d, run, netns, "ward", "warm")
        one(a, d, run, netns, "tini", "warm")
        for i in range(a.runs):
            for v in ("ward", "tini"):
                res[v].append(one(a, d, run, netns, v, i))
    finally:
        subprocess.run(["ip", "netns", "delete", netns])
        for p in procs:
            p.kill()
            p.wait()
        shutil.rmtree(d, ignore_errors=True)
    t = {v: statistics.median(x[0] for x in res[v]) for v in res}
    m = {v: statistics.median(x[1] for x in res[v]) for v in res}
    n = {v: res[v][0][2] for v in res}
    im = {v: statistics.median(x[3] for x in res[v]) for v in res}
    text = (f"\n## The reference image: confinement's cost to Pi ({time.strftime('%Y-%m-%d')}, runc, "
            f"median of {a.runs})\n\n"
            "| entrypoint | processes | start to first RPC response | Pss of the container | "
            "of which the init (and bridge) |\n|---|---|---|---|---|\n"
            f"| tini-static, Pi unconfined (uid 1000) | {n['tini']} | {t['tini'] * 1000:.0f} ms | "
            f"{m['tini'] / 1024:.1f} MiB | {im['tini']} KiB |\n"
            f"| ward, every layer on, bridge running | {n['ward']} | {t['ward'] * 1000:.0f} ms | "
            f"{m['ward'] / 1024:.1f} MiB | {im['ward']} KiB |\n"
            f"| **ward / tini** | | **{t['ward'] / t['tini']:.2f}×** "
            f"({(t['ward'] - t['tini']) * 1000:+.0f} ms) | **{m['ward'] / m['tini']:.2f}×** "
            f"({(m['ward'] - m['tini']) / 1024:+.2f} MiB) | {(im['ward'] - im['tini']) / 1024:+.2f} MiB |\n\n"
            "Both without an mcp.json, so Pi does the same work; Pss of Pi itself varies by a few MiB "
            "from run to run.\n"
            "Goal (issue 5): under 5% of the time to first response and under 2 MB of memory.\n"
            "All runs (s, KiB): " + "; ".join(f"{v}: " + ", ".join(f"{x[0]:.2f}/{x[1]}" for x in res[v])
                                           for v in res) + "\n")
    write_results(text, a.out, a.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
