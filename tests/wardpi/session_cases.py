"""ward-pi's cases for what a person adds to a session and for the project's
sessions (#44), against the stand-in engines of wardpi.py: --env and
--env-file judged by name before anything runs, --ro and --rw judged by
path, the session's note, export and import, two sessions at once."""
import hashlib
import json
import os
import shlex
import shutil
import socket
import subprocess
import threading
import time

from results import report


def one_line_refusal(p):
    return p.returncode == 2 and p.stderr.count("\n") == 1


def extras_cases(wp, work, run, dry, log, home):
    proj = os.path.join(work, "src", "extras")
    os.makedirs(proj)
    envfile = os.path.join(work, "agent.env")
    with open(envfile, "w") as f:
        f.write("# comment\n\nexport QUOTED=\"two words\"\nSINGLE='x=y'\n  PLAIN=a=b\nEMPTY=\n")
    rc, w = dry(proj, "--engine", "docker", "--rpc", "--env", "ONE=1", "--env", "FROM_HERE", "--env-file", envfile,
                extra={"FROM_HERE": "here value"})
    report("ward-pi --env, --env-file: each variable by value (quotes taken off, 'export' and comments skipped), "
           "their names to ward's env_pass (WARD_AGENT_ENV)",
           rc == 0 and "WARD_AGENT_ENV=ONE FROM_HERE QUOTED SINGLE PLAIN EMPTY" in w and "ONE=1" in w
           and "FROM_HERE=here value" in w and "QUOTED=two words" in w and "SINGLE=x=y" in w and "PLAIN=a=b" in w
           and "EMPTY=" in w, " ".join(w) if rc == 0 else w)
    secret_file = os.path.join(work, "secret.env")
    with open(secret_file, "w") as f:
        f.write("FINE=1\nAWS_SECRET_ACCESS_KEY=abc\n")
    alone_file = os.path.join(work, "alone.env")
    with open(alone_file, "w") as f:
        f.write("HOME_SECRET\n")
    for args, why in ((["--env", "GITHUB_TOKEN=x"], "a *_TOKEN name"),
                      (["--env", "MY_API_KEY=x"], "a *_KEY name"),
                      (["--env", "db_password=x"], "a *PASSWORD* name, any case"),
                      (["--env", "CLIENT_SECRET_ID=x"], "a *SECRET* name"),
                      (["--env-file", secret_file], "a secret's name in the file"),
                      (["--env-file", alone_file], "a name alone in a file (it would read ward-pi's environment)"),
                      (["--env", "PATH=/evil"], "a name the image sets"),
                      (["--env", "WARD_PROVIDER=openai"], "ward's own setting"),
                      (["--env", "LD_PRELOAD=/x.so"], "the loader's"),
                      (["--env", "NOT_SET_HERE"], "a name not set in ward-pi's environment"),
                      (["--env", "1BAD=x"], "not a name"),
                      (["--env", "ESC=a\x1b]0;title\x07"], "a control character in the value"),
                      (["--env-file", os.path.join(work, "nope.env")], "a file that is not there")):
        p = run(proj, "--dry-run", "--engine", "docker", "--rpc", *args, extra={"HOME_SECRET": "s3"})
        report(f"ward-pi {' '.join(a.replace(chr(27), '^[').replace(chr(7), '^G') for a in args)} ({why}): one "
               "line, exit 2", one_line_refusal(p) and "s3" not in p.stderr and "\x1b" not in p.stderr, p.stderr)
    p = run(proj, "--dry-run", "--engine", "docker", "--rpc", "--env", "GITHUB_TOKEN=x")
    report("ward-pi: a secret's name is refused with what brokers a secret instead (--provider, an MCP header)",
           "--provider" in p.stderr and "--mcp" in p.stderr, p.stderr)

    # --ro, --rw: real paths, at the same path, in the image's Landlock rules
    lent = os.path.join(work, "lent")
    ro, rw = os.path.join(lent, "ro dir"), os.path.join(lent, "rw")
    for x in (ro, rw):
        os.makedirs(x)
    link = os.path.join(work, "link-to-ro")
    os.symlink(ro, link)
    rc, w = dry(proj, "--engine", "docker", "--rpc", "--ro", link, "--rw", rw)
    report("ward-pi --ro, --rw: each real path mounted at itself (read-only, read-write), listed for the image's "
           "Landlock rules (WARD_PI_RO, WARD_PI_RW), a symbolic link resolved",
           rc == 0 and f"{ro}:{ro}:ro" in w and f"{rw}:{rw}" in w and f"WARD_PI_RO={ro}" in w
           and f"WARD_PI_RW={rw}" in w, " ".join(w) if rc == 0 else w)
    repo = os.path.join(work, "arepo")
    os.makedirs(os.path.join(repo, "sub"))
    subprocess.run(["git", "init", "-q", repo], check=True)
    holds = os.path.join(work, "holds-repo")
    os.makedirs(os.path.join(holds, "x"))
    subprocess.run(["git", "init", "-q", os.path.join(holds, "x", "r")], check=True)
    sockdir = os.path.join(work, "sockdir")
    os.makedirs(sockdir)
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(sockdir, "engine.sock"))
    os.makedirs(os.path.join(home, ".ssh"), exist_ok=True)
    os.makedirs(os.path.join(home, ".pi", "agent"), exist_ok=True)
    os.makedirs(os.path.join(home, "code"), exist_ok=True)
    try:
        for args, why in ((["--ro", home], "the home itself"),
                          (["--ro", os.path.dirname(home)], "above the home"),
                          (["--ro", os.path.join(home, ".ssh")], "~/.ssh"),
                          (["--ro", os.path.join(home, ".pi", "agent")], "inside ~/.pi"),
                          (["--ro", "/"], "/"),
                          (["--ro", "/etc"], "the host's system"),
                          (["--rw", "/run"], "the engines' sockets"),
                          (["--ro", sockdir], "a directory holding a socket"),
                          (["--rw", os.path.join(repo, "sub")], "read-write inside a git repository"),
                          (["--rw", holds], "read-write over a git repository"),
                          (["--ro", proj], "the project"),
                          (["--ro", os.path.join(work, "src")], "above the project"),
                          (["--ro", os.path.join(work, "missing")], "a path that is not there"),
                          (["--ro", rw, "--rw", rw], "the same path twice"),
                          (["--ro", "/tmp/a:b"], "a ':'")):
            p = run(proj, "--dry-run", "--engine", "docker", "--rpc", *args)
            report(f"ward-pi {' '.join(args)} ({why}): one line, exit 2", one_line_refusal(p), p.stderr)
    finally:
        s.close()
    rc, w = dry(proj, "--engine", "docker", "--rpc", "--ro", repo, "--ro", os.path.join(home, "code"))
    report("ward-pi --ro of a git repository, and of a directory inside the home: allowed (the agent cannot "
           "write there)", rc == 0 and f"{repo}:{repo}:ro" in w, " ".join(w) if rc == 0 else w)

    # the session's note: what ward-pi adds to ward's
    p = run(proj, "--engine", "docker", "--rpc", "--no-mcp", "--env", "VISIBLE=hidden-value", "--ro", ro,
            "--rw", rw, "--allow", "npm")
    recorded = open(log).read().split("\n")
    note = open(os.path.join(work, "seen-note")).read() if os.path.exists(os.path.join(work, "seen-note")) else ""
    report("ward-pi: the session's note (at the image's policy_note_add) names the project, what persists, the lent "
           "paths, the variables' names (never a value), the allowed hosts and how to ask for a package",
           p.returncode == 0 and any(x.endswith(":/run/ward/ward-pi-note.md:ro") for x in recorded)
           and f"`{proj}`" in note and "/home/pi" in note and f"`{ro}`" in note and f"`{rw}`" in note
           and "`VISIBLE`" in note and "hidden-value" not in note and "`npm`" in note and ".pi-packages" in note,
           note or p.stderr)
    p = run(proj, "--engine", "docker", "--rpc", "--no-mcp")
    note = open(os.path.join(work, "seen-note")).read() if os.path.exists(os.path.join(work, "seen-note")) else ""
    report("ward-pi: without --allow, the note says no registry is reachable and how the person can allow one",
           "No package registry" in note and "--allow npm" in note and "lent you" not in note, note)


