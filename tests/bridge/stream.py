"""[route] protocol = stream: bytes both ways with nothing parsed, each
side's end passed on as a half-close, upstreams on TCP, a unix socket and
TLS; an upstream that is down; the config, --check and --explain."""
import hashlib
import json
import os
import shutil
import socket
import socketserver
import ssl
import subprocess
import threading

from results import report  # noqa: E402
from harness import AGENT_UID, BRIDGE_UID, SERVERS, recv_all, self_signed, stop_ward, tcp_server, wait_port  # noqa: E402

BIG = 8 << 20  # more than every buffer on the way: backpressure both ways


class Talker(socketserver.StreamRequestHandler):
    """A server that speaks first (as a database does), then answers what
    it read to its client's end with its length and digest, and closes.
    wrap: a TLS context (None: plain)."""
    wrap = None
    seen = []

    def handle(self):
        conn = self.request
        if self.wrap:
            try:
                conn = self.wrap.wrap_socket(conn, server_side=True)
            except (ssl.SSLError, OSError):
                return
        try:
            conn.sendall(b"HELLO stream\n")
            h, n = hashlib.sha256(), 0
            while True:
                d = conn.recv(65536)
                if not d:
                    break
                h.update(d)
                n += len(d)
            Talker.seen.append(n)
            conn.sendall(b"GOT %d %s\n" % (n, h.hexdigest().encode()))
            if b"big" in self.server.name:
                conn.sendall(b"b" * BIG)
        except (OSError, ssl.SSLError):
            pass
        finally:
            conn.close()


