#!/usr/bin/python3
"""`ward-pi -p` as a person runs it: from the command to Pi's answer on its
stdout, warm (the image loaded, one run of each before the timed ones),
against the same Pi run directly on the host and against pi-sandbox's
approach: the same image in a container without ward (its entrypoint
replaced by Pi), reaching the model itself. All three ask the project's fake
OpenAI server (tests/node/fake-openai.mjs) for one answer (pi-sandbox's
approach under podman too, its own engine): ward-pi through
the image's model route and --model-socket (a unix socket), the other two
over loopback TCP. The engine is docker (a private dockerd), the one ward-pi
picks as root here; the variants alternate. Reports medians, spreads and
ratios; asserts nothing.

  wardpi_bench.py --image-dir build/image --node NODE --pi PI_CLI [--runs 9] [--out F] [--json F]
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from benchlib import write_results  # noqa: E402
from dockerd import Dockerd  # noqa: E402
from hostside import serve_unix  # noqa: E402
from podmanconf import CONTAINERS_CONF  # noqa: E402

ANSWER = b"Hello from fake-model."
IMAGE_PI = "/opt/pi/node_modules/@earendil-works/pi-coding-agent/dist/cli.js"


def agent_dir(path, base_url):
    """Pi's agent dir for the two runs without ward: the image's settings and
    its fake provider at base_url"""
    os.makedirs(path, exist_ok=True)
    shutil.copy(os.path.join(ROOT, "rootfs", "agent", "settings.json"), path)
    with open(os.path.join(ROOT, "rootfs", "agent", "models.json")) as f:
        models = json.load(f)
    models["providers"]["fake"]["baseUrl"] = base_url
    with open(os.path.join(path, "models.json"), "w") as f:
        json.dump(models, f)
    subprocess.run(["chown", "-R", "1000:1000", path], check=True)


STARTED = b"command-started"


def timed(cmd, env, cwd, marker=ANSWER, total=None):
    """seconds from the start of cmd to marker on its stdout (and, into the
    list total, to its exit)"""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    out = b""
    took = None
    while True:
        chunk = p.stdout.read1(65536)
        if not chunk:
            break
        out += chunk
        if took is None and marker in out:
            took = time.monotonic() - t0
    err = p.stderr.read()
    p.wait()
    if total is not None:
        total.append(time.monotonic() - t0)
    if took is None:
        raise RuntimeError(f"{cmd[0]}: no answer (status {p.returncode}): {out[-300:]!r} {err[-600:]!r}")
    return took


def spread(v):
    q = statistics.quantiles(v, n=4) if len(v) >= 4 else [min(v), 0, max(v)]
    return f"{q[0]:.2f}–{q[2]:.2f}"


def engine_limits(wp, cmd, env, cwd):
    """The memory, CPU and process limits ward-pi gives its container, read
    from its --dry-run of cmd (the engine command it would run)."""
    out = subprocess.run([wp, "--dry-run", *cmd[1:]], env=env, cwd=cwd, capture_output=True, text=True).stdout.split()
    limits = []
    for flag in ("--memory", "--cpus", "--pids-limit"):
        if flag in out and out.index(flag) + 1 < len(out):
            limits += [flag, out[out.index(flag) + 1]]
    if not limits:
        raise SystemExit(f"wardpi_bench: ward-pi --dry-run named no limits: {' '.join(out)[:300]}")
    return limits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--pi", required=True, help="Pi's cli.js (rootfs/pi's, the image's version)")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--out")
    ap.add_argument("--json")
    a = ap.parse_args()
    node, pi = os.path.abspath(a.node), os.path.abspath(a.pi)
    wp = os.path.join(ROOT, "scripts", "ward-pi")
    d = tempfile.mkdtemp(prefix="ward-wpbench-")
    os.chmod(d, 0o755)
    dk = Dockerd(os.path.join(d, "dk"))
    procs = []
    try:
        dk.start()
        env = dict(dk.env, HOME=os.path.join(d, "home"))
        # podman's default ulimits are above what root without
        # CAP_SYS_RESOURCE may set here (tests/lib/podmanconf.py)
        conf = os.path.join(d, "containers.conf")
        with open(conf, "w") as f:
            f.write(CONTAINERS_CONF)
        penv = dict(os.environ, CONTAINERS_CONF=conf)
        subprocess.run(["docker", "load", "-q", "-i", os.path.join(a.image_dir, "ward-pi.tar")], env=env,
                       check=True, capture_output=True)
        sock = os.path.join(d, "model.sock")
        fake = os.path.join(ROOT, "tests", "node", "fake-openai.mjs")
        procs.append(serve_unix([node, fake, sock], sock, 999))  # the bridge's uid in the image
        port = "18431"
        procs.append(subprocess.Popen([node, fake, port], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        proj = os.path.join(d, "proj")
        os.makedirs(proj)
        os.chown(proj, 1000, 1000)
        host_agent = os.path.join(d, "host-agent")
        agent_dir(host_agent, f"http://127.0.0.1:{port}/v1")
        box_agent = os.path.join(d, "box-agent")
        agent_dir(box_agent, f"http://127.0.0.1:{port}/v1")
        prompt = "hi"
        variants = {
            # Pi on the host, as the agent's uid, in the project
            "host": (["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", node, pi, "-p", prompt,
                      "--model", "fake/fake-model"],
                     {"PATH": "/usr/bin:/bin", "HOME": d, "PI_CODING_AGENT_DIR": host_agent, "PI_OFFLINE": "1",
                      "PI_TELEMETRY": "0"}),
            # pi-sandbox's approach: the image, Pi as its entrypoint, no ward
            "container": (["docker", "run", "--rm", "--network", "host", "--user", "1000:1000",
                           "-v", f"{proj}:{proj}", "-w", proj, "-v", f"{box_agent}:/var/lib/pi/agent",
                           "-e", "PI_CODING_AGENT_DIR=/var/lib/pi/agent", "-e", "PI_OFFLINE=1", "-e", "PI_TELEMETRY=0",
                           "-e", "HOME=/home/pi", "--entrypoint", "/usr/local/bin/node", "ward-pi:latest", IMAGE_PI,
                           "-p", prompt, "--model", "fake/fake-model"], env),
            "ward-pi": ([wp, "--engine", "docker", "--no-mcp", "--model-socket", sock, "-p", prompt], env),
        }
        # pi-sandbox's own engine: podman (as root here, overlay storage of
        # the benchmark's own), the same container without ward
        if shutil.which("podman"):
            pm = ["podman", "--root", os.path.join(d, "pm-root"), "--runroot", os.path.join(d, "pm-run"),
                  "--storage-driver", "overlay"]
            subprocess.run(pm + ["load", "-q", "-i", os.path.join(a.image_dir, "ward-pi.tar")], env=penv,
                           check=True, capture_output=True)
            variants["container (podman)"] = (pm + ["localhost/ward-pi:latest" if w == "ward-pi:latest" else w
                                                     for w in variants["container"][0][1:]], penv)
        # the engine's own part: a container that does nothing, with the
        # network ward-pi gives a session without a provider, and without
        engine = {"docker run (default network)": ["docker", "run", "--rm", "--entrypoint", "/bin/true", "ward-pi:latest"],
                  "docker run --network none": ["docker", "run", "--rm", "--network", "none", "--entrypoint",
                                                "/bin/true", "ward-pi:latest"]}
        # the command form: ward-pi run against the same container without
        # ward, from the command to the command's first output (and to exit)
        run_cmd = [wp, "--engine", "docker", "--no-mcp", "run", "--", "sh", "-c", "echo command-started"]
        commands = {
            "ward-pi run": run_cmd,
            # the same limits as ward-pi's container (its --dry-run says them):
            # the engine's cgroup set-up is paid by both
            "container without ward": ["docker", "run", "--rm", "--network", "none", *engine_limits(wp, run_cmd, env, proj),
                                       "--user", "1000:1000", "-v", f"{proj}:{proj}", "-w", proj, "--entrypoint",
                                       "/bin/sh", "ward-pi:latest", "-c", "echo command-started"],
        }
        size = int(subprocess.run(["docker", "image", "inspect", "-f", "{{.Size}}", "ward-pi:latest"], env=env,
                                  capture_output=True, text=True, check=True).stdout.strip())
        cstart = {k: [] for k in commands}
        cend = {k: [] for k in commands}
        for k, cmd in commands.items():  # warm
            timed(cmd, env, proj, STARTED)
        samples = {k: [] for k in variants}
        starts = {k: [] for k in engine}
        for k, (cmd, e) in variants.items():  # warm: one of each, untimed
            timed(cmd, e, proj)
        for _ in range(a.runs):
            for k, (cmd, e) in variants.items():
                samples[k].append(timed(cmd, e, proj))
            for k, cmd in commands.items():
                cstart[k].append(timed(cmd, env, proj, STARTED, cend[k]))
            for k, cmd in engine.items():
                t0 = time.monotonic()
                subprocess.run(cmd, env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL)
                starts[k].append(time.monotonic() - t0)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        dk.stop()
        shutil.rmtree(d, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in samples.items()}
    lines = ["\n## ward-pi -p: the command to Pi's answer\n",
             f"{a.runs} runs each, alternating, warm (one untimed run of each first); seconds from the command's "
             "start to the fake model's answer on its stdout (Pi 1.6, one prompt, `-p`). `host`: Pi run directly "
             "on the host as uid 1000. `container`: pi-sandbox's approach, the same image under docker with Pi as "
             "its entrypoint, no ward, the host's network; `container (podman)` the same under podman (root, "
             "overlay storage), pi-sandbox's own engine. `ward-pi`: `ward-pi -p` (docker, as root picks it), "
             "the image's entrypoint ward with every layer on, the model through the bridge and `--model-socket`.\n",
             "| | median | interquartile | min | max | ratio to host | ratio to container |",
             "|---|---|---|---|---|---|---|"]
    for k, v in samples.items():
        lines.append(f"| {k} | {med[k]:.2f} | {spread(v)} | {min(v):.2f} | {max(v):.2f} | "
                     f"{med[k] / med['host']:.2f}× | {med[k] / med['container']:.2f}× |")
    smed = {k: statistics.median(v) for k, v in starts.items()}
    lines.append("\nThe engine's own part, in the same run: a container of the image that runs `/bin/true` and "
                 "exits, start to exit.\n")
    lines += ["| | median | interquartile |", "|---|---|---|"]
    for k, v in starts.items():
        lines.append(f"| {k} | {smed[k]:.2f} | {spread(v)} |")
    net = smed["docker run --network none"] - smed["docker run (default network)"]
    lines.append(f"\nward-pi against Pi on the host: {med['ward-pi'] / med['host']:.2f}× (the goal: under 1.3×); "
                 f"against the container without ward: {med['ward-pi'] / med['container']:.2f}×. Of the "
                 f"{med['ward-pi'] - med['container']:+.2f} s ward-pi adds to that container, docker's "
                 f"`--network none` (a session without a provider has no network at all) takes {net:+.2f} s here; "
                 "the rest is ward (the bridge, the guard, the checks, the evidence), the image's launcher and "
                 "the model through the bridge.\n")
    cmed = {k: statistics.median(v) for k, v in cstart.items()}
    emed = {k: statistics.median(v) for k, v in cend.items()}
    lines.append("\n## ward-pi run: the command form\n")
    lines.append(f"{a.runs} runs each, alternating, warm: `ward-pi run -- sh -c 'echo command-started'` in a project "
                 "without git against the same container without ward (the image, `--network none`, the memory, "
                 "CPU and process limits ward-pi's `--dry-run` gives, uid 1000, the project mounted, `/bin/sh` as "
                 "the entrypoint). Seconds from the command to its first output, and "
                 "to its exit (ward-pi's includes the end of the session: the epilogue's container that checks "
                 "what the agent left).\n")
    lines += ["| | start, median | interquartile | exit, median | interquartile |", "|---|---|---|---|---|"]
    for k in commands:
        lines.append(f"| {k} | {cmed[k]:.2f} | {spread(cstart[k])} | {emed[k]:.2f} | {spread(cend[k])} |")
    lines.append(f"\nThe command form's start: {cmed['ward-pi run'] / cmed['container without ward']:.2f}× the "
                 f"container without ward (the goal: within 1.2×); to its exit, "
                 f"{emed['ward-pi run'] / emed['container without ward']:.2f}×.\n")
    lines.append(f"\nThe image (`ward-pi:latest`, as docker reports it): {size / 1e6:.0f} MB, with the toolchains of "
                 "#44 (npm, python3 with pip, venv and pytest, gcc, g++, make, curl, jq, rsync, unzip); 530 MB "
                 "before them.\n")
    write_results("\n".join(lines) + "\n", a.out, a.json, {"runs": samples, "engine": starts,
                                                          "command_start": cstart, "command_exit": cend,
                                                          "image_bytes": size})
    return 0


if __name__ == "__main__":
    sys.exit(main())
