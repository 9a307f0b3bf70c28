"""A private dockerd for one test: its own data and exec roots and socket
under a work directory, no bridge network, no iptables rules; stopped and
unmounted on exit. Shared by tests/sandbox and tests/e2e.

    with Dockerd(work) as dk:        # dk.env has DOCKER_HOST
        subprocess.run(["docker", "load", ...], env=dk.env)
or dk.start() ... dk.stop().
Raises RuntimeError (with the end of dockerd's log) if it does not come up.
"""
import json
import os
import subprocess
import time


class Dockerd:
    def __init__(self, work, runtimes=None):
        """runtimes: daemon.json's, {"NAME": {"path": ..., "runtimeArgs": [...]}},
        for docker run --runtime=NAME."""
        self.work = work
        self.runtimes = runtimes
        self.sock = os.path.join(work, "docker.sock")
        self.env = dict(os.environ, DOCKER_HOST=f"unix://{self.sock}")
        self.log = os.path.join(work, "dockerd.log")
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        os.makedirs(self.work, exist_ok=True)
        config = os.path.join(self.work, "daemon.json")
        with open(config, "w") as f:
            json.dump({"runtimes": self.runtimes} if self.runtimes else {}, f)
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                ["dockerd", "--config-file", config, "--data-root", os.path.join(self.work, "data"), "--exec-root",
                 os.path.join(self.work, "exec"), "-H", f"unix://{self.sock}", "--pidfile",
                 os.path.join(self.work, "docker.pid"), "--bridge=none", "--iptables=false",
                 "--ip6tables=false"], stdout=log, stderr=subprocess.STDOUT)
        for _ in range(200):
            if subprocess.run(["docker", "version"], env=self.env, capture_output=True).returncode == 0:
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        with open(self.log) as f:
            raise RuntimeError("dockerd did not come up: " + f.read()[-300:])

    def stop(self):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        # every mount dockerd left under the work directory, deepest first:
        # its network namespace bound at exec/netns/default, overlay layers
        # (exec and data themselves are not mount points: umount -R on them
        # left those behind, one per run)
        root = os.path.realpath(self.work) + "/"
        with open("/proc/self/mounts") as f:
            points = [line.split()[1].encode().decode("unicode_escape") for line in f]
        for m in sorted((p for p in points if p.startswith(root)), key=len, reverse=True):
            subprocess.run(["umount", "-l", m], capture_output=True)
