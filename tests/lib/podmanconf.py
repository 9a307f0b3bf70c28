"""podman as these hosts need it (cgroup v1/hybrid, root without
CAP_SYS_RESOURCE): a containers.conf with default_ulimits high enough for
the image's rlimit_nofile and runtime runc, private storage (vfs) under a
work directory. Shared by tests/e2e and tests/bench.

    cli, env = podman_setup("/tmp/x/podman")     # cli: ["podman", "--root", ...]
"""
import os

CONTAINERS_CONF = ('[containers]\ndefault_ulimits = ["nofile=8192:8192", "nproc=1024:1024"]\n'
                   '[engine]\nruntime = "runc"\n')


def podman_setup(pd, base_env=None):
    os.makedirs(pd, exist_ok=True)
    conf = os.path.join(pd, "containers.conf")
    with open(conf, "w") as f:
        f.write(CONTAINERS_CONF)
    env = dict(base_env if base_env is not None else os.environ, CONTAINERS_CONF=conf)
    cli = ["podman", "--root", f"{pd}/root", "--runroot", f"{pd}/run", "--storage-driver", "vfs"]
    return cli, env