def sessions_cases(wp, work, run, dry, log, calls, home):
    proj = os.path.join(work, "src", "sessions")
    os.makedirs(proj)
    env = {"PATH": f"{os.path.join(work, 'bin')}:/usr/bin:/bin", "HOME": home}
    # export, import: the two volumes, by tar in the sandbox
    out = os.path.join(work, "export.tgz")
    p = run(proj, "--dry-run", "--engine", "docker", "export", out)
    w = shlex.split(p.stdout) if p.returncode == 0 else []
    report("ward-pi export FILE: the project's state and home volumes, read by tar in the sandbox (the image's "
           "entrypoint, no network), to the file",
           p.returncode == 0 and any(x.endswith(":/tmp/ward-pi-volumes/state") for x in w)
           and any(x.endswith(":/tmp/ward-pi-volumes/home") for x in w) and w[w.index("--network") + 1] == "none"
           and w[-8:] == ["--", "tar", "-C", "/tmp/ward-pi-volumes", "-czf", "-", "state", "home"]
           and "--entrypoint" not in w, p.stdout + p.stderr)
    with open(out, "w") as f:
        f.write("already")
    p = run(proj, "--engine", "docker", "export", out)
    report("ward-pi export to a file that exists: refused in one line, the file untouched",
           one_line_refusal(p) and open(out).read() == "already", p.stderr)
    p = run(proj, "--engine", "docker", "import", out)
    report("ward-pi import of a file that is not an export (not gzip): one line, exit 2", one_line_refusal(p),
           p.stderr)
    subprocess.run(["sh", "-c", f"echo x | gzip > '{out}.gz'"], check=True)
    p = run(proj, "--dry-run", "--engine", "docker", "import", out + ".gz")
    w = shlex.split(p.stdout) if p.returncode == 0 else []
    lines = p.stdout.splitlines()
    w = shlex.split(lines[-1]) if p.returncode == 0 and lines else []
    report("ward-pi import FILE: the volumes made as a session makes them, then the file unpacked by tar in the "
           "sandbox, into the two volumes only (state/, home/), owners not kept",
           p.returncode == 0 and len(lines) == 2 and lines[0].endswith("ward-pi:latest -- true") and "-i" in w
           and w[-5:] == ["-xzf", "-", "--no-same-owner", "state", "home"] and "--entrypoint" not in w,
           p.stdout + p.stderr)
    p = run(proj, "--engine", "docker", "export")
    report("ward-pi export without a file: one line, exit 2", one_line_refusal(p), p.stderr)

    # two sessions of one project at once
    started = os.path.join(work, "first-started")
    go = os.path.join(work, "first-go")
    first = {}

    def first_session():
        first["p"] = subprocess.run([wp, "--engine", "docker", "run", "--", "true"], cwd=proj,
                                    env=dict(env, STANDIN_STARTED=started, STANDIN_WAIT=go), capture_output=True,
                                    text=True, stdin=subprocess.DEVNULL, timeout=60)
    open(calls, "w").close()
    t = threading.Thread(target=first_session)
    t.start()
    for _ in range(400):
        if os.path.exists(started):
            break
        time.sleep(0.05)
    second = run(proj, "--engine", "docker", "run", "--", "true")
    epilogues_mid = [ln for ln in open(calls).read().splitlines() if "ward-pi-epilogue.mjs" in ln]
    with open(go, "w") as f:
        f.write("go")
    t.join(60)
    epilogues = [ln for ln in open(calls).read().splitlines() if "ward-pi-epilogue.mjs" in ln]
    pstate = [x for x in os.listdir(os.path.join(home, ".cache", "ward-pi")) if x.startswith("ward-pi-sessions-")]
    left = os.listdir(os.path.join(home, ".cache", "ward-pi", pstate[0], "sessions")) if pstate else ["?"]
    report("ward-pi: a second session of a project runs while the first does; its end leaves the check to the "
           "last session (no epilogue while an agent of the project runs)",
           os.path.exists(started) and second.returncode == 0 and "checked when the last one ends" in second.stderr
           and not epilogues_mid, f"{second.returncode} {second.stderr!r} {epilogues_mid}")
    report("ward-pi: the last session's end checks both, in the order they started, and leaves nothing pending",
           first.get("p") is not None and first["p"].returncode == 0 and len(epilogues) == 2 and left == [],
           f"{first.get('p').stderr if first.get('p') else None!r} {epilogues} {left}")
    p = run(proj, "--reset", "--yes", "--engine", "docker")
    report("ward-pi --reset after the sessions: done", p.returncode == 0, p.stderr)


