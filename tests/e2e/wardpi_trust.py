"""The host never trusts what the agent wrote (issue 42): ward-pi for real, as
a person on the host (an unprivileged user), the agent played by a shell
command through `ward-pi run` in the real image, under docker (the person
in the docker group's stead: the socket is theirs to use) and rootless
podman. Each attack a review found is tried from inside; then the person's
own git runs on the host (status, diff, commit, log, in the project, its
submodule, the nested and planted repositories) and a marker file that
every planted command would write to stays empty.

Called by e2e.py, which owns the engines:
    host_trust(label, slug, person, wp, d, full, engine=())
person(argv, cwd, stdin=None) runs argv as the person and returns a
CompletedProcess (text); full: also the subdirectory, plain-project,
linked-hooks, secrets, set-user-ID and --reset cases. packages_trust (the
image's real apt at a pty) runs under docker.
"""
import os
import shlex
import subprocess

from results import report

KEY = "sk-host-secret-never-in-the-sandbox"


def check(name, ok, detail=""):
    report(name, "pass" if ok else "FAIL", detail)
    return ok


def sh(person, script, cwd):
    r = person(["sh", "-c", "set -e\n" + script], cwd)
    if r.returncode != 0:
        raise RuntimeError(f"setup as the person failed: {r.stderr[-400:]}")
    return r.stdout


GIT = "git -c user.name=person -c user.email=person@host -c protocol.file.allow=always"


def setup(person, base):
    """The person's files: a repository with a submodule and a linked
    worktree, another repository with a password in its history, a monorepo
    with a secret outside the subdirectory run as a project, a private
    directory, a repository whose .git/hooks links to it, a plain project,
    and ~/.pi/agent with the secrets the review found copied in."""
    sh(person, f"""
cd {base}
: > marker; chmod 0666 marker
{GIT} init -q -b main other && echo 'password=hunter2-other' > other/pw && {GIT} -C other add pw && {GIT} -C other commit -qm pw
{GIT} init -q -b main libsrc && {GIT} -C libsrc commit -q --allow-empty -m lib
{GIT} init -q -b main repo && cd repo && echo one > a && {GIT} add a && {GIT} commit -qm one
{GIT} submodule add -q ../libsrc lib2 && {GIT} commit -qm submodule
{GIT} worktree add -q -b wtb ../wt
cd {base}
{GIT} init -q -b main mono && mkdir -p mono/app mono/billing && echo 'STRIPE=sk_live_billing' > mono/billing/secrets.env
echo app > mono/app/main.txt && {GIT} -C mono add . && {GIT} -C mono commit -qm mono
mkdir -p priv && echo 'private-of-the-person' > priv/secret && chmod 0600 priv/secret && chmod 0700 priv
{GIT} init -q -b main linked && rm -rf linked/.git/hooks && ln -s {base}/priv linked/.git/hooks
mkdir plain
""", base)
    agent = os.path.join(base, "home", ".pi", "agent")
    files = {"AGENTS.md": "be brief", "skills/s/SKILL.md": "a skill", "auth.json": KEY, "mcp-auth.json": KEY,
             "mcp-oauth/srv/tokens.json": KEY, "extensions/e/index.ts": "export default () => {}",
             "extensions/e/.env.local": KEY, "skills/s/credentials.json": KEY, ".npmrc": KEY, "id_ed25519": KEY,
             "auth.json.bak": KEY}
    script = "".join(f"mkdir -p {shlex.quote(os.path.dirname(os.path.join(agent, k)))}; "
                     f"printf %s {shlex.quote(v)} > {shlex.quote(os.path.join(agent, k))}; "
                     f"chmod 0600 {shlex.quote(os.path.join(agent, k))}\n" for k, v in files.items())
    sh(person, script, base)


