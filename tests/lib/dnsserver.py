"""A small authoritative DNS server for tests: A and AAAA records the test
sets and changes while it runs, NXDOMAIN for names it does not hold, names
it never answers (a resolver that is down, as the client sees it), over UDP
and TCP, and a count of the queries each name got.

    with DnsServer("127.0.0.1", 53) as dns:
        dns.set("provider.test", a=["127.0.0.2"], ttl=60)
        ...; dns.queries("provider.test")

Only what a stub resolver asks of its server: one question, class IN.
"""
import socket
import struct
import threading

A, AAAA = 1, 28


def _name(msg, off):
    """The question's name (no compression in a query) and where it ends."""
    labels = []
    while True:
        n = msg[off]
        off += 1
        if n == 0:
            return ".".join(labels).lower(), off
        if n & 0xC0:
            raise ValueError("compressed name in a question")
        labels.append(msg[off:off + n].decode("ascii", "replace"))
        off += n


class DnsServer:
    def __init__(self, addr="127.0.0.1", port=53):
        self.addr, self.port = addr, port
        self.records = {}  # name -> {"a": [...], "aaaa": [...], "ttl": N}
        self.silent = set()  # names never answered
        self.counts = {}
        self.lock = threading.Lock()
        self.stopping = False

    def set(self, name, a=(), aaaa=(), ttl=60):
        with self.lock:
            self.records[name.lower()] = {"a": list(a), "aaaa": list(aaaa), "ttl": ttl}

    def drop(self, name):
        with self.lock:
            self.silent.add(name.lower())

    def queries(self, name):
        with self.lock:
            return self.counts.get(name.lower(), 0)

    def answer(self, msg):
        """The response to one query, or None (not answered)."""
        if len(msg) < 12:
            return None
        qid, flags, qd = struct.unpack("!HHH", msg[:6])
        if qd != 1 or flags & 0x8000:
            return None
        name, off = _name(msg, 12)
        qtype, qclass = struct.unpack("!HH", msg[off:off + 4])
        question = msg[12:off + 4]
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + 1
            if name in self.silent:
                return None
            rec = self.records.get(name)
        rd = flags & 0x0100
        answers = []
        if rec is not None and qclass == 1:
            fam = {A: (socket.AF_INET, rec["a"]), AAAA: (socket.AF_INET6, rec["aaaa"])}.get(qtype)
            if fam:
                for addr in fam[1]:
                    data = socket.inet_pton(fam[0], addr)
                    answers.append(struct.pack("!HHHIH", 0xC00C, qtype, 1, rec["ttl"], len(data)) + data)
        rcode = 3 if rec is None else 0  # NXDOMAIN, or NOERROR (with no answer: NODATA)
        head = struct.pack("!HHHHHH", qid, 0x8400 | rd | 0x0080 | rcode, 1, len(answers), 0, 0)
        return head + question + b"".join(answers)

    def _udp(self):
        while not self.stopping:
            try:
                msg, peer = self.u.recvfrom(4096)
            except OSError:
                return
            try:
                out = self.answer(msg)
            except (ValueError, IndexError, struct.error):
                out = None
            if out:
                self.u.sendto(out, peer)

    def _tcp_one(self, c):
        with c:
            c.settimeout(5)
            try:
                while True:
                    head = c.recv(2)
                    if len(head) < 2:
                        return
                    n = struct.unpack("!H", head)[0]
                    msg = b""
                    while len(msg) < n:
                        more = c.recv(n - len(msg))
                        if not more:
                            return
                        msg += more
                    out = self.answer(msg)
                    if out:
                        c.sendall(struct.pack("!H", len(out)) + out)
            except (OSError, ValueError, IndexError, struct.error):
                return

    def _tcp(self):
        while not self.stopping:
            try:
                c, _ = self.t.accept()
            except OSError:
                return
            threading.Thread(target=self._tcp_one, args=(c,), daemon=True).start()

    def __enter__(self):
        fam = socket.AF_INET6 if ":" in self.addr else socket.AF_INET
        self.u = socket.socket(fam, socket.SOCK_DGRAM)
        self.u.bind((self.addr, self.port))
        self.t = socket.socket(fam, socket.SOCK_STREAM)
        self.t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.t.bind((self.addr, self.port))
        self.t.listen(16)
        for run in (self._udp, self._tcp):
            threading.Thread(target=run, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.stopping = True
        for s in (self.u, self.t):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
