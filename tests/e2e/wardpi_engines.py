"""ward-pi, the host command, for real, as a person uses it: under docker (the
test's private dockerd, as root) and under rootless podman (an unprivileged
user). Called by e2e.py, which owns the engines.

In a tmux pane: Pi's TUI draws, a typed prompt gets the model's answer (the
project's fake OpenAI server on a host socket, --model-socket), a bash tool
call runs in the sandbox, a resize redraws, Ctrl-D ends it with status 0 and
the shell takes commands again; a second run with --continue shows the first
one's conversation (the project's volume). Under docker also: an RPC session,
the host's resources synced without secrets, a commit from a linked worktree
that the host's repository has, two projects' volumes and mounts apart,
.pi-packages built after approval at a pty and its package usable by the
agent, --reset.
"""
import json
import os
import subprocess
import time

import wardpi_day
import wardpi_mcpauth
import wardpi_mcpstdio
import wardpi_trust

from results import report
from ptyrun import at_pty
import pitui
from tmux import Tmux, end_pi


def check(name, ok, detail=""):
    report(name, "pass" if ok else "FAIL", detail)
    return ok


# the bash tool's command: each result word is made at run time, so it is on
# the screen only if the command ran (the typed text has "$((6*7))", not 42)
PROBE = ('echo sandbox-$((6*7)) uid-$(id -u) nnp-$(awk \'/^NoNewPrivs/{print $2}\' /proc/self/status)'
         '-seccomp-$(awk \'/^Seccomp:/{print $2}\' /proc/self/status)')


def tui(label, t, wp_cmd, proj, done, continue_too=True, ps=None):
    """Pi's TUI by ward-pi in a tmux pane (t); wp_cmd: the shell words that
    run ward-pi (cd PROJECT && ward-pi ...); ps: the engine's `ps` words,
    to tell Pi's session (its labelled container) from ward-pi's end."""
    name = f"ward-pi TUI under {label}"

    def alive():
        r = subprocess.run(list(ps) + ["ps", "-q", "--filter", "label=org.ward.pi.project"], capture_output=True,
                           text=True)
        return bool(r.stdout.strip())
    screens, status = pitui.session(t, wp_cmd, done, tool=PROBE, alive=alive if ps else None)
    pitui.checks(check, name, screens, status, tool_expect="sandbox-42 uid-1000 nnp-1-seccomp-2",
                 tool_what=": uid 1000, NoNewPrivs 1, seccomp filter mode 2")
    if not continue_too:
        return
    # the second run: Pi's --continue, the conversation from the volume
    screens = {}
    t = t.another("b")
    try:
        os.unlink(done) if os.path.exists(done) else None
        t.start(f"{wp_cmd} -- --continue; echo $? > {done}; exec sh", 120, 30)
        screens["start"] = t.wait_for(lambda s: "fake-model" in s and "Hello from fake-model." in s, 90)
        status = end_pi(t, done, alive=alive if ps else None)
    finally:
        t.kill()
    check(f"{name}: a second run (-- --continue) resumes: the first run's conversation is on the screen",
          "Hello from fake-model." in screens.get("start", "") and status == "0",
          f"status {status}; {screens.get('start', '')[-400:]}")


# the shell's probe: each word made at run time (on the screen only if it ran)
SHELL_PROBE = ("echo shell-$((6*7)) uid-$(id -u) cap-$(awk '/^CapEff/{print $2}' /proc/self/status)"
               " nnp-$(awk '/^NoNewPrivs/{print $2}' /proc/self/status)-seccomp-$(awk '/^Seccomp:/{print $2}'"
               " /proc/self/status) pwd-$(pwd); touch /etc/ward-probe 2>/dev/null || echo landlock-$((1+1))-denied")


