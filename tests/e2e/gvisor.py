"""The reference image under gVisor (#45): runsc from Debian, as docker's
runtime (docker run --runtime=runsc --network none, the private dockerd's
daemon.json giving runsc RUNSC_ARGS) and on a bundle
unpacked from the image's OCI layout as runc's and crun's cases are, with
--network=none (no route out: the only egress ward allows without its
guard) and --host-uds=open (the bridge reaches the host's model socket and
MCP relay bound into /run/ward, as under docker with the same runtime
arguments).

gVisor's own kernel (the Sentry) stands between the agent and the host's,
so the host's /proc does not see the agent: every check of the agent's
state is read from inside, by the agent's own bash tool. In a session:
Pi answers get_state, a prompt goes through the model route and a tool call
through the bridge; the agent's uid, capabilities, Seccomp and no_new_privs
(prctl, since gVisor's status has no NoNewPrivs line); /run/ward refused,
the token not in PID 1's environment (gVisor lets any user read
/proc/1/environ, so ward moves its environment off it); the evidence says
gVisor and names its degradations. Then three refusals in one line each: a
config whose Landlock is hard_requirement with [landlock] gvisor = refuse,
an [mcp] source the agent's user could read (its modes are all that keep
it), and the image under runsc's own network, which has a route out.
"""
import json
import os
import shutil
import subprocess

RUNSC_ARGS = ["--network=none", "--host-uds=open"]


def _run_once(a, h, d, run, name, args, runsc_args, netns=None):
    """ward in the image under runsc with args, to its end: (status, stderr)."""
    b, _ws = h.bundle(a, d, run, f"runsc-{name}", None)
    with open(os.path.join(b, "config.json")) as f:
        spec = json.load(f)
    spec["process"]["args"] = args
    if netns:  # the sandbox in runsc's own namespace, whose interfaces its host network shows
        spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"] if n["type"] != "network"]
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(spec, f)
    cid = f"ward-e2e-gvisor-{name}-{os.getpid()}"
    try:
        # runsc's own network is made from the namespace runsc runs in
        prefix = ["ip", "netns", "exec", netns] if netns else []
        p = subprocess.run([*prefix, "runsc", *runsc_args, "run", "--bundle", b, cid], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stderr
    finally:
        subprocess.run(["runsc", "delete", "-force", cid], capture_output=True)


def session(h, label, cmd, run, env=None, cleanup=None):
    """One Pi session under gVisor, every check read from inside."""
    check = h.check
    evidence = os.path.join(run, "evidence.json")
    if os.path.exists(evidence):
        os.unlink(evidence)
    # no Landlock keeps the agent from /run/ward here: its files' modes do,
    # as an operator under gVisor sets them (runtimes.md)
    os.chmod(os.path.join(run, "mcp.json"), 0o600)
    os.chmod(run, 0o711)
    s = h.Session(cmd, env)
    try:
        st = s.request({"id": "s1", "type": "get_state"}, timeout=180)
        if not check(f"{label}: get_state answered", bool(st and st.get("success")), s.tail() if not st else ""):
            return
        text = s.prompt("p1", "hi")
        check(f"{label}: prompt round trip through the model route", text == "Hello from fake-model.", repr(text))
        inside = ("id -u; grep -E '^(Uid|CapInh|CapPrm|CapEff|CapBnd|CapAmb|Seccomp):' /proc/self/status; "
                  "python3 -c 'import ctypes; print(\"nnp\", ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))'; "
                  "cat /run/ward/mcp.json >/dev/null 2>&1 || echo src-denied; "
                  f"grep -q {h.TOKEN} /proc/1/environ 2>/dev/null || echo token-absent; "
                  "unshare -U true 2>/dev/null || echo unshare-denied")
        text = s.prompt("p2", "CALL bash " + json.dumps({"command": inside})) or ""
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line and line.split(":", 1)[0] in
                      ("Uid", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "Seccomp"))
        fields = {k: v.split() for k, v in fields.items()}
        caps_zero = all(int(fields.get(k, ["1"])[0], 16) == 0 for k in ("CapInh", "CapPrm", "CapEff", "CapBnd"))
        check(f"{label}: from inside: uid {h.AGENT_UID}, no capabilities, Seccomp 2, no_new_privs 1",
              fields.get("Uid") == [str(h.AGENT_UID)] * 4 and caps_zero and fields.get("Seccomp") == ["2"] and
              "nnp 1" in text, repr(text[:400]))
        check(f"{label}: from inside: /run/ward refused, the token not in PID 1's environment, unshare refused "
              "(the deny list)", "src-denied" in text and "token-absent" in text and "unshare-denied" in text,
              repr(text[-200:]))
        text = s.prompt("p3", 'CALL mcp__fixture__echo {"text":"hello via ' + label + '"}') or ""
        check(f"{label}: MCP tool call through the bridge (token added by the bridge)", f"hello via {label}" in text,
              repr(text[:160]))
        try:
            with open(evidence) as f:
                ev = json.load(f)
        except (OSError, ValueError) as e:
            ev = {"error": str(e)}
        degr = ev.get("degradations", [])
        check(f"{label}: the evidence names gVisor, Landlock's absence and the egress held by the namespace",
              ev.get("runtime") == "gVisor" and any(x.startswith("gVisor: landlock:") for x in degr) and
              any(x.startswith("gVisor: egress:") for x in degr) and
              "no route" in (ev.get("egress") or {}).get("enforced_by", ""),
              f"runtime {ev.get('runtime')}, degradations {degr}, egress {ev.get('egress')}")
        rc = s.close()
        check(f"{label}: stdin EOF ends the session, status 0", rc == 0, f"status {rc}; {s.tail()}")
    finally:
        if s.p.poll() is None:
            s.p.kill()
            s.p.wait()
        if cleanup:
            cleanup()
        os.chmod(run, 0o755)
        os.chmod(os.path.join(run, "mcp.json"), 0o644)


