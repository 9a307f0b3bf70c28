"""Helpers shared by the bench scripts: process trees and their memory,
the relay set-up the bridge benchmarks compare (an upstream on a unix
socket, socat in front of it, a ward route in front of it), and writing
a script's results (markdown appended to the report, JSON for the plots).
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def tree(pid):
    """pid and all its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            todo += [int(c) for c in open(f"/proc/{p}/task/{p}/children").read().split()]
        except OSError:
            pass
    return out


def rss_kb(pids):
    total = 0
    for p in pids:
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


class Relays:
    """An upstream (Python source run with the socket path as argv[1]) on a
    unix socket; socat TCP-LISTEN:socat_port,fork -> it; ward running a
    [route] on ward_port -> it (extra_conf: more of ward's config, e.g. a
    second route). stop() ends them all."""

    def __init__(self, ward, upstream_code, socat_port, ward_port, prefix="ward-bench-", backlog=1024,
                 upstream_args=(), bare=None, extra_conf=""):
        self.work = tempfile.mkdtemp(prefix=prefix)
        os.chmod(self.work, 0o755)
        self.sock = os.path.join(self.work, "up.sock")
        self.up = subprocess.Popen([sys.executable, "-c", upstream_code, self.sock, *upstream_args])
        while not os.path.exists(self.sock):
            time.sleep(0.01)
        self.socat = subprocess.Popen([
            "socat", f"TCP-LISTEN:{socat_port},bind=127.0.0.1,reuseaddr,fork,backlog={backlog}",
            f"UNIX-CONNECT:{self.sock}"])
        # bare: (the bare-relay binary, its port[, "splice"]) each, the floor of any relay
        self.bare = [subprocess.Popen([b[0], str(b[1]), self.sock, *b[2:]]) for b in bare or ()]
        conf = os.path.join(self.work, "w.conf")
        with open(conf, "w") as f:
            f.write(f"[ward]\nlog_level = warn\n[route bench]\nlisten = 127.0.0.1:{ward_port}\n"
                    f"upstream = unix:{self.sock}\npath = /\nmethods = POST GET\n{extra_conf}")
        self.ward = subprocess.Popen([ward, "-c", conf, "--", "sleep", "3600"])
        time.sleep(0.5)

    def bridge_pids(self):
        return [p for p in tree(self.ward.pid) if open(f"/proc/{p}/comm").read().strip() == "ward-bridge"]

    def socat_pids(self):
        return tree(self.socat.pid)

    def stop(self):
        self.ward.send_signal(signal.SIGTERM)
        self.ward.wait(timeout=20)
        self.socat.terminate()
        for b in self.bare:
            b.terminate()
        self.up.terminate()
        subprocess.run(["rm", "-rf", self.work])


def wait_port(port, proc, tries=500):
    """127.0.0.1:port accepting, or RuntimeError (with ward's stderr if
    proc, its process, ended first)."""
    import socket
    for _ in range(tries):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"ward exited {proc.returncode}: {proc.stderr.read()[-800:]}")
            time.sleep(0.02)
    raise RuntimeError(f"port {port} never answered")


def pct(v, q):
    """The q-quantile of v (nearest rank)."""
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def row(k, v, base=None, digits=2):
    """A markdown row: p50, p99, min, max of v, and with base the p50 and
    p99 ratios to it."""
    import statistics
    f = f"{{:.{digits}f}}"
    r = f"| {k} | {f.format(statistics.median(v))} | {f.format(pct(v, 0.99))} | {f.format(min(v))} | {f.format(max(v))} |"
    if base is not None:
        r += f" {statistics.median(v) / statistics.median(base):.2f}× | {pct(v, 0.99) / pct(base, 0.99):.2f}× |"
    return r


def write_results(text, md=None, json_path=None, data=None):
    """Prints the markdown, appends it to md, writes data as JSON."""
    print(text)
    if md:
        with open(md, "a") as f:
            f.write(text)
    if json_path:
        os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
        with open(json_path, "w") as f:
            json.dump(data, f)


def run_child_in_netns(prefix, script, args, timeout):
    """Runs `python3 SCRIPT --child ARGS` in a network namespace of its own
    whose resolv.conf names 127.0.0.1 (the child's DNS server); returns
    the JSON of its last line of output. The namespace goes after."""
    ns = f"{prefix}{os.getpid() % 100000}"
    etc = f"/etc/netns/{ns}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        os.makedirs(etc, exist_ok=True)
        with open(f"{etc}/resolv.conf", "w") as f:
            f.write("nameserver 127.0.0.1\n")
        out = subprocess.run(["ip", "netns", "exec", ns, sys.executable, os.path.abspath(script), "--child", *args],
                             capture_output=True, text=True, timeout=timeout)
        if out.returncode:
            raise RuntimeError(out.stderr[-2000:])
        return json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["rm", "-rf", etc], capture_output=True)
