"""--check and the refusals a config gets before anything starts."""
import os
import socket
import subprocess

import kernel  # noqa: E402
from results import report  # noqa: E402
from harness import AGENT_UID  # noqa: E402


def check_case(a, work):
    """--check refuses what a start would refuse: a bridge user that does
    not resolve, or that is the agent's."""
    for label, extra, want in (("a bridge_user that does not exist", "bridge_user = nosuchuser-ward\n", "no such user"),
                               ("the agent's uid as bridge_user", f"bridge_user = {AGENT_UID}\n", "a uid of its own")):
        conf = os.path.join(work, "check.conf")
        with open(conf, "w") as f:
            f.write(f"[ward]\n{extra}[agent]\nuser = {AGENT_UID}\n"
                    "[route c]\nlisten = 127.0.0.1:17893\nupstream = unix:/nonexistent.sock\npath = /x\n")
        p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, timeout=20)
        err = p.stderr.decode().strip().splitlines()
        report(f"--check with {label}: exit 2, as a start", p.returncode == 2 and err and want in err[-1],
               f"rc {p.returncode}: {err[-1] if err else ''}")
    # --check --ini is read back as it was written: quoted words (a blank,
    # a quote), a command longer than a line on continuation lines, the
    # start directory, no scope and the defaults as comments, no [agent]
    # where the file has none (the section alone changes the start)
    flags = "\n    ".join(" ".join(f"--flag-{i:02d}=value" for i in range(j, j + 8)) for j in (0, 8, 16))
    blank = os.path.join(work, "with blank")
    os.makedirs(blank, exist_ok=True)
    for label, text in (
            ("[agent] with quoted words", f"[ward]\nevidence = {work}/ini-ev.json\n[agent]\nuser = {AGENT_UID}\n"
             f"command = sh -c 'echo \"it'\\''s\" here' ''\n    {flags}\nenv = A=1\n[landlock]\nmode = best_effort\n"
             f"read = /usr '{blank}'\nwrite = /tmp\n[seccomp]\n"),
            ("no [agent]", "[supervise]\ngrace = 3s\n")):
        conf = os.path.join(work, "ini.conf")
        with open(conf, "w") as f:
            f.write(text)
        p1 = subprocess.run([a.ward, "-c", conf, "--check", "--ini"], capture_output=True, text=True, timeout=20)
        with open(conf + "2", "w") as f:
            f.write(p1.stdout)
        p2 = subprocess.run([a.ward, "-c", conf + "2", "--check", "--ini"], capture_output=True, text=True,
                            timeout=20)
        body1, body2 = p1.stdout.split("\n", 1)[-1], p2.stdout.split("\n", 1)[-1]  # the first names the file
        ok = p1.returncode == 0 and p2.returncode == 0 and body1 == body2 and \
            (("command = sh -c 'echo \"it'\\''s\" here' ''" in body1 and f"read = '{blank}'" in body1 and
              "; scope: none" in body1 and max(len(l) for l in body1.splitlines()) <= 198)
             if "quoted" in label else "\n[agent]" not in body1)
        report(f"--check --ini ({label}) reads back as the same settings", ok,
               f"rc {p1.returncode}/{p2.returncode}" + ("" if ok else f"\n{p1.stdout}{p1.stderr}\n{p2.stderr}"))
    # headers in clear are warned about off this machine only: tcp:localhost is loopback
    conf = os.path.join(work, "clear.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT_UID}\n"
                "[route m]\nlisten = 127.0.0.1:17950\nupstream = tcp:localhost:8080\npath = /v1/\nheader = A: b\n"
                "[route n]\nlisten = 127.0.0.1:17951\nupstream = tcp:10.1.2.3:8080\npath = /v1/\nheader = A: b\n")
    p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, text=True, timeout=20)
    clear = [l for l in p.stdout.splitlines() if "in clear" in l]
    report("--check: headers in clear warned about for a remote tcp: upstream, not for tcp:localhost",
           p.returncode == 0 and len(clear) == 1 and "[route n]" in clear[0], f"rc {p.returncode}: {clear}")
    # a secret on a descriptor that has no more for now (a non-blocking
    # pipe whose writer is still open): an error, not the part that came
    r, w = os.pipe()
    os.write(w, b"Bearer par")
    os.set_blocking(r, False)
    conf = os.path.join(work, "check-secret.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT_UID}\ncommand = true\n[route c]\nlisten = 127.0.0.1:17893\n"
                f"upstream = unix:/nonexistent.sock\npath = /x\nheader = Authorization: @fd:{r}\n")
    p = subprocess.run([a.ward, "-c", conf], capture_output=True, timeout=20, pass_fds=(r,))
    os.close(r)
    os.close(w)
    err = p.stderr.decode().strip().splitlines()
    report("a header secret from a descriptor that would block: exit 2, one line, nothing started",
           p.returncode == 2 and len(err) == 1 and "temporarily unavailable" in err[0], f"rc {p.returncode}: {err}")
    # a secret the agent could read: a header written in a config file its
    # Landlock rules reach; an mcp.json ${VAR} that env_pass hands it
    readable = os.path.join(work, "readable")
    os.makedirs(readable, exist_ok=True)
    mcp = os.path.join(work, "vars-mcp.json")
    with open(mcp, "w") as f:
        f.write('{"mcpServers":{"s":{"url":"http://h/x","headers":{"Authorization":"Bearer ${WARD_T_KEY}"}}}}')
    route = "[route c]\nlisten = 127.0.0.1:17893\nupstream = unix:/nonexistent.sock\npath = /x\n"
    for label, where, text, want, env in (
            ("a header written in a config the agent may read", readable,
             f"[agent]\nuser = {AGENT_UID}\ncommand = true\n[landlock]\nmode = best_effort\nread = /usr {readable}\n"
             f"{route}header = X-Key: literal-secret\n", "header X-Key is written in the config", {}),
            ("mcp.json's ${WARD_T_KEY} in env_pass", work,
             f"[agent]\nuser = {AGENT_UID}\ncommand = true\nenv_pass = WARD_T_KEY\n[mcp]\nsource = {mcp}\n"
             f"target = {work}/vars-target.json\nupstream = unix:/nonexistent.sock\n",
             "takes a header from ${WARD_T_KEY}, which [agent] env_pass gives the agent too",
             {"WARD_T_KEY": "sk-test"})):
        conf = os.path.join(where, "secret-reach.conf")
        marker = os.path.join(work, "secret-reach-started")
        with open(conf, "w") as f:
            f.write(text.replace("command = true", f"command = touch {marker}"))
        p = subprocess.run([a.ward, "-c", conf], capture_output=True, text=True, timeout=20,
                           env={**os.environ, **env})
        err = p.stderr.strip().splitlines()
        report(f"refused before anything starts: {label}",
               p.returncode == 2 and len(err) == 1 and want in err[0] and not os.path.exists(marker) and
               not os.path.exists(f"{work}/vars-target.json"), f"rc {p.returncode}: {err}")
        os.unlink(conf)
    upstream_reach_cases(a, work)
    # a route header's ${VAR} that is not in ward's environment: one line, nothing started
    conf = os.path.join(work, "envref.conf")
    marker = os.path.join(work, "envref-started")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT_UID}\ncommand = touch {marker}\n[route c]\nlisten = 127.0.0.1:17893\n"
                "upstream = unix:/nonexistent.sock\npath = /x\nheader = Authorization: Bearer ${WARD_T_NOT_SET}\n")
    env = {k: v for k, v in os.environ.items() if k != "WARD_T_NOT_SET"}
    p = subprocess.run([a.ward, "-c", conf], capture_output=True, text=True, timeout=20, env=env)
    err = [l for l in p.stderr.strip().splitlines() if l.startswith("ward: ")]
    report("a route header's ${VAR} not in ward's environment: exit 2, one line, nothing started",
           p.returncode == 2 and len(err) == 1 and "names ${WARD_T_NOT_SET}, which is not in ward's environment"
           in err[0] and not os.path.exists(marker), f"rc {p.returncode}: {err}")
    # a cwd that is not there: found before anything starts, not by the agent's chdir
    conf = os.path.join(work, "check-cwd.conf")
    marker = os.path.join(work, "cwd-started")
    with open(conf, "w") as f:
        f.write(f"[agent]\ncwd = {work}/no-such-dir\ncommand = touch {marker}\n"
                "[route c]\nlisten = 127.0.0.1:17893\nupstream = unix:/nonexistent.sock\npath = /x\n")
    for args in (["--check"], []):
        p = subprocess.run([a.ward, "-c", conf] + args, capture_output=True, timeout=20)
        err = p.stderr.decode().strip().splitlines()
        report(f"a cwd that does not exist{' (--check)' if args else ''}: exit 2, one line, nothing started",
               p.returncode == 2 and len(err) == 1 and "cwd" in err[0] and not os.path.exists(marker),
               f"rc {p.returncode}: {err}")


