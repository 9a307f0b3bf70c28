#!/usr/bin/python3
"""The egress proxy's throughput (#25): one 256 MiB download over TLS,
direct, through ward's proxy ([proxy], a CONNECT tunnel in the bridge) and
through sandbox-runtime's HTTP proxy (npm @anthropic-ai/sandbox-runtime,
its createHttpProxyServer, the proxy `srt` puts in front of a sandbox),
alternating, in one run; and through bare-relay (tests/bench/bare_relay.c
in its connect: mode, copying and splicing): the least a CONNECT proxy can
do, no rule, no lookup, no ClientHello read, a process per connection,
blocking reads into 256 KiB. That is the floor of any proxy here: what a
second hop costs on these machines.

Everything runs in a network namespace of its own (entered with `ip netns
exec`, its resolv.conf pointing at a DNS server of the test's): the server
is `openssl s_server -WWW` on 203.0.113.2:443 with a certificate of a test
CA for big.test, the client curl (`-o /dev/null`), which reports the time
and the bytes. Medians and spreads (p10..p90) of the seconds, MiB/s, ratios;
asserts nothing.

  proxy_bench.py --ward W --node NODE --bare-relay B [--runs 7] [--mib 256] [--out docs/benchmarks.md] [--json F]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from benchlib import tree, write_results  # noqa: E402

WARD_PORT, SRT_PORT, BARE_PORT, SPLICE_PORT = 17991, 17992, 17993, 17994


def spread(v):
    s = sorted(v)
    return s[len(s) // 10], s[min(len(s) - 1, len(s) * 9 // 10)]


def wait_port(port, seconds=20):
    import socket
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def cpu_s(pids):
    """user + system seconds of these processes so far."""
    t = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()
            t += int(st[11]) + int(st[12])
        except OSError:
            pass
    return t / os.sysconf("SC_CLK_TCK")


def child(a):
    """In the namespace: the runs, their samples as JSON on stdout."""
    from dnsserver import DnsServer
    from testca import make_certs
    work = a.child
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", "203.0.113.2/24", "dev", "lo"], check=True)
    certs = make_certs(work, ["big.test"])
    www = os.path.join(work, "www")
    os.makedirs(www)
    with open(os.path.join(www, "big"), "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(a.mib):
            f.write(chunk)
    procs = []
    with DnsServer("127.0.0.1", 53) as dns:
        dns.set("big.test", a=["203.0.113.2"], ttl=3600)
        try:
            procs.append(subprocess.Popen(["openssl", "s_server", "-quiet", "-WWW", "-accept", "203.0.113.2:443",
                                           "-cert", certs["big.test"][0], "-key", certs["big.test"][1]],
                                          cwd=www, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
            conf = os.path.join(work, "ward.conf")
            with open(conf, "w") as f:
                f.write(f"[agent]\nuser = 65533\n[ward]\nbridge_user = 65534\n[proxy]\nlisten = 127.0.0.1:{WARD_PORT}\n"
                        "allow = big.test\nmax_bytes = 0\n")
            procs.append(subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "3600"], stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            procs.append(subprocess.Popen([a.node, os.path.join(HERE, "srt", "proxy.mjs"), str(SRT_PORT), "big.test"],
                                          cwd=os.path.join(HERE, "srt"), stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, text=True))
            procs[-1].stdout.readline()
            procs.append(subprocess.Popen([a.bare_relay, str(BARE_PORT), "connect:203.0.113.2:443"]))
            procs.append(subprocess.Popen([a.bare_relay, str(SPLICE_PORT), "connect:203.0.113.2:443", "splice"]))
            if not all(wait_port(p) for p in (WARD_PORT, SRT_PORT, BARE_PORT, SPLICE_PORT)):
                raise SystemExit("proxy_bench: a proxy did not listen")
            variants = {"direct": [], "ward": ["--proxy", f"http://127.0.0.1:{WARD_PORT}"],
                        "sandbox-runtime": ["--proxy", f"http://127.0.0.1:{SRT_PORT}"],
                        "bare relay, copying": ["--proxy", f"http://127.0.0.1:{BARE_PORT}"],
                        "bare relay, splicing": ["--proxy", f"http://127.0.0.1:{SPLICE_PORT}"]}
            samples = {k: [] for k in variants}
            # the proxy's own CPU: ward's bridge (ward's children but the
            # agent's sleep), sandbox-runtime's node
            who = {"direct": [], "ward": [p for p in tree(procs[1].pid)[1:]
                                         if os.path.basename(os.readlink(f"/proc/{p}/exe")) != "sleep"],
                   "sandbox-runtime": [procs[2].pid], "bare relay, copying": [], "bare relay, splicing": []}
            cpu = {k: [] for k in variants}
            for i in range(a.runs + 1):  # the first round warms, untimed
                for k, extra in variants.items():
                    c0 = cpu_s(who[k])
                    r = subprocess.run(["curl", "-sS", "-o", "/dev/null", "--cacert", certs["ca"], "-w",
                                        "%{time_total} %{size_download} %{http_code}", *extra,
                                        "https://big.test/big"], capture_output=True, text=True, timeout=300)
                    t, size, code = r.stdout.split() if r.returncode == 0 else ("0", "0", "0")
                    if r.returncode != 0 or code != "200" or int(size) != a.mib << 20:
                        raise SystemExit(f"proxy_bench: {k}: rc {r.returncode} {r.stdout} {r.stderr[-300:]}")
                    if i:
                        samples[k].append(float(t))
                        cpu[k].append(cpu_s(who[k]) - c0)
        finally:
            for p in procs:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
    print(json.dumps({"seconds": samples, "proxy_cpu_s": cpu}))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--bare-relay", required=True, help="tests/bench/bare_relay.c, built: the floor of a proxy")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--out")
    ap.add_argument("--json")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.ward, a.node, a.bare_relay = os.path.abspath(a.ward), os.path.abspath(a.node), os.path.abspath(a.bare_relay)
    if a.child:
        return child(a)
    if not os.path.exists(os.path.join(HERE, "srt", "node_modules")) or not shutil.which("curl"):
        print("proxy_bench: SKIP: no tests/bench/srt/node_modules (npm ci there) or no curl")
        return 0
    ns = f"wardpbench{os.getpid() % 100000}"
    etc = f"/etc/netns/{ns}"
    work = tempfile.mkdtemp(prefix="ward-pbench-")
    os.chmod(work, 0o755)
    try:
        subprocess.run(["ip", "netns", "add", ns], check=True)
        os.makedirs(etc, exist_ok=True)
        with open(f"{etc}/resolv.conf", "w") as f:
            f.write("nameserver 127.0.0.1\n")
        p = subprocess.run(["ip", "netns", "exec", ns, sys.executable, os.path.abspath(__file__), "--ward", a.ward,
                            "--node", a.node, "--bare-relay", a.bare_relay, "--runs", str(a.runs), "--mib", str(a.mib), "--child", work],
                           capture_output=True, text=True, timeout=3600)
        if p.returncode != 0:
            raise SystemExit(f"proxy_bench: the child failed: {p.stdout[-500:]} {p.stderr[-1500:]}")
        got = json.loads(p.stdout.strip().splitlines()[-1])
        samples, cpu = got["seconds"], got["proxy_cpu_s"]
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        shutil.rmtree(etc, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in samples.items()}
    rate = {k: a.mib / m for k, m in med.items()}
    rows = "".join(f"| {k} | {med[k]:.3f} s ({spread(v)[0]:.3f}..{spread(v)[1]:.3f}) | {rate[k]:.0f} MiB/s | "
                   f"{rate[k] / rate['direct']:.2f}× | "
                   f"{'-' if k == 'direct' or k.startswith('bare') else format(statistics.median(cpu[k]), '.3f') + ' s'} |\n"
                   for k, v in samples.items())
    text = (f"\n## The egress proxy: a {a.mib} MiB download over TLS ({time.strftime('%Y-%m-%d')})\n\n"
            f"{a.runs} runs each, alternating, after one untimed round (tests/bench/proxy_bench.py): curl to "
            "`openssl s_server -WWW` on a name of the test's DNS, in a network namespace of its own; directly, through "
            "ward's `[proxy]` (a CONNECT tunnel in the bridge, its ClientHello checked) and through sandbox-runtime's "
            "HTTP proxy (npm @anthropic-ai/sandbox-runtime 0.0.83, `createHttpProxyServer`, the proxy `srt` puts in "
            "front of a sandbox, on the pinned Node 22). Median seconds (p10..p90), throughput, and throughput as a "
            "share of the direct one (the goal: ward at least 0.8×, and ahead of sandbox-runtime). The bare relay "
            "(tests/bench/bare_relay.c) is the least a CONNECT proxy can do, copying through 256 KiB or splicing, a "
            "process per connection, no check at all: the floor of any proxy on this machine, the cost of the second "
            "hop itself.\n\n"
            "| path | seconds | throughput | of direct | the proxy's CPU |\n|---|---|---|---|---|\n" + rows +
            f"\nward / sandbox-runtime: **{rate['ward'] / rate['sandbox-runtime']:.2f}×** the throughput; ward / the "
            f"bare relay: **{rate['ward'] / max(rate['bare relay, copying'], rate['bare relay, splicing']):.2f}×** "
            "the faster of its two.\n")
    write_results(text, a.out, a.json, got)
    return 0


if __name__ == "__main__":
    sys.exit(main())
