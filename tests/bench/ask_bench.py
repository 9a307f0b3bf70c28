#!/usr/bin/python3
"""[proxy] ask: what a question costs. Side by side in one run:

- from the approver's answer to the tunnel's 200 at the client: the
  answer read, the name looked up (a DNS server of the benchmark's), the
  server connected, the 200 sent; each CONNECT a new name, so a question
  each (the example approver, docs/examples/approver.py, answering `once`
  at once; the time is taken as it hands its answer over);
- from the request to its question at the approver: the bridge's hold,
  and PID 1 naming the process that asked (common/who.h: one sock_diag
  lookup and a look through /proc as the agent's user; the benchmark's
  client is no process of the agent's, so every process is looked at);
- a CONNECT to a host an allow rule names, which needs no question, to
  the 200: through a ward with `ask` set and through one without it,
  alternating (what holding requests costs the requests that are not held).

  ask_bench.py --ward build/ward [--n 300] [--out F] [--json F]

In a network namespace of its own; the server a plain TCP listener on
203.0.113.2:443 (the 200 comes once it accepted). Milliseconds; nothing
is asserted.
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "docs", "examples"))
from benchlib import pct, row, run_child_in_netns, wait_port, write_results  # noqa: E402

ASK_PORT, PLAIN_PORT = 17981, 17982


def connect_200(port, target):
    """A CONNECT's answer head: (status, the time it arrived)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    got = b""
    while b"\r\n\r\n" not in got:
        b = s.recv(4096)
        if not b:
            break
        got += b
    t = time.monotonic()
    s.close()
    return int(got.split(b" ", 2)[1]) if got.startswith(b"HTTP/1.1 ") else 0, t


def child(a):
    from approver import Approver
    from dnsserver import DnsServer
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", "203.0.113.2/32", "dev", "lo"], check=True)
    work = tempfile.mkdtemp(prefix="ward-askbench-")
    os.chmod(work, 0o755)
    lst = socket.socket()
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(("203.0.113.2", 443))
    lst.listen(1024)

    def serve():
        while True:
            try:
                c, _ = lst.accept()
                c.close()
            except OSError:
                return
    threading.Thread(target=serve, daemon=True).start()
    answered = {}

    def answer(q):
        answered[q["host"]] = time.monotonic()
        return {"answer": "once"}
    sock = os.path.join(work, "approver.sock")
    appr = Approver(sock, answer, 65534)
    procs = []
    try:
        with DnsServer("127.0.0.1", 53) as dns:
            dns.set("allowed.test", a=["203.0.113.2"], ttl=3600)
            for i in range(a.n):
                dns.set(f"q{i}.test", a=["203.0.113.2"], ttl=3600)
            for port, extra in ((ASK_PORT, f"ask = unix:{sock}\nask_timeout = 60\nask_rate = 1000\n"), (PLAIN_PORT, "")):
                conf = os.path.join(work, f"{port}.conf")
                with open(conf, "w") as f:
                    # an agent's user of its own: the egress guard is on, as
                    # in the image, and PID 1 names who asked
                    f.write(f"[agent]\nuser = 4242\n[landlock]\nread = /usr /etc /lib /lib64 /bin\n[proxy]\nlisten = 127.0.0.1:{port}\nallow = allowed.test\n{extra}")
                p = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "3600"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                procs.append(p)
                wait_port(port, p)
            for port in (ASK_PORT, PLAIN_PORT):  # names cached, connections warm
                for _ in range(20):
                    connect_200(port, "allowed.test:443")
            held, to_question, with_ask, without = [], [], [], []
            # the requests that need no question, alternating, each ward
            # first in turn (before any question: both bridges alike but
            # for ask)
            for i in range(a.n):
                pair = ((ASK_PORT, with_ask), (PLAIN_PORT, without))
                for port, into in pair if i % 2 else pair[::-1]:
                    t0 = time.monotonic()
                    st, t200 = connect_200(port, "allowed.test:443")
                    if st == 200:
                        into.append((t200 - t0) * 1000)
            for i in range(a.n):
                t0 = time.monotonic()
                st, t200 = connect_200(ASK_PORT, f"q{i}.test:443")
                if st == 200 and f"q{i}.test" in answered:
                    held.append((t200 - answered[f"q{i}.test"]) * 1000)
                    to_question.append((answered[f"q{i}.test"] - t0) * 1000)
    finally:
        for p in procs:
            p.terminate()
            p.wait()
        appr.close()
        lst.close()
        shutil.rmtree(work, ignore_errors=True)
    import json
    print(json.dumps({"answer_to_200": held, "request_to_question": to_question, "allowed_with_ask": with_ask,
                      "allowed_without_ask": without}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--out")
    ap.add_argument("--json")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.ward = os.path.abspath(a.ward)
    if a.child:
        return child(a)
    res = run_child_in_netns("wardab", __file__, ["--ward", a.ward, "--n", str(a.n)], 900)
    h, w, wo = res["answer_to_200"], res["allowed_with_ask"], res["allowed_without_ask"]
    rq = res["request_to_question"]
    lines = ["\n## Asking: what a question costs ([proxy] ask)\n",
             f"tests/bench/ask_bench.py, {len(h)} questions: from the approver's answer (the example approver, "
             "answering `once` at once on its unix socket) to the tunnel's 200 at the client, the name looked up "
             "after the answer (a DNS server of the benchmark's) and the server connected; and from the request to "
             "its question at the approver (the hold, and PID 1 naming who asked: a sock_diag lookup and a look "
             "through /proc as the agent's user, every process looked at, since the benchmark's client is none of "
             "the agent's). And a CONNECT to a "
             "host an allow rule names (no question) to its 200, through a ward with `ask` set and one without, "
             f"alternating (each first in turn), before the questions, {len(w)} each. In a network namespace; milliseconds.\n",
             "| | p50 | p99 | min | max |", "|---|---|---|---|---|",
             row("answer to 200", h, None, 3),
             row("request to question", rq, None, 3),
             "\n| allowed host, no question | p50 | p99 | min | max | p50 ratio | p99 ratio |",
             "|---|---|---|---|---|---|---|",
             row("without ask", wo, wo, 3), row("with ask", w, wo, 3),
             f"\nFrom an answer to the open tunnel: {statistics.median(h):.2f} ms at p50, {pct(h, 0.99):.2f} ms at "
             f"p99 (the goal: under 5 ms). From a request to its question: {statistics.median(rq):.2f} ms at p50, "
             f"{pct(rq, 0.99):.2f} ms at p99. A request that needs no question: "
             f"{statistics.median(w) / statistics.median(wo):.2f}× at p50 and {pct(w, 0.99) / pct(wo, 0.99):.2f}× at "
             "p99 with `ask` set (the goal: unchanged within noise).\n"]
    write_results("\n".join(lines) + "\n", a.out, a.json, res)


if __name__ == "__main__":
    main()
