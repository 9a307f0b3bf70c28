"""The upstream connections the bridge keeps between requests (pool.c,
respend.c): a tcp: and a tls: upstream that keep their connections open
and say, by the connection each request came on, whether the bridge
reused one, closed one it should not keep, or sent a request again after
its server closed the kept one under it."""
import os
import shutil
import socket
import socketserver
import subprocess
import threading
import time

from results import report  # noqa: E402
from harness import AGENT_UID, exchange, req, self_signed, status, stop_ward, tcp_server, wait_port  # noqa: E402


class KeepServer:
    """An HTTP/1.1 upstream that keeps each connection open and records,
    per request, (connection number, request line, Connection header). The
    target says how it answers."""

    def __init__(self, ctx=None):
        self.lock = threading.Lock()
        self.seen = []   # (conn, request line, the head's Connection value)
        self.ended = set()  # connections the bridge closed (EOF read)
        self.n = 0
        self.drop_next = set()  # connections to close when their next request comes
        self.slow_drop = set()  # ... after holding it 1.5 s (a server that crashed at work)
        outer = self

        class H(socketserver.BaseRequestHandler):
            def handle(self):
                sock = self.request
                if ctx:
                    try:
                        sock = ctx.wrap_socket(sock, server_side=True)
                    except OSError:
                        return
                with outer.lock:
                    outer.n += 1
                    me = outer.n
                box = [b""]  # bytes read past the request before
                try:
                    while outer.serve_one(sock, me, box):
                        pass
                except OSError:
                    pass
                try:
                    sock.close()
                except OSError:
                    pass
                with outer.lock:
                    outer.ended.add(me)

        self.srv = tcp_server(H)
        self.port = self.srv.server_address[1]

    def serve_one(self, sock, me, box):
        buf = box[0]
        while b"\r\n\r\n" not in buf:
            b = sock.recv(65536)
            if not b:
                return False
            buf += b
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
        length = int(fields.get("content-length", "0"))
        while len(rest) < length:
            b = sock.recv(65536)
            if not b:
                return False
            rest += b
        box[0] = rest[length:]
        with self.lock:
            drop, slow = me in self.drop_next, me in self.slow_drop
            self.drop_next.discard(me)
            self.slow_drop.discard(me)
            self.seen.append((me, lines[0], fields.get("connection", "")))
        if drop:  # its idle limit came as the request did: closed unanswered
            return False
        if slow:  # it had the request a while, then went away
            time.sleep(1.5)
            return False
        method, target = lines[0].split(" ")[:2]
        body = f"conn {me}: {target}".encode()
        if target == "/v1/chunked":
            sock.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
        elif target == "/v1/close":
            sock.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            return False
        elif target == "/v1/extra":
            # bytes past the answer's end: not the client's, and the connection is not kept
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%sJUNK-AFTER" % (len(body), body))
        elif target == "/v1/eof":
            sock.sendall(b"HTTP/1.1 200 OK\r\n\r\n" + body)  # only the close ends it
            return False
        elif target == "/v1/short-idle":
            sock.sendall(b"HTTP/1.1 200 OK\r\nKeep-Alive: timeout=1\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        elif target == "/v1/idle2":
            sock.sendall(b"HTTP/1.1 200 OK\r\nKeep-Alive: timeout=2, max=100\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        elif target == "/v1/drop-next":
            with self.lock:
                self.drop_next.add(me)
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        elif target == "/v1/slow-drop-next":
            with self.lock:
                self.slow_drop.add(me)
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        elif target == "/v1/304":
            # no body, whatever its length says
            sock.sendall(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n")
        elif target == "/v1/404":
            sock.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        elif target == "/v1/close-idle":
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            time.sleep(0.05)
            return False  # closed while the bridge keeps it
        elif method == "HEAD":
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n")
        else:
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        return fields.get("connection", "").lower() != "close"  # as HTTP/1.1 servers do

    def conns_of(self, target):
        with self.lock:
            return [c for c, line, _ in self.seen if line.split(" ")[1] == target]

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


def call(port, target, method="POST"):
    r = exchange(port, req(method, target, body=b"" if method == "HEAD" else b'{"jsonrpc":"2.0","id":1}'))
    return status(r), r.partition(b"\r\n\r\n")[2]


def keep_case(a, work):
    """A route's upstream connection carries its next request; the ones
    that cannot are closed, and a kept one its server closed is replaced."""
    import ssl
    tls = None
    if shutil.which("openssl"):
        key, crt = self_signed(work, "keep.test")
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(crt, key)
    plain, secure = KeepServer(), KeepServer(tls) if tls else None
    conf = os.path.join(work, "keep.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT_UID}\n"
                f"[route keep]\nlisten = 127.0.0.1:17871\nupstream = tcp:127.0.0.1:{plain.port}\npath = /v1/\n"
                "methods = POST GET HEAD\n")
        if secure:
            f.write(f"[route keeptls]\nlisten = 127.0.0.1:17872\nupstream = tls:127.0.0.1:{secure.port}\n"
                    f"host = keep.test:{secure.port}\ntls_ca = {crt}\npath = /v1/\n")
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "120"], stderr=subprocess.PIPE)
    try:
        wait_port(17871)
        _keep_plain(plain)
        _keep_client(plain)
        if secure:
            wait_port(17872)
            first = [call(17872, "/v1/a"), call(17872, "/v1/b"), call(17872, "/v1/chunked")]
            conns = {c for t in ("/v1/a", "/v1/b", "/v1/chunked") for c in secure.conns_of(t)}
            report("keep: tls: three requests, one TLS connection (one handshake)",
                   [s for s, _ in first] == [200] * 3 and len(conns) == 1 and first[2][1].endswith(b"/v1/chunked\r\n0\r\n\r\n"),
                   f"{first} on {conns}")
        else:
            report("keep: tls", None, "openssl (to make a test certificate) is not installed")
    finally:
        err = stop_ward(w)
        plain.stop()
        if secure:
            secure.stop()
    probes = [x for x in err.splitlines() if "route=keep " in x and "before the head was complete" in x]
    report("keep: a kept client connection that ends between requests leaves no audit line",
           len(probes) == 1, f"{probes} (one is wait_port's probe)")
    # (wait_port's probe is a connection with no request: method=-)
    audit = [x for x in err.splitlines() if "route=keep " in x and "status=" in x and "method=-" not in x]
    odd = [x for x in audit if "status=200" not in x]
    odd = [x for x in odd if "status=304" not in x and "status=404" not in x and "status=502" not in x]
    report("keep: each request still has its own audit line", len(audit) == 33 and not odd,
           f"{len(audit)} lines; not 200: {odd}")


def _keep_plain(s):
    """The cases on the tcp: upstream, in order (each starts where the last
    left the route's kept connection)."""
    r1, r2 = call(17871, "/v1/one"), call(17871, "/v1/two")
    c1, c2 = s.conns_of("/v1/one"), s.conns_of("/v1/two")
    heads = [conn for _, line, conn in s.seen if "/v1/one" in line]
    report("keep: the second request on the first's connection, asked to be kept",
           r1[0] == r2[0] == 200 and c1 == c2 and len(c1) == 1 and heads == ["keep-alive"],
           f"{r1} {r2} conns {c1} {c2}, Connection: {heads}")

    r = call(17871, "/v1/chunked")
    after = call(17871, "/v1/after-chunked")
    report("keep: a chunked answer ends at its last chunk; the connection goes on",
           r[0] == after[0] == 200 and r[1].endswith(b"0\r\n\r\n") and s.conns_of("/v1/chunked") == s.conns_of("/v1/after-chunked") == c1,
           f"{r} {after}")

    r = call(17871, "/v1/len", method="HEAD")
    after = call(17871, "/v1/after-head")
    report("keep: a HEAD's answer has no body whatever its length says; the connection goes on",
           r == (200, b"") and after[0] == 200 and s.conns_of("/v1/len") == s.conns_of("/v1/after-head"), f"{r} {after}")

    r = call(17871, "/v1/close")
    after = call(17871, "/v1/after-close")
    report("keep: an answer with Connection: close ends its connection; the next takes a new one",
           r[0] == after[0] == 200 and s.conns_of("/v1/close") != s.conns_of("/v1/after-close"), f"{r} {after}")

    r = call(17871, "/v1/extra")
    after = call(17871, "/v1/after-extra")
    report("keep: bytes past an answer's end reach nobody, and that connection is not kept",
           r[0] == 200 and b"JUNK" not in r[1] and r[1].endswith(b"/v1/extra") and after[0] == 200 and
           s.conns_of("/v1/extra") != s.conns_of("/v1/after-extra"), f"{r} {after}")

    r = call(17871, "/v1/eof")
    after = call(17871, "/v1/after-eof")
    report("keep: an answer only the close ends is relayed whole; the next takes a new connection",
           r == (200, b"conn %d: /v1/eof" % s.conns_of("/v1/eof")[0]) and after[0] == 200 and
           s.conns_of("/v1/eof") != s.conns_of("/v1/after-eof"), f"{r} {after}")

    r = call(17871, "/v1/short-idle")
    after = call(17871, "/v1/after-short")
    report("keep: a server whose Keep-Alive timeout is 1 s gets a new connection next",
           r[0] == after[0] == 200 and s.conns_of("/v1/short-idle") != s.conns_of("/v1/after-short"), f"{r} {after}")

    # the race a kept connection has: its server closes it as the request goes out
    r = call(17871, "/v1/drop-next")
    after = call(17871, "/v1/replayed")
    kept, replayed = s.conns_of("/v1/drop-next"), s.conns_of("/v1/replayed")
    report("keep: a request its kept connection's server closed under it is sent again, once, on a new one",
           r[0] == after[0] == 200 and len(replayed) == 2 and replayed[0] == kept[0] and replayed[1] != kept[0] and
           after[1] == b"conn %d: /v1/replayed" % replayed[1], f"{r} {after} kept {kept} replayed on {replayed}")

    r = call(17871, "/v1/slow-drop-next")
    after = call(17871, "/v1/not-replayed")
    report("keep: a kept connection closed long after the request went (the server may have done it) is not "
           "sent again: 502", r[0] == 200 and after[0] == 502 and len(s.conns_of("/v1/not-replayed")) == 1,
           f"{r} {after} seen on {s.conns_of('/v1/not-replayed')}")

    r = call(17871, "/v1/304")
    after = call(17871, "/v1/after-304")
    report("keep: a 304 with a Content-Length has no body: answered at once, the connection goes on",
           r == (304, b"") and after[0] == 200 and s.conns_of("/v1/304") == s.conns_of("/v1/after-304"), f"{r} {after}")

    r = call(17871, "/v1/404")
    after = call(17871, "/v1/after-404")
    report("keep: a connection whose answer was an error (4xx, 5xx) is not kept",
           r[0] == 404 and after[0] == 200 and s.conns_of("/v1/404") != s.conns_of("/v1/after-404"), f"{r} {after}")

    # a GET's body is one an upstream may leave unread, to read as its next request
    r = exchange(17871, req("GET", "/v1/get-body", body=b"POST /v1/smuggled HTTP/1.1\r\nContent-Length: 400\r\n\r\n"))
    after = call(17871, "/v1/after-get-body")
    heads = [conn for _, line, conn in s.seen if "/v1/get-body" in line]
    report("keep: a GET with a body does not ask to keep the connection (Connection: close upstream)",
           status(r) == 200 and heads == ["close"] and after[0] == 200 and
           s.conns_of("/v1/get-body") != s.conns_of("/v1/after-get-body"), f"{r[:80]!r} {heads} {after}")

    r = call(17871, "/v1/close-idle")
    gone = s.conns_of("/v1/close-idle")[0]
    deadline = time.time() + 10
    while gone not in s.ended and time.time() < deadline:
        time.sleep(0.02)
    after = call(17871, "/v1/after-idle-close")
    report("keep: a kept connection its server closed while idle is not used",
           r[0] == after[0] == 200 and len(s.conns_of("/v1/after-idle-close")) == 1 and
           s.conns_of("/v1/after-idle-close") != [gone], f"{r} {after}")

    r = call(17871, "/v1/idle2")
    mine = s.conns_of("/v1/idle2")[0]
    t0 = time.time()
    while mine not in s.ended and time.time() - t0 < 10:
        time.sleep(0.05)
    report("keep: a kept connection is closed by the bridge within its server's Keep-Alive timeout",
           r[0] == 200 and mine in s.ended, f"{r}, closed: {mine in s.ended}")


def _keep_client(s):
    """The client's side: its connection carries its next request when the
    answer's framing ends it and the client did not ask to close."""
    import http.client
    h = http.client.HTTPConnection("127.0.0.1", 17871, timeout=10)
    h.request("POST", "/v1/c1", body=b"{}")
    r1 = h.getresponse()
    b1, sock1 = r1.read(), h.sock
    h.request("POST", "/v1/c2", body=b"{}")
    r2 = h.getresponse()
    b2, sock2 = r2.read(), h.sock
    report("keep: a client's connection carries its next request (Connection: keep-alive, Keep-Alive: timeout=5)",
           r1.status == r2.status == 200 and sock1 is not None and sock1 is sock2 and
           r1.getheader("Connection") == "keep-alive" and r1.getheader("Keep-Alive") == "timeout=5" and
           b1.endswith(b"/v1/c1") and b2.endswith(b"/v1/c2"),
           f"{r1.status} {r1.getheaders()} {b1} / {r2.status} {b2}, same socket: {sock1 is sock2}")
    # the bridge ends it when no next request comes (5 s), with nothing sent
    sock2.settimeout(15)
    try:
        tail = sock2.recv(100)
    except OSError as e:
        tail = repr(e).encode()
    report("keep: a kept client connection with no next request is closed by the bridge, nothing sent",
           tail == b"", f"{tail!r}")
    h.close()

    h = http.client.HTTPConnection("127.0.0.1", 17871, timeout=10)
    h.request("POST", "/v1/c3", body=b"{}", headers={"Connection": "close"})
    r = h.getresponse()
    r.read()
    report("keep: a client that asks to close gets Connection: close", r.status == 200 and
           r.getheader("Connection") == "close" and h.sock is None, f"{r.getheaders()}")
    h.close()

    h = http.client.HTTPConnection("127.0.0.1", 17871, timeout=10)
    h.request("POST", "/v1/eof", body=b"{}")
    r = h.getresponse()
    body = r.read()
    report("keep: an answer only the close ends is not kept: Connection: close", r.status == 200 and
           r.getheader("Connection") == "close" and body.endswith(b"/v1/eof"), f"{r.getheaders()} {body}")
    h.close()

    # pipelined: the second request was read with the first, so it is dropped and the connection ends
    sock = socket.create_connection(("127.0.0.1", 17871), timeout=10)
    sock.sendall(req("POST", "/v1/p1", body=b"{}") + req("POST", "/v1/p2", body=b"{}"))
    out = b""
    while True:
        b = sock.recv(65536)
        if not b:
            break
        out += b
    sock.close()
    report("keep: a request pipelined behind another is dropped, the one answer says close",
           out.count(b"HTTP/1.1 ") == 1 and b"Connection: close" in out and out.endswith(b"/v1/p1") and
           not s.conns_of("/v1/p2"), f"{out!r}")

    # the client ends its kept connection itself: no line for a request that never was
    h = http.client.HTTPConnection("127.0.0.1", 17871, timeout=10)
    h.request("POST", "/v1/c4", body=b"{}")
    r = h.getresponse()
    r.read()
    h.close()
