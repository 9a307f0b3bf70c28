#!/usr/bin/python3
"""ward-pi (scripts/ward-pi), the host command, without an engine: its
--dry-run lines, and its real path run against a stand-in `docker` and
`podman` on PATH that record the words they were given. (tests/e2e runs it
for real under docker.)

  wardpi.py --ward-pi scripts/ward-pi
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from results import RESULTS, report  # noqa: E402
import session_cases  # noqa: E402  (beside this file)

KEY = "sk-ant-host-key-never-on-a-command-line"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward-pi", required=True)
    ap.add_argument("--ward", help="build/ward: the TUI case runs Pi under it in tmux")
    ap.add_argument("--node", help="Node 22 for the TUI case")
    a = ap.parse_args()
    wp = os.path.abspath(a.ward_pi)
    work = os.path.realpath(tempfile.mkdtemp(prefix="ward-pi-test-"))
    os.chmod(work, 0o755)
    try:
        cases(wp, work)
        note_case(a, work)
        tui_case(a, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return RESULTS.summary("ward-pi")


ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def note_case(a, work):
    """[agent] policy_note (the image's APPEND_SYSTEM.md): the agent's note on
    its sandbox says what the evidence, read back from the kernel, says:
    every path it may write and only those, the ports it may connect to,
    the bridge's routes by port and path."""
    import json
    name = "policy_note: the agent's note on its sandbox matches the evidence"
    if not a.ward:
        report(name, None, "needs --ward")
        return
    home = os.path.join(work, "note")
    os.makedirs(home)
    os.chown(home, 4242, 4242)
    note = os.path.join(home, "APPEND_SYSTEM.md")
    conf = os.path.join(work, "note.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = 4242\nenv = PATH=/usr/bin:/bin\npolicy_note = {note}\n"
                f"[landlock]\nread = /usr /etc /proc\nwrite = {home} /dev/null\nconnect = 7411\n"
                "scope = abstract signal\n[seccomp]\ndeny = udp\n"
                "[route model]\nlisten = 127.0.0.1:7412\nupstream = tls:api.example.com:443\npath = /v1/\n")
    p = subprocess.run([os.path.abspath(a.ward), "--evidence", "-c", conf, "--", "true"], capture_output=True,
                       text=True, timeout=60)
    ev = next((json.loads(l) for l in p.stderr.splitlines() if l.startswith("{")), None)
    text = open(note).read() if os.path.exists(note) else ""
    if not ev or not text:
        report(name, False, f"rc {p.returncode}; evidence {bool(ev)}, note {bool(text)}; {p.stderr[-400:]}")
        return
    lines = {l.split(":", 1)[0].strip("- "): l for l in text.splitlines() if l.startswith("- ")}
    writes = [r["path"] for r in ev["landlock"]["rules"] if "write_file" in r["access"] or "make_reg" in r["access"]]
    reads = [r["path"] for r in ev["landlock"]["rules"] if r["path"] not in writes]
    wline = next((l for l in text.splitlines() if l.startswith("- Files you may write")), "")
    rline = next((l for l in text.splitlines() if l.startswith("- Files you may only read")), "")
    cline = next((l for l in text.splitlines() if l.startswith("- TCP ports")), "")
    ok_w = writes and all(f"`{w}`" in wline for w in writes) and not any(f"`{r}`" in wline for r in reads)
    ok_r = reads and all(f"`{r}`" in rline for r in reads)
    ok_c = all(str(port) in cline for port in ev["landlock"]["connect_tcp"]) and "7411" in cline and "7412" in cline
    report(f"{name}: the paths it may write, and no other (the evidence's write rules)", ok_w, wline)
    report(f"{name}: the paths it may only read", ok_r, rline)
    report(f"{name}: the TCP ports it may connect to, the bridge's among them", ok_c, cline)
    report(f"{name}: each route by its port and path, and where it goes", "http://127.0.0.1:7412/v1/" in text
           and "api.example.com" in text, text[-500:])
    report(f"{name}: under the egress guard, a connection elsewhere fails at once (ENETUNREACH): it says so",
           "fails at once with ENETUNREACH" in text and ev["egress"]["mode"] == "loopback", text[-600:])
    # with the proxy: the hosts it allows, by name, and never "not reachable"
    conf2 = os.path.join(work, "note-proxy.conf")
    with open(conf2, "w") as f:
        f.write(f"[agent]\nuser = 4242\nenv = PATH=/usr/bin:/bin\npolicy_note = {note}\n"
                f"[landlock]\nread = /usr /etc /proc\nwrite = {home} /dev/null\nconnect = 7411\n"
                "[seccomp]\n[proxy]\nlisten = 127.0.0.1:7413\nallow = docs.python.org registry.example:8443\n"
                "presets = npm\n")
    p2 = subprocess.run([os.path.abspath(a.ward), "-c", conf2, "--", "true"], capture_output=True, text=True,
                        timeout=60)
    text2 = open(note).read() if os.path.exists(note) else ""
    report(f"{name}: with the proxy, the hosts it allows by name (--allow's, the presets'), and no word of "
           "registries being unreachable", p2.returncode == 0 and "`docs.python.org:443`" in text2
           and "`registry.example:8443`" in text2 and "`registry.npmjs.org:443`" in text2
           and "not reachable" not in text2 and "only through the proxy" in text2, text2[-700:])
    with open(note, "w") as f:
        f.write(text)
    st = os.stat(note)
    report(f"{name}: written as the agent's own file, mode 0600", st.st_uid == 4242 and (st.st_mode & 0o777) == 0o600,
           f"uid {st.st_uid} mode {oct(st.st_mode & 0o777)}")


def tui_case(a, work):
    """Pi's interactive TUI under ward, started by the image's launcher, in
    a tmux pane as a person would have it: it draws, a typed prompt gets the
    model's answer on the screen (the fake model through the bridge), a
    resize redraws it at the new width, Ctrl-D twice ends it, status 0, and
    the shell is usable after."""
    name = "ward-pi: the TUI under ward in a terminal (tmux)"
    pi = os.path.join(ROOT, "rootfs", "pi", "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js")
    if not a.ward or not a.node or not shutil.which("tmux") or not os.path.exists(pi):
        report(name, None, "needs --ward, --node, tmux and rootfs/pi's node_modules")
        return
    from hostside import serve_unix
    home = os.path.join(work, "tui")
    for d in ("", "/agent", "/tmp"):
        os.makedirs(home + d, exist_ok=True)
        os.chown(home + d, 4242, 4242)
    with open(home + "/agent/settings.json", "w") as f:
        f.write('{"defaultProjectTrust":"never","quietStartup":true}')
    os.chown(home + "/agent/settings.json", 4242, 4242)
    sock = os.path.join(work, "model.sock")
    srv = serve_unix([a.node, os.path.join(ROOT, "tests", "node", "fake-openai.mjs"), sock], sock, 65534)
    conf = os.path.join(work, "tui.conf")
    with open(conf, "w") as f:
        f.write(f"""[agent]
user = 4242:4242
command = node {ROOT}/rootfs/agent/pi-agent.mjs
cwd = {home}
env = PATH={os.path.dirname(os.path.abspath(a.node))}:/usr/bin:/bin
env = HOME={home}
env = TMPDIR={home}/tmp
env = PI_CODING_AGENT_DIR={home}/agent
env = PI_OFFLINE=1
env = PI_TELEMETRY=0
env = WARD_PI_CLI={pi}
env_pass = TERM
[landlock]
read = /usr /etc /proc /sys/fs/cgroup {ROOT}/tests/node {ROOT}/rootfs
write = {home} /dev/null /dev/tty /dev/pts
scope = abstract signal
[seccomp]
[route model]
listen = 127.0.0.1:7900
upstream = unix:{sock}
path = /v1/
""")
    import pitui
    from tmux import Tmux
    t = Tmux(f"wardpi{os.getpid()}", env=dict(os.environ, TERM="xterm-256color"))
    try:
        screens, status = pitui.session(t, f"{os.path.abspath(a.ward)} -c {conf}", os.path.join(work, "tui.status"),
                                        wait=30)
    finally:
        srv.kill()
        srv.wait()
    pitui.checks(report, name, screens, status)


def api_cases(run, proj, work, calls):
    """Docker's API on DOCKER_HOST's socket answers whether the image is
    there (curl, instead of the CLI's `image inspect`, which costs a start
    tens of milliseconds); what it cannot answer goes to the CLI."""
    import http.server
    import socketserver
    import threading
    sock = os.path.join(work, "api.sock")
    asked = []

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            code = {"/images/ward-pi:latest/json": 200, "/images/missing:image/json": 404}.get(self.path, 500)
            body = b"{}" if code == 200 else b'{"message":"no"}'
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    class S(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True

        def get_request(self):
            c, _ = self.socket.accept()
            return c, ("local", 0)

    srv = S(sock, H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    api = {"DOCKER_HOST": f"unix://{sock}"}
    try:
        for image, want_rc, what in (("ward-pi:latest", 0, "there (200): the session runs, the CLI not asked"),
                                     ("missing:image", 2, "404: the CLI asked to confirm (the socket's daemon "
                                      "may not be the CLI's); missing: one line, exit 2, nothing run"),
                                     ("odd:1", 0, "another answer: the CLI asked, as before")):
            open(calls, "w").close()
            asked.clear()
            p = run(proj, "--engine", "docker", "--rpc", "--no-mcp", "--image", image, extra=api)
            cli = [l for l in open(calls).read().splitlines() if l.startswith("image inspect")]
            ok = p.returncode == want_rc and asked == [f"/images/{image}/json"]
            ok = ok and (bool(cli) if image != "ward-pi:latest" else not cli)
            if want_rc == 2:
                ok = ok and p.stderr.count("\n") == 1 and "make image" in p.stderr and "run --rm" not in open(calls).read()
            report(f"ward-pi asks docker's API for the image (DOCKER_HOST's socket): {what}", ok,
                   f"rc {p.returncode} asked {asked} cli {cli} {p.stderr[-300:]!r}")
    finally:
        srv.shutdown()
        srv.server_close()


def cases(wp, work):
    home = os.path.join(work, "home")
    bin_dir = os.path.join(work, "bin")
    log = os.path.join(work, "engine.log")
    os.makedirs(bin_dir)
    calls = os.path.join(work, "calls.log")
    built = os.path.join(work, "built")
    for engine in ("docker", "podman"):
        # records its words (the last call's in log, every call in calls);
        # `image inspect` knows the base image and what `build` made
        with open(os.path.join(bin_dir, engine), "w") as f:
            f.write(f"""#!/bin/sh
# (no container of a session runs: ward-pi asks before and after each)
[ "$1" = ps ] && {{ [ -z "${{STANDIN_PS:-}}" ] || echo "$STANDIN_PS"; exit 0; }}
case "$*" in *ward-pi-epilogue.mjs*)
	# the epilogue: recorded apart, answers nothing (no quarantine, no git)
	for a in "$@"; do printf '%s\\n' "$a"; done > {log}.epilogue
	echo "$*" >> {calls}
	exit 0 ;;
esac
for a in "$@"; do printf '%s\\n' "$a"; done > {log}
echo "$*" >> {calls}
if [ "$1 $2" = "image inspect" ]; then
	case "$3" in -f) [ "$5" = missing:image ] && exit 1; echo sha256:0123456789abcdef; exit 0 ;; esac
	grep -qxF "$3" {built} 2>/dev/null
	exit
fi
if [ "$1" = build ]; then
	while [ "$1" != -t ]; do shift; done
	echo "$2" >> {built}
fi
if [ "$1" = run ] && [ "$5" = --entrypoint ]; then
	# apt in the base image: these three exist, nothing else does
	shift 10
	for n; do case "$n" in jq | ripgrep | jq2) echo "SIM Inst $n (1.0 Debian:12/stable [amd64])" ;;
	*) echo "NOTEXACT $n" ;; esac; done
	exit 0
fi
if [ "$1" = run ]; then
	# the copy of the host's Pi resources as the engine had it mounted
	for a in "$@"; do case "$a" in *:/usr/local/share/ward-pi/host-agent:ro)
		rm -rf {work}/seen-agent; cp -a "${{a%%:*}}" {work}/seen-agent ;;
	*:/run/ward/ward-pi-note.md:ro) cp "${{a%%:*}}" {work}/seen-note ;; esac; done
	# what a !command header's run gave ward-pi to pass (-e NAME reads it here)
	env | grep '^WARD_MCP_CMD_' > {work}/seen-mcp-env || :
	# a session that runs until the test lets it end
	[ -z "${{STANDIN_STARTED:-}}" ] || : > "$STANDIN_STARTED"
	if [ -n "${{STANDIN_WAIT:-}}" ]; then while [ ! -e "$STANDIN_WAIT" ]; do sleep 0.05; done; fi
	exit "${{STANDIN_RC:-0}}"
fi
""")
        os.chmod(os.path.join(bin_dir, engine), 0o755)
    proj_a, proj_b = os.path.join(work, "src", "alpha"), os.path.join(work, "src", "beta gamma")
    for p in (proj_a, proj_b):
        os.makedirs(p)
    # the stand-in's CLI answers, never a daemon this machine may run
    # (ward-pi asks docker's API itself when it has a socket)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": home, "DOCKER_HOST": f"unix://{work}/no-docker.sock"}

    def run(cwd, *args, extra=None):
        p = subprocess.run([wp, *args], cwd=cwd, env=dict(env, **(extra or {})), capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=30)
        return p

    def dry(cwd, *args, extra=None):
        p = run(cwd, "--dry-run", *args, extra=extra)
        return p.returncode, shlex.split(p.stdout) if p.returncode == 0 else p.stderr

    rc, w = dry(proj_a, "--engine", "docker")
    vol_a = next((x.split(":")[0] for x in w if x.endswith(":/var/lib/pi")), "") if rc == 0 else ""
    report("ward-pi: the TUI under docker: a terminal, the project at its own path as the working directory, "
           "a volume of its own, no network without a provider, Pi by the image's launcher",
           rc == 0 and w[:4] == ["docker", "run", "--rm", "--pull=never"] and "-i" in w and "-t" in w
           and f"{proj_a}:{proj_a}" in w
           and w[w.index("-w") + 1] == proj_a and vol_a.startswith("ward-pi-alpha-") and "--network" in w
           and w[w.index("--network") + 1] == "none" and w[-3:] == ["--", "/usr/local/bin/node",
                                                                  "/usr/local/lib/ward/pi-agent.mjs"][-3:],
           " ".join(w) if rc == 0 else w)
    rc, w2 = dry(proj_a, "--engine", "docker")
    rc_b, wb = dry(proj_b, "--engine", "docker")
    vol_b = next((x.split(":")[0] for x in wb if x.endswith(":/var/lib/pi")), "")
    report("ward-pi: one volume per project: the same again for the same path, another for another project",
           w2 == w and vol_b.startswith("ward-pi-beta-gamma-") and vol_b != vol_a, f"{vol_a} / {vol_b}")
    rc, w = dry(proj_a, "--engine", "docker", "-p", "it's \"quoted\"; $(not run)", "--", "--thinking", "low",
                extra={"ANTHROPIC_API_KEY": KEY, "WARD_MODEL": "claude-x"})
    report("ward-pi -p with a key in the environment: the provider by the key's name, the key passed by name "
           "(never its value), the prompt one word as given, Pi's own options last, no terminal",
           rc == 0 and "-t" not in w and "WARD_PROVIDER=anthropic" in w and "ANTHROPIC_API_KEY" in w
           and "WARD_MODEL" in w and not any(KEY in x for x in w) and "--network" not in w
           and w[-4:] == ["-p", "it's \"quoted\"; $(not run)", "--thinking", "low"],
           " ".join(w) if rc == 0 else w)
    rc, w = dry(proj_a, "--engine", "podman", "--rpc", extra={"WARD_PROVIDER": "openai", "OPENAI_API_KEY": KEY})
    report("ward-pi --rpc under podman: RPC mode, WARD_PROVIDER as set, its key by name",
           rc == 0 and w[0] == "podman" and w[-2:] == ["--mode", "rpc"] and "WARD_PROVIDER=openai" in w
           and "OPENAI_API_KEY" in w and not any(KEY in x for x in w), " ".join(w) if rc == 0 else w)
    p = run(proj_a, "--dry-run", "--reset", "--engine", "docker")
    report("ward-pi --reset: the project's volume deleted, and ward-pi's files for it",
           p.returncode == 0 and p.stdout.splitlines()[0] == f"docker volume rm -f {vol_a} "
           f"{vol_a.replace('ward-pi-', 'ward-pi-home-', 1)}"
           and p.stdout.splitlines()[1] == f"find {home}/.cache/ward-pi/{vol_a} -mindepth 1 -maxdepth 1 ! -name lock "
           "-exec rm -rf {} +", p.stdout + p.stderr)
    run(proj_a, "--reset", "--yes", "--engine", "docker")
    recorded = open(log).read().split("\n") if os.path.exists(log) else []
    report("ward-pi --reset runs the engine's volume rm, for the state and the agent's home",
           recorded[:5] == ["volume", "rm", "-f", vol_a, vol_a.replace("ward-pi-", "ward-pi-home-", 1)], recorded)

    git_cases(wp, work, run, dry, home)
    # the host's Pi resources: an allow list, and no secret inside it
    agent = os.path.join(home, ".pi", "agent")
    for rel, text in (("settings.json", "{}"), ("AGENTS.md", "be kind"), ("skills/s/SKILL.md", "skill"),
                      ("auth.json", KEY), ("models.json", KEY), ("mcp.json", KEY), ("sessions/x.jsonl", KEY),
                      ("id.key", KEY), ("extensions/e.mjs", "export default () => {}"),
                      # what a review found copied in by the old deny list
                      ("mcp-auth.json", KEY), ("mcp-oauth/srv/tokens.json", KEY), ("extensions/e/.env.local", KEY),
                      ("skills/s/credentials.json", KEY), (".npmrc", KEY), ("id_ed25519", KEY),
                      ("auth.json.bak", KEY), ("extensions/e/.git/config", KEY), ("prompts/p.md", "prompt"),
                      ("bin/rg", KEY), ("trust.json", KEY)):
        os.makedirs(os.path.dirname(os.path.join(agent, rel)), exist_ok=True)
        with open(os.path.join(agent, rel), "w") as f:
            f.write(text)
    os.chmod(os.path.join(agent, "settings.json"), 0o600)
    p = run(proj_b, "--engine", "docker", "--no-mcp", "--rpc")
    recorded = open(log).read().split("\n")
    src = next((x.split(":")[0] for x in recorded if x.endswith(":/usr/local/share/ward-pi/host-agent:ro")), "")
    seen = os.path.join(work, "seen-agent")
    got = sorted(os.path.relpath(os.path.join(d, f), seen) for d, _, fs in os.walk(seen) for f in fs)
    leaked = [r for r in got if KEY in open(os.path.join(seen, r)).read()]
    report("ward-pi: the host's ~/.pi/agent reaches the container as a copy by an allow list (instructions, "
           "settings, skills, prompts, themes, extensions) without any file whose name says secret: not "
           "auth.json, mcp-auth.json, mcp-oauth/, .env.local, credentials.json, .npmrc, id_ed25519, backups",
           p.returncode == 0 and got == ["AGENTS.md", "extensions/e.mjs", "prompts/p.md", "settings.json",
                                         "skills/s/SKILL.md"] and not leaked, f"rc {p.returncode} {p.stderr.strip()} copy {got}")
    cache = os.path.join(home, ".cache", "ward-pi")
    report("ward-pi: the copy lives in a directory only the person may enter (0700), readable by the agent's "
           "uid inside it, and is deleted when the session ends",
           os.path.isdir(cache) and (os.stat(cache).st_mode & 0o777) == 0o700 and src.startswith(cache + "/")
           and bool(os.stat(os.path.join(seen, "settings.json")).st_mode & 0o004) and not os.path.exists(src),
           f"{oct(os.stat(cache).st_mode & 0o777) if os.path.isdir(cache) else 'no cache'}; {src}")
    # (the copy is in the session's own directory, in the project's)
    state_b = os.path.dirname(os.path.dirname(os.path.dirname(src)))
    p = run(proj_b, "--reset", "--engine", "docker")
    report("ward-pi --reset without a terminal and without --yes: refused in one line, nothing deleted",
           p.returncode == 2 and p.stderr.count("\n") == 1 and "--yes" in p.stderr and os.path.exists(state_b),
           p.stderr)
    from ptyrun import at_pty
    rc, p = at_pty([wp, "--reset", "--engine", "docker"], proj_b, env, "n", seconds=30)
    report("ward-pi --reset at a terminal, answered no: nothing deleted", rc == 0 and "[y/N]" in p and
           "nothing deleted" in p and os.path.exists(state_b), p)
    p = run(proj_b, "--reset", "--yes", "--engine", "docker")
    report("ward-pi --reset deletes ward-pi's files for the project (the agent's git, the copies, the marks; the "
           "lock file stays, another ward-pi may wait on it)",
           p.returncode == 0 and os.path.isdir(cache) and os.listdir(state_b) == ["lock"], p.stderr + state_b)
    report("ward-pi: the words reach the engine as built (run, not printed)",
           recorded[:3] == ["run", "--rm", "--pull=never"] and recorded[-3:-1] == ["--mode", "rpc"], recorded[:6])
    with open(os.path.join(agent, "mcp.json"), "w") as f:
        f.write('{"mcpServers": {}}')
    rc, w = dry(proj_b, "--engine", "docker")
    report("ward-pi: the host's Pi MCP config by default, read-only at the image's [mcp] source",
           rc == 0 and f"{os.path.join(agent, 'mcp.json')}:/run/ward/mcp.json:ro" in w, " ".join(w) if rc == 0 else w)
    p = run(proj_b, "--dry-run", "--mcp", os.path.join(work, "nope.json"))
    report("ward-pi --mcp of a file that is not there: one line, exit 2", p.returncode == 2 and
           p.stderr.count("\n") == 1 and "nope.json" in p.stderr, p.stderr)
    p = run(proj_b, "--engine", "docker")
    report("ward-pi: the TUI without a terminal: one line, exit 2, nothing run",
           p.returncode == 2 and "terminal" in p.stderr and p.stderr.count("\n") == 1, p.stderr)
    for bad in (["--bogus"], ["--rpc", "--engine", "lxc"], ["-p"]):
        p = run(proj_b, *bad)
        report(f"ward-pi {' '.join(bad)}: one line, exit 2", p.returncode == 2 and p.stderr.count("\n") == 1,
               p.stderr)
    packages_cases(wp, work, run, dry, calls, built)
    run_cases(wp, work, run, dry, log)
    day_cases(wp, work, run, dry, log)
    ask_cases(wp, work, run, dry, home, log)
    session_cases.extras_cases(wp, work, run, dry, log, home)
    session_cases.sessions_cases(wp, work, run, dry, log, calls, home)
    session_cases.hardening_cases(wp, work, run, dry, log, home)
    session_cases.orphan_cases(wp, work, run, log)
    session_cases.mcp_cases(wp, work, run, dry, log, home)
    session_cases.login_cases(wp, work, run, dry, log, home)
    sock = os.path.join(work, "own-model.sock")
    import socket
    lsock = socket.socket(socket.AF_UNIX)
    lsock.bind(sock)
    rc, w = dry(proj_b, "--engine", "docker", "--model-socket", sock)
    report("ward-pi --model-socket: the host's socket at the image's local model route, still no network",
           rc == 0 and f"{sock}:/run/ward/model.sock" in w and w[w.index("--network") + 1] == "none",
           " ".join(w) if rc == 0 else w)
    lsock.close()
    os.unlink(sock)
    p = run(proj_b, "--dry-run", "--model-socket", os.path.join(work, "calls.log"))
    report("ward-pi --model-socket of a file that is not a socket: one line, exit 2",
           p.returncode == 2 and p.stderr.count("\n") == 1 and "not a unix socket" in p.stderr, p.stderr)
    rc, w = dry(proj_b, "--engine", "docker", "--allow", "github", "--allow", "docs.python.org", "--allow",
                "*.readthedocs.io", "--allow", "npm")
    report("ward-pi --allow: presets and hosts to the image's [proxy] (WARD_PROXY_PRESETS, WARD_PROXY_ALLOW), "
           "and a network for the proxy to reach them",
           rc == 0 and "WARD_PROXY_PRESETS=github npm" in w and "WARD_PROXY_ALLOW=docs.python.org *.readthedocs.io" in w
           and "--network" not in w, " ".join(w) if rc == 0 else w)
    for bad in ("a b", "", "$(x)"):
        p = run(proj_b, "--dry-run", "--engine", "docker", "--allow", bad)
        report(f"ward-pi --allow {bad!r}: one line, exit 2", p.returncode == 2 and p.stderr.count("\n") == 1,
               p.stderr)
    p = run(proj_b, "--help")
    report("ward-pi --help names every option", p.returncode == 0 and all(
        o in p.stdout for o in ("--print", "--rpc", "--engine", "--image", "--mcp", "--no-mcp", "--reset", "--allow",
                                "--dry-run", "--model-socket", ".pi-packages", "WARD_PROVIDER", "WARD_MODEL")), p.stdout[:200])


def ask_cases(wp, work, run, dry, home, log):
    """--ask, --approver, --policy (#39): the approver's words, the answers of
    always read back from ward-pi's own directory as hostile lines."""
    import socket
    proj = os.path.join(work, "src", "asking")
    os.makedirs(proj)
    rc, w = dry(proj, "--engine", "docker", "--ask")
    pol = next((x for x in w if x.endswith(":/run/ward/policy")), "") if rc == 0 else ""
    report("ward-pi --ask: ward asks at the terminal (WARD_PROXY_ASK=terminal), its answers of always go to "
           "ward-pi's own directory for the project, mounted where the agent has no path; a network for the proxy",
           rc == 0 and "WARD_PROXY_ASK=terminal" in w and "WARD_PROXY_ASK_STORE=/run/ward/policy/always" in w and
           pol.startswith(os.path.join(home, ".cache", "ward-pi", "ward-pi-asking-")) and "--network" not in w
           and proj not in pol, " ".join(w) if rc == 0 else w)
    for bad in (["--ask", "--rpc"], ["--ask", "-p", "hi"], ["--ask", "--approver", "/nonexistent.sock"],
                ["--approver", "/nonexistent.sock"]):
        p = run(proj, "--engine", "docker", *bad)
        report(f"ward-pi {' '.join(bad)}: one line, exit 2, nothing run", p.returncode == 2 and
               p.stderr.count("\n") == 1, p.stderr)
    sock = os.path.join(work, "approver.sock")
    s = socket.socket(socket.AF_UNIX)
    s.bind(sock)
    rc, w = dry(proj, "--engine", "docker", "--rpc", "--approver", sock)
    s.close()
    report("ward-pi --approver SOCKET: the daemon's socket at /run/ward/approver.sock, ward told to ask there",
           rc == 0 and "WARD_PROXY_ASK=unix:/run/ward/approver.sock" in w and
           f"{sock}:/run/ward/approver.sock" in w and "WARD_PROXY_ASK_STORE=/run/ward/policy/always" not in w,
           " ".join(w) if rc == 0 else w)
    # what ward wrote (and what an attacker might have): only HOST:PORT lines count
    store = os.path.join(pol.split(":")[0], "always")
    os.makedirs(os.path.dirname(store), exist_ok=True)
    with open(store, "w") as f:
        f.write("docs.python.org:443\n*.readthedocs.io:443\nlocal.test:8080\nevil.test:443;touch /tmp/x\n"
                "$(touch /tmp/x):443\n-x.test:443\n..:443\nbig.test:99999\n* .test:443\n\x1b]0;t\x07:443\n")
    rc, w = dry(proj, "--engine", "docker")
    allow = next((x for x in w if x.startswith("WARD_PROXY_ALLOW=")), "")
    report("ward-pi: the answers of always are allowed at the next start (without --ask too); a line that is not "
           "HOST:PORT or *.SUFFIX:PORT is left out",
           allow == "WARD_PROXY_ALLOW=docs.python.org *.readthedocs.io local.test:8080" and "--network" not in w,
           allow or w)
    p = run(proj, "--engine", "docker", "--policy")
    report("ward-pi --policy lists them (the well-formed ones), nothing run",
           p.returncode == 0 and "docs.python.org:443" in p.stdout and "*.readthedocs.io:443" in p.stdout and
           "evil" not in p.stdout and "touch" not in p.stdout and "\x1b" not in p.stdout, p.stdout + p.stderr)
    rc, w = dry(proj, "--engine", "docker")
    logm = next((x for x in w if x.endswith(":/run/ward/log.txt")), "") if rc == 0 else ""
    report("ward-pi: each session's log (ward's [ward] log_copy) goes to ward-pi's own directory for the project, "
           "mounted where the agent has no path", rc == 0 and "WARD_LOG_COPY=/run/ward/log.txt" in w and
           logm.startswith(os.path.join(home, ".cache", "ward-pi", "ward-pi-asking-")) and "/logs/" in logm,
           logm or w)
    p = run(proj, "--engine", "docker", "--denials")
    report("ward-pi --denials with no session's log yet: says so, nothing run",
           p.returncode == 0 and "no session of" in p.stdout, p.stdout + p.stderr)
    logs = os.path.join(os.path.dirname(os.path.dirname(logm.split(":")[0])), "logs")
    os.makedirs(logs, exist_ok=True)
    for i in range(7):
        with open(os.path.join(logs, f"17000000{i}.x{i}.log"), "w") as f:
            f.write(f"ward: bridge: route=proxy ask=h{i}.test:443 id=1 answer=deny ms=1\n")
    p = run(proj, "--engine", "docker", "--denials")
    try:
        with open(log) as f:
            words = f.read().split("\n")
    except OSError:
        words = []
    report("ward-pi --denials: ward --denials in the image, with no network, over the last sessions' logs",
           p.returncode == 0 and words[:9] == ["run", "--rm", "-i", "--pull=never", "--network", "none", "--entrypoint",
                                              "/sbin/ward", "ward-pi:latest"] and words[9:11] == ["--denials", "-"],
           words[:12])
    p = run(proj, "--engine", "docker", "--policy-remove", "docs.python.org")
    p2 = run(proj, "--engine", "docker", "--policy")
    p3 = run(proj, "--engine", "docker", "--policy-remove", "nothere.test")
    report("ward-pi --policy-remove takes one away (port 443 when none is said); one not kept: one line, exit 2",
           p.returncode == 0 and "docs.python.org" not in p2.stdout and "*.readthedocs.io:443" in p2.stdout and
           p3.returncode == 2 and p3.stderr.count("\n") == 1, p.stderr + p2.stdout + p3.stderr)


def day_cases(wp, work, run, dry, log):
    """ward-pi for a day's work (#44): the shell, the model said and chosen
    once, the limits, the image never pulled, --image as given."""
    proj = os.path.join(work, "src", "day")
    os.makedirs(proj)
    rc, w = dry(proj, "--engine", "docker", "shell")
    rc2, w2 = dry(proj, "--engine", "docker", "--rpc")
    report("ward-pi shell: bash at a terminal, in exactly the session's sandbox (mounts, volume, network, limits)",
           rc == 0 and w[w.index("ward-pi:latest"):] == ["ward-pi:latest", "--", "/bin/bash", "-l"] and "-t" in w
           and [x for x in w[:w.index("ward-pi:latest")] if x != "-t"] == w2[:w2.index("ward-pi:latest")],
           " ".join(w) if rc == 0 else w)
    home_vol = next((x for x in w if x.endswith(":/home/pi")), "")
    report("ward-pi: the agent's home is a volume of the project's own (ward-pi-home-NAME-HASH at /home/pi)",
           rc == 0 and home_vol.startswith("ward-pi-home-day-") and home_vol.count(":") == 1, home_vol)
    for bad in (["shell"], ["shell", "--", "ls"], ["shell", "-p", "x"]):
        p = run(proj, "--engine", "docker", *bad)
        report(f"ward-pi {' '.join(bad)} (no terminal, or more than a shell): one line, exit 2, nothing run",
               p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr)
    keys = {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": KEY + "-openai", "WARD_MODEL": "gpt-x"}
    p = run(proj, "--dry-run", "--engine", "docker", "--rpc", "--provider", "openai", extra=keys)
    w = shlex.split(p.stdout) if p.returncode == 0 else []
    report("ward-pi --provider openai with two keys set: only that provider's key passed (by name), one line on "
           "stderr names the provider and the model, nothing of it on stdout",
           p.returncode == 0 and "WARD_PROVIDER=openai" in w and "OPENAI_API_KEY" in w
           and "ANTHROPIC_API_KEY" not in w and not any(KEY in x for x in w)
           and p.stderr.strip() == "ward-pi: model: openai (OPENAI_API_KEY), model gpt-x (WARD_MODEL)"
           and "model:" not in p.stdout, f"{p.stderr.strip()} / {' '.join(w)}")
    p = run(proj, "--dry-run", "--engine", "docker", "--rpc", extra=keys)
    w = shlex.split(p.stdout) if p.returncode == 0 else []
    report("ward-pi with two keys and no --provider: the first (anthropic), only its key",
           "WARD_PROVIDER=anthropic" in w and "ANTHROPIC_API_KEY" in w and "OPENAI_API_KEY" not in w,
           f"{p.stderr.strip()} / {' '.join(w)}")
    import socket
    sock = os.path.join(work, "day-model.sock")
    ls = socket.socket(socket.AF_UNIX)
    ls.bind(sock)
    p = run(proj, "--dry-run", "--engine", "docker", "--rpc", "--model-socket", sock, extra=keys)
    w = shlex.split(p.stdout) if p.returncode == 0 else []
    report("ward-pi --model-socket beside a key in the environment: the socket wins, no provider and no key "
           "passed, the line says so", p.returncode == 0 and not any(x.startswith("WARD_PROVIDER") for x in w)
           and "ANTHROPIC_API_KEY" not in w and f"{sock}:/run/ward/model.sock" in w
           and f"model: the model server on {sock}" in p.stderr, f"{p.stderr.strip()} / {' '.join(w)}")
    ls.close()
    for bad, why in ((["--provider", "mystery"], "an unknown provider"),
                     (["--provider", "groq"], "a provider whose key is not set")):
        p = run(proj, "--dry-run", "--engine", "docker", "--rpc", *bad, extra=keys)
        report(f"ward-pi {' '.join(bad)} ({why}): one line, exit 2", p.returncode == 2 and
               p.stderr.count("\n") == 1, p.stderr)
    rc, w = dry(proj, "--engine", "docker", "--rpc")
    mem = w[w.index("--memory") + 1] if "--memory" in w else ""
    report("ward-pi: limits by default: memory (half the host's, at most 8g), every CPU, 4096 processes",
           rc == 0 and mem.endswith(("m", "g")) and w[w.index("--cpus") + 1] == str(os.cpu_count())
           and w[w.index("--pids-limit") + 1] == "4096", " ".join(w) if rc == 0 else w)
    rc, w = dry(proj, "--engine", "docker", "--rpc", "--memory", "2g", "--cpus", "1.5", "--pids", "300")
    report("ward-pi --memory 2g --cpus 1.5 --pids 300: as given", rc == 0 and w[w.index("--memory") + 1] == "2g"
           and w[w.index("--cpus") + 1] == "1.5" and w[w.index("--pids-limit") + 1] == "300",
           " ".join(w) if rc == 0 else w)
    rc, w = dry(proj, "--engine", "docker", "--rpc", "--memory", "none")
    report("ward-pi --memory none: no memory limit", rc == 0 and "--memory" not in w, " ".join(w) if rc == 0 else w)
    for bad in (["--memory", "lots"], ["--cpus", "two"], ["--pids", "0"], ["--pids", "-1"]):
        p = run(proj, "--dry-run", "--engine", "docker", "--rpc", *bad)
        report(f"ward-pi {' '.join(bad)}: one line, exit 2", p.returncode == 2 and p.stderr.count("\n") == 1,
               p.stderr)
    p = run(proj, "--engine", "docker", "--rpc", "--image", "missing:image")
    recorded = open(log).read().split("\n") if os.path.exists(log) else []
    report("ward-pi with an image the engine does not have: one line naming the command that makes it, exit 2, "
           "nothing run (never a pull)", p.returncode == 2 and p.stderr.count("\n") == 1 and "make image" in
           p.stderr and recorded[:2] == ["image", "inspect"], p.stderr)
    api_cases(run, proj, work, os.path.join(work, "calls.log"))
    with open(os.path.join(proj, ".pi-packages"), "w") as f:
        f.write("jq\n")
    rc, w = dry(proj, "--engine", "docker", "--rpc", "--image", "mine:1")
    report("ward-pi --image: used as given, .pi-packages not asked about or built", rc == 0 and "mine:1" in w
           and not any(x.startswith("ward-pi-packages:") for x in w), " ".join(w) if rc == 0 else w)


def run_cases(wp, work, run, dry, log):
    """ward-pi run: a command as the agent, in a Pi session's sandbox."""
    proj = os.path.join(work, "src", "runner")
    os.makedirs(proj)
    rc, w = dry(proj, "--engine", "docker", "run", "--", "npm", "test", "--", "it's")
    rc2, w2 = dry(proj, "--engine", "docker", "--rpc")
    tail = w2[w2.index("ward-pi:latest") + 1:] if rc2 == 0 else []
    report("ward-pi run -- COMMAND: the command's words, as given, in place of Pi's launcher, with exactly the "
           "session's mounts, volume and network", rc == 0 and w[w.index("ward-pi:latest"):] ==
           ["ward-pi:latest", "--", "npm", "test", "--", "it's"]
           and w[:w.index("ward-pi:latest")] == w2[:w2.index("ward-pi:latest")] and tail[:1] == ["--"],
           " ".join(w) if rc == 0 else w)
    rc, w = dry(proj, "run", "--engine", "podman", "make")
    report("ward-pi run COMMAND (no --, options before it): the same", rc == 0 and w[0] == "podman"
           and w[-3:] == ["ward-pi:latest", "--", "make"][-3:], " ".join(w) if rc == 0 else w)
    p = run(proj, "--engine", "docker", "run", "--", "false", extra={"STANDIN_RC": "7"})
    report("ward-pi run: the command's exit status is ward-pi's (7), after the session's end ran",
           p.returncode == 7 and os.path.exists(log + ".epilogue")
           and "ward-pi-epilogue.mjs" in open(log + ".epilogue").read(), p.stderr)
    ep = open(log + ".epilogue").read().split("\n") if os.path.exists(log + ".epilogue") else []
    report("ward-pi: the epilogue runs without the agent's home (nothing the agent left on its PATH or in its "
           ".gitconfig runs in the check), the session had it",
           ep and not any(x.endswith(":/home/pi") for x in ep)
           and any(x.endswith(":/home/pi") for x in open(log).read().split("\n")), ep[:12])
    for bad in (["run"], ["run", "-p", "x"], ["--rpc", "run", "x"]):
        p = run(proj, "--engine", "docker", *bad)
        report(f"ward-pi {' '.join(bad)}: one line, exit 2", p.returncode == 2 and p.stderr.count("\n") == 1,
               p.stderr)


def git_cases(wp, work, run, dry, home):
    """The agent's git: a copy of the repository's state, never the
    repository; what ward-pi refuses to take a repository from."""
    g = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    proj = os.path.join(work, "src", "repo")
    subprocess.run(g + ["init", "-q", proj], check=True)
    subprocess.run(g + ["-C", proj, "commit", "-q", "--allow-empty", "-m", "one"], check=True)
    gitdir = os.path.join(proj, ".git")
    rc, w = dry(proj, "--engine", "docker")
    state = next((x.split(":")[0] for x in w if x.endswith(f":{gitdir}")), "") if rc == 0 else ""
    report("ward-pi in a repository: the agent's own git directory (ward-pi's copy) mounted over .git, the "
           "repository's objects read-only beside it, nothing of the repository writable",
           rc == 0 and state == f"{home}/.cache/ward-pi/{state.split('/')[-4]}/sessions/SESSION/git"
           and state.split("/")[-4].startswith("ward-pi-repo-")
           and f"{gitdir}/objects:/usr/local/share/ward-pi/objects:ro" in w
           and [x for x in w if gitdir in x] == [f"{state}:{gitdir}", f"{gitdir}/objects:/usr/local/share/ward-pi/objects:ro"]
           and not any("WARD_GIT" in x for x in w),
           " ".join(w) if rc == 0 else w)
    wt = os.path.join(work, "src", "repo-wt")
    subprocess.run(g + ["-C", proj, "worktree", "add", "-q", wt], check=True, capture_output=True)
    rc, w = dry(wt, "--engine", "docker")
    report("ward-pi in a linked worktree whose both ends agree: the copy at /var/lib/ward-pi/git, a gitfile naming "
           "it over .git (read-only), WARD_GIT_DIR for Landlock; the main repository's .git not mounted",
           rc == 0 and any(x.endswith(":/var/lib/ward-pi/git") for x in w)
           and any(x.endswith(f"/gitfile:{wt}/.git:ro") for x in w) and "WARD_GIT_DIR=/var/lib/ward-pi/git" in w
           and f"{gitdir}/objects:/usr/local/share/ward-pi/objects:ro" in w
           and not any(x.startswith(gitdir + ":") for x in w), " ".join(w) if rc == 0 else w)
    sub = os.path.join(proj, "sub")
    os.makedirs(sub)
    rc, w = dry(sub, "--engine", "docker")
    report("ward-pi in a subdirectory of a repository: no git of the parent's mounted at all",
           rc == 0 and not any(gitdir in x or "ward-pi/objects" in x for x in w), " ".join(w) if rc == 0 else w)
    # what an agent could have left for the next start: each refused in one line
    other = os.path.join(work, "src", "other")
    subprocess.run(g + ["init", "-q", other], check=True)
    bad = os.path.join(work, "src", "bad")
    os.makedirs(bad)
    for what, make in (
            ("a gitfile naming another repository", lambda d: open(d, "w").write(f"gitdir: {other}/.git\n")),
            ("a gitfile naming another repository's worktree entry that does not name it back",
             lambda d: open(d, "w").write(f"gitdir: {gitdir}/worktrees/repo-wt\n")),
            ("a symbolic link", lambda d: os.symlink(f"{other}/.git", d)),
            ("a directory with a commondir", lambda d: (os.makedirs(d), open(d + "/commondir", "w").write(other)))):
        d = os.path.join(bad, ".git")
        shutil.rmtree(d, ignore_errors=True) if os.path.isdir(d) and not os.path.islink(d) else None
        os.unlink(d) if os.path.lexists(d) and not os.path.isdir(d) or os.path.islink(d) else None
        make(d)
        p = run(bad, "--dry-run", "--engine", "docker")
        report(f"ward-pi: a project whose .git is {what}: refused in one line, exit 2, nothing mounted",
               p.returncode == 2 and p.stderr.count("\n") == 1 and not p.stdout, p.stderr)
    nl = os.path.join(work, "src", "repo\n")
    os.makedirs(nl)
    p = run(nl, "--dry-run", "--engine", "docker")
    report("ward-pi: a project path ending in a newline is refused (not taken for its sibling)",
           p.returncode == 2 and "newline" in p.stderr and p.stderr.count("\n") == 1, p.stderr)


def packages_cases(wp, work, run, dry, calls, built):
    """.pi-packages: a derived image with the project's Debian packages,
    built only after the person says yes at a terminal (a pty here); never
    without a terminal, never for a name that is not a package's. (tests/e2e
    builds one for real under docker.)"""
    import ptyrun
    proj = os.path.join(work, "src", "pkgs")
    os.makedirs(proj)
    pf = os.path.join(proj, ".pi-packages")
    with open(pf, "w") as f:
        f.write("# tools the agent wants\njq  ripgrep # search\n\njq\n")

    def calls_now():
        return open(calls).read().splitlines() if os.path.exists(calls) else []

    n0 = len(calls_now())
    rc, w = dry(proj, "--engine", "docker", "--rpc")
    derived = next((x for x in w if x.startswith("ward-pi-packages:")), "") if rc == 0 else ""
    p = run(proj, "--dry-run", "--engine", "docker", "--rpc")
    report("ward-pi --dry-run with .pi-packages: says the derived image it would build (the names sorted, once "
           "each, comments gone) and runs that image; builds nothing",
           rc == 0 and derived and p.stdout.startswith(f"# ward-pi would build {derived} from ward-pi:latest with: "
                                                       "jq ripgrep ") and not any(" build " in f" {c} " for c in calls_now()[n0:]),
           p.stdout[:300])
    n0 = len(calls_now())
    p = run(proj, "--engine", "docker", "--rpc")
    report("ward-pi with .pi-packages and no terminal (a daemon's --rpc): refused in one line, exit 2, nothing "
           "built, Pi not started", p.returncode == 2 and p.stderr.count("\n") == 1 and "approval" in p.stderr
           and not [c for c in calls_now()[n0:] if c.startswith(("build", "run"))], p.stderr + str(calls_now()[n0:]))

    def at_pty(answer):
        """ward-pi -p at a pty, answering the question with `answer`"""
        return ptyrun.at_pty([wp, "--engine", "docker", "-p", "hi"], proj,
                             {"PATH": f"{os.path.dirname(calls)}/bin:/usr/bin:/bin", "HOME": os.path.join(work, "home")},
                             answer, 30)

    n0 = len(calls_now())
    rc, out = at_pty("n")
    report("ward-pi with .pi-packages at a terminal, answered no: the list shown, nothing built, Pi not started, "
           "exit 2", rc == 2 and "jq ripgrep" in out and "not approved" in out and
           not [c for c in calls_now()[n0:] if c.startswith("build") or (c.startswith("run") and "--entrypoint" not in c)],
           out[-300:])
    n0 = len(calls_now())
    rc, out = at_pty("y")
    new = calls_now()[n0:]
    b = next((c.split() for c in new if c.startswith("build")), [])
    report("ward-pi with .pi-packages at a terminal, answered yes: built (the host's network, an empty context), "
           "tagged by the list's and the base's hash, then Pi runs in it (-p at a terminal: no stdin for Pi to wait on)",
           rc == 0 and b[:5] == ["build", "--network", "host", "-t", derived]
           and not b[-1].startswith(proj) and any(c.startswith("run") and f" {derived} " in f" {c} " for c in new)
           and not any(c.startswith("run") and " -i " in f" {c} " for c in new),
           f"rc {rc}; {new}")
    n0 = len(calls_now())
    p = run(proj, "--engine", "docker", "--rpc")
    report("ward-pi with .pi-packages already built: no question, no build, even without a terminal",
           p.returncode == 0 and not [c for c in calls_now()[n0:] if c.startswith("build")], p.stderr)
    with open(pf, "a") as f:
        f.write("jq2\n")
    rc, w2 = dry(proj, "--engine", "docker")
    d2 = next((x for x in w2 if x.startswith("ward-pi-packages:")), "") if rc == 0 else ""
    report("ward-pi: an edited .pi-packages is another image (asked for again)", d2 and d2 != derived, d2)
    for text, why in (("jq -o Dpkg::Options=x\n", "an option"), ("jq\n../../etc/x\n", "a path"),
                      ("Jq\n", "capitals"), ("jq=1.6\n", "a version")):
        with open(pf, "w") as f:
            f.write(text)
        p = run(proj, "--dry-run", "--engine", "docker")
        report(f"ward-pi: .pi-packages with {why}: refused in one line, exit 2",
               p.returncode == 2 and p.stderr.count("\n") == 1 and "not a Debian package name" in p.stderr, p.stderr)
    # what the agent writes is never printed: a refusal names the line
    with open(pf, "w") as f:
        f.write("jq\n\x1b]0;owned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[2K\rward-pi: all good\n")
    p = run(proj, "--dry-run", "--engine", "docker")
    report("ward-pi: .pi-packages with terminal escapes (a title, an OSC 52 clipboard write, a forged line): refused "
           "in one line naming the line, and no byte of it printed", p.returncode == 2 and p.stderr.count("\n") == 1
           and "line 2" in p.stderr and "\x1b" not in p.stderr and "\x07" not in p.stderr and "\r" not in p.stderr
           and "owned" not in p.stderr, repr(p.stderr))
    for text, why in (("git-\n", "git- (apt would remove git)"),):
        with open(pf, "w") as f:
            f.write(text)
        p = run(proj, "--dry-run", "--engine", "docker")
        report(f"ward-pi: .pi-packages with {why}: refused in one line, exit 2",
               p.returncode == 2 and p.stderr.count("\n") == 1 and "not a Debian package name" in p.stderr, p.stderr)
    for name in ("python3.1", "procps+"):
        with open(pf, "w") as f:
            f.write(f"jq {name}\n")
        n0 = len(calls_now())
        rc, out = at_pty("y")
        new = calls_now()[n0:]
        report(f"ward-pi: .pi-packages with {name} (apt would take it as a pattern or an action): refused at the "
               "terminal before any question, nothing built, Pi not started",
               rc == 2 and "not the exact name" in out and name in out and "[y/N]" not in out
               and not [c for c in new if c.startswith("build") or (c.startswith("run") and "--entrypoint" not in c)],
               f"rc {rc}; {out[-300:]!r}; {new}")
    with open(pf, "w") as f:
        f.write("ripgrep\n")
    rc, out = at_pty("n")
    report("ward-pi: the question shows what apt would install (apt-get -s in the base image) before the answer",
           rc == 2 and "apt would install (1)" in out and "ripgrep" in out, out[-400:])
    os.unlink(pf)
    os.symlink("/etc/hostname", pf)
    p = run(proj, "--dry-run", "--engine", "docker")
    report("ward-pi: .pi-packages as a symbolic link: refused (the agent may not point it at a host file)",
           p.returncode == 2 and "symbolic link" in p.stderr, p.stderr)


if __name__ == "__main__":
    sys.exit(main())