# What the agent does in the repository: one genuine commit, then every way
# the review found to make the person's next git run its code. Each line
# prints what happened, in words made at run time.
ATTACK = r"""M={marker}
echo change >> a && git add a && git -c user.name=agent -c user.email=a@sandbox commit -qm from-the-agent && echo genuine-commit-$((1+1))
# 2d: a hook and core.fsmonitor in the repository's own .git
mkdir -p .git/hooks; printf '#!/bin/sh\necho 2d-hook >> %s\n' "$M" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
git config core.fsmonitor "echo 2d-fsmonitor >> $M"; git config alias.st "!echo 2d-alias >> $M"
# 2a: .git/commondir naming a copy with its own config and hooks, in the project
cp -a .git .evil && git config -f .evil/config core.fsmonitor "echo 2a >> $M" && echo "$PWD/.evil" > .git/commondir && echo commondir-written
rm -f .git/commondir
# 2b: .git moved aside and a copy put in its place
mv .git .git-orig 2>/dev/null && echo git-moved || echo git-rename-refused-$((0))
# 1: .git made a gitfile naming another repository
(printf 'gitdir: {other}/.git\n' > .git) 2>/dev/null && echo gitfile-written || echo gitfile-refused-$((0))
# 2c: a nested repository with core.fsmonitor, staged
mkdir nest && git -C nest init -q && git -C nest config core.fsmonitor "echo 2c >> $M" && git -C nest -c user.name=a -c user.email=a@a commit -q --allow-empty -m x && git add nest && echo nested-staged
# a submodule's gitfile pointed at a repository of the agent's
git init -q .subevil && git -C .subevil config core.fsmonitor "echo sub >> $M" && printf 'gitdir: ../.subevil/.git\n' > lib2/.git && echo submodule-repointed
# a bare repository whose config runs a pager and an alias
git init -q --bare planted && git -C planted config core.pager "echo bare >> $M; cat" && git -C planted config alias.log "!echo bare-alias >> $M" && echo bare-planted
# what it should never see: the other repository, the person's files
cat {other}/pw 2>/dev/null || echo other-absent-$((0))
ls {base}/priv 2>/dev/null || echo priv-absent-$((0))
"""

ATTACK2 = r"""M={marker}
printf '#!/bin/sh\necho hookspath-$0 >> %s\n' "$M" > .githooks/reference-transaction
cp .githooks/reference-transaction .githooks/post-index-change; chmod +x .githooks/*
mkdir -p locked/inner && git -C locked/inner init -q && git -C locked/inner config core.fsmonitor "echo locked >> $M" && chmod 0311 locked
mkdir -p symhead/refs/heads && ln -s refs/heads/x symhead/HEAD && : > symhead/objects && printf '[core]\n\tpager = echo symhead >> %s; cat\n' "$M" > symhead/config
b=$(echo x | git hash-object -w --stdin) && t=$(printf '100644 blob %s\t.git\n' "$b" | git mktree) && c=$(git -c user.name=a -c user.email=a@a commit-tree "$t" -m evil) && git update-ref refs/heads/evil "$c" && echo evil-made
"""

# The person on the host afterwards, in each place the agent prepared
HOST = """cd {repo}
git status; git diff; git log --oneline -3; git st 2>&1 || :
echo person >> a && git -c user.name=p -c user.email=p@p commit -qam by-the-person && echo person-committed
echo "committed-a: $(git show HEAD:a | tr '\n' ' ')"
cd lib2 && git status && git log --oneline -1 2>&1 || :
cd ../nest && git status 2>&1 | head -3 || :
cd ../planted && git log 2>&1 | head -2 || :
cd ../.evil && git status 2>&1 | head -2 || :
cd ../.subevil && git status 2>&1 | head -2 || :
"""


