#!/usr/bin/python3
"""The MCP bridge from the outside: ward runs with [route] sections, an
upstream listens on a unix socket, and raw-socket clients (well-behaved and
hostile) talk to the bridge's loopback ports. Then the official MCP SDK
client, run as the confined agent without the token, talks to the fixture
MCP server through the bridge.

  bridge.py --ward W [--helper H] [--only GROUP,...] [--label L]

The cases live by concern: wire.py (requests on the wire), clients.py (real
MCP clients as the agent), tlsup.py (tls: upstreams), lifecycle.py (the
bridge as a supervised process), checks.py (--check and start refusals),
private.py (private inputs out of the agent's reach), stream.py (routes of
protocol = stream), names.py (upstreams by DNS name), proxy.py (the egress
proxy), keepalive.py (upstream connections kept between requests), ask.py (the
proxy asking a person); harness.py holds what
they share.
"""
import argparse
import os
import resource
import shutil
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from results import RESULTS, report  # noqa: E402
from harness import SERVERS  # noqa: E402
from wire import wire_cases  # noqa: E402
from clients import sdk_case, mcp_case, pi_case  # noqa: E402
from tlsup import tls_case, tls_held_child  # noqa: E402
from lifecycle import (accept_case, frozen_case, health_case, no_children_file_case, pdeath_case,  # noqa: E402
                       restart_caps_case, restart_wait_case, stall_case)
from checks import check_case, check_mcp_case, check_paths_case  # noqa: E402
from private import private_case  # noqa: E402
from stream import stream_case  # noqa: E402
from names import names_case, names_child  # noqa: E402
from proxy import proxy_case, proxy_child  # noqa: E402
from login import login_case, login_child  # noqa: E402
from probes import probes_case  # noqa: E402
from keepalive import keep_case  # noqa: E402
from ask import ask_case, ask_child  # noqa: E402
from tools import tools_case  # noqa: E402
from conformance import conformance_case  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--label", default="", help="suffix of the summary line")
    ap.add_argument("--helper", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                                                     "tests", "helper"), help="tests/helpers/helper.c, built")
    ap.add_argument("--only", default="", help="comma-separated groups to run: wire,sdk,mcp,pi,tls,health,stall,accept,pdeath,frozen,"
                    "restart-caps,restart-wait,check,check-mcp,check-paths,private,stream,names,login,probes,proxy,keep,ask,tools,conformance")
    ap.add_argument("--tls-held", default="", help=argparse.SUPPRESS)  # CRT,KEY,PIN: tls_held_child
    ap.add_argument("--names-child", default="", help=argparse.SUPPRESS)  # WORK: names_child, in its namespace
    ap.add_argument("--proxy-child", default="", help=argparse.SUPPRESS)  # WORK: proxy_child, in its namespace
    ap.add_argument("--login-child", default="", help=argparse.SUPPRESS)  # WORK: login_child, in its namespace
    ap.add_argument("--ask-child", default="", help=argparse.SUPPRESS)  # WORK: ask_child, in its namespace
    a = ap.parse_args()
    a.ward = os.path.abspath(a.ward)
    if a.tls_held:
        return tls_held_child(a)
    if a.names_child:
        return names_child(a)
    if a.proxy_child:
        return proxy_child(a)
    if a.login_child:
        return login_child(a)
    if a.ask_child:
        return ask_child(a)
    if os.geteuid() != 0:
        print("bridge: needs root")
        return 2
    # the connection-limit case holds 1024 clients and their upstream side
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    work = tempfile.mkdtemp(prefix="ward-bridge-")
    os.chmod(work, 0o755)
    try:
        groups = (("wire", wire_cases), ("sdk", sdk_case), ("mcp", mcp_case), ("pi", pi_case), ("tls", tls_case),
                  ("health", health_case), ("stall", stall_case), ("accept", accept_case),
                  ("pdeath", pdeath_case), ("no-children-file", no_children_file_case), ("frozen", frozen_case),
                  ("restart-caps", restart_caps_case),
                  ("restart-wait", restart_wait_case), ("check", check_case),
                  ("check-mcp", check_mcp_case), ("check-paths", check_paths_case),
                  ("private", private_case), ("stream", stream_case), ("names", names_case),
                  ("login", login_case), ("probes", probes_case), ("proxy", proxy_case), ("keep", keep_case),
                  ("ask", ask_case), ("tools", tools_case), ("conformance", conformance_case))
        for name, run in groups:
            if not a.only or name in a.only.split(","):
                run(a, work)
    except Exception as e:
        traceback.print_exc()  # where the harness broke
        report("harness", False, repr(e))
    finally:
        for p in SERVERS:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(work, ignore_errors=True)
    return RESULTS.summary("bridge", a.label)


if __name__ == "__main__":
    sys.exit(main())
