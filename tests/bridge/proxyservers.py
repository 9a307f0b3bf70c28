"""The servers the egress proxy's cases reach, each HTTPS on one address
with a certificate of the test CA:

    TlsServer      answers its label (or BIG bytes for /big); counts
                   connections and the server names handshakes asked for
    GitServer      git's smart HTTP (git http-backend as CGI) over one bare
                   repository, pushes allowed
    RegistryServer an npm registry of one package: its packument and tarball
    PlainServer    plain HTTP on port 80 (what [proxy] methods lets through
                   past CONNECT): keeps each connection's bytes as they came
"""
import base64
import hashlib
import io
import json
import os
import socketserver
import ssl
import subprocess
import tarfile
import threading
from http.server import BaseHTTPRequestHandler

from harness import recv_until  # noqa: E402

BIG = 4 << 20


class _Threaded(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 2048


def _ctx(cert, snis):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*cert)
    ctx.sni_callback = lambda _s, name, _c: snis.append(name)
    return ctx


class TlsServer:
    def __init__(self, label, addr, port, cert):
        self.label, self.snis, self.accepted = label, [], 0
        ctx = _ctx(cert, self.snis)
        outer = self

        class H(socketserver.StreamRequestHandler):
            def handle(self):
                outer.accepted += 1
                try:
                    conn = ctx.wrap_socket(self.request, server_side=True)
                    head = recv_until(conn, b"\r\n\r\n")
                    if b"\r\n\r\n" not in head:
                        return
                    body = b"x" * BIG if head.startswith(b"GET /big ") else f"from {outer.label}".encode()
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                                 % (len(body), body))
                    conn.close()
                except (ssl.SSLError, OSError):
                    return

        self.srv = _Threaded((addr, port), H)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


class PlainServer:
    """Plain HTTP on addr:80: answers "plain from LABEL" (BIG bytes for
    /big) and closes, as the proxy's Connection: close asks. Before it
    answers it keeps every byte the connection brought (.conns), and what
    came in a further half second (a request pipelined behind the first)."""

    def __init__(self, label, addr):
        self.label, self.conns = label, []
        outer = self

        class H(socketserver.StreamRequestHandler):
            def handle(self):
                s = self.request
                got = recv_until(s, b"\r\n\r\n")
                try:
                    s.settimeout(0.5)
                    while True:
                        b = s.recv(65536)
                        if not b:
                            break
                        got += b
                except OSError:
                    pass
                outer.conns.append(got)  # before the answer: its client's next step sees it
                body = b"x" * BIG if got.startswith(b"GET /big ") else f"plain from {outer.label}".encode()
                try:
                    s.settimeout(10)
                    s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                except OSError:
                    pass

        self.srv = _Threaded((addr, 80), H)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


class _Https:
    """An HTTP/1.0 handler class served over TLS on addr:443."""

    def __init__(self, addr, cert, handler):
        self.snis = []
        self.srv = _Threaded((addr, 443), handler)
        self.srv.socket = _ctx(cert, self.snis).wrap_socket(self.srv.socket, server_side=True)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


class GitServer(_Https):
    """root/NAME.git, served by git http-backend (receive-pack on)."""

    def __init__(self, addr, cert, root):
        self.root, self.requests = root, []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def cgi(self):
                path, _, query = self.path.partition("?")
                outer.requests.append(f"{self.command} {path}")
                body = b""
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    while True:
                        size = int(self.rfile.readline().split(b";")[0], 16)
                        if size == 0:
                            self.rfile.readline()
                            break
                        body += self.rfile.read(size)
                        self.rfile.readline()
                else:
                    body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                env = {"GIT_PROJECT_ROOT": outer.root, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path,
                       "QUERY_STRING": query, "REQUEST_METHOD": self.command, "REMOTE_USER": "agent",
                       "REMOTE_ADDR": "203.0.113.9", "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                       "CONTENT_LENGTH": str(len(body)), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
                if self.headers.get("Content-Encoding"):
                    env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
                if self.headers.get("Git-Protocol"):
                    env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
                out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
                head, _, rest = out.partition(b"\r\n\r\n")
                code, fields = 200, []
                for line in head.split(b"\r\n"):
                    k, _, v = line.decode("latin-1").partition(":")
                    if k.lower() == "status":
                        code = int(v.strip().split()[0])
                    elif k:
                        fields.append((k, v.strip()))
                self.send_response(code)
                for k, v in fields:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(rest)))
                self.end_headers()
                self.wfile.write(rest)

            do_GET = do_POST = cgi

        super().__init__(addr, cert, H)


class RegistryServer(_Https):
    """One package, NAME@1.0.0, as the npm registry serves it."""

    def __init__(self, addr, cert, host, name):
        self.requests = []
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as t:
            for fname, data in (("package/package.json", json.dumps({"name": name, "version": "1.0.0",
                                                                       "main": "index.js"}).encode()),
                                ("package/index.js", b"module.exports = (s, n) => s.padStart(n);\n")):
                info = tarfile.TarInfo(fname)
                info.size, info.mode = len(data), 0o644
                t.addfile(info, io.BytesIO(data))
        tgz = buf.getvalue()
        tarball = f"https://{host}/{name}/-/{name}-1.0.0.tgz"
        packument = json.dumps({"name": name, "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": {
            "name": name, "version": "1.0.0", "main": "index.js", "dist": {
                "tarball": tarball, "shasum": hashlib.sha1(tgz).hexdigest(),
                "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()}}}}).encode()
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                outer.requests.append(self.path)
                body = packument if self.path.split("?")[0] == f"/{name}" else \
                    tgz if self.path == f"/{name}/-/{name}-1.0.0.tgz" else None
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "application/json" if body is packument else
                                 "application/octet-stream")
                body = body if body is not None else b'{"error":"not found"}'
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(addr, cert, H)