def host_trust(label, slug, person, wp, d, full, engine=()):
    base = os.path.join(d, f"trust-{slug}")
    os.makedirs(base)
    os.chmod(base, 0o777)
    setup(person, base)
    marker = os.path.join(base, "marker")
    repo, other = os.path.join(base, "repo"), os.path.join(base, "other")

    def ward_pi(cwd, *args):
        return person([wp, *engine, *args], cwd)

    r = ward_pi(repo, "run", "--", "sh", "-c", ATTACK.format(marker=marker, other=other, base=base))
    out = r.stdout + r.stderr
    check(f"{label}: ward-pi run -- COMMAND in a repository: the agent's genuine commit reaches the person's main "
          "(a fast-forward, from the bundle)", "genuine-commit-2" in out and "from-the-agent" in
          person(["git", "log", "--format=%s", "main"], repo).stdout, out[-600:])
    check(f"{label}: .git cannot be moved aside or turned into a gitfile by the agent (its own mount)",
          "git-rename-refused-0" in out and "gitfile-refused-0" in out, out[-600:])
    check(f"{label}: the agent never sees another repository or the person's private directory",
          "other-absent-0" in out and "priv-absent-0" in out and "hunter2" not in out, out[-600:])
    check(f"{label}: ward-pi says, a line each, what it quarantined: the nested repository, the repointed "
          "submodule's gitfile, the planted bare repository, the commondir's copy",
          all(f'"{p}' in r.stderr for p in ("nest/.git", "lib2/.git", "planted/HEAD", ".evil/HEAD"))
          and "new submodule" in r.stderr, r.stderr[-900:])
    h = person(["sh", "-c", HOST.format(repo=repo)], repo)
    planted = open(marker).read()
    check(f"{label}: afterwards the person's git status, diff, log, commit, an alias, and git in the submodule, "
          "the nested and the planted repositories run nothing the agent wrote (the marker stays empty)",
          planted == "" and "person-committed" in h.stdout, f"marker {planted!r}; {h.stdout[-300:]}"
          f"{h.stderr[-300:]}")
    check(f"{label}: the person's next commit keeps the agent's (the index follows the HEAD ward-pi moved, the "
          "agent's staged submodule refused): a is one, change, person", "committed-a: one change person" in h.stdout,
          h.stdout[-400:])
    cfg = person(["git", "config", "--list", "--local"], repo).stdout
    check(f"{label}: the repository's own config and hooks are as the person left them",
          "fsmonitor" not in cfg and "alias" not in cfg and "commondir" not in os.listdir(os.path.join(repo, ".git"))
          and not os.path.exists(os.path.join(repo, ".git", "hooks", "pre-commit")), cfg)

    # a genuine linked worktree: the agent commits there too
    wt = os.path.join(base, "wt")
    r = ward_pi(wt, "run", "--", "sh", "-c", "echo w > w && git add w && git -c user.name=a -c user.email=a@a "
                "commit -qm from-the-worktree && echo wt-commit-$((1+1)); (echo x > .git) 2>/dev/null || "
                "echo wt-gitfile-refused-$((0))")
    log = person(["git", "log", "--format=%s", "wtb"], repo).stdout
    check(f"{label}: a genuine linked worktree (both ends agree): the agent's commit is on the worktree's branch, "
          "its gitfile unchanged", "wt-commit-2" in r.stdout and "wt-gitfile-refused-0" in r.stdout
          and "from-the-worktree" in log and open(os.path.join(wt, ".git")).read().startswith("gitdir: " + repo),
          f"{r.stdout[-300:]} {r.stderr[-300:]}; log {log.split()}")

    # A second review's attacks (the fixes of this change): the person's
    # config runs hooks from the project (husky's core.hooksPath); a nested
    # repository in a directory the agent made unreadable and unwritable; a
    # repository git would find through a symbolic HEAD; a tree with a
    # .git entry; a tag, and a branch named like a hash; a FIFO for its
    # index. ward-pi's own end runs nothing, quarantines through chmod,
    # refuses the objects, keeps the names aside, and does not hang.
    person(["git", "config", "core.hooksPath", ".githooks"], repo)
    person(["mkdir", "-p", os.path.join(repo, ".githooks")], repo)
    attack2 = ATTACK2.format(marker=marker)
    r = ward_pi(repo, "run", "--", "sh", "-c", attack2)
    err2 = r.stderr
    planted = open(marker).read()
    check(f"{label}: ward-pi's own end runs no hook of the project's hooks path (husky's) and says the person's "
          "config points into the project", planted == "" and "core.hooksPath (.githooks) is a path in the project"
          in err2, f"marker {planted!r}; {err2[-600:]}")
    check(f"{label}: a nested repository in a directory the agent made unreadable and unwritable, and one git would "
          "find through a symbolic HEAD, are quarantined all the same",
          '"locked/inner/.git"' in err2 and '"symhead/HEAD"' in err2, err2[-900:])
    check(f"{label}: a tree with a .git entry: the agent's objects refused by git's strict checks, nothing applied",
          "strict checks" in err2 and "evil" not in person(["git", "branch", "--list", "evil"], repo).stdout,
          err2[-600:])
    r = ward_pi(repo, "run", "--", "sh", "-c", "git tag v9 && git branch deadbeef && git branch agentwork && "
                "echo refs-made")
    tags = person(["git", "tag", "--list"], repo).stdout.split()
    heads = person(["git", "branch", "--format=%(refname:short)"], repo).stdout.split()
    check(f"{label}: the agent's tag and a branch named like a hash are kept aside (refs/ward-pi/kept/), a plain new "
          "branch is made", "refs-made" in r.stdout and "v9" not in tags and "deadbeef" not in heads
          and "agentwork" in heads and "kept as refs/ward-pi/kept/" in r.stderr, f"{tags} {heads} {r.stderr[-400:]}")
    r = ward_pi(repo, "run", "--", "sh", "-c", "rm -f .git/index && mkfifo .git/index && echo fifo-made")
    check(f"{label}: a FIFO for the agent's index: the end of the session does not hang, its git is not taken",
          "fifo-made" in r.stdout and "not taken" in r.stderr and r.returncode == 0, r.stderr[-400:])
    person(["git", "config", "--unset", "core.hooksPath"], repo)

    r = ward_pi(repo, "run", "--", "sh", "-c", "exit 7")
    check(f"{label}: ward-pi run passes the command's exit status through (7)", r.returncode == 7, r.stderr[-300:])
    if not full:
        return

    # 8: no set-user-ID or set-group-ID file in the image
    r = ward_pi(repo, "run", "--", "sh", "-c", "find / -xdev -type f -perm /6000 2>/dev/null | head -n 5; "
                "echo found-$((0+0))")
    check(f"{label}: the image holds no set-user-ID or set-group-ID file (su, passwd, chsh... were there)",
          r.stdout.strip() == "found-0", r.stdout[-300:])

    # 4: a subdirectory of a repository: nothing of the parent's git
    app = os.path.join(base, "mono", "app")
    r = ward_pi(app, "run", "--", "sh", "-c", "git log --all -p 2>/dev/null | grep -c sk_live || echo no-history-$((0)); "
                "ls ../.git >/dev/null 2>&1 || echo parent-git-absent-$((0))")
    check(f"{label}: a project in a subdirectory of a repository: the parent's .git is not there, its history "
          "(a secret outside the project) unreadable", "no-history-0" in r.stdout and "parent-git-absent-0" in r.stdout
          and "sk_live" not in r.stdout, r.stdout[-300:] + r.stderr[-300:])

    # 1, in a plain project: the agent makes .git a gitfile naming the other
    # repository; the end of the session quarantines it, so the next start
    # mounts nothing of it
    plain = os.path.join(base, "plain")
    r1 = ward_pi(plain, "run", "--", "sh", "-c", f"printf 'gitdir: {other}/.git\\n' > .git && echo gitfile-made")
    r2 = ward_pi(plain, "run", "--", "sh", "-c", "git log --all -p 2>/dev/null | grep -c hunter2 || "
                 "echo no-other-history-$((0))")
    check(f"{label}: a gitfile the agent wrote in a plain project is quarantined at the session's end; the next "
          "session has none of the other repository", "gitfile-made" in r1.stdout and '".git"' in r1.stderr
          and "no-other-history-0" in r2.stdout and not os.path.lexists(os.path.join(plain, ".git")),
          r1.stderr[-300:] + r2.stdout[-200:])

    # 3: a repository whose .git/hooks is a symbolic link to a private directory
    r = ward_pi(os.path.join(base, "linked"), "run", "--", "sh", "-c",
                f"cat .git/hooks/secret {base}/priv/secret 2>/dev/null || echo private-unreachable-$((0))")
    check(f"{label}: a .git/hooks that links to a private host directory mounts nothing of it",
          "private-unreachable-0" in r.stdout and "private-of-the-person" not in r.stdout, r.stdout[-300:])

    # 5: the host's ~/.pi/agent: only what Pi reads for skills, prompts,
    # extensions, instructions and settings, no secret; the copy private
    r = ward_pi(repo, "run", "--", "sh", "-c", f"grep -rl {KEY} /usr/local/share/ward-pi /var/lib/pi 2>/dev/null; "
                "find /usr/local/share/ward-pi/host-agent | tr '\\n' ' '")
    cache = os.path.join(base, "home", ".cache", "ward-pi")
    left = [os.path.join(dp, f) for dp, _, fs in os.walk(cache) for f in fs if "agent" in dp.split(os.sep)]
    check(f"{label}: none of ~/.pi/agent's secrets (mcp-auth.json, mcp-oauth tokens, .env.local, credentials.json, "
          ".npmrc, id_ed25519, auth.json.bak) reach the agent; AGENTS.md and the skill do",
          KEY not in r.stdout and "AGENTS.md" in r.stdout and "SKILL.md" in r.stdout, r.stdout[-400:])
    check(f"{label}: ward-pi's files on the host are the person's alone (0700), the copy gone after the session",
          (os.stat(cache).st_mode & 0o777) == 0o700 and not left, f"{oct(os.stat(cache).st_mode)} {left}")
    r = ward_pi(repo, "--reset", "--yes")
    # (the lock file stays: another ward-pi may be waiting on it)
    kept = [os.path.relpath(os.path.join(dp, f), cache) for dp, _, fs in os.walk(cache) for f in fs
            if os.path.relpath(dp, cache).startswith("ward-pi-repo-")]
    check(f"{label}: --reset deletes ward-pi's files for the project (all but its lock file)", r.returncode == 0
          and [os.path.basename(k) for k in kept] == ["lock"], f"{r.stdout}{r.stderr} {kept}")


