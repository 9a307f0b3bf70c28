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
import time

import ptyrun
from results import report

HERE = os.path.dirname(os.path.abspath(__file__))
VERDACCIO = os.path.join(HERE, "..", "bridge", "verdaccio", "node_modules", "verdaccio", "bin", "verdaccio")
PKG = "@ward-test/mcp-stdio-echo"


def check(name, ok, detail=""):
    report(name, ok, detail)


class Registry:
    """verdaccio over plain http on 127.0.0.1:port, no uplink, the fixture
    package published into it by npm publish."""

    def __init__(self, d, node, port):
        self.d, self.port = os.path.join(d, "verdaccio"), port
        os.makedirs(self.d)
        conf = os.path.join(self.d, "config.yaml")
        with open(conf, "w") as f:
            f.write(f"storage: {self.d}/storage\nauth:\n  htpasswd:\n    file: {self.d}/htpasswd\nuplinks: {{}}\n"
                    "packages:\n  '**':\n    access: $all\n    publish: $authenticated\n"
                    "log: { type: stdout, format: pretty, level: http }\n")
        self.log = os.path.join(self.d, "log")
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen([node, VERDACCIO, "--config", conf, "--listen", f"http://127.0.0.1:{port}"],
                                         stdout=out, stderr=subprocess.STDOUT, cwd=self.d)
        self.url = f"http://127.0.0.1:{port}/"
        self._ready()
        self._publish(node)

    def _call(self, method, path, body=None):
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        got = r.read()
        c.close()
        return r.status, json.loads(got or b"{}")

    def _ready(self):
        for _ in range(300):
            if self.proc.poll() is not None:
                raise RuntimeError(f"verdaccio exited: {open(self.log).read()[-500:]}")
            try:
                if self._call("GET", "/-/ping")[0] == 200:
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"verdaccio did not answer: {open(self.log).read()[-500:]}")

    def _publish(self, node):
        st, r = self._call("PUT", "/-/user/org.couchdb.user:ward", {"name": "ward", "password": "ward-test-pw"})
        if st >= 300 or not r.get("token"):
            raise RuntimeError(f"verdaccio: adding a user: {st} {r}")
        npmrc = os.path.join(self.d, "npmrc")
        with open(npmrc, "w") as f:
            f.write(f"//127.0.0.1:{self.port}/:_authToken={r['token']}\n")
        env = dict(os.environ, PATH=os.path.dirname(node) + ":" + os.environ.get("PATH", ""))
        p = subprocess.run(["npm", "publish", "--registry", self.url, "--userconfig", npmrc,
                            "--cache", os.path.join(self.d, "npm-cache")],
                           cwd=os.path.join(HERE, "..", "node", "mcp-stdio-echo"), env=env, capture_output=True,
                           text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"npm publish: {p.stdout[-300:]} {p.stderr[-500:]}")

    def tarball_gets(self):
        return open(self.log).read().count(".tgz")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def host_mcp_stdio(wp, d, wenv, workspace, sock, node, tests):
    name = "ward-pi --mcp under docker, a stdio server launched by npx -y"
    if not os.path.exists(VERDACCIO):
        check(name, None, "verdaccio is not installed (make tests/bridge/verdaccio/node_modules/verdaccio/package.json)")
        return
    try:
        reg = Registry(d, node, 17426)
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
        gets = reg.tarball_gets()
        p = subprocess.run(words + ['CALL mcp__echo__echo {"text": "again"}'], cwd=proj, env=env,
                           capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        check(f"{name}: the next session asks nothing and runs the server offline from the home's npm cache "
              "(the registry is not asked again)",
              p.returncode == 0 and "stdio echo: again (uid 1000)" in p.stdout and "approval" not in p.stderr
              and reg.tarball_gets() == gets and gets >= 1,
              f"rc {p.returncode} out {p.stdout[-300:]!r} err {p.stderr[-500:]!r} tarball GETs {gets} then "
              f"{reg.tarball_gets()}")
        look = subprocess.run([wp, "--engine", "docker", "--no-mcp", "run", "--", "sh", "-c", "ls -a /home/pi"],
                              cwd=proj, env=env, capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL)
        check(f"{name}: the package's install script did not run at the fetch (--ignore-scripts: nothing of it ran "
              "with the host's network)", look.returncode == 0 and ".npm" in look.stdout
              and "install-script-ran" not in look.stdout, f"rc {look.returncode} {look.stdout[-300:]!r}")
    finally:
        reg.stop()
