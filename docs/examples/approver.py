#!/usr/bin/python3
"""An approver for ward's egress proxy ([proxy] ask; docs/approver.md): it
listens on a unix socket outside the sandbox, which the bridge connects to,
prints each question and answers it.

  approver.py SOCKET [--policy FILE] [--bridge-uid UID] [--answer WORD]

SOCKET is made mode 0600 (owned by --bridge-uid when given: the bridge
connects as its own user, ward-bridge (999) in the image). Each question is printed as
one line; the answer is read from this program's stdin, one line each:

  once | session [SCOPE] | always [SCOPE] | deny

SCOPE is the host (the default) or *.SUFFIX covering it. `always` is also
written to --policy FILE (JSON lines), and a question that FILE covers is
answered `always` at once, so the next start does not ask again. --answer
WORD answers every question WORD without reading stdin.

Mount SOCKET into the container where the agent has no path, e.g.
  docker run -v /run/me/approver:/run/ward/approver -e
  WARD_PROXY_ASK=unix:/run/ward/approver/approver.sock ...
(the directory, not the socket: a socket made again after the container
started is then seen).

Also importable: Approver(path, answer) runs the same protocol on a thread,
answer(question) -> dict or None (no answer: the bridge's timeout decides).
"""
import argparse
import json
import os
import socket
import sys
import threading


def covers(scope, host):
    """Whether SCOPE (a name, or *.SUFFIX) covers host, as the bridge judges."""
    scope, host = scope.lower().rstrip("."), host.lower().rstrip(".")
    if scope.startswith("*."):
        return host.endswith(scope[1:]) and len(host) > len(scope) - 1
    return scope == host


class Approver:
    """The approver's side of the protocol: one listening socket, each
    bridge connection read line by line; questions go to answer()."""

    def __init__(self, path, answer, bridge_uid=None, mode=0o600):
        self.path, self.answer = path, answer
        self.questions, self.settled, self.hellos, self.conns = [], [], [], []
        self.lock = threading.Lock()
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        os.chmod(path, mode)
        if bridge_uid is not None:
            os.chown(path, bridge_uid, -1)
        self.sock.listen(8)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        f = c.makefile("rb")
        for line in f:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            kind = m.get("type")
            with self.lock:
                if kind == "hello":
                    self.hellos.append(m)
                elif kind == "settled":
                    self.settled.append(m)
                elif kind == "question":
                    self.questions.append(m)
            if kind == "question":
                threading.Thread(target=self._decide, args=(c, m), daemon=True).start()

    def _decide(self, c, q):
        a = self.answer(q)
        if a is None:
            return
        self.send(c, dict(a, id=q["id"]))

    def send(self, c, msg):
        """One answer line ({"id":..., "answer":..., "scope":...})."""
        try:
            c.sendall((json.dumps(msg) + "\n").encode())
        except OSError:
            pass

    def drop_connections(self):
        """Closes the bridge's connections (as an approver that died)."""
        with self.lock:
            for c in self.conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                c.close()
            self.conns = []

    def close(self):
        self.drop_connections()
        self.sock.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass


def load_policy(path):
    """The scopes answered `always` before: [{"scope":..., "port":...}]."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                    if isinstance(e.get("scope"), str) and isinstance(e.get("port"), int):
                        out.append(e)
                except ValueError:
                    pass
    except FileNotFoundError:
        pass
    return out


def main():
    ap = argparse.ArgumentParser(description="an approver for ward's [proxy] ask")
    ap.add_argument("socket")
    ap.add_argument("--policy")
    ap.add_argument("--bridge-uid", type=int)
    ap.add_argument("--answer", choices=["once", "session", "always", "deny"])
    a = ap.parse_args()
    stdin_lock = threading.Lock()

    def answer(q):
        host, port = q["host"], q["port"]
        if a.policy:
            for e in load_policy(a.policy):
                if e["port"] == port and covers(e["scope"], host):
                    return {"answer": "always", "scope": e["scope"]}
        with stdin_lock:
            # the host is a DNS name the bridge parsed: letters, digits, '-', '.'
            print(f"ward asks: {q['kind']} {host}:{port}  (once | session [SCOPE] | always [SCOPE] | deny)",
                  flush=True)
            words = [a.answer] if a.answer else sys.stdin.readline().split()
        if not words:
            return {"answer": "deny"}
        word, scope = words[0], (words[1] if len(words) > 1 else host)
        if word in ("session", "always"):
            if not covers(scope, host):
                print(f"approver: {scope} does not cover {host}: denied", flush=True)
                return {"answer": "deny"}
            if word == "always" and a.policy:
                with open(a.policy, "a") as f:
                    f.write(json.dumps({"scope": scope, "port": port}) + "\n")
            return {"answer": word, "scope": scope}
        return {"answer": word if word in ("once", "deny") else "deny"}

    Approver(a.socket, answer, a.bridge_uid)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
