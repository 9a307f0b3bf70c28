"""What the bridge suite's cases share: the upstreams they run on unix
sockets, raw-socket clients, waiting for ports and for the bridge."""
import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hostside  # noqa: E402
from proctree import children  # noqa: E402


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


def run_conf(path, text, ward_argv, prefix=()):
    """Writes a config, runs ward on it to its end; (process, stderr lines)."""
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run(list(prefix) + ward_argv + ["-c", path], capture_output=True, timeout=20)
    return p, p.stderr.decode().strip().splitlines()


class ThreadedTCP(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def self_signed(work, name):
    """A self-signed certificate for name (its SAN): (key path, cert path)."""
    key, crt = os.path.join(work, f"{name}.key"), os.path.join(work, f"{name}.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
                    "-days", "2", "-subj", f"/CN={name}", "-addext", f"subjectAltName=DNS:{name}"],
                   check=True, capture_output=True)
    return key, crt


def tcp_server(handler):
    """A threaded server on 127.0.0.1 (a port of the kernel's choosing),
    serving in the background; shutdown() stops it."""
    srv = ThreadedTCP(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def netns_child(a, work, tag, flag, hosts="", timeout=600):
    """Runs `bridge.py --FLAG WORK/TAG` in a network namespace of its own,
    entered with `ip netns exec`, which also puts /etc/netns/NS/resolv.conf
    (a DNS server on 127.0.0.1, the child's) and hosts (loopback, and the
    lines in hosts) in place of the machine's; reports the [name, ok,
    detail] results the child prints as JSON."""
    from results import report
    ns = f"ward{tag}{os.getpid() % 100000}"
    etc = f"/etc/netns/{ns}"
    sub = os.path.join(work, tag)
    os.makedirs(sub, exist_ok=True)
    os.chmod(sub, 0o755)
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    try:
        subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
        os.makedirs(etc, exist_ok=True)
        with open(f"{etc}/resolv.conf", "w") as f:
            f.write("nameserver 127.0.0.1\n")
        with open(f"{etc}/hosts", "w") as f:
            f.write("127.0.0.1 localhost\n::1 localhost\n" + hosts)
        p = subprocess.run(["ip", "netns", "exec", ns, sys.executable, os.path.join(HERE, "bridge.py"),
                            "--ward", a.ward, "--label", a.label, f"--{flag}", sub], capture_output=True,
                           text=True, timeout=timeout)
        try:
            results = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            report(f"{tag}: the child ran", False, (p.stdout + p.stderr)[-1500:])
            return
        for name, ok, detail in results:
            report(name, ok, detail)
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        import shutil
        shutil.rmtree(etc, ignore_errors=True)


def stop_all(w, servers):
    """ward stopped (stop_ward), then each server; ward's stderr."""
    err = stop_ward(w)
    for s in servers:
        try:
            s.stop()
        except OSError:
            pass
    return err


def stop_ward(w):
    """TERM, then KILL if it lingers; returns its stderr."""
    w.terminate()
    try:
        w.wait(timeout=10)
    except subprocess.TimeoutExpired:
        w.kill()
        w.wait()
    return w.stderr.read().decode()


def pi_home(work, name, quiet=False):
    """A home for Pi as the confined agent: agent dir, tmp, settings
    (quiet: no start-up banner, for a TUI in a small pane)."""
    home = os.path.join(work, name)
    for d in ("", "/agent", "/tmp"):
        os.makedirs(home + d, exist_ok=True)
        os.chown(home + d, AGENT_UID, AGENT_UID)
    with open(home + "/agent/settings.json", "w") as f:
        f.write('{"defaultProjectTrust":"never","quietStartup":true}' if quiet else '{"defaultProjectTrust":"never"}')
    os.chown(home + "/agent/settings.json", AGENT_UID, AGENT_UID)
    return home


def pi_agent_conf(home, node, command, read=(), env=()):
    """The [agent], [landlock] and [seccomp] of Pi (Node 22 at node) as the
    confined agent in home; read: more trees it reads; env: more NAME=VALUE."""
    lines = [f"[agent]\nuser = {AGENT_UID}:{AGENT_UID}\ncommand = {command}\ncwd = {home}",
             f"env = PATH={os.path.dirname(node)}:/usr/bin:/bin\nenv = HOME={home}\nenv = TMPDIR={home}/tmp",
             f"env = PI_CODING_AGENT_DIR={home}/agent\nenv = PI_OFFLINE=1\nenv = PI_TELEMETRY=0"]
    lines += [f"env = {e}" for e in env]
    lines.append(f"[landlock]\nread = /usr /etc /proc /sys/fs/cgroup {os.path.realpath(NODE_DIR)} {' '.join(read)}"
                 f"\nwrite = {home} /dev/null\nscope = abstract signal\n[seccomp]\n")
    return "\n".join(lines)
