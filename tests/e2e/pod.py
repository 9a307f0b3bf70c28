"""The reference image in a restricted Kubernetes pod (#24): the pod of
docs/examples/kubernetes.yaml, started as a kubelet would have its runtime
start it, under Debian's containerd (ctr, from containerd's own snapshot of
the image and its own RuntimeDefault seccomp profile) and under runc with
OpenShift's identity (an arbitrary uid without a passwd entry, gid 0).

From the manifest: the pod's and the container's securityContext become the
OCI spec's fields (FIELDS below, the table in docs/kubernetes.md; a field the
test does not know fails it), the Secret and the ConfigMap become read-only
volumes laid out as the kubelet's atomic writer lays them out (files behind
..data symbolic links, group fsGroup), the emptyDirs and the claim become
directories of mode 0777 and group fsGroup, the env's secretKeyRef a
variable. The MCP sidecar is the project's fixture server on the pod's
loopback; the provider is a fake of Anthropic's API on its real name in
the pod's network namespace (providerns.py).

In each: Pi answers get_state with Anthropic's model, a prompt through the
bridge with the key read from the Secret's file, an MCP tool call through
the bridge with the token from the Secret's variable; from the agent's own
bash: its uid, no key in its environment, the Secret's file, PID 1's and
the bridge's /proc environ and mem and signals refused, the provider's
address and the sidecar's port refused; from the host's /proc: ward and the
agent as the pod's uid with no capabilities and no_new_privs, the agent
under the runtime's filter and ward's; the evidence in the run emptyDir
says ward started without root; stdin's end ends the pod with status 0.
"""
import copy
import json
import os
import shutil
import subprocess
import time

import yaml

from results import report
from providerns import PROVIDER_ADDR, ProviderNetns

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "..", "..", "docs", "examples", "kubernetes.yaml")
DOC = os.path.join(HERE, "..", "..", "docs", "kubernetes.md")
IMAGE = "docker.io/library/ward-pi:latest"
KEY = "sk-ant-pod-only-the-bridge-reads-this-file"
MCP_TOKEN = "pod-mcp-token-0c41"
SIDECAR_PORT = 6767

# securityContext field -> the OCI spec field it becomes (docs/kubernetes.md)
FIELDS = {
    "runAsNonRoot": "the kubelet refuses uid 0 (checked here before the runtime is called)",
    "runAsUser": "process.user.uid",
    "runAsGroup": "process.user.gid",
    "fsGroup": "process.user.additionalGids; the volumes' group",
    "seccompProfile": "linux.seccomp (RuntimeDefault: containerd's default profile)",
    "allowPrivilegeEscalation": "process.noNewPrivileges",
    "readOnlyRootFilesystem": "root.readonly",
    "capabilities": "process.capabilities (drop ALL: every set empty)",
}
CAP_SETS = ("bounding", "effective", "inheritable", "permitted", "ambient")


def manifest():
    with open(MANIFEST) as f:
        docs = [x for x in yaml.safe_load_all(f) if x]
    return {x["kind"]: x for x in docs}


def security(pod, container):
    """The pod's and the container's securityContext merged, the
    container's winning, as the kubelet merges them."""
    sc = dict(pod["spec"].get("securityContext") or {})
    sc.update(container.get("securityContext") or {})
    return sc


def secret_values(m):
    """The manifest's Secret with the test's key and token for its placeholders."""
    test = {"sk-ant-REPLACE-ME": KEY, "REPLACE-ME": MCP_TOKEN}
    return {k: test.get(v, v) for k, v in m["Secret"]["stringData"].items()}


