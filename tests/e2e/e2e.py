#!/usr/bin/env python3
"""End to end: the reference image (make image) running real Pi 1.6.0 under
every runtime these machines offer: docker (a private dockerd), runc and crun
(a bundle unpacked from the OCI layout by umoci) and podman as root.

In each runtime one session is driven over stdin/stdout:
  get_state answered; from the HOST's /proc the agent runs as uid 1000 with
  no capabilities, NoNewPrivs 1, Seccomp 2, and its materialised mcp.json
  holds no token; a prompt round trip through the bridged model route; the
  bash tool runs in the sandbox (writes to the workspace, is refused the
  host's mcp.json and PID 1's environment, where the token is); an MCP tool call succeeds only because the bridge
  adds the token; stdin EOF ends the session with status 0.
docker also: `docker stop` ends a session cleanly within the grace period,
and a second run sees the first run's session file in the named volume.
gVisor (runsc) in gvisor.py: the same session read from inside, and the two
refusals its missing layers bring.

Host side: the project's fake OpenAI server and MCP server on unix sockets
owned by the image's bridge user (999), mode 0600.

  e2e.py --image-dir build/image --node NODE --tests tests
Prints "pass|FAIL|SKIP NAME: detail" and "e2e: N passed, N failed[, N skipped]".
"""
import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dockerd import Dockerd  # noqa: E402
from hostside import serve_unix  # noqa: E402
from podmanconf import podman_setup  # noqa: E402
from providerns import ProviderNetns  # noqa: E402
import gvisor  # noqa: E402
import pod  # noqa: E402
import wardpi_engines  # noqa: E402

AGENT_UID = 1000
BRIDGE_UID = 999
TOKEN = "e2e-token-5b1f"


from results import RESULTS, report  # noqa: E402


def check(name, ok, detail=""):
    report(name, "pass" if ok else "FAIL", detail)
    return ok


class Session:
    """Pi RPC over a child's stdin/stdout, JSON lines."""

    def __init__(self, cmd, env=None):
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env)
        self.q = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._err, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            try:
                self.q.put(json.loads(line))
            except ValueError:
                self.q.put({"_raw": line.decode(errors="replace")})
        self.q.put(None)

    def _err(self):
        for line in self.p.stderr:
            self.stderr.append(line.decode(errors="replace").rstrip())

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def wait_for(self, pred, timeout=60):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            try:
                rec = self.q.get(timeout=left)
            except queue.Empty:
                return None
            if rec is None:
                return None
            if pred(rec):
                return rec

    def request(self, obj, timeout=60):
        self.send(obj)
        return self.wait_for(lambda r: r.get("type") == "response" and r.get("id") == obj["id"], timeout)

    def prompt(self, pid, text, timeout=90):
        """Sends a prompt, waits for the agent to settle, returns its last text."""
        if not self.request({"id": pid, "type": "prompt", "message": text}, timeout):
            return None
        if not self.wait_for(lambda r: r.get("type") == "agent_settled", timeout):
            return None
        r = self.request({"id": pid + "-t", "type": "get_last_assistant_text"}, timeout)
        return ((r or {}).get("data") or {}).get("text")

    def close(self, timeout=30):
        self.p.stdin.close()
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return None

    def tail(self):
        return " | ".join(self.stderr[-6:])


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        if int(st[st.rindex(")") + 2:].split()[1]) == pid:
            out.append(int(d))
    return out


def proc_status(pid):
    st = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            st[k] = v.strip()
    return st


def find_agent(ward_pid):
    """The agent: ward's child running node (host pid); Pi renames its
    process title, so the executable tells it from the bridge."""
    for c in children(ward_pid):
        try:
            if os.path.basename(os.readlink(f"/proc/{c}/exe")) == "node":
                return c
        except OSError:
            pass
    return None