def hardening_cases(wp, work, run, dry, log, home):
    """What a review found: an agent's .env linked to ward-pi's environment,
    a .git a running agent made taken by a session that joins it, a link
    to a login store lent, a --rw path the person runs things from."""
    proj = os.path.join(work, "src", "hardened")
    os.makedirs(proj)
    key = {"ANTHROPIC_API_KEY": "sk-ant-never-inside", "SHELL": "/bin/sh"}
    os.symlink("/proc/self/environ", os.path.join(proj, ".env"))
    os.makedirs(os.path.join(proj, "conf"))
    os.symlink("/proc/self", os.path.join(proj, "procdir"))
    with open(os.path.join(proj, "conf", "nul.env"), "wb") as f:
        f.write(b"A=1\x00B=2\n")
    with open(os.path.join(proj, "conf", "big.env"), "w") as f:
        f.write("A=" + "x" * 70000 + "\n")
    for args, why in ((["--env-file", ".env"], "a link to /proc/self/environ"),
                      (["--env-file", "procdir/environ"], "a directory linked into /proc"),
                      (["--env-file", "conf/nul.env"], "a NUL byte"),
                      (["--env-file", "conf/big.env"], "over 64 KiB"),
                      (["--env", "LOCALDOMAIN=evil.example"], "the resolver's"),
                      (["--env", "GLIBC_TUNABLES=glibc.malloc.check=3"], "the C library's"),
                      (["--env", "C1=a\xc2\x9bb"], "a C1 control (UTF-8)"),
                      (["--env", b"RAW=a\x9bb"], "a raw CSI byte (not UTF-8)")):
        p = subprocess.run([wp, "--dry-run", "--engine", "docker", "--rpc", *args], cwd=proj,
                           env={"PATH": os.path.join(work, "bin") + ":/usr/bin:/bin", "HOME": home, **key},
                           capture_output=True, stdin=subprocess.DEVNULL, timeout=30)
        err = p.stderr.decode("utf-8", "replace")
        report(f"ward-pi {args[0]} ({why}): one line, exit 2, nothing of ward-pi's environment in it, no C1 byte",
               p.returncode == 2 and err.count("\n") == 1 and b"sk-ant" not in p.stdout + p.stderr
               and b"\x9b" not in p.stderr, err)
    # lent paths by their real path: a link to ~/.ssh, a directory holding
    # one, another user's login store, a --rw path the person runs from
    dot = os.path.join(home, "dotfiles", "ssh")
    os.makedirs(dot, exist_ok=True)
    ssh = os.path.join(home, ".ssh")
    if os.path.isdir(ssh) and not os.path.islink(ssh):
        os.rmdir(ssh)
    if not os.path.lexists(ssh):
        os.symlink(dot, ssh)
    other = os.path.join(work, "otherhome")
    os.makedirs(os.path.join(other, "u", ".gnupg"), exist_ok=True)
    bindir = os.path.join(work, "personbin")
    os.makedirs(bindir, exist_ok=True)
    rc_file = os.path.join(work, "person-rc", ".bashrc")
    os.makedirs(os.path.dirname(rc_file), exist_ok=True)
    open(rc_file, "w").close()
    envrc = os.path.join(work, "with-envrc")
    os.makedirs(envrc, exist_ok=True)
    open(os.path.join(envrc, ".envrc"), "w").close()
    for args, why in ((["--ro", ssh], "~/.ssh, a link elsewhere"),
                      (["--ro", dot], "~/.ssh's real directory"),
                      (["--ro", other], "a directory holding a login store"),
                      (["--ro", os.path.join(other, "u", ".gnupg")], "a login store by its name"),
                      (["--rw", bindir], "a directory on the person's PATH"),
                      (["--rw", rc_file], "a shell's start-up file"),
                      (["--rw", envrc], "a directory holding direnv's .envrc")):
        p = run(proj, "--dry-run", "--engine", "docker", "--rpc", *args,
                extra={"PATH": f"{bindir}:{os.path.join(work, 'bin')}:/usr/bin:/bin"})
        report(f"ward-pi {args[0]} ({why}): one line, exit 2", one_line_refusal(p), p.stderr)
    out = os.path.join(proj, "export.tgz")
    p = run(proj, "--engine", "docker", "export", out)
    report("ward-pi export into the project (the agent could plant a link there): refused in one line",
           one_line_refusal(p) and not os.path.exists(out), p.stderr)

    # a session joining a running one takes no .git the running agent made,
    # and no path that one lent read-write
    proj2 = os.path.join(work, "src", "joined")
    lent = os.path.join(work, "lent-joined")
    os.makedirs(os.path.join(lent, "sub"))
    os.makedirs(proj2)
    env = {"PATH": f"{os.path.join(work, 'bin')}:/usr/bin:/bin", "HOME": home}
    started, go = os.path.join(work, "j-started"), os.path.join(work, "j-go")
    first = {}

    def first_session():
        first["p"] = subprocess.run([wp, "--engine", "docker", "--rw", lent, "run", "--", "true"], cwd=proj2,
                                    env=dict(env, STANDIN_STARTED=started, STANDIN_WAIT=go), capture_output=True,
                                    text=True, stdin=subprocess.DEVNULL, timeout=60)
    t = threading.Thread(target=first_session)
    t.start()
    for _ in range(400):
        if os.path.exists(started):
            break
        time.sleep(0.05)
    overlap = run(proj2, "--engine", "docker", "--ro", os.path.join(lent, "sub"), "run", "--", "true")
    # what a running agent could do: a .git of its own in the project
    os.makedirs(os.path.join(proj2, ".git", "refs"))
    with open(os.path.join(proj2, ".git", "HEAD"), "w") as f:
        f.write("ref: refs/heads/main\n")
    os.symlink(os.path.join(home, "dotfiles"), os.path.join(proj2, ".git", "objects"))
    joined = run(proj2, "--engine", "docker", "run", "--", "true")
    recorded = open(log).read()
    with open(go, "w") as f:
        f.write("go")
    t.join(60)
    report("ward-pi: a session joining a running one refuses a path that one lent read-write (its agent could "
           "swap in a link)", one_line_refusal(overlap) and "lent read-write" in overlap.stderr, overlap.stderr)
    report("ward-pi: a session joining a running one refuses a .git the running agent made (unchecked until the "
           "last session ends): nothing mounted from it", one_line_refusal(joined) and "changed" in joined.stderr
           and "dotfiles" not in recorded, joined.stderr)


