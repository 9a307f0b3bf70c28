"""A network namespace in which a model provider's API host is answered by
a DNS server of the test's and served by a fake of its API
(tests/node/fake-provider.mjs) behind TLS with a test CA: what a network
gives a container that talks to a real provider. Used by the image's
provider sessions (e2e.py) and the pods (pod.py).

    with ProviderNetns(a, work, "api.anthropic.com") as w:
        w.netns, w.resolv, w.ca, w.log   # what a container is given
"""
import os
import subprocess
import sys

from testca import make_certs

# the provider's address: on lo, but not a loopback one (the bridge
# connects to no loopback or private address a DNS answer gives it)
PROVIDER_ADDR = "203.0.113.7"
# a subscription's token endpoint (oauth=True): Anthropic's, faked
TOKEN_HOST, TOKEN_ADDR = "platform.claude.com", "203.0.113.8"


class ProviderNetns:
    """oauth=True: the API takes only the login's current access token, and
    platform.claude.com is a fake token endpoint (tests/node/fake-oauth.mjs)
    sharing its state (self.state: which access and refresh tokens hold)."""

    def __init__(self, a, work, host, tag, oauth=False):
        self.a, self.work, self.host, self.oauth = a, work, host, oauth
        self.netns = f"ward-{tag}-{os.getpid()}"
        self.log = os.path.join(work, "fake.jsonl")
        self.resolv = os.path.join(work, "resolv.conf")
        self.state = os.path.join(work, "oauth-state.json")
        self.procs = []

    def __enter__(self):
        certs = make_certs(self.work, [self.host] + ([TOKEN_HOST] if self.oauth else []))
        self.ca = certs["ca"]
        os.chmod(self.ca, 0o644)
        with open(self.resolv, "w") as f:
            f.write("nameserver 127.0.0.1\n")
        os.chmod(self.resolv, 0o644)
        subprocess.run(["ip", "netns", "add", self.netns], check=True)
        try:
            subprocess.run(["ip", "-n", self.netns, "link", "set", "lo", "up"], check=True)
            subprocess.run(["ip", "-n", self.netns, "addr", "add", "203.0.113.1/24", "dev", "lo"], check=True)
            dns = ("import sys,time; sys.path.insert(0, sys.argv[1]); from dnsserver import DnsServer\n"
                   f"with DnsServer('127.0.0.1', 53) as s:\n s.set('{self.host}', a=['{PROVIDER_ADDR}'], ttl=300)\n"
                   f" s.set('{TOKEN_HOST}', a=['{TOKEN_ADDR}'], ttl=300)\n"
                   " print('ready', flush=True); time.sleep(3600)")
            self.spawn([sys.executable, "-c", dns, os.path.join(self.a.tests, "lib")])
            env = dict(os.environ, FAKE_LISTEN=f"{PROVIDER_ADDR}:443", FAKE_CERT=certs[self.host][0],
                       FAKE_KEY=certs[self.host][1], FAKE_LOG=self.log)
            if self.oauth:
                import json
                with open(self.state, "w") as f:
                    json.dump({"access": "sk-ant-oat01-e2e-access-0", "refresh": "sk-ant-ort01-e2e-refresh-0",
                               "refreshes": 0}, f)
                subprocess.run(["ip", "-n", self.netns, "addr", "add", f"{TOKEN_ADDR}/32", "dev", "lo"], check=True)
                env["FAKE_OAUTH_STATE"] = self.state
                self.spawn([self.a.node, os.path.join(self.a.tests, "node", "fake-oauth.mjs")],
                           dict(os.environ, FAKE_LISTEN=f"{TOKEN_ADDR}:443", FAKE_CERT=certs[TOKEN_HOST][0],
                                FAKE_KEY=certs[TOKEN_HOST][1], FAKE_STATE=self.state))
            self.spawn([self.a.node, os.path.join(self.a.tests, "node", "fake-provider.mjs")], env)
        except BaseException:
            self.__exit__()
            raise
        return self

    def spawn(self, argv, env=None, ready=True):
        """argv in the namespace; waits for its first line on stdout."""
        p = subprocess.Popen(["ip", "netns", "exec", self.netns] + argv, env=env, stdout=subprocess.PIPE,
                             text=True)
        self.procs.append(p)
        if ready:
            p.stdout.readline()
        return p

    def requests(self):
        import json
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()
        subprocess.run(["ip", "netns", "delete", self.netns], capture_output=True)