def atomic_volume(path, files, mode, gid):
    """A Secret or ConfigMap volume as the kubelet's atomic writer makes it:
    the files in a timestamped directory, ..data a symbolic link to it, each
    name a symbolic link through ..data."""
    stamp = "..2026_12_03_00_00_00.000000001"
    os.makedirs(os.path.join(path, stamp))
    for name, data in files.items():
        p = os.path.join(path, stamp, name)
        with open(p, "w") as f:
            f.write(data)
        os.chown(p, 0, gid)
        os.chmod(p, mode)
        os.symlink(os.path.join("..data", name), os.path.join(path, name))
    os.symlink(stamp, os.path.join(path, "..data"))
    os.chmod(os.path.join(path, stamp), 0o755)
    os.chmod(path, 0o755)


def volumes(m, pod, work, fs_group):
    """Each of the pod's volumes as a host directory: (name -> path)."""
    out = {}
    secret = secret_values(m)
    for v in pod["spec"]["volumes"]:
        path = os.path.join(work, "vol-" + v["name"])
        os.makedirs(path)
        if "configMap" in v:
            atomic_volume(path, m["ConfigMap"]["data"], v["configMap"].get("defaultMode", 0o644), fs_group)
        elif "secret" in v:
            atomic_volume(path, secret, v["secret"].get("defaultMode", 0o644), fs_group)
        elif "emptyDir" in v or "persistentVolumeClaim" in v:
            # emptyDir: 0777; a claim: the kubelet gives it fsGroup, setgid
            os.chown(path, 0, fs_group)
            os.chmod(path, 0o777 if "emptyDir" in v else 0o2775)
        else:
            raise ValueError(f"volume {v['name']}: a kind the test does not make")
        out[v["name"]] = path
    return out


def pod_spec(tmpl, m, rootfs, netns, vols, who, world):
    """The OCI spec a kubelet's runtime would run the agent container with."""
    pod = m["Pod"]
    c = next(x for x in pod["spec"]["containers"] if x["name"] == "agent")
    sc = security(pod, c)
    sc.update(who)
    unknown = set(sc) - set(FIELDS)
    if unknown:
        raise ValueError(f"securityContext fields the test does not map: {sorted(unknown)}")
    if sc.get("runAsNonRoot") and sc.get("runAsUser", 0) == 0:
        raise ValueError("runAsNonRoot with uid 0: the kubelet would not start it")
    s = copy.deepcopy(tmpl)
    p = s["process"]
    # what containerd's CRI plugin takes from its default spec
    # (pkg/cri/server/container_create_linux.go): no /run tmpfs, no rlimits
    # (the container has containerd's own), HOSTNAME in the environment
    s["mounts"] = [x for x in s["mounts"] if x["destination"] != "/run"]
    p.pop("rlimits", None)
    p["env"] = [e for e in p.get("env", []) if not e.startswith("HOSTNAME=")] + [f"HOSTNAME={pod['metadata']['name']}"]
    p["user"] = {"uid": sc["runAsUser"], "gid": sc.get("runAsGroup", 0),
                 "additionalGids": sorted({sc.get("runAsGroup", 0), sc["fsGroup"]})}
    if sc.get("capabilities", {}).get("drop") == ["ALL"]:
        p["capabilities"] = {k: [] for k in CAP_SETS}
    p["noNewPrivileges"] = sc.get("allowPrivilegeEscalation") is False
    if sc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
        s["linux"].pop("seccomp", None)
    s["root"] = {"path": rootfs, "readonly": bool(sc.get("readOnlyRootFilesystem"))}
    p["terminal"] = bool(c.get("tty"))
    p["cwd"] = c.get("workingDir", p.get("cwd", "/"))
    secret = secret_values(m)
    for e in c.get("env", []):
        ref = (e.get("valueFrom") or {}).get("secretKeyRef")
        p["env"].append(f"{e['name']}={secret[ref['key']] if ref else e['value']}")
    for vm in c["volumeMounts"]:
        s["mounts"].append({"destination": vm["mountPath"], "type": "bind", "source": vols[vm["name"]],
                            "options": ["rbind", "rprivate", "ro" if vm.get("readOnly") else "rw"]})
    # what the pod's network gives every container: its resolv.conf, and
    # here the test CA's bundle (a trust ConfigMap's file, by subPath)
    for src, dst in ((world.resolv, "/etc/resolv.conf"), (world.ca, "/etc/ssl/certs/ca-certificates.crt")):
        s["mounts"].append({"destination": dst, "type": "bind", "source": src, "options": ["rbind", "ro"]})
    for ns in s["linux"]["namespaces"]:
        if ns["type"] == "network":
            ns["path"] = f"/var/run/netns/{netns}"
    return s


