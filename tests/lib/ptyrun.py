"""A program at a pseudo-terminal, as a person runs it: its stdin, stdout
and stderr a pty, a question ([y/N]) answered once as a person would."""
import os
import pty
import select
import time


def at_pty(argv, cwd, env, answer, seconds=600):
    """argv at a pty (stdin, stdout, stderr), `answer` typed when [y/N] is
    asked; returns (status, what the terminal showed)"""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    out, asked, end = b"", False, time.monotonic() + seconds
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.5)
        if not r:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        if not asked and b"[y/N]" in out:
            os.write(fd, answer.encode() + b"\n")
            asked = True
    if time.monotonic() >= end:
        try:
            os.kill(pid, 9)  # out of time: its status says so (-9)
        except ProcessLookupError:
            pass
    _, st = os.waitpid(pid, 0)
    os.close(fd)
    rc = os.waitstatus_to_exitcode(st)
    return rc, out.decode(errors="replace")