def host_proc_checks(rt, ward_pid, uid=AGENT_UID):
    agent = find_agent(ward_pid) if ward_pid else None
    if not check(f"{rt}: the agent is found from the host's /proc", agent is not None,
                 f"ward host pid {ward_pid}, agent {agent}"):
        return
    st = proc_status(agent)
    uids = st["Uid"].split()
    caps = {k: st[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
    ok = (all(u == str(uid) for u in uids) and all(int(v, 16) == 0 for v in caps.values())
          and st["NoNewPrivs"] == "1" and st["Seccomp"] == "2")
    check(f"{rt}: host /proc: agent uid {uid}, no capabilities, NoNewPrivs 1, Seccomp 2", ok,
          f"Uid {' '.join(uids)}, " + ", ".join(f"{k} {v}" for k, v in caps.items()) +
          f", NoNewPrivs {st['NoNewPrivs']}, Seccomp {st['Seccomp']}")
    try:
        with open(f"/proc/{agent}/root/var/lib/pi/agent/mcp.json") as f:
            conf = f.read()
        check(f"{rt}: the agent's mcp.json points at the bridge and holds no token",
              TOKEN not in conf and "127.0.0.1:7800" in conf, " ".join(conf.split())[:160])
    except OSError as e:
        check(f"{rt}: the agent's mcp.json points at the bridge and holds no token", False, str(e))


def drive(rt, cmd, ws, ward_pid_fn, env=None, host_uid=AGENT_UID):
    """host_uid: the agent's uid as the host sees it (shifted when rootless)."""
    """One full session; returns the session file Pi reported, if any."""
    note = os.path.join(ws, f"note-{rt}.txt")
    s = Session(cmd, env)
    st = s.request({"id": "s1", "type": "get_state"}, timeout=120)
    if not check(f"{rt}: get_state answered", bool(st and st.get("success")),
                 f"{(time.monotonic() - s.t0):.1f} s to the first response" if st else s.tail()):
        s.p.kill()
        s.p.wait()
        return None
    session_file = (st.get("data") or {}).get("sessionFile")
    host_proc_checks(rt, ward_pid_fn(), host_uid)
    text = s.prompt("p1", "hi")
    check(f"{rt}: prompt round trip through the model route", text == "Hello from fake-model.", repr(text))
    cmd_text = (f"id -u; echo sandboxed > {os.path.basename(note)}; "
                "cat /run/ward/mcp.json >/dev/null 2>&1 || echo src-denied; "
                "cat /proc/1/environ >/dev/null 2>&1 || echo env-denied")
    text = s.prompt("p2", "CALL bash " + json.dumps({"command": cmd_text})) or ""
    wrote = os.path.exists(note) and os.stat(note).st_uid == host_uid
    check(f"{rt}: bash tool in the sandbox: uid {AGENT_UID}, workspace written; the host's mcp.json "
          "and PID 1's environment (the token) refused",
          f"{AGENT_UID}" in text and "src-denied" in text and "env-denied" in text and wrote, f"{text[:120]!r}, note written: {wrote}")
    text = s.prompt("p3", 'CALL mcp__fixture__echo {"text":"hello via ' + rt + '"}') or ""
    check(f"{rt}: MCP tool call through the bridge (token added by the bridge)",
          f"hello via {rt}" in text, repr(text[:160]))
    t = time.monotonic()
    rc = s.close()
    check(f"{rt}: stdin EOF ends the session, status 0", rc == 0,
          f"status {rc} after {time.monotonic() - t:.1f} s" + ("" if rc == 0 else "; " + s.tail()))
    return session_file


def host_side(d, a, name="run", bridge_uid=BRIDGE_UID):
    """The model and MCP servers on unix sockets owned by the bridge's uid as
    the host sees it (shifted for a rootless container): model.sock, and
    host/6767.sock for mcp.json's http://127.0.0.1:6767/mcp."""
    run = os.path.join(d, name)
    os.makedirs(run)
    node = a.node
    procs = [serve_unix([node, os.path.join(a.tests, "node", "fake-openai.mjs"), f"{run}/model.sock"],
                        f"{run}/model.sock", bridge_uid)]
    # a server on the host's loopback, as the image's [mcp] reaches one: by
    # the relay socket /run/ward/host/PORT.sock (ward-pi makes one per port;
    # here the server listens on it itself)
    env = dict(os.environ, MCP_TOKEN=TOKEN, MCP_ALLOWED_HOSTS="127.0.0.1:6767")
    os.makedirs(f"{run}/host")
    procs.append(serve_unix([node, os.path.join(a.tests, "node", "mcp-server.mjs"), f"{run}/host/6767.sock", "/mcp"],
                            f"{run}/host/6767.sock", bridge_uid, env=env))
    with open(f"{run}/mcp.json", "w") as f:
        json.dump({"mcpServers": {"fixture": {"url": "http://127.0.0.1:6767/mcp",
                                              "headers": {"Authorization": "Bearer ${E2E_MCP_TOKEN}"},
                                              "exposure": "direct"}}}, f)
    os.chmod(f"{run}/mcp.json", 0o644)
    return run, procs


def workspace(d, rt, uid=AGENT_UID):
    ws = os.path.join(d, f"ws-{rt}")
    os.makedirs(ws)
    os.chown(ws, uid, uid)
    return ws


def docker(a, d, run):
    if not shutil.which("dockerd"):
        report("docker: session", "SKIP", "docker.io is not installed")
        return
    # runsc as a runtime of this daemon (gvisor.py's docker case), where installed
    runsc = shutil.which("runsc")
    dk = Dockerd(os.path.join(d, "dk"), {"runsc": {"path": runsc, "runtimeArgs": gvisor.RUNSC_ARGS}} if runsc else None)
    try:
        dk.start()
    except RuntimeError as e:
        report("docker: session", "FAIL", str(e))
        return
    env = dk.env
    try:
        subprocess.run(["docker", "load", "-i", os.path.join(a.image_dir, "ward-pi.tar")], env=env,
                       check=True, capture_output=True)
        ws = workspace(d, "docker")
        base = ["docker", "run", "-i", "--rm", "-e", f"E2E_MCP_TOKEN={TOKEN}", "-v", f"{run}:/run/ward",
                "-v", "ward-e2e-agent:/var/lib/pi", "-v", f"{ws}:{ws}", "-w", ws]

        def pid_of(name):
            r = subprocess.run(["docker", "inspect", "-f", "{{.State.Pid}}", name], env=env,
                               capture_output=True, text=True)
            return int(r.stdout.strip() or 0) or None

        session_file = drive("docker", base + ["--name", "ward-e2e-1", "ward-pi:latest"], ws,
                             lambda: pid_of("ward-e2e-1"), env)

        # the agent's note on its sandbox (Pi's APPEND_SYSTEM.md), from the rules in force
        # (ward writes it at each start: read in a container started as the session's was)
        note = subprocess.run(["docker", "run", "--rm", "-v", "ward-e2e-agent:/var/lib/pi", "-v", f"{ws}:{ws}", "-w", ws,
                               "ward-pi:latest", "--", "/bin/cat", "/var/lib/pi/agent/APPEND_SYSTEM.md"], env=env,
                              capture_output=True, text=True, timeout=60).stdout
        check("docker: ward wrote Pi's APPEND_SYSTEM.md from the rules in force: the workspace writable, the "
              "bridge's model route, no package registry", f"`{ws}`" in note and "http://127.0.0.1:7900/v1/" in note
              and "not reachable" in note, note[-300:])

        # the second run sees the first run's session in the volume
        s = Session(base + ["ward-pi:latest"], env)
        st = s.request({"id": "s1", "type": "get_state"}, timeout=120)
        if session_file and st:
            text = s.prompt("p1", "CALL bash " + json.dumps(
                {"command": f"test -s {session_file} && echo persisted || echo missing"})) or ""
            check("docker: a second run sees the first session in the named volume", "persisted" in text,
                  f"{session_file}: {text[:80]!r}")
        else:
            check("docker: a second run sees the first session in the named volume", False,
                  f"first session file {session_file!r}, second run answered: {bool(st)}; {s.tail()}")
        s.close()

        # docker stop: TERM reaches Pi through ward, clean exit within the grace period
        s = Session(base + ["--name", "ward-e2e-stop", "ward-pi:latest"], env)
        st = s.request({"id": "s1", "type": "get_state"}, timeout=120)
        t = time.monotonic()
        subprocess.run(["docker", "stop", "-t", "20", "ward-e2e-stop"], env=env, capture_output=True)
        try:
            rc = s.p.wait(30)
        except subprocess.TimeoutExpired:
            s.p.kill()
            rc = None
        took = time.monotonic() - t
        check("docker: docker stop ends the session cleanly within the grace period",
              bool(st) and rc is not None and rc != 137 and took < 19,
              f"status {rc} after {took:.1f} s (grace 10 s; 137 would mean killed); {s.tail()}")
        # a read-only container: TMPDIR is not writable, and ward says so before Pi could crash on it
        r = subprocess.run(["docker", "run", "--rm", "--read-only", "-e", f"E2E_MCP_TOKEN={TOKEN}", "-v", f"{run}:/run/ward",
                            "-v", "ward-e2e-agent:/var/lib/pi", "-v", f"{ws}:{ws}", "-w", ws, "ward-pi:latest"],
                           env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        lines = [l for l in r.stderr.splitlines() if "writable = " in l]
        check("docker --read-only: ward refuses before Pi starts (TMPDIR on a read-only filesystem), exit 3",
              r.returncode == 3 and any("/tmp" in l and "read-only filesystem" in l for l in lines)
              and r.stdout == "", lines[0] if lines else f"rc {r.returncode}: {r.stderr.strip()[-200:]}")
        if runsc:
            g = types.SimpleNamespace(Session=Session, check=check, report=report, TOKEN=TOKEN, AGENT_UID=AGENT_UID)
            gvisor.docker_runsc(g, env, run, ws, base)
        else:
            report("docker --runtime=runsc: session", "SKIP", "runsc is not installed")
        wardpi_engines.docker(a, d, env, run, Session, workspace)
        escape_in_image(a, d, env)
    finally:
        subprocess.run(["docker", "volume", "rm", "-f", "ward-e2e-agent"], env=env, capture_output=True)
        dk.stop()


def escape_in_image(a, d, env):
    """The escape probe (tests/sandbox/escape.c) as the image's agent, under
    the image's own policy with one rule added: read = the probe's ro dir
    (its ro, rw and secret dirs must share one mount for the rename and link
    checks, and the image's rules cover none of it). rw is the start
    directory, so "." grants it; secret is under no rule; the allowed port is
    the bridge's 7900. The outsider joins with docker exec as uid 1000."""
    if not a.probe:
        report("docker: escape probe as the image's agent", "SKIP", "no --probe given")
        return
    root = os.path.join(d, "probe")
    for sub in ("ro", "rw", "secret"):
        os.makedirs(os.path.join(root, sub))
    with open(os.path.join(root, "ro", "file"), "w") as f:
        f.write("read me\n")
    with open(os.path.join(root, "secret", "file"), "w") as f:
        f.write("secret\n")
    os.chown(os.path.join(root, "secret", "file"), AGENT_UID, AGENT_UID)
    os.chown(os.path.join(root, "rw"), AGENT_UID, AGENT_UID)
    shutil.copy(a.probe, os.path.join(root, "ro", "escape"))
    os.chmod(os.path.join(root, "ro", "escape"), 0o755)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "rootfs", "ward.conf")) as f:
        conf = f.read()
    assert "\nread = /usr " in conf
    conf = conf.replace("\nread = /usr ", "\nread = /srv/probe/ro /usr ", 1)
    with open(os.path.join(d, "probe.conf"), "w") as f:
        f.write(conf)
    tag = f"i{os.getpid()}"
    name = "ward-e2e-escape"
    r = subprocess.run(["docker", "run", "-d", "--name", name, "-v", f"{root}:/srv/probe", "-w", "/srv/probe/rw",
                        "-v", f"{d}/probe.conf:/etc/ward/ward.conf:ro", "ward-pi:latest", "--",
                        "/srv/probe/ro/escape", "probe", "/srv/probe", "7900", "7901", tag] +
                       (["udp=denied"] if "\ndeny = udp\n" in conf else []),  # the image's [seccomp]
                       env=env, capture_output=True, text=True)
    try:
        if r.returncode != 0:
            report("docker: escape probe as the image's agent", "FAIL", r.stderr.strip()[-200:])
            return
        for _ in range(100):
            x = subprocess.run(["docker", "exec", "-d", "--user", f"{AGENT_UID}:{AGENT_UID}", name,
                                "/srv/probe/ro/escape", "outsider", tag], env=env, capture_output=True)
            if x.returncode == 0:
                break
            time.sleep(0.05)
        w = subprocess.run(["docker", "wait", name], env=env, capture_output=True, text=True, timeout=120)
        logs = subprocess.run(["docker", "logs", name], env=env, capture_output=True, text=True)
        out = logs.stdout
        lines = out.splitlines()
        fails = [l for l in lines if l.startswith("FAIL")]
        summary = [l for l in lines if l.startswith("escape:")]
        n = sum(1 for l in lines if l.startswith("ok ") or l.startswith("FAIL"))
        ok = w.stdout.strip() == "0" and not fails and summary and n >= 50
        check("docker: escape probe as the image's agent (uid 1000, the image's seccomp and Landlock)", ok,
              (summary[0] if summary else f"no summary, status {w.stdout.strip()}") +
              ("; " + "; ".join(fails) if fails else "") + ("" if ok else "\n" + out + logs.stderr[-600:]))
    finally:
        subprocess.run(["docker", "rm", "-f", name], env=env, capture_output=True)


DEFAULT_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
                "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
                "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"]