def gvisor_case(a, h, d, run):
    check = h.check
    if not shutil.which("runsc") or not shutil.which("umoci"):
        h.report("runsc: session", "SKIP", "runsc or umoci is not installed")
        return
    b, _ws = h.bundle(a, d, run, "runsc", None)
    cid = f"ward-e2e-runsc-{os.getpid()}"
    session(h, "runsc", ["runsc", *RUNSC_ARGS, "run", "--bundle", b, cid], run,
            cleanup=lambda: subprocess.run(["runsc", "delete", "-force", cid], capture_output=True))

    # Landlock demanded with no stand-in: refused before anything runs, in one line
    rc, err = _run_once(a, h, d, run, "refuse",
                        ["/bin/sh", "-c", "sed 's/^gvisor = accept/gvisor = refuse/' "
                         "/etc/ward/ward.conf > /tmp/refuse.conf && exec /sbin/ward -c /tmp/refuse.conf"],
                        RUNSC_ARGS)
    lines = [x for x in err.splitlines() if "landlock" in x and "gvisor = refuse" in x]
    check("runsc: [landlock] gvisor = refuse: refused in one line naming Landlock, gVisor and the setting",
          rc == 3 and len(lines) == 1 and "gVisor has no Landlock" in lines[0], f"status {rc}; {err[-400:]}")
    # /run/ward left open (mcp.json 0644): with no Landlock in force, its
    # modes are what keep it from the agent, so the start is refused
    rc, err = _run_once(a, h, d, run, "modes", ["/sbin/ward"], RUNSC_ARGS)
    lines = [x for x in err.splitlines() if "may be read by the agent's user" in x]
    check("runsc: an [mcp] source the agent's user may read (no Landlock in force) is refused in one line",
          rc == 2 and len(lines) == 1 and "/run/ward/mcp.json" in lines[0], f"status {rc}; {err[-400:]}")
    # a network with a way out (a veth with a default route, as docker's
    # bridge gives one, shown to the sandbox by runsc's host network): without
    # the guard, refused with the flag that fixes it
    ns = f"ward-gv-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for cmd in (["ip", "link", "add", f"gvh{os.getpid() % 10000}", "type", "veth", "peer", "name", "eth0",
                     "netns", ns],
                    ["ip", "-n", ns, "addr", "add", "10.231.0.2/24", "dev", "eth0"],
                    ["ip", "-n", ns, "link", "set", "eth0", "up"], ["ip", "-n", ns, "link", "set", "lo", "up"],
                    ["ip", "-n", ns, "route", "add", "default", "via", "10.231.0.1"]):
            subprocess.run(cmd, check=True, capture_output=True)
        # (ip netns exec mounts a sysfs of its own, without the cgroups)
        rc, err = _run_once(a, h, d, run, "network", ["/sbin/ward"], ["--network=host", "--host-uds=open", "--ignore-cgroups"], netns=ns)
    finally:
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
    lines = [x for x in err.splitlines() if "egress: gVisor has no seccomp user notification" in x]
    check("runsc: a network with a route out is refused, naming --network none",
          rc == 3 and len(lines) == 1 and "--network none" in lines[0] and "--network=none" in lines[0],
          f"status {rc}; {err[-400:]}")


def docker_runsc(h, env, run, ws, base):
    """docker run --runtime=runsc: the daemon's runtime runs runsc with
    RUNSC_ARGS (Dockerd's runtimes)."""
    session(h, "docker --runtime=runsc", base + ["--runtime=runsc", "--network", "none", "ward-pi:latest"], run, env)
