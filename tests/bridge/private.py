"""The bridge's private inputs out of the agent's reach: rules, links, bind
mounts."""
import json
import os
import shutil
import subprocess

from results import report  # noqa: E402
from harness import AGENT_UID  # noqa: E402


def private_case(a, work):
    """What ward reads in private for the bridge stays out of the agent's
    Landlock rules: an [mcp] source or a header's @PATH under a rule, and
    write = . with ward started in /, stop the start (and --check) with
    exit 2 and one line, before the agent runs or mcp.json is written."""
    d = os.path.join(work, "private")
    os.makedirs(os.path.join(d, "host"), exist_ok=True)
    src, token = os.path.join(d, "host", "mcp.json"), os.path.join(d, "host", "token")
    target, marker = os.path.join(d, "home", "mcp.json"), os.path.join(d, "started")
    with open(src, "w") as f:
        json.dump({"mcpServers": {"s": {"url": "http://127.0.0.1:6767/mcp", "headers": {"X-Key": "k"}}}}, f)
    with open(token, "w") as f:
        f.write("Bearer t\n")
    os.makedirs(os.path.join(d, "home"), exist_ok=True)
    head = (f"[agent]\nuser = {AGENT_UID}\ncommand = /bin/touch {marker}\n"
            "[landlock]\nmode = best_effort\nscope = abstract signal\n")
    mcp = f"[mcp]\nsource = {src}\ntarget = {target}\nupstream = unix:/nonexistent.sock\nlisten = 127.0.0.1:17894\n"
    route = ("[route r]\nlisten = 127.0.0.1:17895\nupstream = unix:/nonexistent.sock\npath = /x\n"
             f"header = Authorization: @{token}\n")
    cases = (
        ("[mcp] source under a read rule", f"read = /bin /lib /usr {d}/host\n" + mcp, "/", src),
        ("[mcp] source under write = . (started in its directory's parent)", "write = .\n" + mcp, d, src),
        ("a route header's @PATH under a write rule", f"write = {d}\n" + route, "/", token),
        ("write = . with ward started in /", "write = . /tmp\n" + route, "/", "started in /"),
    )
    for label, body, cwd, want in cases:
        conf = os.path.join(d, "w.conf")
        with open(conf, "w") as f:
            f.write(head + body)
        for args in (["--check"], []):
            for p_ in (marker, target):
                if os.path.exists(p_):
                    os.unlink(p_)
            p = subprocess.run([a.ward, "-c", conf] + args, capture_output=True, timeout=30, cwd=cwd)
            err = p.stderr.decode().strip().splitlines()
            report(f"{label}{' (--check)' if args else ''}: exit 2, one line naming it, nothing started",
                   p.returncode == 2 and len(err) == 1 and want in err[0] and not os.path.exists(marker)
                   and not os.path.exists(target), f"rc {p.returncode}: {err}")
    # a bind mount that shows the source's directory a second time, under a
    # rule (docker -v $WS/.ward:/run/ward with the workspace writable)
    ws, view = os.path.join(d, "ws"), os.path.join(d, "runward")
    os.makedirs(os.path.join(ws, ".ward"), exist_ok=True)
    os.makedirs(view, exist_ok=True)
    shutil.copy(src, os.path.join(ws, ".ward", "mcp.json"))
    subprocess.run(["mount", "--bind", os.path.join(ws, ".ward"), view], check=True)
    try:
        with open(conf, "w") as f:
            f.write(head + f"write = {ws}\n" + mcp.replace(src, os.path.join(view, "mcp.json")))
        p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, timeout=30, cwd="/")
    finally:
        subprocess.run(["umount", view], check=True)
    err = p.stderr.decode().strip().splitlines()
    report("an [mcp] source whose directory a bind mount also shows under a write rule: exit 2, one line",
           p.returncode == 2 and len(err) == 1 and f"rule for {ws}:" in err[0], f"rc {p.returncode}: {err}")
    # a second name (hard link) of the token, where the rules cannot be judged
    link = os.path.join(d, "home", "token-link")
    os.link(token, link)
    with open(conf, "w") as f:
        f.write(head + "read = /bin /lib /usr\n" + route)
    p = subprocess.run([a.ward, "-c", conf, "--check"], capture_output=True, timeout=30, cwd="/")
    err = p.stderr.decode().strip().splitlines()
    report("a header file with a second name (a hard link): exit 2, one line", p.returncode == 2 and len(err) == 1 and
           "hard links" in err[0], f"rc {p.returncode}: {err}")
    os.unlink(link)
    # the same source and token outside the rules: the agent starts
    marker = os.path.join(d, "home", "started")
    with open(conf, "w") as f:
        f.write(head.replace(os.path.join(d, "started"), marker) + "read = /bin /lib /usr\nwrite = .\n" + mcp + route)
    os.chown(os.path.join(d, "home"), AGENT_UID, AGENT_UID)
    p = subprocess.run([a.ward, "-c", conf], capture_output=True, timeout=30, cwd=os.path.join(d, "home"))
    ok = p.returncode == 0 and os.path.exists(marker) and os.path.exists(target)
    report("the same [mcp] source and header file outside the agent's rules: the agent starts", ok,
           f"rc {p.returncode}" + ("" if ok else f": {p.stderr.decode()[-400:]}"))