def bundle(a, d, run, rt, netns):
    """A runtime bundle from the OCI layout: umoci's config plus what a runtime's
    caller adds (mounts, cwd, the network namespace, docker's default caps: a
    bare runc spec grants no CAP_SETUID, and ward then refuses to start)."""
    b = os.path.join(d, "bundle")
    if not os.path.exists(b):
        subprocess.run(["umoci", "unpack", "--image", os.path.join(a.image_dir, "oci") + ":ward-pi:latest", b],
                       check=True, capture_output=True)
        shutil.copy(os.path.join(b, "config.json"), os.path.join(b, "config.json.umoci"))
    # every caller starts from umoci's config, not the last one written
    with open(os.path.join(b, "config.json.umoci")) as f:
        spec = json.load(f)
    ws = workspace(d, rt)
    # the agent dir starts as the image's /var/lib/pi, as a fresh docker or
    # podman volume would (copy-up); a bind mount does not do that by itself
    agent_dir = os.path.join(d, f"agent-{rt}")
    subprocess.run(["cp", "-a", os.path.join(b, "rootfs", "var", "lib", "pi"), agent_dir], check=True)
    p = spec["process"]
    p["terminal"] = False
    p["cwd"] = ws
    p["env"] = [e for e in p.get("env", [])] + [f"E2E_MCP_TOKEN={TOKEN}"]
    p.pop("rlimits", None)
    for k in p["capabilities"]:
        p["capabilities"][k] = list(DEFAULT_CAPS) if k != "ambient" else []
    spec["mounts"] = [m for m in spec["mounts"] if m["destination"] != "/var/lib/pi"]
    for src, dst in ((run, "/run/ward"), (ws, ws), (agent_dir, "/var/lib/pi")):
        spec["mounts"].append({"destination": dst, "type": "bind", "source": src, "options": ["rbind", "rw"]})
    for ns in spec["linux"]["namespaces"]:
        if ns["type"] == "network" and netns:  # else a new one of the runtime's (runsc --network=none)
            ns["path"] = f"/var/run/netns/{netns}"
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(spec, f)
    return b, ws