def orphan_cases(wp, work, run, log):
    """A container of a session whose ward-pi was killed may still run, its
    agent still writing: no session starts then. The engine is asked only
    when such a session's directory is left (each is made before its
    container starts, removed once none of it runs)."""
    proj = os.path.join(work, "src", "orphan")
    os.makedirs(proj)
    p = run(proj, "--dry-run", "--reset", "--engine", "docker")
    pstate = p.stdout.splitlines()[1].split()[1] if p.returncode == 0 else ""
    dead = os.path.join(pstate, "sessions", "1.killed")
    os.makedirs(dead)
    with open(os.path.join(dead, "pending"), "w") as f:
        f.write("0\nnone\n\n")
    p = run(proj, "--engine", "docker", "run", "--", "true", extra={"STANDIN_PS": "c0ffee"})
    report("ward-pi: a container of a session whose ward-pi was killed still runs: nothing started, one line "
           "naming it", one_line_refusal(p) and "still runs" in p.stderr and os.path.isdir(dead), p.stderr)
    p = run(proj, "--engine", "docker", "run", "--", "true")
    report("ward-pi: once it is gone, the next start checks what that session's agent left first, then runs",
           p.returncode == 0 and "was not finished" in p.stderr and not os.path.exists(dead), p.stderr)
    open(log, "w").close()
    p = run(proj, "--engine", "docker", "run", "--", "true", extra={"STANDIN_PS": "c0ffee"})
    report("ward-pi: with no session's directory left, the engine is not asked for such a container (the start "
           "saves its command)", p.returncode == 0, p.stderr)


