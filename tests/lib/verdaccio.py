"""verdaccio, npm's own registry server (pinned in tests/bridge/verdaccio),
as the tests' npm registry: no uplink, a user added through its API, and
packages published into it by npm publish. Over TLS on ADDR:443 for a name
(the egress proxy's tests), or plain http on 127.0.0.1:PORT (ward-pi's
fetch of a stdio MCP server's package)."""
import json
import os
import re
import socket
import ssl
import subprocess
import time

VERDACCIO = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bridge", "verdaccio",
                                          "node_modules", "verdaccio", "bin", "verdaccio"))


class Verdaccio:
    """addr, port: where it listens; tls: (cert, key, ca, host) for https
    by host's name, or None for plain http; packages: the directories npm
    publishes, in order."""

    def __init__(self, work, node, addr, port, packages, tls=None):
        node = os.path.abspath(node)  # (it runs in its own directory)
        self.d = os.path.join(work, "verdaccio")
        os.makedirs(self.d, exist_ok=True)
        packages = [os.path.abspath(p) for p in packages]
        self.addr, self.port, self.tls = addr, port, tls
        self.url = f"https://{tls[3]}/" if tls else f"http://{addr}:{port}/"
        conf = os.path.join(self.d, "config.yaml")
        with open(conf, "w") as f:
            f.write(f"storage: {self.d}/storage\nauth:\n  htpasswd:\n    file: {self.d}/htpasswd\nuplinks: {{}}\n"
                    "packages:\n  '**':\n    access: $all\n    publish: $authenticated\n"
                    + (f"https:\n  key: {tls[1]}\n  cert: {tls[0]}\n" if tls else "")
                    + "log: { type: stdout, format: pretty, level: http }\n")
        self.log = os.path.join(self.d, "log")
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen([node, VERDACCIO, "--config", conf, "--listen",
                                          f"{'https' if tls else 'http'}://{addr}:{port}"],
                                         stdout=out, stderr=subprocess.STDOUT, cwd=self.d)
        try:
            self._ready()
            for pkg in packages:
                self._publish(pkg, node)
        except Exception:
            self.stop()
            raise

    def _call(self, method, path, body=None):
        """One request to the registry: (status, JSON body)."""
        import http.client
        if self.tls:
            ctx = ssl.create_default_context(cafile=self.tls[2])
            c = http.client.HTTPSConnection(self.addr, self.port, context=ctx, timeout=10)
            c.sock = ctx.wrap_socket(socket.create_connection((self.addr, self.port), timeout=10),
                                     server_hostname=self.tls[3])
        else:
            c = http.client.HTTPConnection(self.addr, self.port, timeout=10)
        c.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                  headers={"Host": self.tls[3] if self.tls else f"{self.addr}:{self.port}",
                           "Content-Type": "application/json"})
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

    def _publish(self, pkg, node):
        if not hasattr(self, "npmrc"):
            st, r = self._call("PUT", "/-/user/org.couchdb.user:ward", {"name": "ward", "password": "ward-test-pw"})
            if st >= 300 or not r.get("token"):
                raise RuntimeError(f"verdaccio: adding a user: {st} {r}")
            self.npmrc = os.path.join(self.d, "npmrc")
            with open(self.npmrc, "w") as f:
                f.write(f"//{self.url.split('//', 1)[1]}:_authToken={r['token']}\n")
        env = dict(os.environ, PATH=os.path.dirname(node) + ":" + os.environ.get("PATH", ""))
        p = subprocess.run(["npm", "publish", "--registry", self.url, "--userconfig", self.npmrc,
                            "--cache", os.path.join(self.d, "npm-cache")] + (["--cafile", self.tls[2]] if self.tls else []),
                           cwd=pkg, env=env, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"npm publish: {p.stdout[-300:]} {p.stderr[-500:]}")

    @property
    def requests(self):
        """The requests verdaccio logged, "GET /path" each."""
        with open(self.log) as f:
            return re.findall(r"req: '([A-Z]+ [^']+)'", f.read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
