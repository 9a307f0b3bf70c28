"""ward-pi and a stdio MCP server the person's mcp.json launches with
`npx -y PKG`, under docker, with real Pi in the image: the package is in
the test's npm registry (verdaccio on the host's loopback, named by
NPM_CONFIG_REGISTRY as a person's own registry would be). At a terminal
ward-pi asks, and on a yes fetches it once into the project's home; Pi then
starts the server in the sandbox, as the agent, offline from npm's cache,
and calls its tool. The next session asks nothing and the registry is not
asked again."""
import json
import os
import subprocess

import ptyrun
from results import report
from verdaccio import VERDACCIO, Verdaccio

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = "@ward-test/mcp-stdio-echo"


def check(name, ok, detail=""):
    report(name, ok, detail)


def tarball_gets(reg):
    return sum(1 for r in reg.requests if r.startswith("GET ") and r.endswith(".tgz"))


def host_mcp_stdio(wp, d, wenv, workspace, sock, node, tests):
    name = "ward-pi --mcp under docker, a stdio server launched by npx -y"
    if not os.path.exists(VERDACCIO):
        check(name, None, "verdaccio is not installed (make tests/bridge/verdaccio/node_modules/verdaccio/package.json)")
        return
    try:
        reg = Verdaccio(d, node, "127.0.0.1", 17426, [os.path.join(HERE, "..", "node", "mcp-stdio-echo")])
    except (RuntimeError, OSError) as e:
        check(f"{name}: the test's registry starts and takes the package", False, e)
        return
    proj = workspace(d, "wp-mcpstdio")
    cfg = os.path.join(d, "wp-mcpstdio-config")
    os.makedirs(cfg)
    mcp = os.path.join(cfg, "mcp.json")
    with open(mcp, "w") as f:
        json.dump({"mcpServers": {"echo": {"command": "npx", "args": ["-y", f"{PKG}@1.0.0"],
                                           "exposure": "direct"}}}, f)
    # the person's registry, for ward-pi's fetch and (by --env) the agent's npm
    env = dict(wenv, NPM_CONFIG_REGISTRY=reg.url)
    words = [wp, "--engine", "docker", "--env", "NPM_CONFIG_REGISTRY", "--mcp", mcp, "--model-socket", sock, "-p"]
    try:
        rc, out = ptyrun.at_pty(words + ['CALL mcp__echo__echo {"text": "from the registry"}'], proj, env, "y", 300)
        check(f"{name}: at a terminal ward-pi asks, fetches the package once into the project's home on a yes, "
              "and Pi starts the server in the sandbox (as the agent, uid 1000) and calls its tool",
              rc == 0 and f"{PKG}@1.0.0" in out and "[y/N]" in out and "fetched into ward-pi-home-" in out
              and "stdio echo: from the registry (uid 1000)" in out, f"rc {rc} {out[-1200:]!r}")
        gets = tarball_gets(reg)
        p = subprocess.run(words + ['CALL mcp__echo__echo {"text": "again"}'], cwd=proj, env=env,
                           capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        check(f"{name}: the next session asks nothing and runs the server offline from the home's npm cache "
              "(the registry is not asked again)",
              p.returncode == 0 and "stdio echo: again (uid 1000)" in p.stdout and "approval" not in p.stderr
              and tarball_gets(reg) == gets and gets >= 1,
              f"rc {p.returncode} out {p.stdout[-300:]!r} err {p.stderr[-500:]!r} tarball GETs {gets} then "
              f"{tarball_gets(reg)}")
        look = subprocess.run([wp, "--engine", "docker", "--no-mcp", "run", "--", "sh", "-c", "ls -a /home/pi"],
                              cwd=proj, env=env, capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL)
        check(f"{name}: the package's install script did not run at the fetch (--ignore-scripts: nothing of it ran "
              "with the host's network)", look.returncode == 0 and ".npm" in look.stdout
              and "install-script-ran" not in look.stdout, f"rc {look.returncode} {look.stdout[-300:]!r}")
        # another project, whose agent planted npm settings in its home
        # before the person's first fetch there
        proj = workspace(d, "wp-mcpstdio-planted")
        # the agent, in an earlier session, plants npm settings in its home
        # (the fetch runs npm there, on the host's network): a shell for
        # npm's scripts and a command named true on its PATH, each of which
        # would leave a mark if the fetch ran it
        # (the mark says where it ran: NoNewPrivs is 1 in the sandbox, where
        # the agent's own npx may well run it, and 0 in the fetch's container)
        plant = ("printf '#!/bin/sh\\ntouch /home/pi/planted-ran-nnp$(grep NoNewPrivs /proc/self/status | "
                 "tr -dc 0-9)\\n' > ~/evil.sh && chmod +x ~/evil.sh && "
                 "printf 'script-shell=/home/pi/evil.sh\\nignore-scripts=false\\n' > ~/.npmrc && "
                 "mkdir -p ~/.npm-global/etc ~/.npm-global/bin && cp ~/.npmrc ~/.npm-global/etc/npmrc && "
                 "cp ~/evil.sh ~/.npm-global/bin/true && echo planted")
        p = subprocess.run([wp, "--engine", "docker", "--no-mcp", "run", "--", "sh", "-c", plant], cwd=proj, env=env,
                           capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        check(f"{name}: the agent plants npm settings and a 'true' in its home", "planted" in p.stdout,
              f"rc {p.returncode} {p.stdout[-200:]!r} {p.stderr[-300:]!r}")
        rc, out = ptyrun.at_pty(words + ["hi"], proj, env, "y", 300)
        look = subprocess.run([wp, "--engine", "docker", "--no-mcp", "run", "--", "sh", "-c", "ls -a /home/pi"],
                              cwd=proj, env=env, capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL)
        check(f"{name}: nothing the agent planted in its home ran at the fetch (npm's user and global configs not "
              "read there, its shell and the command it runs fixed)", rc == 0 and "fetched into" in out
              and look.returncode == 0 and ".npm" in look.stdout and "planted-ran-nnp0" not in look.stdout,
              f"rc {rc} {out[-300:]!r} / {look.stdout[-300:]!r}")
    finally:
        reg.stop()