def packages_trust(label, slug, person, wp, d, at_pty_person):
    """.pi-packages the agent wrote: escapes never printed, names apt would
    read as a pattern or an action refused, with the real apt of the image."""
    proj = os.path.join(d, f"trust-{slug}-pkgs")
    os.makedirs(proj)
    os.chmod(proj, 0o777)
    pf = os.path.join(proj, ".pi-packages")
    for text, what in (("jq\n\x1b]0;owned\x07\x1b]52;c;ZWNobyBoaQ==\x07\x1b[2K\rward-pi: all good\n", "terminal escapes"),
                       ("git-\n", "git- (apt: remove git)")):
        with open(pf, "w") as f:
            f.write(text)
        r = person([wp, "--engine", "docker", "--rpc"], proj)
        check(f"{label}: .pi-packages with {what}: refused in one clean line (exit 2), nothing of it printed",
              r.returncode == 2 and r.stderr.count("\n") == 1 and "\x1b" not in r.stderr and "\x07" not in r.stderr
              and "owned" not in r.stderr, repr(r.stderr))
    for name in ("python3.1", "procps+"):
        with open(pf, "w") as f:
            f.write(f"jq {name}\n")
        rc, out = at_pty_person(proj, "y")
        check(f"{label}: .pi-packages with {name}: apt in the image knows no such package (it would take a pattern "
              "or an action): refused at the terminal before the question, nothing built",
              rc == 2 and "not the exact name" in out and "[y/N]" not in out, out[-300:])


