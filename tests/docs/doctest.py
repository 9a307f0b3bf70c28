#!/usr/bin/python3
"""Doc tests: every ```sh block in README.md and docs/*.md is executed.

  doctest.py [--files F...] [--image-dir build/image]

The blocks of one file run in order in one bash (set -euo pipefail) from
the repository's root, so variables and background jobs carry over; each
block is one check, and a failing block fails the ones after it too. A
block preceded by `<!-- doctest: skip: REASON -->` is reported as SKIP
with its reason (never as a pass). The harness provides what a user's
machine has: a docker daemon (a private one, DOCKER_HOST set).

It also checks that the image rebuilt by the guide (`make image`) is
byte-identical to the one built before it: the build is reproducible. The
guide's build writes to build/image-doctest (IMAGE_OUT), so that the image
the other suites use (make check runs e2e beside the doc tests) stays as it
is while they use it; the guide's `docker load -i build/image/...` loads
that one, which the comparison shows to be the same bytes.
"""
import argparse
import glob
import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from dockerd import Dockerd  # noqa: E402

GUIDE_BUILD = [None]  # the name of the guide's `make image` block


from results import RESULTS, report  # noqa: E402


def blocks(path):
    """[(line, skip_reason or None, text)] of the file's ```sh blocks."""
    out, lines = [], open(path).read().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            j = i - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            m = re.match(r"<!-- doctest: skip: (.+?) -->", lines[j].strip()) if j >= 0 else None
            k = i + 1
            while k < len(lines) and lines[k].strip() != "```":
                k += 1
            out.append((i + 1, m.group(1) if m else None, "\n".join(lines[i + 1:k])))
            i = k
        i += 1
    return out


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def cleanup(path, env):
    """`<!-- doctest: cleanup: CMD -->` in a file: run before and after its
    blocks, so a failed run leaves nothing behind for the next one."""
    for m in re.finditer(r"<!-- doctest: cleanup: (.+?) -->", open(path).read()):
        subprocess.run(["bash", "-c", m.group(1)], cwd=ROOT, env=env, capture_output=True)


def run_file(path, env, timeout):
    rel = os.path.relpath(path, ROOT)
    bl = blocks(path)
    if not bl:
        return
    cleanup(path, env)
    try:
        run_blocks(path, rel, bl, env, timeout)
    finally:
        cleanup(path, env)


def run_blocks(path, rel, bl, env, timeout):
    script = ["set -euo pipefail"]
    for n, (line, skip, text) in enumerate(bl):
        if skip:
            continue
        script.append(f"echo '::doctest-block {n}::' >> \"$DOCTEST_MARKS\"")
        script.append(text)
    script.append("echo '::doctest-done::' >> \"$DOCTEST_MARKS\"")
    with tempfile.TemporaryDirectory(prefix="ward-doctest-") as d:
        sh = os.path.join(d, "script.sh")
        with open(sh, "w") as f:
            f.write("\n".join(script) + "\n")
        marks_file = os.path.join(d, "marks")
        open(marks_file, "w").close()
        log = os.path.join(d, "out")
        with open(log, "w") as out:
            p = subprocess.Popen(["bash", sh], cwd=ROOT, env=dict(env, DOCTEST_MARKS=marks_file), stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                rc = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                rc = "timeout"
            # whatever the blocks left running (background servers) goes too
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        marks = open(marks_file).read().splitlines()
        reached = [int(re.search(r"\d+", m).group()) for m in marks if m.startswith("::doctest-block")]
        done = any(m.startswith("::doctest-done::") for m in marks)
        text = open(log).read()
    last = reached[-1] if reached else None
    for n, (line, skip, _) in enumerate(bl):
        name = f"{rel}:{line}"
        if rel == "docs/guide.md" and bl[n][2].strip() == "make image":
            GUIDE_BUILD[0] = name
        if skip:
            report(name, "SKIP", skip)
        elif n in reached and (done or n != last):
            report(name, "pass", "ran")
        elif n == last:
            report(name, "FAIL", f"exit {rc}; output:\n" + "\n".join("    " + l for l in text.splitlines()[-25:]))
        else:
            report(name, "FAIL", "not reached (an earlier block failed)")


def stale(tar):
    """An image older than ward or than a file of rootfs/ was built from
    other inputs: comparing a rebuild with it proves nothing."""
    inputs = [os.path.join(ROOT, "build", "ward")] + \
        [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(ROOT, "rootfs")) for f in fs]
    built = os.path.getmtime(tar)
    return any(os.path.exists(i) and os.path.getmtime(i) > built for i in inputs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", nargs="*")
    ap.add_argument("--timeout", type=int, default=900)
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("doctest: needs root (docker, podman, runc)")
        return 2
    files = a.files or [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    tar = os.path.join(ROOT, "build", "image", "ward-pi.tar")
    before = sha256(tar) if os.path.exists(tar) and not stale(tar) else None
    again = os.path.join(ROOT, "build", "image-doctest")
    work = tempfile.mkdtemp(prefix="ward-doctest-dk-")
    dk = Dockerd(work)
    try:
        dk.start()
        for f in files:
            run_file(os.path.abspath(f), dict(dk.env, IMAGE_OUT=again), a.timeout)
    finally:
        dk.stop()
        subprocess.run(["rm", "-rf", work])
    rebuilt = any(name == GUIDE_BUILD[0] and st == "pass" for name, st, _ in RESULTS.rows)
    tar_again = os.path.join(again, "ward-pi.tar")
    if before and rebuilt and os.path.exists(tar_again):
        after = sha256(tar_again)
        report("image: rebuilt from the same inputs, byte-identical", "pass" if after == before else "FAIL",
               f"ward-pi.tar sha256 {before[:16]}… before, {after[:16]}… after")
    else:
        report("image: rebuilt from the same inputs, byte-identical", "SKIP",
               "no image built from the same inputs before the doc tests, or the guide's make image did not run")
    return RESULTS.summary("docs")


if __name__ == "__main__":
    sys.exit(main())