def talk(port, payload, want_big=False):
    """Reads the banner without sending anything, sends payload, half-closes,
    and reads the answer to the end: (banner, answer, the error that ended it)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    banner = b""
    while not banner.endswith(b"\n"):
        d = s.recv(1)
        if not d:
            break
        banner += d
    # the answer is read while the payload is sent: the upstream only
    # answers at the end, but a big answer must not wait on a full buffer
    out = []
    t = threading.Thread(target=lambda: out.append(recv_all(s)), daemon=True)
    s.sendall(payload)
    s.shutdown(socket.SHUT_WR)
    t.start()
    t.join(30)
    s.close()
    got, err = out[0] if out else (b"", TimeoutError("no answer in 30 s"))
    return banner, got, err


def digest_line(payload):
    return b"GOT %d %s\n" % (len(payload), hashlib.sha256(payload).hexdigest().encode())


def stream_case(a, work):
    """Stream routes relay bytes both ways, half-closes included."""
    plain = tcp_server(Talker)
    plain.name = b"plain"
    big = tcp_server(Talker)
    big.name = b"big"
    upath = os.path.join(work, "stream.sock")
    if os.path.exists(upath):
        os.unlink(upath)

    class UnixTalker(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True
        name = b"unix"

    usrv = UnixTalker(upath, Talker)
    os.chown(upath, BRIDGE_UID, BRIDGE_UID)
    os.chmod(upath, 0o600)
    threading.Thread(target=usrv.serve_forever, daemon=True).start()

    tls_srv, tls_route = None, ""
    if shutil.which("openssl"):
        key, crt = self_signed(work, "stream.test")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)

        class TlsTalker(Talker):
            wrap = ctx

        tls_srv = tcp_server(TlsTalker)
        tls_srv.name = b"tls big"
        tls_route = (f"[route stls]\nlisten = 127.0.0.1:17955\nupstream = tls:127.0.0.1:{tls_srv.server_address[1]}\n"
                     f"protocol = stream\ntls_ca = {crt}\nhost = stream.test\n")
    # a port nothing listens on: the upstream that is down
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    dead_port = dead.getsockname()[1]
    dead.close()

    conf = os.path.join(work, "stream.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT_UID}\n"
                f"[route stcp]\nlisten = 127.0.0.1:17951\nupstream = tcp:127.0.0.1:{plain.server_address[1]}\n"
                "protocol = stream\n"
                f"[route sbig]\nlisten = 127.0.0.1:17952\nupstream = tcp:127.0.0.1:{big.server_address[1]}\n"
                "protocol = stream\n"
                f"[route sunix]\nlisten = 127.0.0.1:17953\nupstream = unix:{upath}\nprotocol = stream\n"
                f"[route sdown]\nlisten = 127.0.0.1:17954\nupstream = tcp:127.0.0.1:{dead_port}\nprotocol = stream\n"
                + tls_route)
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "60"], stderr=subprocess.PIPE)
    wait_port(17951)
    try:
        payload = os.urandom(100000)
        banner, got, err = talk(17951, payload)
        report("stream tcp: the upstream speaks first, the client half-closes, the answer and the end come back",
               banner == b"HELLO stream\n" and got == digest_line(payload) and err is None,
               f"banner {banner!r}, answer {got[:90]!r}, {err!r}")
        payload = os.urandom(BIG)
        banner, got, err = talk(17952, payload)
        report(f"stream tcp: {BIG >> 20} MiB each way, byte for byte",
               got == digest_line(payload) + b"b" * BIG and err is None,
               f"{len(got)} bytes back, {err!r}")
        # HTTP-looking bytes are not parsed: a request head a route of
        # protocol = http would refuse (no Host, a bad target) goes as it is
        payload = b"GET /../../etc/passwd HTTP/1.1\r\nX-HTTP-Method-Override: DELETE\r\n\r\n"
        banner, got, err = talk(17953, payload)
        report("stream unix: bytes that look like HTTP are passed as they are",
               banner == b"HELLO stream\n" and got == digest_line(payload) and err is None,
               f"{got[:90]!r}, {err!r}")
        if tls_srv:
            payload = os.urandom(300000)
            banner, got, err = talk(17955, payload)
            report(f"stream tls: plaintext in, TLS to the upstream, {BIG >> 20} MiB back, its end (close_notify) passed on",
                   banner == b"HELLO stream\n" and got == digest_line(payload) + b"b" * BIG and err is None,
                   f"banner {banner!r}, {len(got)} bytes back, {got[:90]!r}, {err!r}")
        else:
            report("stream tls", None, "openssl (to make a test certificate) is not installed")
        s = socket.create_connection(("127.0.0.1", 17954), timeout=10)
        got, err = recv_all(s)
        s.close()
        report("stream to an upstream that is down: the client's connection is closed, nothing sent",
               got == b"" and (err is None or isinstance(err, ConnectionResetError)), f"{got[:60]!r} {err!r}")
    finally:
        log = stop_ward(w)
        for srv in (plain, big, usrv) + ((tls_srv,) if tls_srv else ()):
            srv.shutdown()
            srv.server_close()
    lines = [ln for ln in log.splitlines() if "bridge: route=s" in ln]
    audit = [ln for ln in lines if "route=stcp stream" in ln]
    report("stream: one audit line per connection, with the bytes each way",
           any(f"in={100000} out=" in ln and "reason=" not in ln for ln in audit), "\n".join(lines)[-600:])
    report("stream: the upstream that is down is named in the log, and in the connection's audit line",
           any("route=sdown upstream" in ln for ln in log.splitlines())
           and any("route=sdown stream in=0 out=0" in ln and "reason=upstream unreachable" in ln for ln in lines),
           "\n".join(ln for ln in log.splitlines() if "sdown" in ln)[-400:])
    stream_config_case(a, work)


def stream_config_case(a, work):
    """What a stream route may not have, and what --check and --explain say of it."""
    conf = os.path.join(work, "stream-bad.conf")
    base = f"[agent]\nuser = {AGENT_UID}\n[route db]\nlisten = 127.0.0.1:17956\nupstream = tcp:10.1.2.3:5432\n"
    for label, extra, want in (("a path", "protocol = stream\npath = /x\n", "path is for HTTP routes"),
                               ("a header", "protocol = stream\nheader = X-A: ${HOME}\n", "header is for HTTP routes"),
                               ("methods", "methods = GET\nprotocol = stream\n", "methods is for HTTP routes"),
                               ("a host, its upstream not tls:", "protocol = stream\nhost = db.test\n",
                                "host is for HTTP routes"),
                               ("an unknown protocol", "protocol = udp\n", "expected http"),
                               ("no path on an http route", "protocol = http\n", "path is required")):
        with open(conf, "w") as f:
            f.write(base + extra)
        p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, text=True, timeout=20)
        err = p.stderr.strip().splitlines()
        report(f"stream config: {label} is refused, one line", p.returncode == 2 and len(err) == 1 and want in err[0],
               f"rc {p.returncode}: {err}")
    with open(conf, "w") as f:
        f.write(base + "protocol = stream\n[landlock]\nmode = best_effort\nread = /usr\n")
    p = subprocess.run([a.ward, "-c", conf, "--check", "--json"], capture_output=True, text=True, timeout=20)
    try:
        j = json.loads(p.stdout)
        route = [r for r in j["bridge"]["routes"] if r["name"] == "db"][0]
        warned = [w for w in j["warnings"] if "[route db]" in w]
    except (ValueError, KeyError, IndexError) as e:
        route, warned = {"error": repr(e), "out": p.stdout[-300:], "err": p.stderr[-300:]}, []
    report("stream --check: the route is a stream, with a warning that nothing is checked on it",
           route.get("protocol") == "stream" and "path" not in route and warned
           and "nothing checked" in warned[0], f"{route} {warned}")
    p = subprocess.run([a.ward, "-c", conf, "--explain", "tcp:10.1.2.3:5432"], capture_output=True, text=True,
                       timeout=20)
    q = subprocess.run([a.ward, "-c", conf, "--explain", "tcp:10.1.2.3:5433"], capture_output=True, text=True,
                       timeout=20)
    report("stream --explain: the address behind a stream route names it; another says how to add one",
           "[route db] (protocol = stream) relays 127.0.0.1:17956" in p.stdout
           and "add a [route NAME] with protocol = stream, upstream = tcp:10.1.2.3:5433" in q.stdout,
           (p.stdout + q.stdout + p.stderr)[-700:])
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT_UID}\n[landlock]\nconnect = 10.1.2.3:5432\n")
    p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, text=True, timeout=20)
    report("connect = ADDRESS:PORT is refused and points at a stream route",
           p.returncode == 2 and "protocol = stream" in p.stderr, p.stderr.strip()[-300:])