# the agent's checks, from its bash tool: ward is PID 1, the bridge and the
# guard are its other children (the agent, node, is this shell's parent)
AGENT = r'''out="$(id -u) $(id -g) keys:$(env | grep -c sk-ant)" n=0 bad=""
kids=""
for s in /proc/[0-9]*/stat; do
	read -r pid comm state ppid rest < "$s" 2>/dev/null || continue
	[ "$ppid" = 1 ] && [ "$pid" != "$PPID" ] && kids="$kids $pid"
done
for p in 1 $kids; do
	cat /proc/$p/environ >/dev/null 2>&1 && bad="$bad environ-$p" || n=$((n+1))
	(exec 4</proc/$p/mem) 2>/dev/null && bad="$bad mem-$p" || n=$((n+1))
	kill -0 $p 2>/dev/null && bad="$bad signal-$p" || n=$((n+1))
done
cat /run/secrets/ward/anthropic-api-key >/dev/null 2>&1 && bad="$bad secret" || n=$((n+1))
for t in ADDR/443 127.0.0.1/SIDECAR; do
	timeout 5 bash -c "echo x > /dev/tcp/$t" 2>/dev/null && bad="$bad tcp-$t" || n=$((n+1))
done
echo "$out kids:$(echo $kids | wc -w) refused:$n granted:[$bad ]"
'''.replace("ADDR", PROVIDER_ADDR).replace("SIDECAR", str(SIDECAR_PORT))


