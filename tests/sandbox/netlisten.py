#!/usr/bin/python3
"""netlisten.py PORT...: TCP and UDP listeners on every address (IPv4 and
IPv6) of the namespace it runs in, on each PORT; prints "ready", then on
end of stdin one JSON line of what arrived: connections, bytes, datagrams."""
import json
import select
import socket
import sys

socks = []
for port in map(int, sys.argv[1:]):
    for fam, host in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
            s = socket.socket(fam, kind)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if fam == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind((host, port))
            if kind == socket.SOCK_STREAM:
                s.listen(256)
            socks.append(s)
got = {"connections": 0, "bytes": 0, "datagrams": 0}
conns = []
print("ready", flush=True)
while True:
    r, _, _ = select.select(socks + conns + [sys.stdin], [], [])
    if sys.stdin in r:
        break
    for s in r:
        if s in conns:
            try:
                d = s.recv(65536)
            except OSError:
                d = b""
            got["bytes"] += len(d)
            if not d:
                conns.remove(s)
                s.close()
        elif s.type == socket.SOCK_STREAM:
            c, _ = s.accept()
            got["connections"] += 1
            conns.append(c)
        else:
            d, _ = s.recvfrom(65536)
            got["datagrams"] += 1
            got["bytes"] += len(d)
print(json.dumps(got), flush=True)
