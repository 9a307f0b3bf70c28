#!/usr/bin/python3
"""Time to first token through the bridge to a provider by name, against
the client's own direct TLS connection to it, side by side in one run.

  provider_bench.py --ward build/ward [--n 100] [--out F] [--json F]

In a network namespace of its own (ip netns exec, with its own resolv.conf
pointing at a DNS server of the test's, tests/lib/dnsserver.py): a TLS
server for provider.test (a test CA) that answers a POST with an SSE
stream whose first event leaves at once. Each request is a new connection,
set-up included, timed from the client's connect to the first event's
first byte:
  direct  the client resolves nothing (the address is known), does its own
          TLS handshake (Python's ssl, OpenSSL) and sends the request;
  bridge  the client sends plain HTTP to ward's loopback port; the bridge
          resolves provider.test (its cache warm after the first), makes its
          own TLS connection (mbedTLS) and adds the key.
The two ways alternate, request by request. Medians, p99 and the added
time; nothing is asserted.
"""
import argparse
import json
import os
import shutil
import socket
import socketserver
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from benchlib import pct, run_child_in_netns, write_results  # noqa: E402

PORT, LISTEN = 8443, 17991
REQ = (b"POST /v1/messages HTTP/1.1\r\nHost: provider.test\r\nContent-Type: application/json\r\n"
       b"Content-Length: 13\r\n\r\n{\"stream\":1}\n")


def serve(crt, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)

    class H(socketserver.StreamRequestHandler):
        def handle(self):
            try:
                c = ctx.wrap_socket(self.request, server_side=True)
                buf = b""
                while b"\r\n\r\n" not in buf:
                    more = c.recv(4096)
                    if not more:
                        return
                    buf += more
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                          b"event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
                c.close()
            except (OSError, ssl.SSLError):
                pass

    class S(socketserver.ThreadingMixIn, socketserver.TCPServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 64

    srv = S(("203.0.113.2", PORT), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def first_event(sock):
    buf = b""
    while b"\r\n\r\n" not in buf or not buf.split(b"\r\n\r\n", 1)[1]:
        more = sock.recv(4096)
        if not more:
            raise RuntimeError(f"closed early: {buf[:200]!r}")
        buf += more
    return buf


LAST = {}


def direct(cctx):
    # the last session offered again, as the bridge offers its route's
    t0 = time.perf_counter()
    s = socket.create_connection(("203.0.113.2", PORT))
    c = cctx.wrap_socket(s, server_hostname="provider.test", session=LAST.get("session"))
    c.sendall(REQ)
    first_event(c)
    t = time.perf_counter() - t0
    LAST["session"] = c.session
    LAST["reused"] = LAST.get("reused", 0) + c.session_reused
    c.close()
    return t


def bridged():
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", LISTEN))
    s.sendall(REQ)
    head = first_event(s)
    t = time.perf_counter() - t0
    s.close()
    if b" 200 " not in head.split(b"\r\n", 1)[0]:
        raise RuntimeError(head[:300])
    return t


def child(a):
    from dnsserver import DnsServer
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    # the server's address: on lo, not a loopback one (the bridge connects
    # to none a DNS answer gives)
    subprocess.run(["ip", "addr", "add", "203.0.113.1/24", "dev", "lo"], check=True)
    work = tempfile.mkdtemp(prefix="ward-pbench-")
    from testca import make_certs
    certs = make_certs(work, ["provider.test"])
    ca, (crt, key) = certs["ca"], certs["provider.test"]
    conf = os.path.join(work, "p.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = 4242\n[route p]\nlisten = 127.0.0.1:{LISTEN}\nupstream = tls:provider.test:{PORT}\n"
                f"path = /v1/\nmethods = POST\ntls_ca = {ca}\nheader = x-api-key: ${{BENCH_KEY}}\n")
    cctx = ssl.create_default_context(cafile=ca)
    with DnsServer("127.0.0.1", 53) as dns:
        dns.set("provider.test", a=["203.0.113.2"], ttl=300)
        srv = serve(crt, key)
        w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "3600"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=dict(os.environ, BENCH_KEY="k"))
        try:
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", LISTEN)).close()
                    break
                except OSError:
                    time.sleep(0.02)
            for _ in range(5):  # warm both: the bridge's first lookup, the server's threads
                direct(cctx)
                bridged()
            res = {"direct": [], "bridge": []}
            for _ in range(a.n):
                res["direct"].append(direct(cctx) * 1000)
                res["bridge"].append(bridged() * 1000)
            res["queries"] = dns.queries("provider.test")
            res["direct_resumed"] = LAST.get("reused", 0)
        finally:
            w.terminate()
            w.wait(timeout=10)
            srv.shutdown()
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(res))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--out")
    ap.add_argument("--json")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.ward = os.path.abspath(a.ward)
    if a.child:
        return child(a)
    res = run_child_in_netns("wardpb", __file__, ["--ward", a.ward, "--n", str(a.n)], 600)
    d, b = res["direct"], res["bridge"]
    lines = ["\n## A provider by name: time to first token\n",
             f"{a.n} requests each way, alternating, each on a new connection (set-up included), from connect "
             "to the first byte of the first SSE event; milliseconds. `direct`: the client's own TLS connection "
             "to the provider's address (Python's ssl), offering the session of its last one. `bridge`: plain HTTP to "
             "ward's loopback port; the bridge resolves the name (c-ares, cached for the answer's TTL), connects "
             "with TLS (mbedTLS 2.28, TLS 1.2), offering the route's last session, and adds the key. In a network "
             "namespace with a DNS server and a TLS server of the benchmark's (Python's ssl, TLS 1.2 and 1.3). "
             f"Direct connections that resumed their session: {res.get('direct_resumed', 0)} of "
             f"{len(res['direct']) + 5}.\n",
             "| | p50 | p99 | min | max |", "|---|---|---|---|---|"]
    for k, v in (("direct", d), ("bridge", b)):
        lines.append(f"| {k} | {statistics.median(v):.2f} | {pct(v, 0.99):.2f} | {min(v):.2f} | {max(v):.2f} |")
    lines.append(f"\nAdded by the bridge at p50: {statistics.median(b) - statistics.median(d):+.2f} ms "
                 "(the goal: under 2 ms" + ("; below zero: the bridge's TLS 1.2 resumption skips the key exchange "
                                            "that Python's TLS 1.3 resumption still makes"
                                            if statistics.median(b) < statistics.median(d) else "") + f"); p99 {pct(b, 0.99) - pct(d, 0.99):+.2f} ms. DNS queries for the name "
                 f"in the whole run: {res['queries']} (the answer is cached; A and AAAA at the bridge's start).\n")
    write_results("\n".join(lines) + "\n", a.out, a.json, {"direct": d, "bridge": b, "queries": res["queries"]})


if __name__ == "__main__":
    main()