def session(h, rt, cmd, ward_pid_fn, vols, world, uid, gid):
    """One pod's session: Pi over the runtime's stdin and stdout."""
    s = h.Session(cmd)
    st = s.request({"id": "s1", "type": "get_state"}, timeout=180)
    model = ((st or {}).get("data") or {}).get("model") or {}
    if not h.check(f"{rt}: get_state answered, the model is Anthropic's (the ConfigMap's provider route)",
                   bool(st and st.get("success")) and model.get("provider") == "anthropic",
                   f"model {model.get('provider')}/{model.get('id')}" if st else s.tail()):
        s.p.kill()
        s.p.wait()
        return
    ward = ward_pid_fn()
    agent = h.find_agent(ward) if ward else None
    if agent:
        sts = {n: h.proc_status(n) for n in (ward, agent)}
        ok = all(x["Uid"].split() == [str(uid)] * 4 and x["Gid"].split()[0] == str(gid) and
                 int(x["CapEff"], 16) == int(x["CapPrm"], 16) == int(x["CapBnd"], 16) == 0 and
                 x["NoNewPrivs"] == "1" for x in sts.values())
        ok = ok and int(sts[agent].get("Seccomp_filters", "0")) >= 2 and sts[agent]["Seccomp"] == "2"
        h.check(f"{rt}: host /proc: ward and the agent as uid {uid} gid {gid}, no capabilities (bounding set "
                "too), no_new_privs; the agent under the runtime's filter and ward's", ok,
                "; ".join(f"{n}: Uid {x['Uid'].split()[0]} Gid {x['Gid'].split()[0]} CapBnd {x['CapBnd']} "
                          f"NNP {x['NoNewPrivs']} filters {x.get('Seccomp_filters')}" for n, x in sts.items()))
    else:
        h.check(f"{rt}: the agent is found from the host's /proc", False, f"ward {ward}")
    text = s.prompt("p1", "hi")
    h.check(f"{rt}: a prompt answered by the provider, through the bridge, the key from the Secret's file",
            text == "Hello from fake-anthropic.", repr(text))
    text = s.prompt("p2", "CALL bash " + json.dumps({"command": AGENT})) or ""
    words = dict(w.split(":", 1) for w in text.split() if ":" in w and not w.startswith("RESULT"))
    n = int(words.get("kids", "0"))
    h.check(f"{rt}: from the agent's bash: its uid; no key in its environment; PID 1's and the bridge's "
            "/proc environ and mem, signals to them, the Secret's file, the provider's address and the "
            "sidecar's port: all refused",
            "TOOL RESULT" in text and f" {uid} " in text and words.get("keys") == "0" and n >= 1
            and "granted:[ ]" in text and words.get("refused") == str(3 * (n + 1) + 3), repr(text[:200]))
    text = s.prompt("p3", 'CALL mcp__tools__echo {"text":"hello from the pod"}') or ""
    h.check(f"{rt}: an MCP tool call through the bridge to the sidecar (its token from the Secret's variable, "
            "added by the bridge)", "hello from the pod" in text, repr(text[:160]))
    rc = s.close(timeout=60)
    reqs = world.requests()
    h.check(f"{rt}: every request reached the provider with the Secret's key; stdin's end ends the pod, status 0",
            rc == 0 and len(reqs) >= 3 and all(r["headers"].get("x-api-key") == KEY for r in reqs),
            f"rc {rc}, {len(reqs)} requests" + ("" if rc == 0 else "; " + s.tail()))
    try:
        with open(os.path.join(vols["run"], "evidence.json")) as f:
            ev = json.load(f)
    except (OSError, ValueError) as e:
        ev = {"error": str(e)}
    start = ev.get("start", {})
    state = os.listdir(vols["state"])
    with open(os.path.join(vols["state"], "mcp.json")) if "mcp.json" in state else open(os.devnull) as f:
        agent_mcp = f.read()
    try:
        with open(os.path.join(vols["state"], "settings.json")) as f:
            trust = json.load(f).get("defaultProjectTrust")
    except (OSError, ValueError):
        trust = None
    h.check(f"{rt}: the evidence (the run emptyDir) says ward started without root as uid {uid}; the claim, "
            "empty at start, holds Pi's session, the image's settings (project trust never) and an mcp.json "
            "without the token",
            start.get("root") is False and start.get("uid") == uid and "sessions" in state and trust == "never"
            and "127.0.0.1:7800" in agent_mcp and MCP_TOKEN not in agent_mcp,
            f"start {json.dumps(start)}; claim {sorted(state)}")


def containerd_pod(a, h, d):
    rt = "containerd"
    if not shutil.which("containerd") or not shutil.which("ctr"):
        report(f"{rt}: pod", "SKIP", "containerd is not installed")
        return
    from containerd import Containerd
    work = os.path.join(d, "pod-containerd")
    m = manifest()
    sc = security(m["Pod"], next(x for x in m["Pod"]["spec"]["containers"] if x["name"] == "agent"))
    uid, gid, fs_group = sc["runAsUser"], sc["runAsGroup"], sc["fsGroup"]
    os.makedirs(work)
    vols = volumes(m, m["Pod"], work, fs_group)
    try:
        with Containerd(os.path.join(work, "ctd")) as ctd, \
                ProviderNetns(a, work, "api.anthropic.com", "pod") as world:
            t = time.monotonic()
            ctd.ctr("images", "import", os.path.join(a.image_dir, "ward-pi.tar"), timeout=300)
            rootfs = os.path.join(work, "rootfs")
            tmpl = ctd.template(IMAGE, "ward-tmpl", rootfs, ["--seccomp", "--read-only"])
            h.runtime_default = tmpl["linux"]["seccomp"]
            report(f"{rt}: the image imported and its snapshot mounted", "pass", f"{time.monotonic() - t:.1f} s")
            sidecar(a, world)
            spec = pod_spec(tmpl, m, rootfs, world.netns, vols, {}, world)
            spec["linux"]["cgroupsPath"] = f"/{Containerd.NAMESPACE}/ward-pod"
            conf = os.path.join(work, "spec.json")
            with open(conf, "w") as f:
                json.dump(spec, f)
            cid = "ward-pod"

            def pid_of():
                r = ctd.ctr("tasks", "list", check=False).stdout.split("\n")[1:]
                return next((int(x.split()[1]) for x in r if x.split()[:1] == [cid]), None)

            session(h, rt, ["ctr", "-a", ctd.sock, "-n", Containerd.NAMESPACE, "run", "--rm", "--config", conf, cid],
                    pid_of, vols, world, uid, gid)
    except (RuntimeError, subprocess.CalledProcessError, ValueError) as e:
        report(f"{rt}: pod", "FAIL", str(e)[-400:] + (getattr(e, "stderr", "") or "")[-300:])