def oci_runtime(a, d, run, rt):
    if not shutil.which(rt) or not shutil.which("umoci"):
        report(f"{rt}: session", "SKIP", f"{rt} or umoci is not installed")
        return
    netns = f"ward-e2e-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", netns], check=True)
    try:
        subprocess.run(["ip", "-n", netns, "link", "set", "lo", "up"], check=True)
        b, ws = bundle(a, d, run, rt, netns)
        cid = f"ward-e2e-{rt}-{os.getpid()}"
        if rt == "crun":
            # crun refuses hybrid cgroups: a private mount namespace without the v2 mount
            cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                   'umount /sys/fs/cgroup/unified 2>/dev/null; exec crun run --bundle "$0" "$1"', b, cid]
        else:
            cmd = [rt, "run", "--bundle", b, cid]

        def pid_of():
            r = subprocess.run([rt, "state", cid], capture_output=True, text=True)
            try:
                return json.loads(r.stdout)["pid"]
            except ValueError:
                return None

        drive(rt, cmd, ws, pid_of)
        subprocess.run([rt, "delete", "-f", cid], capture_output=True)
    finally:
        subprocess.run(["ip", "netns", "delete", netns])


def podman(a, d, run):
    if not shutil.which("podman"):
        report("podman: session", "SKIP", "podman is not installed")
        return
    pd = os.path.join(d, "podman")
    pm, env = podman_setup(pd)
    try:
        subprocess.run(pm + ["load", "-i", os.path.join(a.image_dir, "ward-pi.tar")], env=env,
                       check=True, capture_output=True)
        ws = workspace(d, "podman")
        name = f"ward-e2e-podman-{os.getpid()}"

        def pid_of():
            r = subprocess.run(pm + ["inspect", "-f", "{{.State.Pid}}", name], env=env,
                               capture_output=True, text=True)
            return int(r.stdout.strip() or 0) or None

        drive("podman", pm + ["run", "-i", "--rm", "--name", name, "--network", "none",
                              "-e", f"E2E_MCP_TOKEN={TOKEN}", "-v", f"{run}:/run/ward",
                              "-v", "ward-e2e-agent:/var/lib/pi", "-v", f"{ws}:{ws}", "-w", ws,
                              "localhost/ward-pi:latest"], ws, pid_of, env)
    finally:
        subprocess.run(pm + ["rm", "-af"], env=env, capture_output=True)
        subprocess.run(pm + ["system", "reset", "-f"], env=env, capture_output=True)
        subprocess.run(["umount", "-R", f"{pd}/root", f"{pd}/run"], capture_output=True)