def day(wp, d, wenv, workspace):
    """ward-pi for a day's work (#44), under docker: the limits read back from
    the container's cgroup and told to the agent in its note; a connect out
    of the sandbox refused at once and named in the agent's refusals file;
    the shell at a terminal, with the session's confinement read from /proc."""
    proj = workspace(d, "wp-day")
    script = ("cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes "
              "/sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max 2>/dev/null | tr '\n' ' '; echo; "
              "grep '^- Limits' /var/lib/pi/agent/APPEND_SYSTEM.md; "
              "node -e \"require('net').connect(443,'192.0.2.1').on('error',e=>console.log('connect:'+e.code))\"; "
              "cat /tmp/ward-refusals.log; echo x >> /tmp/ward-refusals.log 2>/dev/null || echo refusals-read-only")
    r = subprocess.run([wp, "--engine", "docker", "--memory", "512m", "--cpus", "1", "--pids", "300", "run", "--",
                        "sh", "-c", script], cwd=proj, env=wenv, capture_output=True, text=True, timeout=180,
                       stdin=subprocess.DEVNULL)
    out = r.stdout.splitlines()
    limits = out[0].split() if out else []
    check("ward-pi --memory 512m --pids 300 under docker: the container's cgroup holds them (read from inside), and "
          "the agent's note tells them", r.returncode == 0 and "536870912" in limits and "300" in limits
          and any(l.startswith("- Limits") and "0.5 GiB" in l and "300 processes" in l for l in out),
          f"rc {r.returncode}; {out[:3]}; {r.stderr[-300:]}")
    check("ward-pi under docker: a connect out of the sandbox fails at once (ENETUNREACH), and the agent's own "
          "refusals file, which it cannot write, names it", "connect:ENETUNREACH" in out
          and any("refused=connect dst=192.0.2.1:443 errno=ENETUNREACH" in l and "comm=node" in l for l in out)
          and "refusals-read-only" in out, f"{out[2:]}")
    # the agent's home persists per project; --reset takes it; the image's
    # hardened settings win over the host's
    os.makedirs(os.path.join(wenv["HOME"], ".pi", "agent"), exist_ok=True)
    with open(os.path.join(wenv["HOME"], ".pi", "agent", "settings.json"), "w") as f:
        f.write('{"defaultProjectTrust": "always", "enableInstallTelemetry": true, "theme": "light"}')

    def in_sandbox(script):
        return subprocess.run([wp, "--engine", "docker", "run", "--", "sh", "-c", script], cwd=proj, env=wenv,
                              capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    # (Pi's launcher merges the settings: a Pi run first, with no model to answer it)
    subprocess.run([wp, "--engine", "docker", "-p", "hi"], cwd=proj, env=wenv, capture_output=True, text=True,
                   timeout=180, stdin=subprocess.DEVNULL)
    r1 = in_sandbox("echo kept-$((2*3)) > $HOME/marker; echo \"$PATH\"; cat /var/lib/pi/agent/settings.json")
    r2 = in_sandbox("cat $HOME/marker")
    check("ward-pi under docker: the agent's home (/home/pi) persists to the next run of the project, and its own "
          "installs come first on PATH", r1.returncode == 0 and "kept-6" in r2.stdout
          and r1.stdout.startswith("/home/pi/.local/bin:/home/pi/.npm-global/bin:"), f"{r1.stdout[:200]!r} "
          f"{r2.stdout!r} {r2.stderr[-200:]}")
    try:
        st = json.loads(r1.stdout.split("\n", 1)[1])
    except (ValueError, IndexError):
        st = {}
    check("ward-pi under docker: the image's hardened settings win over the host's settings.json (project trust "
          "never, no install telemetry), the host's other keys kept", st.get("defaultProjectTrust") == "never"
          and st.get("enableInstallTelemetry") is False and st.get("theme") == "light", str(st))
    rr = subprocess.run([wp, "--engine", "docker", "--reset", "--yes"], cwd=proj, env=wenv, capture_output=True,
                        text=True, timeout=60)
    r3 = in_sandbox("cat $HOME/marker 2>/dev/null || echo no-marker-$((0))")
    check("ward-pi --reset --yes under docker: the agent's home is gone with the state", rr.returncode == 0
          and "no-marker-0" in r3.stdout, f"{rr.stdout.strip()} / {r3.stdout.strip()}")
    os.unlink(os.path.join(wenv["HOME"], ".pi", "agent", "settings.json"))

    # the shell, as a person opens it
    shell("docker", Tmux(f"wpshell{os.getpid()}", env=wenv), f"cd {proj} && {wp} --engine docker shell", proj)


def shell(label, t, cmd, proj):
    """ward-pi shell in a tmux pane (t): the probe typed at bash's prompt,
    exit, the status."""
    try:
        t.start(f"{cmd}; echo shell-ended-$?; exec sh", 200, 40)
        prompt = lambda s: any(ln.rstrip().endswith("$") for ln in s.splitlines())  # noqa: E731
        ready = t.wait_for(prompt, 90)
        t.type(SHELL_PROBE)
        t.keys("Enter")
        screen = t.wait_for(lambda s: "landlock-2-denied" in s, 30)
        t.type("exit")
        t.keys("Enter")
        end = t.wait_for(lambda s: "shell-ended-0" in s, 60)
    finally:
        t.kill()
    check(f"ward-pi shell under {label}: bash at a terminal in the project, as the agent with the session's "
          "confinement (uid 1000, no capabilities, NoNewPrivs, seccomp, Landlock refusing /etc), status 0 at exit",
          prompt(ready) and "shell-42 uid-1000 cap-0000000000000000 nnp-1-seccomp-2" in screen
          and f"pwd-{proj}" in screen and "landlock-2-denied" in screen and "shell-ended-0" in end,
          f"{screen[-500:]!r} / {end[-200:]!r}")


def ask(wp, d, wenv, workspace):
    """ward-pi shell --ask under docker, in a tmux pane (#39): the agent's
    terminal is ward's pty inside the container; a curl through the proxy to
    a host no rule names brings the question up on the terminal's last row;
    d refuses it (403 at once); the shell goes on. Then ward-pi --denials
    (ward --denials in the image, over the session's log ward-pi kept)
    lists it with the setting that would allow it. Nothing is allowed here,
    so no name is looked up and nothing leaves the container."""
    proj = workspace(d, "wp-ask")
    t = Tmux(f"wpask{os.getpid()}", env=wenv)
    cmd = f"cd {proj} && {wp} --engine docker --ask shell"
    try:
        t.start(f"{cmd}; echo shell-ended-$?; exec sh", 160, 30)
        prompt = lambda s: any(ln.rstrip().endswith("$") for ln in s.splitlines())  # noqa: E731
        ready = t.wait_for(prompt, 90)
        t.type('curl -sS -o /dev/null -w "c=%{http_connect}-$((40+2))" https://refused.invalid/; echo')
        t.keys("Enter")
        asked = t.wait_for(lambda s: "allow refused.invalid:443" in s, 30)
        time.sleep(1.3)  # a question's first second takes no key
        t.type("d")
        after = t.wait_for(lambda s: "c=403-42" in s and "ward: allow" not in s, 30)
        # the agent tries what ward-pi reads at the next start: the kept
        # answers of always, and the session's log
        t.type("(echo evil.example:443 >> /run/ward/policy/always) 2>/dev/null && echo planted || "
               "echo store-closed-$((6*7)); (echo x >> /run/ward/log.txt) 2>/dev/null && echo log-written || "
               "echo log-closed-$((6*7))")
        t.keys("Enter")
        # (the typed line holds the words too: the results are lines of their own)
        tried = t.wait_for(lambda s: any(ln.strip() in ("log-closed-42", "log-written") for ln in s.splitlines()), 30)
        # a second host, allowed always: a, then y (each after the question's
        # first second); ward keeps it in ward-pi's directory for the next start
        t.type('curl -sS -o /dev/null --max-time 30 -w "k=%{http_connect}-$((40+2))" https://kept.invalid/; echo')
        t.keys("Enter")
        t.wait_for(lambda s: "allow kept.invalid:443" in s, 30)
        time.sleep(1.3)
        t.type("a")
        confirm = t.wait_for(lambda s: "allow kept.invalid:443 always" in s, 30)
        time.sleep(1.3)
        t.type("y")
        kept = t.wait_for(lambda s: any(ln.strip().startswith("k=") and ln.strip().endswith("-42")
                                        for ln in s.splitlines()) and "ward: allow" not in s, 60)
        t.type("exit")
        t.keys("Enter")
        end = t.wait_for(lambda s: "shell-ended-0" in s, 60)
    finally:
        t.kill()
    last = asked.rstrip("\n").splitlines()[-1] if asked.strip() else ""
    check("ward-pi --ask under docker: the shell runs through ward's pty relay in the container; a fetch from a host "
          "no rule names brings the question up on the terminal's last row",
          prompt(ready) and "allow refused.invalid:443 (https)" in last, asked[-500:])
    check("ward-pi --ask under docker: d refuses it, the tool sees 403 at once, the question's row is gone, the "
          "shell goes on and ends with status 0", "c=403-42" in after and "shell-ended-0" in end,
          f"{after[-400:]!r} / {end[-200:]!r}")
    pol = subprocess.run(["sh", "-c", f"cd {proj} && {wp} --engine docker --policy"], env=wenv, capture_output=True,
                         text=True, timeout=60)
    dry = subprocess.run(["sh", "-c", f"cd {proj} && {wp} --engine docker --dry-run"], env=wenv, capture_output=True,
                         text=True, timeout=60)
    check("ward-pi --ask under docker: the agent can write neither the kept answers of always nor the session's log; "
          "afterwards the person's ward-pi --policy and next start allow nothing it named",
          "store-closed-42" in tried and "log-closed-42" in tried and "evil.example" not in pol.stdout and
          "evil.example" not in dry.stdout, f"{tried[-300:]!r} / {pol.stdout[-200:]} / {dry.stderr[-200:]}")
    p = subprocess.run(["sh", "-c", f"cd {proj} && {wp} --engine docker --denials"], env=wenv, capture_output=True,
                       text=True, timeout=120)
    removed = subprocess.run(["sh", "-c", f"cd {proj} && {wp} --engine docker --policy-remove kept.invalid:443"],
                             env=wenv, capture_output=True, text=True, timeout=60)
    after_rm = subprocess.run(["sh", "-c", f"cd {proj} && {wp} --engine docker --policy"], env=wenv,
                              capture_output=True, text=True, timeout=60)
    dry2 = subprocess.run(["sh", "-c", f"cd {proj} && {wp} --engine docker --dry-run"], env=wenv,
                          capture_output=True, text=True, timeout=60)
    check("ward-pi --denials: the session's refusal, grouped, with the setting that would allow it",
          p.returncode == 0 and "refused.invalid:443" in p.stdout and "ward-pi --allow refused.invalid" in p.stdout,
          p.stdout[-600:] + p.stderr[-300:])
    check("ward-pi --ask under docker: a, then y, keeps the host for the project: ward-pi --policy shows it, and the "
          "next start allows it without asking (WARD_PROXY_ALLOW); --policy-remove takes it away again",
          "allow kept.invalid:443 always" in confirm and "kept.invalid:443" in pol.stdout and
          "WARD_PROXY_ALLOW=kept.invalid" in dry.stdout and removed.returncode == 0 and
          "kept.invalid" not in after_rm.stdout and "kept.invalid" not in dry2.stdout,
          f"{kept[-200:]!r} / {pol.stdout[-300:]} / {removed.stderr[-200:]}")


def docker(a, d, env, run, Session, workspace):
    wp = os.path.abspath(os.path.join(a.tests, "..", "scripts", "ward-pi"))
    sock = os.path.join(run, "model.sock")
    home = os.path.join(d, "ward-pi-home")
    os.makedirs(os.path.join(home, ".pi", "agent"))
    for name, text in (("AGENTS.md", "be brief"), ("auth.json", '{"anthropic":{"key":"sk-not-for-the-agent"}}')):
        with open(os.path.join(home, ".pi", "agent", name), "w") as f:
            f.write(text)
    wenv = dict(env, HOME=home, TERM="xterm-256color")

    def volumes():
        return subprocess.run(["docker", "volume", "ls", "-q"], env=env, capture_output=True, text=True).stdout.split()

    def in_volume(vol, script):
        return subprocess.run(["docker", "run", "--rm", "-v", f"{vol}:/var/lib/pi", "ward-pi:latest", "--",
                               "/bin/sh", "-c", script], env=env, capture_output=True, text=True, timeout=60).stdout

    # the TUI in a terminal, then --continue
    proj = workspace(d, "wp-tui")
    done = os.path.join(d, "wp-tui.status")
    tui("docker", Tmux(f"wpdocker{os.getpid()}", env=wenv),
        f"cd {proj} && {wp} --engine docker --model-socket {sock}", proj, done,
        ps=["env", f"DOCKER_HOST={env['DOCKER_HOST']}", "docker"])

    day(wp, d, wenv, workspace)
    ask(wp, d, wenv, workspace)
    wardpi_day.all_cases(wp, d, wenv, workspace, sock)
    wardpi_day.host_mcp(wp, d, wenv, workspace, sock, a.node, a.tests)
    wardpi_mcpauth.host_mcp_oauth(wp, d, wenv, workspace, sock, a.node, a.tests)
    wardpi_mcpstdio.host_mcp_stdio(wp, d, wenv, workspace, sock, a.node, a.tests)

    # an RPC session in a linked worktree: a commit the main repository has
    main = workspace(d, "wp-repo")
    g = ["git", "-c", "safe.directory=*", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(g + ["init", "-q", "-b", "main", main], check=True)
    subprocess.run(g + ["-C", main, "commit", "-q", "--allow-empty", "-m", "one"], check=True)
    wt = os.path.join(d, "wp-linked")
    subprocess.run(g + ["-C", main, "worktree", "add", "-q", "-b", "feature", wt], check=True, capture_output=True)
    subprocess.run(["chown", "-R", "1000:1000", main, wt], check=True)
    # (the test is root and the repository the agent's uid's: git on the
    # host would refuse it as another user's; a person's own repository is not)
    genv = dict(wenv, GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="safe.directory", GIT_CONFIG_VALUE_0="*")
    s = Session(["sh", "-c", 'cd "$1" && exec "$2" --engine docker --rpc --model-socket "$3"', "sh", wt, wp, sock],
                genv)
    st = s.request({"id": "s1", "type": "get_state"}, timeout=120)
    cmd = ("echo change > made-in-sandbox && git add made-in-sandbox && "
           "git -c user.email=pi@sandbox -c user.name=pi commit -qm from-the-sandbox && echo commit-$((1+1))-done; "
           f"test -e {proj} && echo other-project-$((0))-visible || echo other-project-absent-$((0)); "
           f"(echo x > {main}/.git/hooks/post-commit) 2>/dev/null && echo hook-planted || echo hook-refused-$((0)); "
           f"git config core.hooksPath /tmp 2>/dev/null && echo config-changed || echo config-refused-$((0)); "
           "ls /run/ward >/dev/null 2>&1 && echo run-ward-listed || echo run-ward-private-$((0))")
    text = s.prompt("p1", "CALL bash " + json.dumps({"command": cmd}), timeout=120) or ""
    rc = s.close()
    log = subprocess.run(g + ["-C", main, "log", "--format=%s", "feature"], capture_output=True, text=True).stdout
    check("ward-pi --rpc under docker in a linked worktree: the agent commits, and the host's repository has the "
          "commit on the worktree's branch", bool(st) and "commit-2-done" in text and "from-the-sandbox" in log
          and rc == 0, f"status {rc}; answer {text[:160]!r}; host log {log.split()}; {s.tail()}")
    check("ward-pi: a project's container does not see another project (its path is not there)",
          "other-project-absent-0" in text, text[:200])
    hostcfg = subprocess.run(g + ["-C", main, "config", "--list", "--local"], capture_output=True, text=True).stdout
    check("ward-pi: the repository's hooks and config are out of the agent's reach (its git is ward-pi's copy: "
          "what it sets there never reaches the host's repository)", "hook-refused-0" in text
          and "hookspath" not in hostcfg.lower()
          and not os.path.exists(os.path.join(main, ".git", "hooks", "post-commit")), text[:300] + hostcfg)
    check("ward-pi: ward's /run/ward (the evidence, the model socket mounted in) is closed to the agent",
          "run-ward-private-0" in text, text[:300])

    # the sync again: what the host deleted stays in the volume, what it
    # added arrives, and the agent changes neither the copy nor the host
    os.unlink(os.path.join(home, ".pi", "agent", "AGENTS.md"))
    os.makedirs(os.path.join(home, ".pi", "agent", "prompts"))
    with open(os.path.join(home, ".pi", "agent", "prompts", "review.md"), "w") as f:
        f.write("review it")
    s = Session(["sh", "-c", 'cd "$1" && exec "$2" --engine docker --rpc --model-socket "$3"', "sh", wt, wp, sock],
                genv)
    s.request({"id": "s1", "type": "get_state"}, timeout=120)
    cmd = ("ls /var/lib/pi/agent /var/lib/pi/agent/prompts | tr '\\n' ' '; echo; "
           "echo changed >> /var/lib/pi/agent/prompts/review.md; "
           "(touch /usr/local/share/ward-pi/host-agent/planted) 2>/dev/null && echo copy-written || "
           "echo copy-read-only-$((0))")
    text = s.prompt("p1", "CALL bash " + json.dumps({"command": cmd}), timeout=120) or ""
    s.close()
    host_review = open(os.path.join(home, ".pi", "agent", "prompts", "review.md")).read()
    check("ward-pi: the host's Pi resources synced again at the next start: what the host deleted stays in the "
          "volume (AGENTS.md), what it added arrives (prompts/review.md); the copy is read-only to the agent and "
          "its changes never reach the host", "AGENTS.md" in text and "review.md" in text
          and "copy-read-only-0" in text and host_review == "review it"
          and not os.path.exists(os.path.join(home, ".pi", "agent", "AGENTS.md")), f"{text[:300]!r}; host {host_review!r}")

    # one volume per project: each holds only its own project's sessions
    vols = volumes()
    owned = {}
    for p in (proj, wt):
        v = [x for x in vols if x.startswith(f"ward-pi-{os.path.basename(p)}-")]
        owned[p] = v[0] if len(v) == 1 else None
    # each session file's first line is its header, which names its cwd
    cwds = {p: in_volume(v, "head -qn1 /var/lib/pi/agent/sessions/*/*.jsonl 2>/dev/null | "
                         "grep -o '\"cwd\":\"[^\"]*\"' | sort -u") if v else "" for p, v in owned.items()}
    check("ward-pi: two projects, two volumes, each with its own project's sessions only",
          all(owned.values()) and owned[proj] != owned[wt] and cwds[proj].strip() == f'"cwd":"{proj}"'
          and cwds[wt].strip() == f'"cwd":"{wt}"', f"{owned}; {cwds}")
    ls = in_volume(owned[proj], "ls /var/lib/pi/agent; grep -rl sk-not-for-the-agent /var/lib/pi || echo no-host-secret"
                   ).split() if owned[proj] else []
    check("ward-pi: the project's volume holds the host's AGENTS.md, and nothing of its auth.json",
          "AGENTS.md" in ls and "no-host-secret" in ls, f"agent dir {ls}")

    # .pi-packages: refused without a terminal, built after a yes at a pty
    pk = workspace(d, "wp-packages")
    with open(os.path.join(pk, ".pi-packages"), "w") as f:
        f.write("# the agent asked for bc (not in the base image)\nbc\n")
    r = subprocess.run([wp, "--engine", "docker", "--model-socket", sock, "-p", "hi"], cwd=pk, env=wenv,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    images = subprocess.run(["docker", "images", "-q", "ward-pi-packages"], env=env, capture_output=True,
                            text=True).stdout.split()
    check("ward-pi with .pi-packages and no terminal: refused (exit 2, one line), no image built",
          r.returncode == 2 and r.stderr.count("\n") == 1 and not images, r.stderr.strip())
    rc, out = at_pty([wp, "--engine", "docker", "--model-socket", sock, "-p",
                      "CALL bash " + json.dumps({"command": "echo '6*7' | bc && echo bc-ran"})], pk, wenv, "y")
    images = subprocess.run(["docker", "images", "--format", "{{.Repository}}:{{.Tag}}"], env=env,
                            capture_output=True, text=True).stdout.split()
    built = [i for i in images if i.startswith("ward-pi-packages:")]
    check("ward-pi with .pi-packages at a terminal, approved: the derived image built with Debian's bc, and the "
          "agent's bash tool runs bc in it", rc == 0 and len(built) == 1 and "42" in out and "bc-ran" in out,
          f"status {rc}; images {built}; {out[-400:]!r}")

    r = subprocess.run(["sh", "-c", f'cd "$1" && exec "$2" --engine docker --reset --yes', "sh", proj, wp], env=wenv,
                       capture_output=True, text=True, timeout=60)
    check("ward-pi --reset deletes the project's volume", r.returncode == 0 and owned[proj] not in volumes(),
          r.stdout + r.stderr)

    # the host never trusts what the agent wrote: as a person (not root)
    person, at_pty_person, cleanup = wardpi_trust.docker_person(env, d)
    try:
        wardpi_trust.host_trust("ward-pi under docker as a person", "docker", person, wp, d, True,
                                ["--engine", "docker"])
        wardpi_trust.packages_trust("ward-pi under docker as a person", "docker", person, wp, d, at_pty_person)
    finally:
        cleanup()


def podman_rootless(a, d, user, uid, run_prefix, penv, workspace_uid):
    """ward-pi run by the unprivileged user, whose podman it picks by itself:
    the TUI and --continue, in a project of the user's own."""
    wp = os.path.abspath(os.path.join(a.tests, "..", "scripts", "ward-pi"))
    from hostside import serve_unix
    sock_dir = os.path.join(d, "wp-rootless-run")
    os.makedirs(sock_dir)
    sock = os.path.join(sock_dir, "model.sock")
    # the bridge connects as a subordinate uid of the user's: the socket is
    # everyone's (ward-pi --help says so)
    srv = serve_unix([a.node, os.path.join(a.tests, "node", "fake-openai.mjs"), sock], sock, uid)
    os.chmod(sock, 0o666)
    try:
        proj = os.path.join(d, "wp-rootless-proj")
        os.makedirs(proj)
        os.chown(proj, uid, uid)
        os.chmod(proj, 0o700)
        state = os.path.join(d, "wp-rootless-state")
        os.makedirs(state)
        os.chown(state, uid, uid)
        env = [f"{k}={v}" for k, v in penv.items()] + ["TERM=xterm-256color"]
        t = Tmux(f"wprootless{os.getpid()}", prefix=list(run_prefix) + env)
        tui("rootless podman", t, f"cd {proj} && {wp} --model-socket {sock}", proj, os.path.join(state, "status"),
            ps=list(run_prefix) + env + ["podman"])
        shell("rootless podman", Tmux(f"wprootlesssh{os.getpid()}", prefix=list(run_prefix) + env),
              f"cd {proj} && {wp} shell", proj)

        # the host never trusts what the agent wrote: the same person,
        # podman picked by ward-pi itself
        home = os.path.join(d, "trust-podman", "home")
        pe = [f"{k}={v}" for k, v in dict(penv, HOME=home).items()]

        def person(argv, cwd, stdin=None):
            return subprocess.run(list(run_prefix) + pe + ["sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", cwd]
                                  + list(argv), capture_output=True, text=True, timeout=600,
                                  stdin=subprocess.DEVNULL)
        wardpi_trust.host_trust("ward-pi under rootless podman", "podman", person, wp, d, True)
        wardpi_day.rootless(wp, d, person, uid)
    finally:
        srv.kill()
        srv.wait()
