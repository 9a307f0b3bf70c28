#!/usr/bin/python3
"""What confinement costs the reference image: container start to Pi's first
RPC response, and the memory of everything in the container at that moment,
with ward as the entrypoint (every layer on, the bridge running) versus the
same image with tini-static as the entrypoint running the same Pi command
as the same user, unconfined. One run per runtime: runc (a bundle from the OCI
layout, as tests/e2e does), runsc (gVisor, the same bundle with
--network=none), docker (a private dockerd) and podman (root), the two
variants alternating.

Time: from `runc run` to the get_state response on stdout. Memory: the sum
of Pss (/proc/PID/smaps_rollup) over the container's processes. Reports
medians and ratios; asserts nothing. Needs `make image` first.

  image_bench.py --image-dir build/image --node NODE --tests tests [--runs 7] [--runtimes runc,runsc,docker,podman]
                 [--out docs/benchmarks.md] [--json F]
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
import gvisor  # noqa: E402  (runsc's arguments)
from benchlib import write_results  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from dockerd import Dockerd  # noqa: E402
from podmanconf import podman_setup  # noqa: E402

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


def measure(variant, cmd, pid_of, stop, env=None):
    """One start: the time from starting cmd to the get_state response, and
    the Pss of the container's processes at that moment."""
    t0 = time.monotonic()
    s = e2e.Session(cmd, env)
    r = s.request({"id": "s", "type": "get_state"}, timeout=120)
    t = time.monotonic() - t0
    pid = pid_of()
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
    stop()
    if not r:
        raise SystemExit(f"{variant}: no get_state response: {s.tail()}")
    return t, mem, " + ".join(names), init_mem


def tini_bundle(b):
    """The bundle b made the tini variant: tini-static copied in as the
    entrypoint of the same Pi command, as uid 1000, unconfined."""
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