def check_paths_case(a, work):
    """--check judges where a rule's path leads, not its spelling: /tmp/..
    and a symlink to / are the whole filesystem."""
    link = os.path.join(work, "to-root")
    if not os.path.islink(link):
        os.symlink("/", link)
    conf = os.path.join(work, "check-paths.conf")
    with open(conf, "w") as f:
        f.write(f"[agent]\nuser = {AGENT_UID}\n[landlock]\nread = {link}\nwrite = /tmp/..\n"
                "scope = abstract signal\n[seccomp]\n")
    p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, text=True, timeout=20)
    warns = [l for l in p.stdout.splitlines() if l.startswith("warning:")]
    ok = p.returncode == 0 and any("write = /tmp/..: the whole filesystem is writable" in l for l in warns) and \
        any(f"read = {link}: every file" in l for l in warns)
    report("--check: write = /tmp/.. and read = a symlink to / are warned as the whole filesystem", ok,
           f"rc {p.returncode}: {warns}")


def check_mcp_case(a, work):
    """--check reads an [mcp] source that is a path: its servers' ports
    clash with a [route] as at start, --explain knows them, --ini keeps them
    under [mcp], and nothing is written."""
    src, target = os.path.join(work, "check-mcp.json"), os.path.join(work, "check-home", "mcp.json")
    with open(src, "w") as f:
        f.write('{"mcpServers":{"paseo":{"url":"http://127.0.0.1:6767/mcp/agents?callerAgentId=a1",'
                '"headers":{"Authorization":"Bearer check-secret"}},"local":{"command":"npx"}}}')
    conf = os.path.join(work, "check-mcp.conf")

    def run(route_port, *args, source=src):
        with open(conf, "w") as f:
            f.write(f"[agent]\nuser = {AGENT_UID}\n[landlock]\nread = /usr\n[seccomp]\n"
                    f"[route r1]\nlisten = 127.0.0.1:{route_port}\nupstream = unix:/nonexistent.sock\npath = /x\n"
                    f"[mcp]\nsource = {source}\ntarget = {target}\nupstream = unix:/nonexistent2.sock\n"
                    "listen = 127.0.0.1:17880\n")
        p = subprocess.run([a.ward, "-c", conf, "--check"] + list(args), capture_output=True, timeout=20)
        return p.returncode, p.stdout.decode(), p.stderr.decode().strip().splitlines()

    rc, out, err = run(17880)
    report("--check with an [mcp] server on a [route]'s port: exit 2, one line, as a start",
           rc == 2 and len(err) == 1 and "port 17880 of server mcp-paseo is also route r1's" in err[0], f"rc {rc}: {err}")
    rc, out, err = run(17881, "--explain", "tcp:17880")
    # below Landlock ABI 4 (or without Landlock) no port is restricted, and --explain says so
    abi = kernel.landlock_abi()
    said = "connect: allowed" if abi >= 4 else "connect and bind are not restricted" if abi >= 1 else "not in force"
    report("--explain tcp:PORT of an [mcp] server: the bridge route, connect allowed",
           rc == 0 and "bridge route mcp-paseo listens on 127.0.0.1:17880" in out and said in out,
           f"rc {rc}: {out.strip()!r} {err}")
    rc, out, err = run(17881, "--ini")
    report("--check --ini: the [mcp] server stays under [mcp], no secret, nothing written",
           rc == 0 and "[route mcp-paseo]" not in out and "[route r1]" in out and "[mcp]" in out and
           "check-secret" not in out and not os.path.exists(target), f"rc {rc}: {err}")
    rc, out, err = run(17881, "--json")
    report("--check --json lists the [mcp] server as a route, its header value hidden",
           rc == 0 and '"mcp-paseo"' in out and "check-secret" not in out, f"rc {rc}: {err}")
    with open(src, "w") as f:
        f.write('{"mcpServers":{"paseo":{"url":"http://127.0.0.1:6767/x","oauth":{"clientSecret":"s"}},'
                '"ok":{"url":"http://127.0.0.1:6768/y"}}}')
    rc, out, err = run(17881)
    report("--check with an mcp.json holding a server ward cannot serve (OAuth): exit 0, a warning of the report "
           "naming it and why, left out; the other server listed, and a warning that its upstream (a socket not "
           "there) cannot be reached", rc == 0 and any(
               "warning: mcp: server paseo: OAuth" in l and "left out" in l for l in out.splitlines())
           and "mcp-ok" in out and "mcp-paseo" not in out
           and "warning: [mcp] server ok: its upstream unix:/nonexistent2.sock is not a socket here" in out,
           f"rc {rc}: {out[-400:]!r} {err}")
    with open(src, "w") as f:
        f.write('{"mcpServers":{"paseo":')
    rc, out, err = run(17881)
    report("--check with an mcp.json that is not JSON: exit 2, one line", rc == 2 and err and "line 1" in err[-1],
           f"rc {rc}: {err}")
    rc, out, err = run(17881, source="fd:7")
    report("--check with [mcp] source = fd:N: exit 0, a note that it is checked at start",
           rc == 0 and any("checked at start" in l for l in err), f"rc {rc}: {err}")