def docker_person(env, d):
    """A person of the host for rootful docker: uid 1000 (the agent's uid
    inside, so the project is theirs to share, as docs/ward-pi.md says), not
    root, allowed the test dockerd's socket by its group. Returns
    (person, at_pty_person, cleanup)."""
    import ptyrun
    name = "ward-e2e-person"
    home = os.path.join(d, "trust-docker", "home")
    subprocess.run(["userdel", "-f", name], capture_output=True)
    subprocess.run(["groupdel", name], capture_output=True)
    subprocess.run(["useradd", "-o", "-u", "1000", "-M", "-d", home, "-s", "/bin/sh", name], check=True,
                   capture_output=True)
    gid = int(subprocess.run(["id", "-g", name], capture_output=True, text=True, check=True).stdout)
    sock = env["DOCKER_HOST"][len("unix://"):]
    os.chown(sock, 0, gid)
    os.chmod(sock, 0o660)
    penv = ["env", "-i", f"HOME={home}", "PATH=/usr/local/bin:/usr/bin:/bin", f"DOCKER_HOST={env['DOCKER_HOST']}",
            "TERM=xterm-256color", "LANG=C.UTF-8"]
    run_as = ["runuser", "-u", name, "--"] + penv

    def person(argv, cwd, stdin=None):
        return subprocess.run(run_as + ["sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", cwd] + list(argv),
                              capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)

    def at_pty_person(cwd, answer):
        wp = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "ward-pi"))
        return ptyrun.at_pty(run_as + [wp, "--engine", "docker", "-p", "hi"], cwd, dict(os.environ), answer, 300)

    def cleanup():
        subprocess.run(["userdel", "-f", name], capture_output=True)
        subprocess.run(["groupdel", name], capture_output=True)
    return person, at_pty_person, cleanup