def mcp_cases(wp, work, run, dry, log, home):
    """The person's MCP servers (ward-pi-lib/mcp.sh): the variables their
    headers name passed to ward by name (none of ward's own, none the image
    sets, none unset), the relays' directory for the host's loopback ports,
    the network only for a server elsewhere, and never an MCP config the
    agent could have written."""
    proj = os.path.join(work, "src", "mcpproj")
    os.makedirs(proj)
    cfgdir = os.path.join(work, "mcpcfg")
    os.makedirs(cfgdir)
    local = os.path.join(cfgdir, "local.json")
    with open(local, "w") as f:
        json.dump({"mcpServers": {
            "a": {"url": "http://127.0.0.1:3000/mcp", "headers": {"Authorization": "Bearer $env:MY_MCP_TOKEN",
                                                                  "X-A": "{env:MY_OTHER} ${WARD_PROVIDER_KEY}",
                                                                  "X-H": "${HOME}", "X-U": "${NOT_SET_HERE}"}},
            "b": {"url": "http://localhost/mcp", "bearerTokenEnv": "MY_BEARER"},
            "s": {"command": "npx", "args": ["-y", "x"]}}}, f)
    remote = os.path.join(cfgdir, "remote.json")
    with open(remote, "w") as f:
        json.dump({"mcpServers": {"r": {"url": "https://mcp.example.com/mcp"}}}, f)
    secrets = {"MY_MCP_TOKEN": "tok-1", "MY_OTHER": "tok-2", "MY_BEARER": "tok-3", "WARD_PROVIDER_KEY": "k"}
    rc, w = dry(proj, "--engine", "docker", "--rpc", "--mcp", local, extra=secrets)
    envs = [w[i + 1] for i, x in enumerate(w[:-1]) if x == "-e"] if rc == 0 else []
    report("ward-pi --mcp: the file read-only at ward's [mcp] source; its headers' variables passed to ward by "
           "name, never by value (none of ward's own, none the image sets, none unset)",
           rc == 0 and f"{local}:/run/ward/mcp.json:ro" in w and {"MY_MCP_TOKEN", "MY_OTHER", "MY_BEARER"} <= set(envs)
           and not {"WARD_PROVIDER_KEY", "HOME", "NOT_SET_HERE"} & set(envs)
           and not any(v in " ".join(w) for v in ("tok-1", "tok-2", "tok-3")),
           " ".join(w) if rc == 0 else w)
    relay = next((x for x in w if x.endswith(":/run/ward/host:ro")), "") if rc == 0 else ""
    report("ward-pi --mcp: servers on the host's loopback only: the relays' directory read-only at "
           "/run/ward/host (nothing in the session can put or remove a socket), still no network",
           rc == 0 and relay.endswith("/relay:/run/ward/host:ro") and "--network" in w
           and w[w.index("--network") + 1] == "none", " ".join(w) if rc == 0 else w)
    rc, w = dry(proj, "--engine", "docker", "--rpc", "--mcp", remote)
    report("ward-pi --mcp: a server elsewhere by name: the session has a network (the bridge's: the agent's "
           "sockets reach only ward's ports), and no relay", rc == 0 and "--network" not in w
           and not any(x.endswith(":/run/ward/host:ro") for x in w), " ".join(w) if rc == 0 else w)
    inside = os.path.join(proj, "mcp.json")
    with open(inside, "w") as f:
        json.dump({"mcpServers": {"x": {"url": "https://evil.example/mcp",
                                        "headers": {"A": "${AWS_SECRET_ACCESS_KEY}"}}}}, f)
    link = os.path.join(cfgdir, "linked.json")
    os.symlink(inside, link)
    os.makedirs(os.path.join(proj, ".pi"))
    planted = os.path.join(proj, ".pi", "mcp.json")
    os.symlink(remote, planted)
    nl = os.path.join(cfgdir, "a\nb.json")
    with open(nl, "w") as f:
        json.dump({"mcpServers": {}}, f)
    for path, why in ((inside, "in the project"), (link, "a link into the project"),
                      (".pi/mcp.json", "a link in the project to a file outside")):
        p = run(proj, "--dry-run", "--engine", "docker", "--rpc", "--mcp", path)
        report(f"ward-pi --mcp of a file {why}: one line, exit 2 (the agent would choose the servers and the "
               "variables sent to them)", p.returncode == 2 and p.stderr.count("\n") == 1 and "agent can write"
               in p.stderr, p.stderr)
    # !command headers: run here, on the host, as pi-mcp-adapter runs them;
    # which values are commands, ward says (never a stdio server's args)
    marker = os.path.join(work, "args-ran")
    cmdfile = os.path.join(cfgdir, "commands.json")
    ran = os.path.join(work, "cmd-ran")
    with open(cmdfile, "w") as f:
        json.dump({"mcpServers": {
            "c": {"url": "https://c.example.com/mcp",
                  "headers": {"A": f"!touch {ran}; printf '  tok-from-cmd\\n'", "B": "!!lit"}},
            "bad": {"url": "https://bad.example.com/mcp", "headers": {"A": "!false"}},
            "s": {"command": "npx", "args": [f"!touch {marker}"]}}}, f)
    var = "WARD_MCP_CMD_" + hashlib.sha256(f"touch {ran}; printf '  tok-from-cmd\\n'".encode()).hexdigest()[:16]
    p = run(proj, "--dry-run", "--engine", "docker", "--rpc", "--mcp", cmdfile)
    w = shlex.split(p.stdout) if p.returncode == 0 else []
    report("ward-pi --dry-run --mcp with !command headers: the names ward would read their output under, and "
           "no command run", p.returncode == 0 and var in w and not os.path.exists(ran), f"rc {p.returncode} "
           f"{p.stderr[-300:]!r} {' '.join(w)[-300:]}")
    seen = os.path.join(work, "seen-mcp-env")
    if os.path.exists(seen):
        os.unlink(seen)
    p = subprocess.run([wp, "--engine", "docker", "--rpc", "--mcp", cmdfile], cwd=proj, capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, timeout=60,
                       env={"PATH": os.path.join(work, "bin") + ":/usr/bin:/bin", "HOME": home})
    got = open(seen).read() if os.path.exists(seen) else ""
    report("ward-pi --mcp with !command headers: each run on the host as pi-mcp-adapter runs it (its output "
           "trimmed), passed to ward by that name (-e NAME, never by value on the command line); a failing "
           "one named on stderr, its server left out; a stdio server's args never run",
           p.returncode == 0 and f"{var}=tok-from-cmd\n" in got and "exited 1" in p.stderr
           and not os.path.exists(marker) and os.path.exists(ran),
           f"rc {p.returncode} {p.stderr[-400:]!r} seen {got!r}")
    p = run(proj, "--dry-run", "--engine", "docker", "--rpc", "--mcp", nl)
    report("ward-pi --mcp of a path with a line break: one line, exit 2 (it would be more than one engine word)",
           p.returncode == 2 and "line break" in p.stderr and "--privileged" not in p.stdout, p.stderr)
    mcp_auth_cases(proj, remote, dry, home)
    mcp_fetch_cases(wp, work, run, cfgdir, home)