class Runc:
    """A bundle from the OCI layout, as tests/e2e makes it; tini-static
    copied into it for the tini variant."""
    name = "runc"
    run_args = ["run"]
    delete_args = ["delete", "-f"]

    def __init__(self, a, d, run):
        self.a, self.d, self.run = a, d, run
        self.netns = self.namespace()

    def namespace(self):
        """The network namespace the bundle joins: one whose lo is up."""
        ns = f"ward-ibench-{os.getpid()}"
        subprocess.run(["ip", "netns", "add", ns], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        return ns

    def one(self, variant, i):
        b, _ws = e2e.bundle(self.a, self.d, self.run, f"{self.name}-{variant}-{i}", self.netns)
        if variant == "tini":
            tini_bundle(b)
        cid = f"ward-ibench-{os.getpid()}-{self.name}-{variant}-{i}"

        def pid_of():
            st = subprocess.run([self.name, "state", cid], capture_output=True, text=True)
            return json.loads(st.stdout)["pid"] if st.returncode == 0 else None
        return measure(variant, [self.name, *self.run_args, "--bundle", b, cid], pid_of,
                       lambda: subprocess.run([self.name, *self.delete_args, cid], capture_output=True))

    def close(self):
        if self.netns:
            subprocess.run(["ip", "netns", "delete", self.netns])


class Runsc(Runc):
    """gVisor: the same bundle under runsc --network=none (no network
    namespace of the test's: runsc makes the sandbox's own). The host sees
    the sandbox's processes (the Sentry, the gofer), not Pi's: their Pss is
    what the container costs the host."""
    name = "runsc"
    run_args = [*gvisor.RUNSC_ARGS, "run"]
    delete_args = ["delete", "-force"]

    def namespace(self):
        return None


class Engine:
    """docker (a private dockerd) or podman (root, vfs): `run -i --rm`, the
    tini variant with tini-static mounted as the entrypoint, as uid 1000."""

    def __init__(self, name, a, d, run):
        self.name, self.a, self.d, self.run = name, a, d, run
        self.env = None
        if name == "docker":
            self.dk = Dockerd(os.path.join(d, "dk")).start()
            self.env = self.dk.env
            self.cli = ["docker"]
            self.image = "ward-pi:latest"
        else:
            pd = os.path.join(d, "podman")
            self.cli, self.env = podman_setup(pd)
            self.image = "localhost/ward-pi:latest"
            self.pd = pd
        subprocess.run(self.cli + ["load", "-i", os.path.join(a.image_dir, "ward-pi.tar")], env=self.env,
                       check=True, capture_output=True)

    def one(self, variant, i):
        ws = e2e.workspace(self.d, f"{self.name}-{variant}-{i}")
        name = f"ward-ibench-{self.name}-{variant}-{i}"
        # podman's vfs storage copies the whole image for each container:
        # create it first (untimed, as the runc bundle is), then time the start
        verb = ["create", "-i"] if self.name == "podman" else ["run", "-i", "--rm"]
        cmd = self.cli + verb + ["--name", name, "-v", f"{self.run}:/run/ward", "-v", f"{ws}:{ws}",
                                 "-w", ws] + (["--network", "none"] if self.name == "podman" else [])
        if variant == "tini":
            cmd += ["-v", "/usr/bin/tini-static:/tini:ro", "--entrypoint", "/tini", "--user", "1000:1000"]
            cmd += sum((["-e", e] for e in PI_ENV), []) + [self.image, "--"] + PI
        else:
            cmd += [self.image]

        def pid_of():
            r = subprocess.run(self.cli + ["inspect", "-f", "{{.State.Pid}}", name], env=self.env,
                               capture_output=True, text=True)
            return int(r.stdout.strip() or 0) or None

        def stop():
            if self.name == "podman":
                subprocess.run(self.cli + ["rm", "-f", name], env=self.env, capture_output=True)
        if self.name == "podman":
            subprocess.run(cmd, env=self.env, check=True, capture_output=True)
            cmd = self.cli + ["start", "-ai", name]
        return measure(variant, cmd, pid_of, stop, self.env)

    def close(self):
        if self.name == "docker":
            self.dk.stop()
        else:
            subprocess.run(self.cli + ["system", "reset", "-f"], env=self.env, capture_output=True)
            subprocess.run(["umount", "-R", f"{self.pd}/root", f"{self.pd}/run"], capture_output=True)


def table(rt, res, runs):
    t = {v: statistics.median(x[0] for x in res[v]) for v in res}
    m = {v: statistics.median(x[1] for x in res[v]) for v in res}
    n = {v: res[v][0][2] for v in res}
    im = {v: statistics.median(x[3] for x in res[v]) for v in res}
    if rt == "runsc":  # the host sees runsc's processes (the Sentry, the gofer), not the container's
        n = {v: "runsc's (Sentry, gofer)" for v in res}
        im = {v: 0 for v in res}
    return (f"\n### {rt} (median of {runs})\n\n"
            "| entrypoint | processes | start to first RPC response | Pss of the container | "
            "of which the init (and bridge) |\n|---|---|---|---|---|\n"
            f"| tini-static, Pi unconfined (uid 1000) | {n['tini']} | {t['tini'] * 1000:.0f} ms | "
            f"{m['tini'] / 1024:.1f} MiB | {im['tini']} KiB |\n"
            f"| ward, every layer on, bridge running | {n['ward']} | {t['ward'] * 1000:.0f} ms | "
            f"{m['ward'] / 1024:.1f} MiB | {im['ward']} KiB |\n"
            f"| **ward / tini** | | **{t['ward'] / t['tini']:.2f}×** "
            f"({(t['ward'] - t['tini']) * 1000:+.0f} ms) | **{m['ward'] / m['tini']:.2f}×** "
            f"({(m['ward'] - m['tini']) / 1024:+.2f} MiB) | {(im['ward'] - im['tini']) / 1024:+.2f} MiB |\n\n"
            "All runs (s, KiB): " + "; ".join(f"{v}: " + ", ".join(f"{x[0]:.2f}/{x[1]}" for x in res[v])
                                           for v in res) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--tests", required=True)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--runtimes", default="runc,runsc,docker,podman")
    ap.add_argument("--out")
    ap.add_argument("--json", help="also write the samples here (for tests/bench/plot.py)")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.image_dir, "oci")):
        print(f"image_bench: SKIP: no {a.image_dir}/oci (make image)")
        return 0
    d = tempfile.mkdtemp(prefix="ward-ibench-")
    os.chmod(d, 0o755)
    run, procs = e2e.host_side(d, a)
    # no mcp.json ([mcp] required = no): Pi does the same work in both variants
    # (with one, Pi under ward would also start its MCP client)
    os.unlink(os.path.join(run, "mcp.json"))
    need = {"runc": ("runc", "umoci"), "runsc": ("runsc", "umoci"), "docker": ("dockerd",), "podman": ("podman",)}
    results, text = {}, (f"\n## The reference image: confinement's cost to Pi ({time.strftime('%Y-%m-%d')})\n\n"
                         "Container start to Pi's first RPC response (get_state), and the Pss of everything in "
                         "the container at that moment: ward as the entrypoint (every layer on, the bridge "
                         "running) versus the same image with tini-static as the entrypoint running the same "
                         "Pi command as the same user, unconfined. Both without an mcp.json, so Pi does the "
                         "same work; the two variants alternate. Goal (issue 5): under 5% of the time to first "
                         "response and under 2 MB of memory.\n")
    try:
        for rt in a.runtimes.split(","):
            missing = [t for t in need[rt] if not shutil.which(t)]
            if missing:
                text += f"\n### {rt}\n\nnot measured: {', '.join(missing)} not installed\n"
                continue
            r = Runc(a, d, run) if rt == "runc" else Runsc(a, d, run) if rt == "runsc" else Engine(rt, a, d, run)
            res = {"ward": [], "tini": []}
            try:
                r.one("ward", "warm")
                r.one("tini", "warm")
                for i in range(a.runs):
                    for v in ("ward", "tini"):
                        res[v].append(r.one(v, i))
            finally:
                r.close()
            results[rt] = res
            text += table(rt, res, a.runs)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        shutil.rmtree(d, ignore_errors=True)
    write_results(text, a.out, a.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
