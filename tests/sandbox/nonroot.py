"""ward started without root (#24), as Kubernetes' restricted pods, OpenShift
and `docker run --user` start it: uid AGENT_UID with every capability set
empty and no_new_privs, as setpriv makes it. The agent then shares ward's and
the bridge's uid; what must still hold is checked from the kernel:

  - from the agent: ward's and the bridge's /proc/PID/environ and mem
    refused (not dumpable: the kernel makes them root's), kill() of ward
    and of the bridge refused (Landlock's signal scope, added by ward), the
    bridge's secret file refused (outside the agent's rules, though its
    uid owns it);
  - through the bridge: the secret arrives at the upstream as a header;
  - the evidence says how ward started and what is weaker; --check too;
  - an OpenShift start: an arbitrary uid without a passwd entry, gid 0.
"""
import json
import os
import socket
import subprocess
import tempfile
import threading

from results import report

SETPRIV = ["setpriv", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]


def unprivileged(uid, gid):
    """setpriv's words: uid:gid, no group, no capability in any set, NNP"""
    return SETPRIV[:1] + [f"--reuid={uid}", f"--regid={gid}"] + SETPRIV[1:] + ["--"]


class Upstream:
    """A TCP server that answers each request with the headers it got."""

    def __init__(self):
        self.s = socket.socket()
        self.s.bind(("127.0.0.1", 0))
        self.s.listen(8)
        self.port = self.s.getsockname()[1]
        self.seen = []
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                c, _ = self.s.accept()
            except OSError:
                return
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = c.recv(4096)
                if not chunk:
                    break
                data += chunk
            self.seen.append(data.decode(errors="replace"))
            body = b"upstream-ok\n"
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
            c.close()

    def close(self):
        self.s.close()


# the agent's checks (bash): ward is its parent, the bridge and the guard
# ward's other children (/proc/PID/stat stays readable to all)
AGENT = r'''
W=$PPID SECRET=$1 PORT=$2
kids=""
for s in /proc/[0-9]*/stat; do
	read -r pid comm state ppid rest < "$s" 2>/dev/null || continue
	[ "$ppid" = "$W" ] && [ "$pid" != "$$" ] && kids="$kids $pid"
done
echo "ward-children:$kids"
for p in $W $kids; do
	if cat /proc/$p/environ >/dev/null 2>&1; then echo "environ-$p-read"; else echo "environ-$p-refused"; fi
	if (exec 4</proc/$p/mem) 2>/dev/null; then echo "mem-$p-opened"; else echo "mem-$p-refused"; fi
	if kill -0 $p 2>/dev/null; then echo "signal-$p-sent"; else echo "signal-$p-refused"; fi
done
if cat "$SECRET" >/dev/null 2>&1; then echo secret-read; else echo secret-refused; fi
exec 3<>/dev/tcp/127.0.0.1/$PORT && printf 'GET /v1/x HTTP/1.0\r\nHost: x\r\n\r\n' >&3 && cat <&3
'''


def nonroot(a, agent_uid):
    d = tempfile.mkdtemp(prefix="ward-nonroot-")
    os.chmod(d, 0o755)
    up = Upstream()
    try:
        cases(a, d, agent_uid, up)
    finally:
        up.close()
        subprocess.run(["rm", "-rf", d])


def write_conf(d, uid, up_port, extra_agent=""):
    rw, secret = os.path.join(d, "rw"), os.path.join(d, "secret")
    conf = os.path.join(d, f"ward-{uid}.conf")
    with open(conf, "w") as f:
        f.write(f"""[ward]
evidence = {rw}/evidence.json
[agent]
user = {uid}
env = PATH=/usr/bin:/bin
{extra_agent}
[landlock]
mode = hard_requirement
read = /usr /proc {d}/ro
write = {rw} /dev/null
[seccomp]
mode = default
[route model]
listen = 127.0.0.1:7611
upstream = tcp:127.0.0.1:{up_port}
path = /v1/
header = X-Key: @{secret}/key
""")
    return conf