def mcp_fetch_cases(wp, work, run, cfgdir, home):
    """The packages stdio servers launch with npx (ward-pi-lib/mcpfetch.sh):
    listed by ward's parser, fetched once into the project's home after a
    yes at a terminal (npm exec --ignore-scripts in the image, as the
    agent's uid, on the host's network), never without a terminal, not asked
    again once fetched; uvx and a git spec named in a line each."""
    import ptyrun
    proj = os.path.join(work, "src", "stdiomcp")
    os.makedirs(proj)
    calls = os.path.join(work, "calls.log")
    cfg = os.path.join(cfgdir, "stdio.json")
    with open(cfg, "w") as f:
        json.dump({"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2025.1.1", proj]},
            "git": {"command": "uvx", "args": ["mcp-server-git"]},
            "gh": {"command": "npx", "args": ["-y", "github:someone/server"]},
            "local": {"command": "node", "args": ["server.js"]}}}, f)

    def calls_now():
        return open(calls).read().splitlines() if os.path.exists(calls) else []

    def fetches(since):
        return [c for c in calls_now()[since:] if " ward-pi-fetch " in c]

    n0 = len(calls_now())
    p = run(proj, "--engine", "docker", "--rpc", "--mcp", cfg)
    report("ward-pi --mcp with stdio servers and no terminal (a daemon's --rpc): the session starts, nothing "
           "fetched, one line saying their packages need approval at a terminal; uvx and a git spec each named",
           p.returncode == 0 and not fetches(n0) and "approval at a terminal" in p.stderr
           and "server git: uvx" in p.stderr and "server gh:" in p.stderr, p.stderr[-600:])

    def at_pty(answer):
        return ptyrun.at_pty([wp, "--engine", "docker", "--mcp", cfg, "-p", "hi"], proj,
                             {"PATH": f"{os.path.dirname(calls)}/bin:/usr/bin:/bin", "HOME": home}, answer, 30)

    n0 = len(calls_now())
    rc, out = at_pty("n")
    report("ward-pi --mcp with stdio servers at a terminal, answered no: the package shown, nothing fetched, the "
           "session still starts", rc == 0 and "@modelcontextprotocol/server-filesystem@2025.1.1" in out
           and not fetches(n0), out[-400:])
    n0 = len(calls_now())
    rc, out = at_pty("y")
    f = fetches(n0)
    w = f[0].split() if f else []
    report("ward-pi --mcp with stdio servers at a terminal, answered yes: fetched once into the project's home "
           "volume by the image's npm as uid 1000 on the host's network, its install scripts not run",
           rc == 0 and len(f) == 1 and w[:5] == ["run", "--rm", "--pull=never", "--network", "host"]
           and "--user" in w and w[w.index("--user") + 1] == "1000:1000"
           and any(x.startswith("ward-pi-home-stdiomcp-") and x.endswith(":/home/pi") for x in w)
           and w[-2:] == ["ward-pi-fetch", "@modelcontextprotocol/server-filesystem@2025.1.1"]
           and "npm exec --yes --ignore-scripts" in f[0], f"rc {rc} {f} {out[-300:]!r}")
    n0 = len(calls_now())
    p = run(proj, "--engine", "docker", "--rpc", "--mcp", cfg)
    report("ward-pi --mcp with stdio servers already fetched: no question, no fetch, no line about them",
           p.returncode == 0 and not fetches(n0) and "approval" not in p.stderr, p.stderr[-300:])
    p = run(proj, "--engine", "docker", "--reset", "--yes")
    n0 = len(calls_now())
    p = run(proj, "--engine", "docker", "--rpc", "--mcp", cfg)
    report("ward-pi --reset forgets them with the home: the next start asks again",
           p.returncode == 0 and "approval at a terminal" in p.stderr, p.stderr[-300:])


