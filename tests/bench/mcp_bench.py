#!/usr/bin/python3
"""An MCP tool call through a by-name TLS route, against the same call
straight to the server; and what a login's refresh adds to the request
that triggers it. Side by side in one run.

  mcp_bench.py --ward build/ward --node NODE [--n 3000] [--out F] [--json F]

In a network namespace of its own (ip netns exec, its resolv.conf naming a
DNS server of the benchmark's, tests/lib/dnsserver.py), with a test CA:

Tool calls. tests/node/mcp-server.mjs (the official SDK's server, HTTPS,
a bearer token required) on mcp.test. Two sessions of the official SDK
client (tests/node/mcp-bench-client.mjs), calls alternating: `direct`
connects to https://mcp.test:8443/mcp itself (Node's TLS, its keep-alive
connection, the token its own); `bridge` to ward's [mcp] route for the
same server from an mcp.json (plain HTTP on loopback; the bridge resolves
the name, connects with TLS, verifies it and adds the token); `relay`, the
anchor (when socat is installed), through socat relaying the same hop
(plain on loopback, TLS to the server). Milliseconds per call, initialize
done.

Refresh. The Anthropic preset with a login ([route] credential), the API
(tests/node/fake-provider.mjs) and the token endpoint
(tests/node/fake-oauth.mjs, tokens for one second) by name behind TLS. Two
wards: one whose login is fresh for a day (no refresh), one whose every
request finds its token expired (each refreshes it, then goes on). Their
requests alternate, each a new connection from a client on loopback. A
third series: one POST to the token endpoint on a new TLS connection of the
client's own, the round trip a refresh needs.
Medians, p99, ratios; nothing is asserted.
"""
import argparse
import json
import os
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", ".."))
NODE_DIR = os.path.join(ROOT, "tests", "node")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from benchlib import pct, row, run_child_in_netns, wait_port, write_results  # noqa: E402

AGENT = 4242
MCP_PORT, MCP_LISTEN, RELAY = 8443, 17860, 17863
FRESH, STALE = 17961, 17962
TOKEN = "bench-mcp-token-7f3a"


def ward(a, conf, env=None):
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "3600"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, **(env or {})))
    return w


