"""ward-pi and an MCP server the person signed in to with Pi's own /mcp
(OAuth, Pi 1.6's ~/.pi/agent/mcp-auth.json), under docker, with real Pi in
the image: the server and its authorization server are on the host's
loopback; the sign-in has expired. ward-pi gives the host's mcp-auth.json
to ward's bridge alone and relays both ports; the bridge refreshes the
sign-in as pi-mcp does and sends its access token; Pi's MCP client calls a
tool of the server; the new tokens land in the host's file, and no token,
client or file of them is anywhere the agent reads."""
import json
import os
import socket
import subprocess
import time

from results import report


def check(name, ok, detail=""):
    report(name, ok, detail)


def wait_listen(port):
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def host_mcp_oauth(wp, d, wenv, workspace, sock, node, tests):
    proj = workspace(d, "wp-mcpauth")
    mport, tport = 17424, 17425
    url = f"http://127.0.0.1:{mport}/mcp"
    key = f"mcp__signed_in|{url}"
    st = os.path.join(d, "wp-mcpauth-state.json")
    with open(st, "w") as f:
        json.dump({"access": "e2e-access-0", "refresh": "e2e-refresh-0", "refreshes": 0, "revoked": False}, f)
    wire, toklog = os.path.join(d, "wp-mcpauth-wire.jsonl"), os.path.join(d, "wp-mcpauth-token.jsonl")
    srv = subprocess.Popen([node, os.path.join(tests, "node", "mcp-server.mjs"), str(mport), "/mcp"],
                           env=dict(os.environ, MCP_TOKEN_STATE=st, MCP_ALLOWED_HOSTS=f"127.0.0.1:{mport}",
                                    MCP_LOG=wire), stderr=subprocess.DEVNULL)
    tok = subprocess.Popen([node, os.path.join(tests, "node", "fake-oauth.mjs")], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL,
                           env=dict(os.environ, FAKE_LISTEN=f"127.0.0.1:{tport}", FAKE_STATE=st, FAKE_LOG=toklog,
                                    FAKE_TOKEN_PATH="/token", FAKE_CLIENT_ID="cid-e2e"))
    cfg = os.path.join(d, "wp-mcpauth-config")
    os.makedirs(cfg)
    mcp = os.path.join(cfg, "mcp.json")
    with open(mcp, "w") as f:
        json.dump({"mcpServers": {"signed-in": {"url": url, "exposure": "direct"}}}, f)
    agent = os.path.join(wenv["HOME"], ".pi", "agent")
    os.makedirs(agent, exist_ok=True)
    auth = os.path.join(agent, "mcp-auth.json")
    with open(auth, "w") as f:
        json.dump({key: {
            "clientInformation": {"client_id": "cid-e2e", "redirect_uris": ["http://127.0.0.1:53692/callback"]},
            "discovery": {"authorizationServerUrl": f"http://127.0.0.1:{tport}/",
                          "authorizationServerMetadata": {"issuer": f"http://127.0.0.1:{tport}/",
                                                          "token_endpoint": f"http://127.0.0.1:{tport}/token",
                                                          "token_endpoint_auth_methods_supported": ["none"]}},
            "tokens": {"access_token": "e2e-access-0", "token_type": "Bearer", "expires_in": 3600,
                       "refresh_token": "e2e-refresh-0"},
            "tokensExpireAt": int(time.time() * 1000) - 1000}}, f, indent=2)
    os.chmod(auth, 0o600)
    try:
        if not (wait_listen(mport) and wait_listen(tport)):
            check("ward-pi --mcp under docker, a server signed in on the host", False, "the fixtures did not listen")
            return
        p = subprocess.run([wp, "--engine", "docker", "--mcp", mcp, "--model-socket", sock, "-p",
                            'CALL mcp__signed_in__echo {"text": "signed in"}'], cwd=proj, env=wenv,
                           capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        s = json.load(open(st))
        seen = [json.loads(l) for l in open(wire)] if os.path.exists(wire) else []
        toks = [json.loads(l) for l in open(toklog)] if os.path.exists(toklog) else []
        check("ward-pi --mcp under docker, a server signed in on the host (Pi's mcp-auth.json), its sign-in "
              "expired: the bridge refreshes it once at its token endpoint (both on the host's loopback, "
              "relayed), and Pi's MCP client calls its tool with the new access token",
              p.returncode == 0 and "echo: signed in" in p.stdout and s["refreshes"] == 1 and bool(seen)
              and all(w.get("authOk") for w in seen) and len(toks) == 1
              and toks[0]["body"].get("refresh_token") == "e2e-refresh-0"
              and toks[0]["body"].get("client_id") == "cid-e2e",
              f"rc {p.returncode} out {p.stdout[-300:]!r} err {p.stderr[-800:]!r} state {s} seen {len(seen)} "
              f"token requests {len(toks)}")
        e = json.load(open(auth)).get(key, {})
        check("ward-pi --mcp under docker: the refreshed tokens are in the host's mcp-auth.json (the file itself, "
              "written in place), as Pi would find them next",
              e.get("tokens", {}).get("access_token") == s["access"]
              and e.get("tokens", {}).get("refresh_token") == s["refresh"]
              and e.get("tokensExpireAt", 0) > time.time() * 1000 + 600000, json.dumps(e)[:400])
        secrets = ["e2e-access-0", "e2e-refresh-0", s["access"], s["refresh"], "cid-e2e"]
        look = subprocess.run([wp, "--engine", "docker", "--mcp", mcp, "run", "--", "sh", "-c",
                               "env; cat /var/lib/pi/agent/mcp.json; cat /proc/1/environ; "
                               "cat /run/ward/mcp-auth.json || echo auth-refused; grep -rlF -e cid-e2e -e e2e- "
                               "/var/lib/pi /home/pi /tmp 2>/dev/null; echo looked"],
                              cwd=proj, env=wenv, capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL)
        check("ward-pi --mcp under docker: no token and no client of the sign-in anywhere the agent reads (its "
              "environment, its copy of mcp.json, its files, ward's environment, the host's file: refused to it)",
              look.returncode == 0 and "looked" in look.stdout and not any(x in look.stdout for x in secrets)
              and "auth-refused" in look.stdout and '"url": "http://127.0.0.1:7800/mcp"' in look.stdout,
              f"rc {look.returncode} out {look.stdout[-800:]!r} err {look.stderr[-300:]!r}")
    finally:
        for proc in (srv, tok):
            proc.terminate()
            proc.wait(timeout=10)
        os.unlink(auth)