def mcp_auth_cases(proj, remote, dry, home):
    """The host's mcp-auth.json (Pi's MCP sign-ins): given to ward's bridge
    alone, read-write at /run/ward/mcp-auth.json, only when it is the
    person's own regular file outside what an agent writes."""
    agent = os.path.join(home, ".pi", "agent")
    os.makedirs(agent, exist_ok=True)
    auth = os.path.join(agent, "mcp-auth.json")
    with open(auth, "w") as f:
        json.dump({"mcp__r|https://mcp.example.com/mcp": {"tokens": {"access_token": "tok-signed-in"}}}, f)
    try:
        rc, w = dry(proj, "--engine", "docker", "--rpc", "--mcp", remote)
        envs = [w[i + 1] for i, x in enumerate(w[:-1]) if x == "-e"] if rc == 0 else []
        report("ward-pi --mcp with the host's mcp-auth.json: the file read-write at /run/ward/mcp-auth.json (the "
               "bridge writes refreshed tokens back in place), named to ward by WARD_MCP_AUTH, no token on the "
               "command line", rc == 0 and f"{auth}:/run/ward/mcp-auth.json" in w
               and "WARD_MCP_AUTH=/run/ward/mcp-auth.json" in envs and "tok-signed-in" not in " ".join(w),
               " ".join(w) if rc == 0 else w)
        with open(auth, "w") as f:
            json.dump({"mcp__r|https://mcp.example.com/mcp": {"discovery": {"authorizationServerMetadata": {
                "token_endpoint": "http://127.0.0.1:8446/token"}}}}, f)
        rc, w = dry(proj, "--engine", "docker", "--rpc", "--mcp", remote)
        report("ward-pi --mcp with a sign-in whose token endpoint is on the host's loopback: that port relayed as "
               "a server's (the relays' directory at /run/ward/host)", rc == 0
               and any(x.endswith("/relay:/run/ward/host:ro") for x in w), " ".join(w) if rc == 0 else w)
        rc, w = dry(proj, "--engine", "docker", "--rpc", "--no-mcp")
        report("ward-pi --no-mcp: the sign-ins are not given either", rc == 0
               and not any("mcp-auth" in x for x in w), " ".join(w) if rc == 0 else w)
        # a link, and a Pi agent dir the agent can write (the project)
        os.rename(auth, auth + ".real")
        os.symlink(auth + ".real", auth)
        p_rc, w = dry(proj, "--engine", "docker", "--rpc", "--mcp", remote)
        report("ward-pi --mcp with mcp-auth.json a symbolic link: not given, the session still starts",
               p_rc == 0 and not any("mcp-auth" in x for x in w), " ".join(w) if p_rc == 0 else w)
        os.unlink(auth)
        os.rename(auth + ".real", auth)
        planted = os.path.join(proj, "pi-agent")
        os.makedirs(planted, exist_ok=True)
        with open(os.path.join(planted, "mcp-auth.json"), "w") as f:
            f.write("{}")
        rc, w = dry(proj, "--engine", "docker", "--rpc", "--mcp", remote, extra={"PI_CODING_AGENT_DIR": planted})
        report("ward-pi --mcp with PI_CODING_AGENT_DIR in the project: its mcp-auth.json is not given (the agent "
               "could have written it)", rc == 0 and not any("mcp-auth" in x for x in w),
               " ".join(w) if rc == 0 else w)
    finally:
        for p in (auth, auth + ".real"):
            if os.path.lexists(p):
                os.unlink(p)