ROOTLESS_USER = "ward-e2e"


def subid_base(user):
    with open("/etc/subuid") as f:
        for line in f:
            name, start, count = line.strip().split(":")
            if name == user and int(count) >= 65536:
                return int(start)
    raise RuntimeError(f"no 65536 subordinate ids for {user} in /etc/subuid")


def podman_rootless(a, d):
    """podman run by an unprivileged user: ward is root only in the user's
    namespace, the agent (uid 1000 inside) is a subordinate uid outside."""
    if not shutil.which("podman") or not shutil.which("newuidmap"):
        report("podman-rootless: session", "SKIP", "podman or newuidmap (uidmap) is not installed")
        return
    subprocess.run(["userdel", "-r", ROOTLESS_USER], capture_output=True)
    subprocess.run(["useradd", "-m", ROOTLESS_USER], check=True, capture_output=True)
    procs = []
    try:
        pw = subprocess.run(["id", "-u", ROOTLESS_USER], capture_output=True, text=True, check=True)
        uid = int(pw.stdout)
        base = subid_base(ROOTLESS_USER)
        # container uid N >= 1 is host uid base + N - 1
        run, procs = host_side(d, a, "run-rootless", base + BRIDGE_UID - 1)
        os.chown(run, uid, uid)  # ward (root inside = the user) writes the evidence there
        pd = os.path.join(d, "podman-rootless")
        os.makedirs(os.path.join(pd, "xdg"), mode=0o700)
        cli, penv = podman_setup(pd)
        subprocess.run(["chown", "-R", f"{uid}:{uid}", pd], check=True)
        pm = ["runuser", "-u", ROOTLESS_USER, "--", "env", f"HOME=/home/{ROOTLESS_USER}",
              f"XDG_RUNTIME_DIR={pd}/xdg", f"CONTAINERS_CONF={penv['CONTAINERS_CONF']}"] + cli
        with open(os.path.join(a.image_dir, "ward-pi.tar"), "rb") as tar:
            r = subprocess.run(pm + ["load"], stdin=tar, capture_output=True, text=True)
        if not check("podman-rootless: image loaded by an unprivileged user", r.returncode == 0,
                     (r.stdout + r.stderr).strip()[-200:]):
            return
        ws = workspace(d, "podman-rootless", base + AGENT_UID - 1)
        name = f"ward-e2e-rootless-{os.getpid()}"

        def pid_of():
            r = subprocess.run(pm + ["inspect", "-f", "{{.State.Pid}}", name], capture_output=True, text=True)
            return int(r.stdout.strip() or 0) or None

        drive("podman-rootless", pm + ["run", "-i", "--rm", "--name", name, "--network", "none",
                                       "-e", f"E2E_MCP_TOKEN={TOKEN}", "-v", f"{run}:/run/ward",
                                       "-v", "ward-e2e-agent:/var/lib/pi", "-v", f"{ws}:{ws}", "-w", ws,
                                       "localhost/ward-pi:latest"], ws, pid_of, host_uid=base + AGENT_UID - 1)
        # ward-pi as this user: it picks podman itself, whose storage is
        # the one above (storage.conf), in a tmux pane
        with open(os.path.join(pd, "storage.conf"), "w") as f:
            f.write(f'[storage]\ndriver = "vfs"\ngraphroot = "{pd}/root"\nrunroot = "{pd}/run"\n'
                    f'rootless_storage_path = "{pd}/root"\n')
        wardpi_engines.podman_rootless(
            a, d, ROOTLESS_USER, uid, ["runuser", "-u", ROOTLESS_USER, "--", "env"],
            {"HOME": f"/home/{ROOTLESS_USER}", "XDG_RUNTIME_DIR": f"{pd}/xdg", "PATH": "/usr/local/bin:/usr/bin:/bin",
             "CONTAINERS_CONF": penv["CONTAINERS_CONF"], "CONTAINERS_STORAGE_CONF": f"{pd}/storage.conf"},
            base + AGENT_UID - 1)
        subprocess.run(pm + ["system", "reset", "-f"], capture_output=True)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        # the user's podman leaves a pause process holding its namespace
        subprocess.run(["pkill", "-KILL", "-u", ROOTLESS_USER], capture_output=True)
        time.sleep(0.2)
        subprocess.run(["userdel", "-r", ROOTLESS_USER], capture_output=True)


