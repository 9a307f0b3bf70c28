"""Host-side servers for the bridge and e2e tests: a process that listens
on a unix socket only the bridge's user may use.

    srv = serve_unix([node, "mcp-server.mjs", sock, "/mcp"], sock, 999, env=env)
"""
import os
import subprocess
import time


def serve_unix(argv, sock, uid, env=None, stderr=subprocess.DEVNULL, timeout=60.0):
    """Starts argv, waits for it to create sock, gives the socket to uid:uid
    with mode 0600 and returns the Popen. Raises RuntimeError if the socket
    does not appear (the process is killed)."""
    p = subprocess.Popen(argv, env=env, stderr=stderr)
    end = time.monotonic() + timeout
    while not os.path.exists(sock):
        if p.poll() is not None or time.monotonic() > end:
            p.kill()
            p.wait()
            raise RuntimeError(f"{os.path.basename(argv[1] if len(argv) > 1 else argv[0])}: no socket {sock}")
        time.sleep(0.02)
    os.chown(sock, uid, uid)
    os.chmod(sock, 0o600)
    return p
