"""Two network namespaces joined by a veth pair, each with a default route
to the other: "inside" is where ward runs (as under docker's default
network or a pod's), "outside" stands for the internet. Private addresses
only; nothing leaves the machine.

    with RoutedPair("wg") as n:
        n.run_inside([...]); n.counters("outside")
"""
import os
import subprocess

IN4, OUT4 = "10.201.0.1", "10.201.0.2"
IN6, OUT6 = "fd42:201::1", "fd42:201::2"


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True)


class Lone:
    """One namespace with lo only, and sysctls of its own (its ephemeral
    port range)."""

    def __init__(self, prefix, sysctls=()):
        self.ns = f"{prefix}{os.getpid() % 100000}"
        self.sysctls = sysctls

    def __enter__(self):
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
        _ip("netns", "add", self.ns)
        _ip("-n", self.ns, "link", "set", "lo", "up")
        for kv in self.sysctls:
            subprocess.run(self.cmd(["sysctl", "-qw", kv]), check=True, capture_output=True)
        return self

    def __exit__(self, *exc):
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)

    def cmd(self, argv):
        return ["ip", "netns", "exec", self.ns, *argv]


class RoutedPair:
    def __init__(self, prefix):
        tag = f"{prefix}{os.getpid() % 100000}"
        self.inside, self.outside = f"{tag}i", f"{tag}o"

    def __enter__(self):
        for ns in (self.inside, self.outside):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            _ip("netns", "add", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", self.inside, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1")
        _ip("-n", self.inside, "link", "set", "veth1", "netns", self.outside)
        for ns, dev, a4, a6, gw4, gw6 in ((self.inside, "veth0", IN4, IN6, OUT4, OUT6),
                                           (self.outside, "veth1", OUT4, OUT6, IN4, IN6)):
            _ip("-n", ns, "addr", "add", a4 + "/24", "dev", dev)
            _ip("-n", ns, "addr", "add", a6 + "/64", "dev", dev, "nodad")
            _ip("-n", ns, "link", "set", dev, "up")
        _ip("-n", self.inside, "route", "add", "default", "via", OUT4)
        _ip("-n", self.inside, "-6", "route", "add", "default", "via", OUT6)
        return self

    def __exit__(self, *exc):
        for ns in (self.inside, self.outside):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)

    def cmd(self, ns, argv):
        return ["ip", "netns", "exec", ns, *argv]

    def counters(self, ns):
        """The kernel's own counts of what that namespace received."""
        out = subprocess.run(self.cmd(ns, ["nstat", "-asz"]), capture_output=True, text=True).stdout
        c = {}
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 2 and f[1].isdigit():
                c[f[0]] = int(f[1])
        return c

    def netns_inode(self, ns):
        return os.stat(f"/run/netns/{ns}").st_ino