def stop(procs):
    for p in procs:
        if p and p.poll() is None:
            p.terminate()
    for p in procs:
        if p:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def tool_calls(a, work, certs, dns):
    """The SDK client's tool calls, direct and through the route."""
    node = a.node
    dns.set("mcp.test", a=["203.0.113.20"], ttl=300)
    subprocess.run(["ip", "addr", "add", "203.0.113.20/32", "dev", "lo"], check=True)
    srv = subprocess.Popen([node, os.path.join(NODE_DIR, "mcp-server.mjs"), str(MCP_PORT), "/mcp"],
                           env=dict(os.environ, MCP_TOKEN=TOKEN,
                                    MCP_ALLOWED_HOSTS=f"mcp.test:{MCP_PORT},127.0.0.1:{RELAY}",
                                    MCP_ADDR="203.0.113.20", MCP_TLS_CERT=certs["mcp.test"][0],
                                    MCP_TLS_KEY=certs["mcp.test"][1]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    home = os.path.join(work, "agent")
    os.makedirs(home, exist_ok=True)
    os.chown(home, AGENT, AGENT)
    src = os.path.join(work, "mcp.json")
    with open(src, "w") as f:
        json.dump({"mcpServers": {"tools": {"url": f"https://mcp.test:{MCP_PORT}/mcp",
                                            "headers": {"Authorization": "Bearer ${BENCH_MCP_TOKEN}"}}}}, f)
    conf = os.path.join(work, "mcp.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT}\n[mcp]\nsource = {src}\ntarget = {home}/mcp.json\n"
                f"tls_ca = {certs['ca']}\nlisten = 127.0.0.1:{MCP_LISTEN}\n")
    w = ward(a, conf, {"BENCH_MCP_TOKEN": TOKEN})
    # the anchor: the same hop by a general-purpose relay, socat (plain on
    # loopback, TLS to the server by name, verified, TCP_NODELAY both ways;
    # a process of its own for the client's connection, as the bridge is)
    relay = None
    if shutil.which("socat"):
        relay = subprocess.Popen(["socat", f"TCP-LISTEN:{RELAY},bind=127.0.0.1,fork,reuseaddr,nodelay",
                                  f"OPENSSL:mcp.test:{MCP_PORT},cafile={certs['ca']},verify=1,nodelay"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(MCP_LISTEN, w)
        if relay:
            wait_port(RELAY, relay)
        for _ in range(300):  # the server up
            try:
                socket.create_connection(("203.0.113.20", MCP_PORT)).close()
                break
            except OSError:
                time.sleep(0.02)
        out = subprocess.run([node, os.path.join(NODE_DIR, "mcp-bench-client.mjs"),
                              f"https://mcp.test:{MCP_PORT}/mcp", TOKEN, f"http://127.0.0.1:{MCP_LISTEN}/mcp",
                              str(a.n)] + ([f"http://127.0.0.1:{RELAY}/mcp"] if relay else []),
                             capture_output=True, text=True, timeout=900,
                             env=dict(os.environ, NODE_EXTRA_CA_CERTS=certs["ca"]))
        if out.returncode:
            raise RuntimeError("mcp-bench-client: " + out.stderr[-1500:])
        return json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        stop([w, srv, relay])


def login_file(path, refresh, expires_ms):
    with open(path, "w") as f:
        json.dump({"anthropic": {"type": "oauth", "access": "sk-ant-oat01-bench-access-0", "refresh": refresh,
                                 "expires": expires_ms}}, f)
    os.chmod(path, 0o600)


def read_to_end(s):
    """What a connection sends until it closes (Connection: close)."""
    buf = b""
    while True:
        more = s.recv(65536)
        if not more:
            return buf
        buf += more


REQ_BODY = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 16,
                       "messages": [{"role": "user", "content": "say hello"}]}).encode()


def messages(port):
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Authorization: Bearer sk-ant-oat01-ward-placeholder\r\nConnection: close\r\n"
              b"Content-Length: %d\r\n\r\n%s" % (len(REQ_BODY), REQ_BODY))
    buf = read_to_end(s)
    t = time.perf_counter() - t0
    s.close()
    if b" 200 " not in buf.split(b"\r\n", 1)[0]:
        raise RuntimeError(f"port {port}: {buf[:300]!r}")
    return t * 1000


LAST = {}


def token_round_trip(cctx):
    # the last session offered again, as the bridge's token route does
    body = json.dumps({"grant_type": "refresh_token", "refresh_token": "not-one-of-its-own",
                       "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e"}).encode()
    t0 = time.perf_counter()
    raw = socket.create_connection(("203.0.113.61", 443))
    # (without it, a resumed handshake's last flight and the request wait
    # for the server's delayed ACK: 40 ms)
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s = cctx.wrap_socket(raw, server_hostname="platform.claude.com", session=LAST.get("session"))
    s.sendall(b"POST /v1/oauth/token HTTP/1.1\r\nHost: platform.claude.com\r\nContent-Type: application/json\r\n"
              b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    buf = read_to_end(s)
    t = time.perf_counter() - t0
    LAST["session"] = s.session
    s.close()
    if b" 400 " not in buf.split(b"\r\n", 1)[0]:  # the fake refuses a token not its own
        raise RuntimeError(f"token endpoint: {buf[:300]!r}")
    return t * 1000


def refreshes(a, work, certs, dns):
    node = a.node
    st = os.path.join(work, "oauth-state.json")
    with open(st, "w") as f:
        json.dump({"access": "sk-ant-oat01-bench-access-0", "refresh": "sk-ant-ort01-bench-refresh-0",
                   "refreshes": 0, "revoked": False}, f)
    dns.set("api.anthropic.com", a=["203.0.113.60"], ttl=300)
    dns.set("platform.claude.com", a=["203.0.113.61"], ttl=300)
    for addr in ("203.0.113.60", "203.0.113.61"):
        subprocess.run(["ip", "addr", "add", f"{addr}/32", "dev", "lo"], check=True)
    api_cert, tok_cert = certs["api.anthropic.com"], certs["platform.claude.com"]
    # the API takes any token here: the fake-oauth's state is the fresh
    # ward's and the stale one's both (only the stale one's rotates)
    api = subprocess.Popen([node, os.path.join(NODE_DIR, "fake-provider.mjs")], stdout=subprocess.PIPE, text=True,
                           stderr=subprocess.DEVNULL,
                           env=dict(os.environ, FAKE_LISTEN="203.0.113.60:443", FAKE_CERT=api_cert[0],
                                    FAKE_KEY=api_cert[1]))
    tok = subprocess.Popen([node, os.path.join(NODE_DIR, "fake-oauth.mjs")], stdout=subprocess.PIPE, text=True,
                           stderr=subprocess.DEVNULL,
                           env=dict(os.environ, FAKE_LISTEN="203.0.113.61:443", FAKE_CERT=tok_cert[0],
                                    FAKE_KEY=tok_cert[1], FAKE_STATE=st, FAKE_EXPIRES_IN="1"))
    api.stdout.readline()
    tok.stdout.readline()
    now = int(time.time() * 1000)
    wards = []
    try:
        for name, port, refresh, expires in (("fresh", FRESH, "sk-ant-ort01-never-used", now + 86400000),
                                             ("stale", STALE, "sk-ant-ort01-bench-refresh-0", now - 1000)):
            cred = os.path.join(work, f"{name}-auth.json")
            login_file(cred, refresh, expires)
            conf = os.path.join(work, f"{name}.conf")
            with open(conf, "w") as f:
                f.write(f"[agent]\nuser = {AGENT}\n[route {name}]\nlisten = 127.0.0.1:{port}\n"
                        f"provider = anthropic\ncredential = {cred}\ntls_ca = {certs['ca']}\n")
            wards.append(ward(a, conf))
            wait_port(port, wards[-1])
        cctx = ssl.create_default_context(cafile=certs["ca"])
        for _ in range(10):
            messages(FRESH)
            messages(STALE)
            token_round_trip(cctx)
        before = json.load(open(st))["refreshes"]
        res = {"no refresh": [], "refresh": [], "token round trip": []}
        for _ in range(a.n // 3):
            res["no refresh"].append(messages(FRESH))
            res["refresh"].append(messages(STALE))
            res["token round trip"].append(token_round_trip(cctx))
        res["refreshes"] = json.load(open(st))["refreshes"] - before
        return res
    finally:
        stop(wards + [api, tok])


def child(a):
    from dnsserver import DnsServer
    from testca import make_certs
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    work = tempfile.mkdtemp(prefix="ward-mbench-")
    os.chmod(work, 0o755)
    certs = make_certs(work, ["mcp.test", "api.anthropic.com", "platform.claude.com"])
    try:
        with DnsServer("127.0.0.1", 53) as dns:
            res = {"calls": tool_calls(a, work, certs, dns), "login": refreshes(a, work, certs, dns)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(res))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--n", type=int, default=3000, help="calls each way (the p99 of 1000 moved by 0.2x run to run)")
    ap.add_argument("--out")
    ap.add_argument("--json")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.ward, a.node = os.path.abspath(a.ward), os.path.abspath(a.node)
    if a.child:
        return child(a)
    res = run_child_in_netns("wardmb", __file__, ["--ward", a.ward, "--node", a.node, "--n", str(a.n)], 1200)
    c, lg = res["calls"], res["login"]
    d, b = c["direct"], c["bridge"]
    lines = ["\n## An MCP tool call by name over TLS, and a login's refresh\n",
             f"{len(d)} tool calls each way, alternating (tests/bench/mcp_bench.py): the official MCP SDK client "
             "(Streamable HTTP, `tools/call` of the fixture server's `add`, initialize done) on the pinned Node 22. "
             "`direct`: the client connected to `https://mcp.test:8443/mcp` itself (Node's TLS on its keep-alive "
             "connection, the bearer token its own). `bridge`: the same server as an entry of mcp.json, called "
             "at ward's [mcp] route on loopback; the bridge resolves the name (c-ares, cached), connects with TLS "
             "(mbedTLS 2.28, verified against the test CA) and adds the token. In a network namespace with a DNS "
             "server, a CA and the server of the benchmark's. Milliseconds per call.\n",
             "| | p50 | p99 | min | max | p50 ratio | p99 ratio |", "|---|---|---|---|---|---|---|",
             row("direct", d, d), row("bridge", b, d)]
    rl = c.get("relay")
    if rl:
        lines += [row("relay (socat)", rl, d)]
    lines += [f"\nThrough the route: {statistics.median(b) / statistics.median(d):.2f}× the direct call at p50, "
              f"{pct(b, 0.99) / pct(d, 0.99):.2f}× at p99 (the goal: within 1.1×); "
              f"{statistics.median(b) - statistics.median(d):+.2f} ms at p50.\n"]
    if rl:
        lines += [f"\nThe anchor, `relay (socat)`: the same hop by socat 1.7 (`TCP-LISTEN,fork` to "
                  "`OPENSSL:mcp.test:8443` verified, `nodelay` both ways; the client sends its own token), a third "
                  "process on the call's path as the bridge is, doing only what a relay must (no name cache, no "
                  f"header, no log line). It takes {statistics.median(rl) / statistics.median(d):.2f}× the direct "
                  f"call at p50 and {pct(rl, 0.99) / pct(d, 0.99):.2f}× at p99; the bridge "
                  f"{statistics.median(b) / statistics.median(rl):.2f}× and {pct(b, 0.99) / pct(rl, 0.99):.2f}× the "
                  "relay's.\n"]
    else:
        lines += ["\nThe anchor, socat as a relay of the same hop, was not run: socat is not installed "
                  "(scripts/install-deps.sh bench).\n"]
    n, r, t = lg["no refresh"], lg["refresh"], lg["token round trip"]
    lines += [f"\nA login's refresh, {len(n)} requests each, alternating: a Messages request through the Anthropic "
              "preset's route with a login (`[route] credential`), each a new connection from loopback to the "
              "answer's end. `no refresh`: its login fresh. `refresh`: its token found expired at every request "
              "(the token endpoint gives one-second tokens), so the bridge refreshes it first, writes the file "
              f"back and then sends the request ({lg['refreshes']} refreshes for {len(r)} requests). "
              "`token round trip`: the client's own POST to the token endpoint on a new TLS connection (Python's ssl, "
              "TCP_NODELAY, offering its last session, as the bridge does). "
              "Milliseconds.\n",
              "| | p50 | p99 | min | max |", "|---|---|---|---|---|",
              row("no refresh", n), row("refresh", r), row("token round trip", t),
              f"\nA refresh adds {statistics.median(r) - statistics.median(n):+.2f} ms at p50 to the request that "
              f"triggers it; one round trip to the token endpoint takes {statistics.median(t):.2f} ms "
              f"(the added time is {(statistics.median(r) - statistics.median(n)) / statistics.median(t):.2f} of "
              "it).\n"]
    write_results("\n".join(lines) + "\n", a.out, a.json, res)


if __name__ == "__main__":
    main()