def login_cases(wp, work, run, dry, log, home):
    """A subscription's login (ward-pi-lib/login.sh): `ward-pi login
    anthropic` is Pi's own login from the image into ward-pi's state, on the
    host's network (the browser's callback), as the person; a session with
    no key in the environment hands that file to ward's bridge alone, and
    the file is never a path the agent could be given."""
    proj = os.path.join(work, "src", "loginproj")
    os.makedirs(proj)
    logins = os.path.join(home, ".local", "state", "ward-pi", "login")
    rc, w = dry(proj, "login", "anthropic", "--engine", "docker")
    report("ward-pi login anthropic: Pi's own login (pi auth login) from the image, on the host's network, as the "
           "person's uid, into ward-pi's state; no project, no volume",
           rc == 0 and w[:5] == ["docker", "run", "--rm", "-i", "--pull=never"] and "--network" in w
           and w[w.index("--network") + 1] == "host" and w[w.index("--user") + 1] == f"{os.getuid()}:{os.getgid()}"
           and f"{logins}:/login" in w and "PI_CODING_AGENT_DIR=/login" in w
           and w[-3:] == ["auth", "login", "anthropic"] and not any(x.endswith(":/var/lib/pi") for x in w)
           and not any(proj in x for x in w), " ".join(w) if rc == 0 else w)
    p = run(proj, "login", "openai", "--engine", "docker")
    report("ward-pi login of a provider whose login ward cannot refresh: one line, exit 2",
           p.returncode == 2 and p.stderr.count("\n") == 1 and "anthropic" in p.stderr, p.stderr)
    p = run(proj, "login", "anthropic", "--engine", "docker")
    report("ward-pi login without a terminal: one line, exit 2, nothing run",
           p.returncode == 2 and p.stderr.count("\n") == 1 and "terminal" in p.stderr, p.stderr)
    os.makedirs(logins)
    with open(os.path.join(logins, "auth.json"), "w") as f:
        json.dump({"anthropic": {"type": "oauth", "access": "sk-ant-oat01-secret-access",
                                 "refresh": "sk-ant-ort01-secret-refresh", "expires": 1}}, f)
    p = run(proj, "--dry-run", "--engine", "docker", "--rpc")
    w = shlex.split(p.stdout) if p.returncode == 0 else []
    report("ward-pi with a login and no key in the environment: the login's file to ward alone "
           "(/run/ward/login.json, WARD_CREDENTIAL), the provider anthropic, a network, no key; one line says so",
           p.returncode == 0 and f"{logins}/auth.json:/run/ward/login.json" in w and "WARD_CREDENTIAL=/run/ward/login.json" in w
           and "WARD_PROVIDER=anthropic" in w and "ANTHROPIC_API_KEY" not in w and "--network" not in w
           and "your login: ward-pi login anthropic" in p.stderr and "secret" not in p.stdout + p.stderr,
           f"{p.stderr} {' '.join(w)}")
    rc, w = dry(proj, "--engine", "docker", "--rpc", extra={"ANTHROPIC_API_KEY": "sk-key"})
    report("ward-pi with a login and a key in the environment: the key (given for this session) wins",
           rc == 0 and "ANTHROPIC_API_KEY" in w and not any(x.endswith(":/run/ward/login.json") for x in w),
           " ".join(w) if rc == 0 else w)
    p = run(proj, "--dry-run", "--engine", "docker", "--provider", "openai")
    report("ward-pi --provider openai with only an anthropic login: one line naming the key it needs",
           p.returncode == 2 and p.stderr.count("\n") == 1 and "OPENAI_API_KEY" in p.stderr, p.stderr)
    for opt in ("--ro", "--rw"):
        p = run(proj, "--dry-run", "--engine", "docker", opt, logins)
        report(f"ward-pi {opt} of the logins' directory: one line, exit 2 (the agent would read the tokens)",
               p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr)
    p = run(proj, "--dry-run", "--engine", "docker", "--mcp", os.path.join(logins, "auth.json"))
    report("ward-pi --mcp of a file in the logins' directory: refused", p.returncode == 2, p.stderr)
    p = run(os.path.join(home, ".local"), "--dry-run", "--engine", "docker", "--rpc")
    report("ward-pi in a directory that holds the logins (~/.local): one line, exit 2 (the agent would be given "
           "the tokens with the project)", p.returncode == 2 and p.stderr.count("\n") == 1 and "logins" in p.stderr,
           p.stderr)
    shutil.rmtree(os.path.join(home, ".local", "state"))