# Two presets in the image: the API host, the key's variable and header, the
# fake's answer, the path of its API
IMAGE_PRESETS = {
    "anthropic": ("api.anthropic.com", "ANTHROPIC_API_KEY", "x-api-key", "", "anthropic", "/v1/messages"),
    "openai": ("api.openai.com", "OPENAI_API_KEY", "authorization", "Bearer ", "openai", "/v1/responses"),
}


def provider_runc(a, d, run, provider):
    """The image with a provider preset, as a user runs it: WARD_PROVIDER and
    the key in the container's environment, nothing else. The container (runc)
    is in a network namespace of the test's where a DNS server answers
    the provider's API host with a fake of its API (tests/node/fake-provider.mjs)
    behind TLS with a test CA, which the container's CA bundle holds (bind
    mounts over resolv.conf and the bundle: what a network gives a container).
    Real Pi 1.6, started by the image's pi-agent.mjs with its own provider code, answers a prompt and a bash tool round trip through the bridge;
    the key is at the provider on every request and nowhere the agent can see;
    the agent cannot reach the provider's address itself."""
    rt = f"runc-{provider}"
    host, key_var, kh, prefix, wire, path = IMAGE_PRESETS[provider]
    if not shutil.which("runc") or not shutil.which("umoci") or not shutil.which("openssl"):
        report(f"{rt}: session", "SKIP", "runc, umoci or openssl is not installed")
        return
    key = f"sk-{provider}-e2e-only-the-bridge-holds-this"
    work = os.path.join(d, rt)
    os.makedirs(work)
    with ProviderNetns(a, work, host, "e2ep") as w:
        netns, resolv = w.netns, w.resolv
        certs = {"ca": w.ca}
        b, ws = bundle(a, d, run, rt, netns)
        with open(os.path.join(b, "config.json")) as f:
            spec = json.load(f)
        spec["process"]["env"] += [f"WARD_PROVIDER={provider}", f"{key_var}={key}"]
        # one session also has the image's egress proxy: the provider's host
        # allowed (WARD_PROXY_ALLOW), which the agent then reaches without
        # the bridge's key, and nothing else
        proxied = provider == "anthropic"
        if proxied:
            spec["process"]["env"] += [f"WARD_PROXY_ALLOW={host}"]
        for src, dst in ((resolv, "/etc/resolv.conf"), (certs["ca"], "/etc/ssl/certs/ca-certificates.crt")):
            spec["mounts"].append({"destination": dst, "type": "bind", "source": src, "options": ["rbind", "ro"]})
        with open(os.path.join(b, "config.json"), "w") as f:
            json.dump(spec, f)
        cid = f"ward-e2e-{rt}-{os.getpid()}"

        def pid_of():
            r = subprocess.run(["runc", "state", cid], capture_output=True, text=True)
            try:
                return json.loads(r.stdout)["pid"]
            except ValueError:
                return None

        s = Session(["runc", "run", "--bundle", b, cid])
        st = s.request({"id": "s1", "type": "get_state"}, timeout=120)
        model = ((st or {}).get("data") or {}).get("model") or {}
        check(f"{rt}: get_state answered, the model is {provider}'s (Pi's default for it)",
              bool(st and st.get("success")) and model.get("provider") == provider,
              f"model {model.get('provider')}/{model.get('id')}" if st else s.tail())
        text = s.prompt("p1", "hi")
        check(f"{rt}: a prompt answered by the provider, through the bridge, by name over TLS",
              text == f"Hello from fake-{wire}.", repr(text))
        probe = (f"echo ran-in-sandbox; env | grep -c sk-{provider} || true; "
                 "cat /proc/1/environ >/dev/null 2>&1 || echo pid1-env-denied; "
                 f"cat /proc/[0-9]*/environ 2>/dev/null | grep -c sk-{provider} || true; "
                 "timeout 5 bash -c 'echo x > /dev/tcp/203.0.113.7/443' 2>/dev/null && echo direct-reached || "
                 "echo direct-refused")
        if proxied:
            fetch = ("NODE_USE_ENV_PROXY=1 NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt node -e "
                     "\"fetch(process.argv[1]).then(r => console.log('got', r.status))"
                     ".catch(e => console.log('refused', (e.cause && e.cause.code) || e.message))\" ")
            probe += (f"; echo proxy=$HTTPS_PROXY; {fetch} https://{host}/v1/proxy-probe 2>/dev/null | sed s/^/allowed-/; "
                      f"{fetch} https://example.com/ 2>/dev/null | sed s/^/other-/")
        text = s.prompt("p2", "CALL bash " + json.dumps({"command": probe})) or ""
        check(f"{rt}: the bash tool's result goes back to the model; the agent's environment has no key, nor "
              "any environment it can read in /proc (PID 1's is refused), and its own connection to the "
              "provider's address is refused",
              "TOOL RESULT" in text and "ran-in-sandbox" in text and text.count("\n0") == 2
              and "pid1-env-denied" in text and "direct-refused" in text,
              repr(text[:200]))
        if proxied:
            check(f"{rt}: the image's egress proxy (WARD_PROXY_ALLOW): the agent's own fetch reaches the allowed "
                  "host through it (HTTPS_PROXY), another host is refused",
                  "proxy=http://127.0.0.1:7990" in text and "allowed-got " in text and "other-refused" in text,
                  repr(text[:400]))
        agent = find_agent(pid_of())
        environ = open(f"/proc/{agent}/environ", "rb").read().decode(errors="replace") if agent else ""
        check(f"{rt}: from the host's /proc: the agent's environment has WARD_PROVIDER and the bridge's URL, "
              "not the key", agent and key not in environ and f"WARD_PROVIDER={provider}" in environ
              and "WARD_PROVIDER_BASE_URL=http://127.0.0.1:7901" in environ,
              f"agent pid {agent}")
        rc = s.close()
        reqs = w.requests()
        probes = [r for r in reqs if r["path"] == "/v1/proxy-probe"]
        reqs = [r for r in reqs if r["path"] != "/v1/proxy-probe"]
        if proxied:
            check(f"{rt}: the agent's request through the proxy arrived without the key (a tunnel adds nothing)",
                  len(probes) == 1 and not probes[0]["headers"].get(kh), f"{len(probes)} probe(s)")
        check(f"{rt}: every request reached the provider with the key, on {path}; the session ended 0",
              rc == 0 and len(reqs) >= 3 and all(r["headers"].get(kh) == prefix + key for r in reqs)
              and all(r["path"].startswith(path) for r in reqs),
              f"rc {rc}, {len(reqs)} requests: {[(r['path'], r['headers'].get(kh, '')[:14]) for r in reqs][:4]}")
        subprocess.run(["runc", "delete", "-f", cid], capture_output=True)


