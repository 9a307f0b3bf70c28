"""tls: upstreams: CA roots, pins, an unclean end, and the plaintext mbedTLS
keeps back at the end of an answer (in a network namespace)."""
import json
import os
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

from results import report  # noqa: E402
from harness import (  # noqa: E402
    HERE,
    AGENT_UID,
    bridge_pids,
    cpu_s,
    exchange,
    recv_until,
    req,
    self_signed,
    status,
    stop_ward,
    tcp_server,
    wait_port,
)


def tls_case(a, work):
    """tls: upstreams, verified against a CA bundle or a pinned certificate."""
    import hashlib
    import ssl
    if not shutil.which("openssl"):
        report("tls: upstreams", None, "openssl (to make test certificates) is not installed")
        return
    certs = {}
    for name in ("upstream.test", "other.test"):
        certs[name] = self_signed(work, name)
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
    os.chmod(conf, 0o600)  # the key is written in it, and no Landlock keeps the agent from it
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
            held = subprocess.run(["unshare", "--net", "--", sys.executable, os.path.join(HERE, "bridge.py"),
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
