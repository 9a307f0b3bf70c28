"""The bridge on the wire: one ward with many routes, and raw-socket
clients, well-behaved and hostile."""
import os
import resource
import signal
import socket
import subprocess
import threading
import time

from proctree import children  # noqa: E402
from results import report  # noqa: E402
from harness import (  # noqa: E402
    AGENT_UID,
    BRIDGE_UID,
    BULK_BODY,
    BusyUpstream,
    Upstream,
    body_json,
    bridge_pids,
    cpu_s,
    exchange,
    recv_all,
    recv_until,
    req,
    retried,
    status,
    wait_port,
)


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
        # conn_limit(): 4 a connection, after each route's listener and its 4
        # kept upstream connections (pool.h) and a margin
        want = (64 - 1 * (1 + 4) - 16) // 4
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


class Wire:
    """The one ward every wire case talks to, and what it was started with:
    its routes' ports (echo, sse, die, ...), the upstreams, the secret file."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def good_post(e):
    P = e.P
    # a good request: the route's token replaces the agent's, Host is rewritten
    r = exchange(P, req("POST", "/echo?agent=a1", "Authorization: Bearer agent-made-up\r\nX-Custom: kept\r\n"
                        "Content-Type: application/json\r\n", b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'))
    seen = body_json(r) if status(r) == 200 else {}
    h = seen.get("headers", {})
    ok = status(r) == 200 and h.get("authorization") == ["Bearer route-secret"] and \
        h.get("host") == ["upstream.test:6767"] and h.get("x-custom") == ["kept"] and \
        h.get("x-api-key") == ["Token bare-key"] and h.get("x-env-key") == ["Key env-secret-1"] and \
        h.get("connection") == ["close"] and seen.get("body") == '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' \
        and b"Connection: close\r\n" in r and b"keep-alive" not in r
    report("POST relayed: token injected (agent's dropped), a prefix before a secret (Token @PATH), one from "
           "ward's environment (Key ${VAR}), Host rewritten, other headers kept", ok,
           f"status {status(r)}, upstream saw Authorization {h.get('authorization')}, X-Api-Key "
           f"{h.get('x-api-key')}, X-Env-Key {h.get('x-env-key')}, Host {h.get('host')}")


def wrong_target_or_method(e):
    P = e.P
    for target in ["/echo?agent=a2", "/echo", "/echo?agent=a1&x=1", "/Echo?agent=a1"]:
        r = exchange(P, req("POST", target, body=b"{}"))
        report(f"target {target} -> 404", status(r) == 404 and b'"reason"' in r, f"status {status(r)}")
    r = exchange(P, req("PUT", "/echo?agent=a1", body=b"{}"))
    report("PUT -> 405 with Allow", status(r) == 405 and b"Allow: DELETE, GET, POST" in r, f"status {status(r)}")


def methods_past_bit_31(e):
    up, P = e.up, e.P
    # methods past http-parser's bit 31 must not alias allowed ones (SOURCE = 33 -> GET's bit)
    n0 = len(up.seen)
    st = [status(exchange(P, req(m, "/echo?agent=a1", body=b"{}"))) for m in ("SOURCE", "UNLINK")]
    report("SOURCE and UNLINK -> 405 (no aliasing of GET and DELETE)", st == [405, 405] and len(up.seen) == n0,
           f"statuses {st}, upstream saw {len(up.seen) - n0}")


def refused_requests(e):
    up, P = e.up, e.P
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
        # a red team's (issue 43): each was forwarded with the route's secret
        ("'#' after a dot segment (WHATWG stops there)", req("POST", "/api/..#/admin", body=b"{}"), 400),
        ("'%%' before hex (unquote twice: '..')", req("POST", "/api/%%32%65%%32%65/admin", body=b"{}"), 400),
        ("'%%2f..%%2f' spelt '%%' then hex", req("POST", "/api/%%32%66..%%32%66", body=b"{}"), 400),
        ("an encoded ';' after '..'", req("POST", "/api/..%3b/admin", body=b"{}"), 400),
        ("%u-encoded dots", req("POST", "/api/%u002e%u002e/admin", body=b"{}"), 400),
        ("a five-byte overlong '.'", req("POST", "/api/%f8%80%80%80%ae%f8%80%80%80%ae/admin", body=b"{}"), 400),
        ("dots encoded twice, in two steps", req("POST", "/api/%25%32%65%25%32%65/admin", body=b"{}"), 400),
        ("no Host", b"POST /echo?agent=a1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 400),
        ("foreign Origin", req("POST", "/echo?agent=a1", "Origin: http://evil.example\r\n", b"{}"), 403),
        ("64 KiB of headers", req("POST", "/echo?agent=a1", "".join(f"X-Pad-{i}: {'a' * 1000}\r\n" for i in range(64)), b"{}"), 431),
    ]
    for name, data, want in refusals:
        r = exchange(P, data)
        report(f"{name} -> {want}", status(r) == want and b"application/json" in r, f"status {status(r)}")
    report("no refused request reached the upstream", len(up.seen) == n0, f"upstream saw {len(up.seen) - n0}")


def misread_heads(e):
    up, P, w = e.up, e.P, e.w
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


def blank_line_first(e):
    up, P = e.up, e.P
    # a blank line before the request line: http-parser would skip it
    # and parse a head other than the one found, and the client's own
    # head would have gone upstream as body, and what came after it
    n0 = len(up.seen)
    r = exchange(P, b"\r\n\r\n" + req("POST", "/echo?agent=a1", body=b"GET /admin HTTP/1.1\r\nHost: e\r\n\r\n"))
    time.sleep(0.2)
    report("a blank line before the request line -> 400, nothing reaches the upstream",
           status(r) == 400 and len(up.seen) == n0, f"status {status(r)}, upstream saw {len(up.seen) - n0}")


def refused_target_with_tab(e):
    P = e.P
    # a target refused before its bytes are checked (no Host) is
    # logged with its blanks and control bytes as '?'
    r = exchange(P, b"GET /echo\tstatus=200\xff HTTP/1.1\r\n\r\n")
    report("a refused target with a tab: refused", status(r) in (400, 403), f"status {status(r)}")


def rpc_method_line_break(e):
    P = e.P
    # a JSON-RPC method with a line break cannot forge an audit line
    r = exchange(P, req("POST", "/echo?agent=a1", "Content-Type: application/json\r\n",
                        b'{"jsonrpc":"2.0","id":9,"method":"tools/list\\nward: bridge: route=forged status=200"}'))
    report("a JSON-RPC method with a line break is relayed", status(r) == 200, f"status {status(r)}")


def rpc_method_hidden(e):
    P = e.P
    # a method behind 4100 blanks, and a batch: each named in the audit line
    for body in (b" " * 4100 + b'{"jsonrpc":"2.0","id":3,"method":"resources/read"}',
                 b'[{"jsonrpc":"2.0","id":1,"method":"tools/call"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]'):
        r = exchange(P, req("POST", "/echo?agent=a1", "Content-Type: application/json\r\n", body))
        report(f"a JSON-RPC body of {len(body)} bytes is relayed", status(r) == 200, f"status {status(r)}")


def upstream_reset_mid_answer(e):
    ports = e.ports
    # an upstream that resets the connection mid-answer: the client gets
    # what came, and the audit line says the answer was cut
    r = exchange(ports["rst"], req("POST", "/rst", body=b"x" * 200000), timeout=5)
    report("an upstream reset mid-answer: the client gets what came", status(r) == 200 and b"partial" in r,
           f"status {status(r)}")


def bad_chunking(e):
    up, P = e.up, e.P
    # bad chunking: the head passes, the body does not; nothing more goes up
    n0 = len(up.seen)
    r = exchange(P, req("POST", "/echo?agent=a1", "Transfer-Encoding: chunked\r\n", b"zz\r\nhello\r\n0\r\n\r\n"))
    time.sleep(0.2)
    report("bad chunking: 400, nothing goes up", status(r) == 400 and len(up.seen) == n0,
           f"status {status(r)}, upstream requests {len(up.seen) - n0}")


def lenient_chunking(e):
    up, P = e.up, e.P
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


def bad_chunking_later_read(e):
    up, P = e.up, e.P
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


def pipelined_request(e):
    up, P = e.up, e.P
    # smuggling: a second request pipelined behind an allowed one never reaches the host
    n0 = len(up.seen)
    body = b'{"a":1}'
    r = exchange(P, req("POST", "/echo?agent=a1", body=body) + b"GET /admin HTTP/1.1\r\nHost: x\r\n\r\n"
                 + req("POST", "/echo?agent=a1", body=body))
    time.sleep(0.2)
    report("pipelined requests: exactly one relayed, one response", len(up.seen) - n0 == 1 and r.count(b"HTTP/1.1") == 1,
           f"upstream saw {len(up.seen) - n0}, client got {r.count(b'HTTP/1.1')} response(s)")


def spliced_body(e):
    up, P = e.up, e.P
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


def splice_seen_in_proc(e):
    P, w = e.P, e.w
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


def client_gone_mid_splice(e):
    up, P = e.up, e.P
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


def early_answer(e):
    up, ports, P = e.up, e.ports, e.P
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


def chunked_body(e):
    P = e.P
    # chunked request body forwarded exactly
    r = exchange(P, req("POST", "/echo?agent=a1", "Transfer-Encoding: chunked\r\n", b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"))
    report("chunked body forwarded as sent", status(r) == 200 and body_json(r)["body"] == "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
           f"status {status(r)}")


def sse_stream(e):
    up, ports = e.up, e.ports
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


def upstream_faults(e):
    ports = e.ports
    r = exchange(ports["down"], req("POST", "/down", body=b"{}"))
    report("upstream down -> 502", status(r) == 502, f"status {status(r)}")
    r = exchange(ports["die"], req("GET", "/die"))
    report("upstream dies mid-response: client gets what came, then EOF", r.endswith(b"partial") and status(r) == 200,
           f"got {len(r)} bytes")
    r = exchange(ports["garbage"], req("GET", "/garbage"))
    report("upstream answers garbage -> 502", status(r) == 502, f"status {status(r)}")


def close_delimited_cut(e):
    ports = e.ports
    # a body that only the connection's close ends: cut by the
    # upstream (a reset), the client must not see an orderly end
    r = exchange(ports["prefix"], req("POST", "/api/cut", body=b"u" * 300000))
    report("a close-delimited answer cut by the upstream: the client gets what came, then a reset",
           status(r) == 200 and r.endswith(b"data: partial\n\n<reset>"), f"ends {r[-30:]!r}")


def response_ends_and_heads(e):
    ports = e.ports
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


def backlog_burst(e):
    ports = e.ports
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


def bulk_bodies(e):
    ports = e.ports
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


def upstream_closes_while_held(e):
    up, ports, w = e.up, e.ports, e.w
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


def upstream_stops_reading(e):
    ports = e.ports
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


def stalled_upstream(e):
    up, ports, P = e.up, e.ports, e.P
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


def idle_and_slowloris(e):
    P = e.P
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


def connection_limit(e):
    up, ports, P = e.up, e.ports, e.P
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


def fd_limit(e):
    fd_limit_case(e.a, e.work, e.up)


def bridge_process(e):
    ports, P, w, N_PAD = e.ports, e.P, e.w, e.N_PAD
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


WIRE_CASES = (
    good_post,
    wrong_target_or_method,
    methods_past_bit_31,
    refused_requests,
    misread_heads,
    blank_line_first,
    refused_target_with_tab,
    rpc_method_line_break,
    rpc_method_hidden,
    upstream_reset_mid_answer,
    bad_chunking,
    lenient_chunking,
    bad_chunking_later_read,
    pipelined_request,
    spliced_body,
    splice_seen_in_proc,
    client_gone_mid_splice,
    early_answer,
    chunked_body,
    sse_stream,
    upstream_faults,
    close_delimited_cut,
    response_ends_and_heads,
    backlog_burst,
    bulk_bodies,
    upstream_closes_while_held,
    upstream_stops_reading,
    stalled_upstream,
    idle_and_slowloris,
    connection_limit,
    fd_limit,
    bridge_process,
)


def wire_cases(a, work):
    up = Upstream(os.path.join(work, "up.sock"))
    busy = BusyUpstream(os.path.join(work, "busy.sock"))
    secret = os.path.join(work, "token")
    with open(secret, "w") as f:
        f.write("Bearer route-secret\n")
    with open(secret + "-bare", "w") as f:  # a secret alone, its scheme written in the config
        f.write("bare-key\n")
    ports = {n: p for n, p in zip(["echo", "sse", "die", "garbage", "down", "prefix", "stall", "big", "busy",
                                   "early", "bulk", "hold", "mute", "fill", "rst"], range(17801, 17816))}
    conf = os.path.join(work, "bridge.conf")
    routes = f"[agent]\nuser = {AGENT_UID}\n"  # a route header's secret needs an agent that is not root
    for name, port in ports.items():
        upstream = {"down": f"unix:{work}/nobody-listens.sock", "busy": f"unix:{work}/busy.sock"}.get(
            name, f"unix:{up.path}")
        path = {"echo": "/echo?agent=a1", "prefix": "/api/"}.get(name, f"/{name}")
        extra = (f"header = Authorization: @{secret}\nheader = X-Api-Key: Token @{secret}-bare\n"
                 "header = X-Env-Key: Key ${WARD_T_ENV_KEY}\nhost = upstream.test:6767\n") if name == "echo" else ""
        routes += f"[route {name}]\nlisten = 127.0.0.1:{port}\nupstream = {upstream}\npath = {path}\n{extra}"
    # more routes than PID 1 once kept descriptors for across a bridge
    # restart, and than the bridge once kept listeners for (60)
    N_PAD = 60
    for i in range(N_PAD):
        routes += f"[route pad{i}]\nlisten = 127.0.0.1:{17920 + i}\nupstream = unix:{up.path}\npath = /pad{i}\n"
    with open(conf, "w") as f:
        f.write(routes)
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "300"], stderr=subprocess.PIPE,
                         env={**os.environ, "WARD_T_ENV_KEY": "env-secret-1"})
    wait_port(ports["echo"])
    P = ports["echo"]
    e = Wire(a=a, work=work, up=up, busy=busy, ports=ports, P=P, w=w, secret=secret, N_PAD=N_PAD)
    try:
        for case in WIRE_CASES:
            case(e)
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
    hidden = [l for l in err.splitlines() if "route=echo method=POST" in l and ("rpc=resources/read" in l or
                                                                             "rpc=tools/call,tools/list" in l)]
    report("the audit line names a JSON-RPC method behind 4100 blanks, and each method of a batch",
           len(hidden) == 2, hidden)
    report("ward exits with the agent's status after TERM", w.returncode == 143, f"rc {w.returncode}")
    if os.environ.get("BRIDGE_DEBUG"):
        print(err[-3000:])