def login_runc(a, d, run):
    """The image on a subscription's login instead of a key: WARD_PROVIDER=
    anthropic and WARD_CREDENTIAL naming Pi's auth.json in /run/ward (the
    image's [route provider] credential), expired. Real Pi 1.6 through the
    image's launcher speaks as with its own OAuth token; the bridge refreshes
    the login at the fake token endpoint (platform.claude.com, by name, TLS),
    sends the new token on every request and writes it back to the host's
    file; the agent can read neither the file nor the tokens anywhere."""
    rt = "runc-anthropic-login"
    host, _, kh, _, wire, path = IMAGE_PRESETS["anthropic"]
    if not shutil.which("runc") or not shutil.which("umoci") or not shutil.which("openssl"):
        report(f"{rt}: session", "SKIP", "runc, umoci or openssl is not installed")
        return
    work = os.path.join(d, rt)
    os.makedirs(work)
    login = os.path.join(run, "login.json")
    with open(login, "w") as f:
        json.dump({"anthropic": {"type": "oauth", "access": "sk-ant-oat01-e2e-access-0",
                                 "refresh": "sk-ant-ort01-e2e-refresh-0", "expires": int(time.time() * 1000) - 1000}}, f)
    os.chmod(login, 0o600)
    try:
        with ProviderNetns(a, work, host, "e2el", oauth=True) as w:
            b, ws = bundle(a, d, run, rt, w.netns)
            with open(os.path.join(b, "config.json")) as f:
                spec = json.load(f)
            spec["process"]["env"] += ["WARD_PROVIDER=anthropic", "WARD_CREDENTIAL=/run/ward/login.json"]
            for src, dst in ((w.resolv, "/etc/resolv.conf"), (w.ca, "/etc/ssl/certs/ca-certificates.crt")):
                spec["mounts"].append({"destination": dst, "type": "bind", "source": src, "options": ["rbind", "ro"]})
            with open(os.path.join(b, "config.json"), "w") as f:
                json.dump(spec, f)
            cid = f"ward-e2e-{rt}-{os.getpid()}"
            s = Session(["runc", "run", "--bundle", b, cid])
            st = s.request({"id": "s1", "type": "get_state"}, timeout=120)
            check(f"{rt}: get_state answered, the model anthropic's",
                  bool(st and st.get("success")) and ((st.get("data") or {}).get("model") or {}).get("provider")
                  == "anthropic", s.tail() if not st else "")
            text = s.prompt("p1", "hi")
            check(f"{rt}: a prompt answered through the bridge on the refreshed login", text == f"Hello from fake-{wire}.",
                  repr(text))
            tok = "-e '-(access|refresh)-[0-9]'"
            probe = ("cat /run/ward/login.json >/dev/null 2>&1 && echo file-read || echo file-denied; "
                     f"env | grep -cE {tok} || true; cat /proc/[0-9]*/environ 2>/dev/null | grep -cE {tok} || true; "
                     f"grep -rlE {tok} /var/lib/pi /home/pi /tmp 2>/dev/null | wc -l")
            text = s.prompt("p2", "CALL bash " + json.dumps({"command": probe})) or ""
            check(f"{rt}: the agent cannot read the login's file, and no token is in its environment, any "
                  "environment it can read in /proc, or its files",
                  "TOOL RESULT" in text and "file-denied" in text and text.count("\n0") >= 3, repr(text[:200]))
            rc = s.close()
            subprocess.run(["runc", "delete", "-f", cid], capture_output=True)
            with open(w.state) as f:
                state = json.load(f)
            reqs = w.requests()
            check(f"{rt}: one refresh; every request with the new access token in Bearer and Pi's subscription "
                  "headers, on its API's path; the session ended 0",
                  rc == 0 and state["refreshes"] == 1 and len(reqs) >= 3
                  and all(r["headers"].get("authorization") == f"Bearer {state['access']}" for r in reqs)
                  and all("oauth-2025-04-20" in r["headers"].get("anthropic-beta", "") for r in reqs)
                  and all(r["path"].startswith(path) for r in reqs),
                  f"rc {rc} refreshes {state['refreshes']} {[(r['path'], r['headers'].get('authorization', '')[:30]) for r in reqs][:4]}")
            with open(login) as f:
                saved = json.load(f)["anthropic"]
            check(f"{rt}: the refreshed login written back to the host's file",
                  saved["access"] == state["access"] and saved["refresh"] == state["refresh"]
                  and saved["expires"] > time.time() * 1000, json.dumps(saved)[:200])
    finally:
        os.unlink(login)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--tests", required=True)
    ap.add_argument("--probe", help="the static escape probe (build/tests/escape)")
    ap.add_argument("--only", action="append", help="docker, runc, crun, podman, podman-rootless, runc-anthropic, "
                    "runc-openai, runc-anthropic-login, containerd, runc-openshift, runsc")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="ward-e2e-")
    os.chmod(d, 0o755)
    run, procs = host_side(d, a)
    want = a.only or ["docker", "runc", "crun", "podman", "podman-rootless", "runc-anthropic", "runc-openai",
                      "runc-anthropic-login", "containerd", "runc-openshift", "runsc"]
    try:
        if "docker" in want:
            docker(a, d, run)
        for rt in ("runc", "crun"):
            if rt in want:
                oci_runtime(a, d, run, rt)
        if "podman" in want:
            podman(a, d, run)
        if "podman-rootless" in want:
            podman_rootless(a, d)
        for provider in IMAGE_PRESETS:
            if f"runc-{provider}" in want:
                provider_runc(a, d, run, provider)
        if "runc-anthropic-login" in want:
            login_runc(a, d, run)
        # the restricted pod (docs/examples/kubernetes.yaml); runc takes
        # containerd's RuntimeDefault profile when containerd ran first
        h = types.SimpleNamespace(Session=Session, check=check, find_agent=find_agent, proc_status=proc_status,
                                  runtime_default=None)
        pod.doc_maps_every_field()
        if "containerd" in want:
            pod.containerd_pod(a, h, d)
        if "runc-openshift" in want:
            pod.runc_openshift(a, h, d)
        if "runsc" in want:
            g = types.SimpleNamespace(Session=Session, check=check, report=report, bundle=bundle, TOKEN=TOKEN,
                                      AGENT_UID=AGENT_UID)
            gvisor.gvisor_case(a, g, d, run)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        shutil.rmtree(d, ignore_errors=True)
    return RESULTS.summary("e2e")


if __name__ == "__main__":
    sys.exit(main())
