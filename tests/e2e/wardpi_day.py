"""ward-pi for a day's work (#44), for real under docker (the test's private
dockerd, as root), as a person runs it: the toolchains of the image through
the command form with their exit status, installs into the agent's home
that persist and go with --reset, the person's variables and paths, the
agent's note of its session, the host's git identity on the agent's commit,
two sessions of one project at once, and export then import resuming Pi's
session, and an MCP server on the host's loopback through its relay.
Called by wardpi_engines.docker.
"""
import glob
import json
import os
import socket
import subprocess
import threading
import time

from results import report


def check(name, ok, detail=""):
    report(name, "pass" if ok else "FAIL", detail)
    return ok


NPM_PKG = '{"name": "fx", "version": "1.0.0", "scripts": {"test": "node test.js"}}\n'
NPM_TEST = "const ok = require('fs').readFileSync('answer.txt', 'utf8').trim() === '42';\n" \
           "console.log(ok ? 'npm-fixture-passed' : 'npm-fixture-failed'); process.exit(ok ? 0 : 1);\n"
PY_TEST = "def test_answer():\n    assert open('answer.txt').read().strip() == '42'\n"
C_SRC = "#include <stdio.h>\nint main(void) { printf(\"c-%d\\n\", 6 * 7); return 0; }\n"
CXX_SRC = "#include <iostream>\nint main() { std::cout << \"cxx-\" << 6 * 7 << std::endl; }\n"