def cases(a, d, uid, up):
    ro, rw, secret = (os.path.join(d, x) for x in ("ro", "rw", "secret"))
    for x in (ro, rw, secret):
        os.makedirs(x)
    with open(os.path.join(secret, "key"), "w") as f:
        f.write("nonroot-secret-7741\n")
    # the agent's uid owns the secret and the tree: only Landlock keeps it out
    subprocess.run(["chown", "-R", f"{uid}:{uid}", rw, secret], check=True)
    os.chmod(os.path.join(secret, "key"), 0o600)
    conf = write_conf(d, uid, up.port)
    os.chmod(conf, 0o644)
    script = os.path.join(ro, "agent.sh")
    with open(script, "w") as f:
        f.write(AGENT)

    # ward, the bridge and the guard from the agent; the secret; the route
    w = subprocess.Popen(unprivileged(uid, uid) + [a.ward, "--evidence", "-c", conf, "--", "/bin/bash", script,
                                                   os.path.join(secret, "key"), "7611"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=rw)
    out, err = w.communicate(timeout=60)
    lines = out.split()
    kids = next((l for l in out.splitlines() if l.startswith("ward-children:")), "")
    n_kids = len(kids.split()) - 1
    refused = [l for l in lines if l.endswith("-refused")]
    granted = [l for l in lines if l.endswith("-read") or l.endswith("-sent") or l.endswith("-opened")]
    report("nonroot: from the agent (same uid): ward's and the bridge's /proc environ and mem refused, "
           "and signals to them (Landlock's scope, added without root)",
           w.returncode == 0 and n_kids >= 1 and not granted and len(refused) == 3 * (n_kids + 1) + 1,
           f"{kids}; granted {granted}; refused {len(refused)}; rc {w.returncode}; {err[-300:]}")
    report("nonroot: the bridge's secret file, the agent's uid's own, refused to the agent (outside its rules)",
           "secret-refused" in lines, out[-200:])
    got = up.seen[-1] if up.seen else ""
    report("nonroot: the bridge sends the secret to the upstream; the agent gets the answer",
           "upstream-ok" in out and "X-Key: nonroot-secret-7741" in got.replace("x-key", "X-Key"), got[:200])
    ev = next((json.loads(l) for l in err.splitlines() if l.startswith("{")), None)
    start = (ev or {}).get("start", {})
    report("nonroot: the evidence says ward started without root, as uid N, the separation by one uid, and "
           "ward's /proc environ is root's (not dumpable)",
           bool(ev) and start.get("root") is False and start.get("uid") == uid
           and start.get("ward_environ_owner") == 0 and "one uid" in start.get("separation", "")
           and any(x.startswith("start: without root") for x in ev.get("degradations", []))
           and ev["agent"].get("Uid", "").split()[0] == str(uid), json.dumps(start))

    # --check, without root: what a start would do, and what is weaker
    p = subprocess.run(unprivileged(uid, uid) + [a.ward, "--check", "-c", conf], capture_output=True, text=True,
                       timeout=60)
    report("nonroot: --check says the start is without root and what is weaker",
           p.returncode == 0 and "without root" in p.stdout and "share one uid" in p.stdout, p.stdout[-600:])

    # OpenShift: an arbitrary uid that passwd does not know, gid 0
    ouid = 1000680000
    subprocess.run(["chown", "-R", f"{ouid}:0", rw, secret], check=True)
    conf2 = write_conf(d, ouid, up.port)
    p = subprocess.run(unprivileged(ouid, 0) + [a.ward, "--evidence", "-c", conf2, "--", "/bin/sh", "-c",
                                                "id -u; id -g; cat /proc/self/status | grep -E '^(NoNewPrivs|Seccomp):'"],
                       capture_output=True, text=True, timeout=60, cwd=rw)
    report("nonroot: OpenShift's start (uid 1000680000, no passwd entry, gid 0): the agent confined as that uid",
           p.returncode == 0 and p.stdout.split()[:2] == [str(ouid), "0"] and "NoNewPrivs:\t1" in p.stdout
           and "Seccomp:\t2" in p.stdout, f"rc {p.returncode}: {p.stdout!r} {p.stderr[-300:]}")
