"""The servers the egress proxy's cases reach, each HTTPS on one address
with a certificate of the test CA:

    TlsServer      answers its label (or BIG bytes for /big); counts
                   connections and the server names handshakes asked for
    GitServer      git's smart HTTP (git http-backend as CGI) over one bare
                   repository, pushes allowed
    VerdaccioServer verdaccio, npm's registry server, one package published
                   into it
    PlainServer    plain HTTP on port 80 (what [proxy] methods lets through
                   past CONNECT): keeps each connection's bytes as they came
"""
import json
import os
import socket
import socketserver
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler

from harness import recv_until  # noqa: E402
from verdaccio import VERDACCIO, Verdaccio  # noqa: E402,F401 (VERDACCIO: proxy.py's)

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
    /big; for /bigraw without a length, HTTP/1.0) and closes, as the proxy's Connection: close asks. Before it
    answers it keeps every byte the connection brought (.conns), and what
    came in a further half second (a request pipelined behind the first)."""

    def __init__(self, label, addr, port=80):
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
                body = b"x" * BIG if got.startswith((b"GET /big ", b"GET /bigraw ")) else \
                    f"plain from {outer.label}".encode()
                # /bigraw: HTTP/1.0 without a length, the close alone ends it
                head = b"HTTP/1.0 200 OK\r\n\r\n" if got.startswith(b"GET /bigraw ") else \
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)
                try:
                    s.settimeout(10)
                    s.sendall(head + body)
                except OSError:
                    pass

        if ":" in addr:
            class V6(_Threaded):
                address_family = socket.AF_INET6
            self.srv = V6((addr, port), H)
        else:
            self.srv = _Threaded((addr, port), H)
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


def VerdaccioServer(addr, cert, ca, host, name, work, node):
    """verdaccio over TLS on addr:443 for host, NAME@1.0.0 published into
    it (a one-line module): tests/lib/verdaccio.py."""
    pkg = os.path.join(work, "verdaccio-pkg")
    os.makedirs(pkg, exist_ok=True)
    with open(os.path.join(pkg, "package.json"), "w") as f:
        json.dump({"name": name, "version": "1.0.0", "main": "index.js"}, f)
    with open(os.path.join(pkg, "index.js"), "w") as f:
        f.write("module.exports = (s, n) => s.padStart(n);\n")
    return Verdaccio(work, node, addr, 443, [pkg], tls=(cert[0], cert[1], ca, host))
