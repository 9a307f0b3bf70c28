"""A private containerd (Debian's, the daemon kubelets drive) for one test:
its own root, state and socket under a work directory, the CRI plugin off;
its shims stopped and its mounts undone on exit.

    with Containerd(work) as ctd:
        ctd.ctr("images", "import", "ward-pi.tar")
        spec = ctd.template("docker.io/library/ward-pi:latest", "tmpl", rootfs_dir)

Raises RuntimeError (with the end of containerd's log) if it does not come up.
"""
import json
import os
import subprocess
import time


class Containerd:
    NAMESPACE = "ward"

    def __init__(self, work):
        self.work = work
        self.sock = os.path.join(work, "containerd.sock")
        self.log = os.path.join(work, "containerd.log")
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def ctr(self, *args, check=True, **kw):
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        return subprocess.run(["ctr", "-a", self.sock, "-n", self.NAMESPACE] + list(args), check=check, **kw)

    def start(self):
        os.makedirs(self.work, exist_ok=True)
        conf = os.path.join(self.work, "config.toml")
        with open(conf, "w") as f:
            f.write(f'version = 2\nroot = "{self.work}/root"\nstate = "{self.work}/state"\n'
                    'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
                    f'[grpc]\n  address = "{self.sock}"\n[ttrpc]\n  address = "{self.sock}.ttrpc"\n')
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(["containerd", "--config", conf], stdout=log, stderr=subprocess.STDOUT)
        for _ in range(200):
            if os.path.exists(self.sock) and self.ctr("version", check=False).returncode == 0:
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        with open(self.log) as f:
            raise RuntimeError("containerd did not come up: " + f.read()[-300:])

    def template(self, image, cid, rootfs, ctr_flags):
        """containerd's own spec for image with ctr_flags (--seccomp gives its
        RuntimeDefault profile) from a container that is created, not run,
        and that container's snapshot of the image mounted at rootfs: what
        a kubelet's runtime prepares for a pod's container."""
        self.ctr("containers", "create", *ctr_flags, image, cid)
        spec = json.loads(self.ctr("containers", "info", cid).stdout)["Spec"]
        os.makedirs(rootfs, exist_ok=True)
        # "mount -t overlay overlay ROOTFS -o lowerdir=...,upperdir=...,workdir=..."
        mount = self.ctr("snapshots", "mounts", rootfs, cid).stdout.strip()
        subprocess.run(["sh", "-c", mount], check=True)
        return spec

    def stop(self):
        for cid in self.ctr("containers", "list", "-q", check=False).stdout.split():
            self.ctr("tasks", "kill", "-s", "SIGKILL", cid, check=False)
            self.ctr("tasks", "delete", "-f", cid, check=False)
        root = os.path.realpath(self.work) + "/"
        with open("/proc/self/mounts") as f:
            points = [line.split()[1].encode().decode("unicode_escape") for line in f]
        for m in sorted((p for p in points if p.startswith(root)), key=len, reverse=True):
            subprocess.run(["umount", "-l", m], capture_output=True)
        for cid in self.ctr("containers", "list", "-q", check=False).stdout.split():
            self.ctr("containers", "delete", cid, check=False)
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        # a shim outlives its daemon: each names the daemon's socket
        subprocess.run(["pkill", "-f", f"containerd-shim.* -address {self.sock}"], capture_output=True)