def runc_openshift(a, h, d):
    """The same pod under runc with OpenShift's restricted-v2 identity: a
    namespace's uid without a passwd entry, gid 0, its fsGroup."""
    rt = "runc-openshift"
    if not shutil.which("runc") or not shutil.which("umoci"):
        report(f"{rt}: pod", "SKIP", "runc or umoci is not installed")
        return
    uid = fs_group = 1000680000
    who = {"runAsUser": uid, "runAsGroup": 0, "fsGroup": fs_group}
    work = os.path.join(d, "pod-runc")
    m = manifest()
    os.makedirs(work)
    vols = volumes(m, m["Pod"], work, fs_group)
    b = os.path.join(work, "bundle")
    subprocess.run(["umoci", "unpack", "--image", os.path.join(a.image_dir, "oci") + ":ward-pi:latest", b],
                   check=True, capture_output=True)
    with open(os.path.join(b, "config.json")) as f:
        base = json.load(f)
    cid = f"ward-pod-{os.getpid()}"
    try:
        with ProviderNetns(a, work, "api.anthropic.com", "podr") as world:
            sidecar(a, world)
            # umoci's spec is a runtime's default; the profile is containerd's
            # RuntimeDefault, kept from its run when there was one
            tmpl = copy.deepcopy(base)
            if h.runtime_default:
                tmpl["linux"]["seccomp"] = h.runtime_default
            spec = pod_spec(tmpl, m, os.path.join(b, "rootfs"), world.netns, vols, who, world)
            with open(os.path.join(b, "config.json"), "w") as f:
                json.dump(spec, f)

            def pid_of():
                r = subprocess.run(["runc", "state", cid], capture_output=True, text=True)
                try:
                    return json.loads(r.stdout)["pid"]
                except ValueError:
                    return None

            session(h, rt, ["runc", "run", "--bundle", b, cid], pid_of, vols, world, uid, 0)
    finally:
        subprocess.run(["runc", "delete", "-f", cid], capture_output=True)


def sidecar(a, world):
    """The pod's MCP sidecar: the fixture server on the pod's loopback,
    requiring the Secret's token."""
    env = dict(os.environ, MCP_TOKEN=MCP_TOKEN, MCP_ALLOWED_HOSTS=f"127.0.0.1:{SIDECAR_PORT}")
    world.spawn(["sh", "-c", 'exec "$0" "$1" "$2" /mcp 2>&1', a.node,
                 os.path.join(a.tests, "node", "mcp-server.mjs"), str(SIDECAR_PORT)], env)


def doc_maps_every_field():
    """docs/kubernetes.md's table names every field the test maps."""
    try:
        with open(DOC) as f:
            doc = f.read()
    except OSError as e:
        report("pod: docs/kubernetes.md maps every securityContext field", "FAIL", str(e))
        return
    missing = [k for k, v in FIELDS.items() if f"`{k}`" not in doc or v.split(" ")[0].rstrip(";") not in doc]
    report("pod: docs/kubernetes.md maps every securityContext field to the spec field the tests set",
           "FAIL" if missing else "pass", f"missing {missing}" if missing else f"{len(FIELDS)} fields")
