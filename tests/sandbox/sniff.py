#!/usr/bin/python3
"""sniff.py DEV: every frame that reaches DEV of the namespace it runs in,
read by an AF_PACKET socket (below UDP, ICMP, IGMP and MLD: nothing the
kernel drops before a socket could count it is missed); prints "ready",
then on end of stdin one JSON line: how many frames carried the egress
probe's marker ("ward-dgram-leak"), and how many named its multicast
groups (239.7.7.7, ff15::7777: the IGMP and MLD reports a join sends)."""
import json
import select
import socket
import sys

ETH_P_ALL = 0x0003
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
s.bind((sys.argv[1], 0))
MARKER = b"ward-dgram-leak"
G4 = socket.inet_pton(socket.AF_INET, "239.7.7.7")
G6 = socket.inet_pton(socket.AF_INET6, "ff15::7777")
got = {"frames": 0, "marker": 0, "igmp": 0, "mld": 0}
print("ready", flush=True)
while True:
    r, _, _ = select.select([s, sys.stdin], [], [])
    if s in r:
        f = s.recv(65536)
        got["frames"] += 1
        got["marker"] += MARKER in f
        got["igmp"] += G4 in f
        got["mld"] += G6 in f
    if sys.stdin in r:
        # what is still queued, then the count
        s.setblocking(False)
        try:
            while True:
                f = s.recv(65536)
                got["frames"] += 1
                got["marker"] += MARKER in f
                got["igmp"] += G4 in f
                got["mld"] += G6 in f
        except BlockingIOError:
            pass
        break
print(json.dumps(got), flush=True)
