"""Pi's TUI driven as a person drives it, in a tmux pane (tmux.py): it draws,
a typed prompt gets the fake model's answer, optionally a bash tool call,
a resize redraws it, Ctrl-C clears the editor, Ctrl-D ends it and the shell
after it takes commands. Shared by tests/wardpi (Pi under ward on the host)
and tests/e2e (ward-pi under docker and rootless podman).

    screens, status = session(t, "ward -c conf", done, tool=PROBE)
    checks(report, name, screens, status, tool_expect="sandbox-42 ...")
"""
import json
import os

from tmux import end_pi, widest


def session(t, command, done, tool=None, wait=60, alive=None):
    """Runs command in t's pane; returns (screens by step, the status its
    shell wrote to done). alive: see tmux.end_pi."""
    screens, status = {}, None
    if os.path.exists(done):
        os.unlink(done)
    try:
        t.start(f"{command}; echo $? > {done}; exec sh", 120, 30)
        screens["start"] = t.wait_for(lambda s: "fake-model" in s, wait + 30)
        t.type("say hello")
        t.keys("Enter")
        screens["answer"] = t.wait_for(lambda s: "Hello from fake-model." in s, wait)
        if tool:
            t.type("CALL bash " + json.dumps({"command": tool}))
            t.keys("Enter")
            screens["tool"] = t.wait_for(lambda s: "TOOL RESULT" in s, wait)
        t.resize(70, 24)
        screens["resized"] = t.wait_for(lambda s: widest(s) <= 70 and "fake-model" in s, 15)
        t.type("draft-never-sent")
        screens["draft"] = t.wait_for(lambda s: "draft-never-sent" in s, 10)
        t.keys("C-c")
        screens["cleared"] = t.wait_for(lambda s: "draft-never-sent" not in s and "fake-model" in s, 10)
        status = end_pi(t, done, alive=alive)
        t.keys("echo shell-$((40+2))", "Enter")
        screens["after"] = t.wait_for(lambda s: "shell-42" in s, 10)
    finally:
        t.kill()
    return screens, status


def checks(report, name, screens, status, tool_expect=None, tool_what=""):
    """One result per step; report(name, ok, detail)."""
    get = screens.get
    report(f"{name}: the TUI draws (its footer names the model)", "fake-model" in get("start", ""),
           get("start", "")[-300:])
    report(f"{name}: a typed prompt gets the model's answer on the screen, through the bridge",
           "Hello from fake-model." in get("answer", ""), get("answer", "")[-400:])
    if tool_expect:
        tool = get("tool", "")
        report(f"{name}: a bash tool call runs in the sandbox{tool_what}",
               tool_expect in tool or tool_expect in tool.replace("\n", " ").replace("  ", " "), tool[-500:])
    report(f"{name}: a resize reaches Pi (SIGWINCH through ward), which redraws at the new width",
           "fake-model" in get("resized", "") and widest(get("resized", "")) <= 70, get("resized", "")[-300:])
    report(f"{name}: Ctrl-C does what Pi expects: it clears the editor, and Pi goes on",
           "draft-never-sent" in get("draft", "") and "draft-never-sent" not in get("cleared", "x")
           and "fake-model" in get("cleared", ""), get("cleared", "")[-300:])
    report(f"{name}: Ctrl-D ends it, status 0, and the shell has its terminal back (it takes commands)",
           status == "0" and "shell-42" in get("after", ""), f"status {status}; {get('after', '')[-200:]}")