def listening(path, mode=0o600):
    """A unix socket that listens at path (and takes nobody)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(4)
    os.chmod(path, mode)
    return s


def start_or_refusal(a, label, conf, want, marker=None):
    """ward started with conf: refused with one line holding want, nothing
    started; or (want None) started, its agent's marker made."""
    if marker and os.path.exists(marker):
        os.unlink(marker)
    p = subprocess.run([a.ward, "-c", conf], capture_output=True, text=True, timeout=30)
    err = [l for l in p.stderr.strip().splitlines() if l.startswith("ward: ")]
    if want:
        ok = p.returncode == 2 and len(err) == 1 and want in err[0] and not (marker and os.path.exists(marker))
    else:
        ok = p.returncode == 0 and (not marker or os.path.exists(marker))
    report(f"{'refused before anything starts' if want else 'starts'}: {label}", ok,
           f"rc {p.returncode}: {p.stderr.strip().splitlines()[-2:]}")


def upstream_reach_cases(a, work):
    """A unix: upstream the agent could replace (its directory under a write
    rule, or where a symlink leads) or connect to around the bridge (its
    modes let the agent's user); with no Landlock in force, the file modes
    alone: a header written in a config the agent's user may read, a socket
    directory it may write."""
    up_dir = os.path.join(work, "updir")
    os.makedirs(up_dir, exist_ok=True)
    os.chmod(up_dir, 0o755)
    sock_path = os.path.join(up_dir, "up.sock")
    srv = listening(sock_path)
    mark_dir = os.path.join(work, "marks")
    os.makedirs(mark_dir, exist_ok=True)
    os.chmod(mark_dir, 0o777)
    marker = os.path.join(mark_dir, "upstream-started")
    base = (f"[agent]\nuser = {AGENT_UID}\ncommand = touch {marker}\n[landlock]\nmode = best_effort\n"
            f"read = /usr\nwrite = {mark_dir}\n" "{rules}[route u]\nlisten = 127.0.0.1:17894\nupstream = unix:{sock}\npath = /x\n")
    # a symlink in a directory the agent cannot write, to a socket in one it can
    srv2 = listening(os.path.join(mark_dir, "real.sock"))
    link = os.path.join(up_dir, "link.sock")
    if not os.path.lexists(link):
        os.symlink(os.path.join(mark_dir, "real.sock"), link)
    for label, rules, sock, mode, want in (
            ("a unix: upstream under the agent's write rule", f"write = {up_dir}\n", sock_path, 0o600,
             "its directory is within the agent's Landlock write rule"),
            ("a unix: upstream that is a symlink into the agent's write rule", "", link, 0o600,
             f"within the agent's Landlock write rule for {mark_dir}"),
            ("a unix: upstream under a write rule, not made yet", f"write = {up_dir}\n",
             os.path.join(up_dir, "later", "up.sock"), 0o600, "its directory is within the agent's Landlock write rule"),
            ("a unix: upstream the agent's user may connect to (0666)", "", sock_path, 0o666,
             "may connect to it (mode 0666"),
            ("a unix: upstream only its owner may connect to (0600)", "", sock_path, 0o600, None)):
        os.chmod(sock_path, mode)
        conf = os.path.join(work, "unix-up.conf")
        with open(conf, "w") as f:
            f.write(base.format(rules=rules, sock=sock))
        start_or_refusal(a, label, conf, want, marker)
    srv.close()
    srv2.close()
    shared = os.path.join(work, "shared-tmp")
    os.makedirs(shared, exist_ok=True)
    os.chmod(shared, 0o1777)
    srv3 = listening(os.path.join(shared, "up.sock"))
    for label, sock, header, conf_mode, want in (
            ("no Landlock: a header written in a config the agent's user may read (0644)", sock_path,
             "header = X-Key: literal\n", 0o644, "which the agent's user may read (no Landlock in force)"),
            ("no Landlock: a unix: upstream in a directory the agent's user may write (1777)",
             os.path.join(shared, "up.sock"), "", 0o600, "the agent's user may create files in the socket's directory"),
            ("no Landlock: the same header in a config only root may read (0600)", sock_path,
             "header = X-Key: literal\n", 0o600, None)):
        conf = os.path.join(work, "nolandlock.conf")
        with open(conf, "w") as f:
            f.write(f"[agent]\nuser = {AGENT_UID}\ncommand = true\n[landlock]\nmode = off\n"
                    f"[route u]\nlisten = 127.0.0.1:17895\nupstream = unix:{sock}\npath = /x\n{header}")
        os.chmod(conf, conf_mode)
        start_or_refusal(a, label, conf, want)
    srv3.close()