def tools(wp, d, wenv, workspace):
    """The toolchains: npm test and pytest of fixture projects pass and fail
    with their exit status; a venv, gcc, g++, make and the listed tools."""
    proj = workspace(d, "wp-tools")

    def put(name, text):
        with open(os.path.join(proj, name), "w") as f:
            f.write(text)
        os.chown(os.path.join(proj, name), 1000, 1000)

    for name, text in (("package.json", NPM_PKG), ("test.js", NPM_TEST), ("test_answer.py", PY_TEST),
                       ("hello.c", C_SRC), ("hello.cc", CXX_SRC), ("answer.txt", "42\n"),
                       ("Makefile", "all:\n\tcc -o /tmp/hello hello.c && /tmp/hello\n")):
        put(name, text)

    def run(*argv, timeout=300):
        return subprocess.run([wp, "--engine", "docker", "run", "--", *argv], cwd=proj, env=wenv,
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    r_npm = run("npm", "test")
    r_py = run("python3", "-m", "pytest", "-q", "-p", "no:cacheprovider")
    put("answer.txt", "41\n")
    f_npm = run("npm", "test")
    f_py = run("python3", "-m", "pytest", "-q", "-p", "no:cacheprovider")
    check("ward-pi run -- npm test under docker: a passing JavaScript project exits 0, a failing one non-zero, "
          "its status ward-pi's", r_npm.returncode == 0 and "npm-fixture-passed" in r_npm.stdout
          and f_npm.returncode == 1 and "npm-fixture-failed" in f_npm.stdout,
          f"pass {r_npm.returncode} {r_npm.stdout[-200:]!r} {r_npm.stderr[-300:]!r}; fail {f_npm.returncode}")
    check("ward-pi run -- python3 -m pytest under docker: a passing Python project exits 0, a failing one 1",
          r_py.returncode == 0 and "1 passed" in r_py.stdout and f_py.returncode == 1 and "1 failed" in f_py.stdout,
          f"pass {r_py.returncode} {r_py.stdout[-200:]!r} {r_py.stderr[-300:]!r}; fail {f_py.returncode}")
    script = ("make -s && g++ -o /tmp/hxx hello.cc && /tmp/hxx && "
              "python3 -m venv /tmp/venv && /tmp/venv/bin/python -c 'import sys; print(\"venv-\" + str(sys.prefix))' && "
              "for t in npm npx pip3 curl jq rsync unzip zip xz patch; do command -v $t >/dev/null || echo missing-$t; "
              "done; jq -n '6*7' | sed 's/^/jq-/'; echo tools-$((1+1))")
    r = run("sh", "-c", script)
    check("ward-pi run under docker: the image's toolchains work as the agent (make and gcc, g++, a Python venv, "
          "jq) and npm, npx, pip, curl, jq, rsync, unzip are on PATH", r.returncode == 0 and "c-42" in r.stdout
          and "cxx-42" in r.stdout and "venv-/tmp/venv" in r.stdout and "jq-42" in r.stdout
          and "missing-" not in r.stdout and "tools-2" in r.stdout, f"{r.returncode} {r.stdout[-400:]!r} "
          f"{r.stderr[-300:]!r}")


def home_installs(wp, d, wenv, workspace):
    """npm -g and pip --user installs (from local packages: no registry) in
    the agent's home: on PATH at the next run, gone after --reset."""
    proj = workspace(d, "wp-installs")
    pkg = os.path.join(proj, "greet")
    os.makedirs(os.path.join(pkg, "bin"))
    with open(os.path.join(pkg, "package.json"), "w") as f:
        f.write('{"name": "ward-greet", "version": "1.0.0", "bin": {"ward-greet": "bin/greet.js"}}\n')
    with open(os.path.join(pkg, "bin", "greet.js"), "w") as f:
        f.write("#!/usr/bin/env node\nconsole.log('greet-' + 6 * 7);\n")
    py = os.path.join(proj, "pyhello")
    os.makedirs(os.path.join(py, "pyhello"))
    with open(os.path.join(py, "pyproject.toml"), "w") as f:
        f.write('[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
                '[project]\nname = "pyhello"\nversion = "1.0"\n[project.scripts]\npyhello = "pyhello:main"\n')
    with open(os.path.join(py, "pyhello", "__init__.py"), "w") as f:
        f.write("def main():\n    print('pyhello-' + str(6 * 7))\n")
    subprocess.run(["chown", "-R", "1000:1000", proj], check=True)

    def run(script, *extra):
        return subprocess.run([wp, "--engine", "docker", *extra, "run", "--", "sh", "-c", script], cwd=proj,
                              env=wenv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    r1 = run("npm install -g --no-audit --no-fund ./greet >/dev/null && "
             "pip install --user --no-build-isolation --no-index -q ./pyhello 2>&1 | tail -n 2 && echo installed")
    r2 = run("ward-greet; pyhello; command -v ward-greet; command -v pyhello")
    check("ward-pi under docker: npm install -g and pip install --user (local packages) go to the agent's home and "
          "are on its PATH at the next run", r1.returncode == 0 and "installed" in r1.stdout
          and "greet-42" in r2.stdout and "pyhello-42" in r2.stdout
          and "/home/pi/.npm-global/bin/ward-greet" in r2.stdout and "/home/pi/.local/bin/pyhello" in r2.stdout,
          f"{r1.returncode} {r1.stdout[-300:]!r} {r1.stderr[-300:]!r} / {r2.stdout!r} {r2.stderr[-200:]!r}")
    rr = subprocess.run([wp, "--engine", "docker", "--reset", "--yes"], cwd=proj, env=wenv, capture_output=True,
                        text=True, timeout=120)
    r3 = run("command -v ward-greet || command -v pyhello || echo none-$((0))")
    check("ward-pi --reset --yes under docker: the home's installs are gone", rr.returncode == 0
          and "none-0" in r3.stdout and "ward-greet" not in r3.stdout, f"{rr.stderr[-200:]!r} {r3.stdout!r}")


def extras(wp, d, wenv, workspace):
    """The person's variables and paths: by value to the agent, a secret's
    name refused before anything runs; --ro refused to write by the kernel,
    --rw written through to the host; both in the agent's Landlock rules
    (the evidence) and its note."""
    proj = workspace(d, "wp-extras")
    ro = os.path.join(d, "wp-lent-ro")
    rw = os.path.join(d, "wp-lent-rw")
    for p in (ro, rw):
        os.makedirs(p)
        os.chown(p, 1000, 1000)
    with open(os.path.join(ro, "data.txt"), "w") as f:
        f.write("lent-42\n")
    envfile = os.path.join(d, "wp-agent.env")
    with open(envfile, "w") as f:
        f.write("# the person's\nexport GREETING=\"hello there\"\nLEVEL='3'\n")
    script = (f"echo \"env-$GREETING-$LEVEL-$PLAIN\"; cat {ro}/data.txt; "
              f"echo x > {ro}/new 2>/dev/null && echo ro-written || echo ro-refused-$((0)); "
              f"echo x >> {ro}/data.txt 2>/dev/null && echo ro-appended || echo ro-append-refused-$((0)); "
              f"echo made > {rw}/made && echo rw-ok-$((1+1)); "
              "echo; cat /var/lib/pi/agent/APPEND_SYSTEM.md")
    r = subprocess.run([wp, "--engine", "docker", "--env", "PLAIN=p1", "--env-file", envfile, "--ro", ro, "--rw", rw,
                        "run", "--", "sh", "-c", script], cwd=proj, env=wenv, capture_output=True, text=True,
                       timeout=180, stdin=subprocess.DEVNULL)
    out = r.stdout
    check("ward-pi --env, --env-file under docker: the agent has the person's variables, values as given (quotes "
          "taken off)", r.returncode == 0 and "env-hello there-3-p1" in out, f"{r.returncode} {out[:300]!r} "
          f"{r.stderr[-300:]!r}")
    made = os.path.join(rw, "made")
    check("ward-pi --ro, --rw under docker: the lent path is readable and every write to it fails in the kernel "
          "(a new file, an append: the file unchanged on the host); the --rw path is written through, the file "
          "the agent's uid's on the host", "lent-42" in out and "ro-refused-0" in out and "ro-append-refused-0" in out
          and open(os.path.join(ro, "data.txt")).read() == "lent-42\n" and not os.path.exists(os.path.join(ro, "new"))
          and "rw-ok-2" in out and os.path.exists(made) and os.stat(made).st_uid == 1000, out[:400])
    note = out.split("## Your sandbox", 1)[-1]
    check("ward-pi under docker: the agent's note has the lent paths in its rules (read-only, writable), what "
          "persists, the variables' names and never their values, how to ask for a package",
          f"`{ro}`" in note.split("Files you may only read")[-1].split("\n")[0]
          and f"`{rw}`" in note.split("Files you may write")[-1].split("\n")[0]
          and "## This session (ward-pi)" in note and "/home/pi" in note and "`PLAIN`, `GREETING`, `LEVEL`" in note
          and ".pi-packages" in note and "hello there" not in note,
          note[-1500:])
    # the Landlock rules of the session, as ward put them in force
    ev = subprocess.run([wp, "--engine", "docker", "--ro", ro, "--rw", rw, "run", "--", "sh", "-c",
                         f"touch {ro}/x 2>&1; cat /proc/self/status | grep -E '^(NoNewPrivs|Seccomp):'"],
                        cwd=proj, env=wenv, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    check("ward-pi --ro under docker: a write there is refused by the kernel at once (Read-only file system: the "
          "mount, before Landlock's read-only rule), with the session's confinement on",
          "Read-only file system" in ev.stdout and "NoNewPrivs:\t1" in ev.stdout, ev.stdout[-300:])
    for args, why in ((["--env", "GITHUB_TOKEN=ghp_x"], "a token's name"),
                      (["--env", "DB_PASSWORD=x"], "a password's name"),
                      (["--ro", os.path.join(wenv["HOME"], ".pi")], "the person's ~/.pi"),
                      (["--rw", "/"], "/")):
        os.makedirs(os.path.join(wenv["HOME"], ".pi"), exist_ok=True)
        r = subprocess.run([wp, "--engine", "docker", *args, "run", "--", "touch", os.path.join(proj, "ran")],
                           cwd=proj, env=wenv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        check(f"ward-pi {' '.join(args)} under docker ({why}): one line, exit 2, nothing run",
              r.returncode == 2 and r.stderr.count("\n") == 1 and not os.path.exists(os.path.join(proj, "ran")),
              r.stderr)


def git_identity(wp, d, wenv, workspace):
    """The agent's plain `git commit` carries the host's user.name and
    user.email (and nothing else of the person's git config)."""
    proj = workspace(d, "wp-ident")
    home = os.path.join(d, "wp-ident-home")
    os.makedirs(home)
    with open(os.path.join(home, ".gitconfig"), "w") as f:
        f.write("[user]\n\tname = Person Host\n\temail = person@host.example\n[alias]\n\tsecretalias = !echo no\n")
    g = ["git", "-c", "safe.directory=*"]
    subprocess.run(g + ["init", "-q", "-b", "main", proj], check=True)
    subprocess.run(g + ["-C", proj, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
                        "-m", "one"], check=True)
    subprocess.run(["chown", "-R", "1000:1000", proj], check=True)
    genv = dict(wenv, HOME=home, GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="safe.directory", GIT_CONFIG_VALUE_0="*")
    r = subprocess.run([wp, "--engine", "docker", "run", "--", "sh", "-c",
                        "echo x > f && git add f && git commit -qm by-the-agent && git config --get alias.secretalias "
                        "|| echo no-alias-$((0))"], cwd=proj, env=genv, capture_output=True, text=True, timeout=180,
                       stdin=subprocess.DEVNULL)
    log = subprocess.run(g + ["-C", proj, "log", "-1", "--format=%an <%ae> %s"], capture_output=True,
                         text=True).stdout.strip()
    check("ward-pi under docker: the agent's plain git commit carries the host's user.name and user.email, and "
          "comes back to the host's repository; nothing else of the person's git config is inside",
          r.returncode == 0 and log == "Person Host <person@host.example> by-the-agent" and "no-alias-0" in r.stdout,
          f"{log!r} {r.stdout[-200:]!r} {r.stderr[-300:]!r}")


def two_at_once(wp, d, wenv, workspace):
    """Two sessions of one project at once both work; what both agents left
    is checked when the last one ends (the first to end says so)."""
    proj = workspace(d, "wp-twice")
    go = os.path.join(proj, "go")
    first = {}

    def long_session():
        first["r"] = subprocess.run(
            [wp, "--engine", "docker", "run", "--", "sh", "-c",
             "echo first-$((1+1)) > first.out; i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.1; "
             "i=$((i+1)); done; echo first-done"], cwd=proj, env=wenv, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL)
    t = threading.Thread(target=long_session)
    t.start()
    # the first session is in its sandbox when its file is there
    for _ in range(600):
        if os.path.exists(os.path.join(proj, "first.out")):
            break
        time.sleep(0.1)
    second = subprocess.run([wp, "--engine", "docker", "run", "--", "sh", "-c", "echo second-$((2+2))"], cwd=proj,
                            env=wenv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    with open(go, "w") as f:
        f.write("go")
    t.join(330)
    r1 = first.get("r")
    check("ward-pi under docker: a second session of a project starts and ends while the first runs; it leaves "
          "the check of what the agents left to the last one", os.path.exists(os.path.join(proj, "first.out"))
          and second.returncode == 0 and "second-4" in second.stdout and "checked when the last one ends"
          in second.stderr, f"{second.returncode} {second.stdout!r} {second.stderr[-300:]!r}")
    sessions = glob.glob(os.path.join(wenv["HOME"], ".cache", "ward-pi", "ward-pi-wp-twice-*", "sessions", "*"))
    check("ward-pi under docker: the first session ends after it with status 0, and its end checks both "
          "sessions (nothing left pending)", r1 is not None and r1.returncode == 0 and "first-done" in r1.stdout
          and not sessions, f"{r1.returncode if r1 else None} {r1.stderr[-300:] if r1 else ''!r} {sessions}")


def export_import(wp, d, wenv, workspace, sock):
    """A Pi session exported, the project reset, the file imported: the
    session is back, and Pi's --continue resumes it (appends to it)."""
    proj = workspace(d, "wp-export")
    out = os.path.join(d, "wp-export.tgz")

    def pi(*args):
        return subprocess.run([wp, "--engine", "docker", "--no-mcp", "--model-socket", sock, *args], cwd=proj,
                              env=wenv, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)

    def sessions():
        r = subprocess.run([wp, "--engine", "docker", "run", "--", "sh", "-c",
                            "for f in /var/lib/pi/agent/sessions/*/*.jsonl; do echo \"$(wc -l < $f) $f\"; done; "
                            "cat $HOME/keep"], cwd=proj, env=wenv, capture_output=True, text=True, timeout=180,
                           stdin=subprocess.DEVNULL)
        return r.stdout.split("\n")
    p1 = pi("-p", "hi")
    subprocess.run([wp, "--engine", "docker", "run", "--", "sh", "-c", "echo home-kept > $HOME/keep"], cwd=proj,
                   env=wenv, capture_output=True, timeout=180, stdin=subprocess.DEVNULL)
    before = sessions()
    ex = subprocess.run([wp, "--engine", "docker", "export", out], cwd=proj, env=wenv, capture_output=True, text=True,
                        timeout=180)
    again = subprocess.run([wp, "--engine", "docker", "export", out], cwd=proj, env=wenv, capture_output=True,
                           text=True, timeout=60)
    subprocess.run([wp, "--engine", "docker", "--reset", "--yes"], cwd=proj, env=wenv, capture_output=True, timeout=120)
    gone = sessions()
    im = subprocess.run([wp, "--engine", "docker", "import", out], cwd=proj, env=wenv, capture_output=True, text=True,
                        timeout=180)
    after = sessions()
    p2 = pi("-p", "again", "--", "--continue")
    later = sessions()
    f_before = [x for x in before if ".jsonl" in x]
    f_later = [x for x in later if ".jsonl" in x]
    check("ward-pi export under docker: the project's sessions and home to a new file (tar.gz); a second export to "
          "the same name refused", p1.returncode == 0 and ex.returncode == 0 and os.path.getsize(out) > 0
          and again.returncode == 2 and "exists" in again.stderr, f"{p1.stderr[-200:]!r} {ex.stderr[-300:]!r} "
          f"{again.stderr!r}")
    check("ward-pi import under docker: after --reset, the imported file brings back Pi's session and the home, "
          "and Pi's --continue resumes that session (it grows; no new one)",
          len(f_before) == 1 and not [x for x in gone if ".jsonl" in x and "*" not in x] and "home-kept" in after
          and after[:1] == f_before and p2.returncode == 0 and len(f_later) == 1
          and f_later[0].split()[1] == f_before[0].split()[1]
          and int(f_later[0].split()[0]) > int(f_before[0].split()[0]),
          f"before {before} gone {gone} import {im.stderr[-300:]!r} after {after} later {later} {p2.stderr[-300:]!r}")
    bad = os.path.join(d, "wp-not-an-export")
    with open(bad, "w") as f:
        f.write("plain text")
    r = subprocess.run([wp, "--engine", "docker", "import", bad], cwd=proj, env=wenv, capture_output=True, text=True,
                       timeout=60)
    check("ward-pi import of a file that is not an export: one line, exit 2, nothing imported",
          r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr)


def host_mcp(wp, d, wenv, workspace, sock, node, tests):
    """The person's MCP server on the host's loopback (TCP 127.0.0.1:PORT,
    demanding a token that mcp.json names as $env:NAME): ward-pi relays that
    port alone and passes the variable to ward by name; Pi's MCP adapter
    calls a tool of it through the bridge, and the token is nowhere the
    agent can read; the relay ends with the session."""
    proj = workspace(d, "wp-hostmcp")
    port = 17421
    log = os.path.join(d, "wp-hostmcp.jsonl")
    token = "host-mcp-token-never-inside"
    srv = subprocess.Popen([node, os.path.join(tests, "node", "mcp-server.mjs"), str(port), "/mcp"],
                           env=dict(os.environ, MCP_TOKEN=token, MCP_ALLOWED_HOSTS=f"127.0.0.1:{port}", MCP_LOG=log),
                           stderr=subprocess.DEVNULL)
    cfg = os.path.join(d, "wp-hostmcp-config")
    os.makedirs(cfg)
    mcp = os.path.join(cfg, "mcp.json")
    with open(mcp, "w") as f:
        json.dump({"mcpServers": {"tools": {"url": f"http://127.0.0.1:{port}/mcp", "exposure": "direct",
                                            "headers": {"Authorization": "Bearer $env:WP_MCP_TOKEN"}}}}, f)
    env = dict(wenv, WP_MCP_TOKEN=token)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        p = subprocess.run([wp, "--engine", "docker", "--mcp", mcp, "--model-socket", sock, "-p",
                            'CALL mcp__tools__echo {"text": "across the relay"}'], cwd=proj, env=env,
                           capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        wire = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
        check("ward-pi --mcp under docker: a server on the host's loopback, its token a $env: header: Pi's MCP "
              "adapter calls its tool through the bridge and the port's relay, the token added by the bridge",
              p.returncode == 0 and "echo: across the relay" in p.stdout and bool(wire)
              and all(w.get("auth") == "present" for w in wire),
              f"rc {p.returncode} out {p.stdout[-300:]!r} err {p.stderr[-600:]!r} server saw {len(wire)}")
        look = subprocess.run([wp, "--engine", "docker", "--mcp", mcp, "run", "--", "sh", "-c",
                               "env; cat /var/lib/pi/agent/mcp.json; cat /proc/1/environ; ls /run/ward/host; "
                               "grep -rl never-inside /var/lib/pi /home/pi 2>/dev/null; echo looked"],
                              cwd=proj, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        check("ward-pi --mcp under docker: the token is nowhere the agent reads (its environment, its copy of "
              "mcp.json, its files, ward's environment, the relays' directory)",
              look.returncode == 0 and "looked" in look.stdout and token not in look.stdout
              and '"url": "http://127.0.0.1:7800/mcp"' in look.stdout and "Bearer" not in look.stdout,
              f"rc {look.returncode} out {look.stdout[-800:]!r} err {look.stderr[-300:]!r}")
        left = subprocess.run(["docker", "ps", "-aq", "--filter", "label=org.ward.pi.relay"], env=wenv,
                              capture_output=True, text=True).stdout.split()
        check("ward-pi --mcp under docker: the relay ended with its session (no container of it left)",
              not left, left)
    finally:
        srv.terminate()
        srv.wait(timeout=10)


def all_cases(wp, d, wenv, workspace, sock):
    tools(wp, d, wenv, workspace)
    home_installs(wp, d, wenv, workspace)
    extras(wp, d, wenv, workspace)
    git_identity(wp, d, wenv, workspace)
    two_at_once(wp, d, wenv, workspace)
    export_import(wp, d, wenv, workspace, sock)


def rootless(wp, d, person, uid):
    """The same under rootless podman, as the person (ward-pi picks podman
    by itself): npm test with its status, a lent --ro and --rw path (a file
    the agent makes is the person's own on the host), a variable."""
    proj = os.path.join(d, "wp-rootless-day")
    ro, rw = os.path.join(d, "wp-rootless-ro"), os.path.join(d, "wp-rootless-rw")
    for p in (proj, ro, rw):
        os.makedirs(p)
    for name, text in (("package.json", NPM_PKG), ("test.js", NPM_TEST), ("answer.txt", "42\n")):
        with open(os.path.join(proj, name), "w") as f:
            f.write(text)
    with open(os.path.join(ro, "data.txt"), "w") as f:
        f.write("lent-42\n")
    subprocess.run(["chown", "-R", f"{uid}:{uid}", proj, ro, rw], check=True)
    for p in (proj, ro, rw):
        os.chmod(p, 0o700)
    ok = person([wp, "run", "--", "npm", "test"], proj)
    with open(os.path.join(proj, "answer.txt"), "w") as f:
        f.write("41\n")
    bad = person([wp, "run", "--", "npm", "test"], proj)
    check("ward-pi run -- npm test under rootless podman: 0 for a passing project, 1 for a failing one",
          ok.returncode == 0 and "npm-fixture-passed" in ok.stdout and bad.returncode == 1
          and "npm-fixture-failed" in bad.stdout, f"{ok.returncode} {ok.stderr[-300:]!r} / {bad.returncode}")
    r = person([wp, "--env", "PLAIN=p1", "--ro", ro, "--rw", rw, "run", "--", "sh", "-c",
                f"echo env-$PLAIN; cat {ro}/data.txt; echo x > {ro}/new 2>/dev/null && echo ro-written || "
                f"echo ro-refused-$((0)); echo made > {rw}/made && echo rw-ok-$((1+1))"], proj)
    made = os.path.join(rw, "made")
    check("ward-pi --env, --ro, --rw under rootless podman: the variable there, the --ro path readable and not "
          "writable, the --rw path written through as the person's own file",
          r.returncode == 0 and "env-p1" in r.stdout and "lent-42" in r.stdout and "ro-refused-0" in r.stdout
          and "rw-ok-2" in r.stdout and os.path.exists(made) and os.stat(made).st_uid == uid
          and not os.path.exists(os.path.join(ro, "new")), f"{r.returncode} {r.stdout!r} {r.stderr[-300:]!r}")
