#!/usr/bin/python3
"""Writes tools/ward.order: the functions and data a plain init runs and
reads, in the order lld lays them out first (--symbol-ordering-file).

Why: the kernel maps a binary's pages 64 KiB at a time around each fault
(fault-around), so a PID 1 whose hot code is spread over 1.4 MB of static
text (glibc's string functions, one family per page, between mbedTLS,
c-ares and jansson) pays for most of it in RSS although it runs little of
it. Packed together, the hot code and data fill a few windows.

What runs is measured, not guessed: every function symbol gets a gdb
breakpoint that counts and continues (on this CPU: glibc's IFUNC variants
are the ones it picks), and a run that follows the agent's child to its
exec (posix_spawn's child runs in ward's memory); callgrind adds what runs only as PID 1 (under gdb,
gdb is PID 1; valgrind runs ward in its own process) and in the agent's
child before its exec (gdb stays with the parent); valgrind's lackey lists
the data addresses read and written. Four runs, each in a PID namespace of its own: `ward --
/bin/true`, a child that sleeps, a TERM forwarded to a shell, 30 orphans
reaped.

  make order      (needs gdb and valgrind; the result is committed)
"""
import argparse
import bisect
import os
import re
import subprocess
import sys
import tempfile

# CHILD: follow the agent's first child to its exec instead of ward: a
# plain init starts it with posix_spawn, whose child runs glibc's code in
# ward's own memory (CLONE_VM), so the pages it faults in are ward's
# (init/supervise/spawn.c).
GDB = r'''
import gdb
hits = set()
done = [False]
class B(gdb.Breakpoint):
    def stop(self):
        hits.add(self.location)
        return False
def on_stop(ev):
    if CHILD and not isinstance(ev, gdb.BreakpointEvent):
        done[0] = True  # the child's exec: its part is over
gdb.events.stop.connect(on_stop)
gdb.execute("set pagination off")
gdb.execute("set breakpoint pending off")
gdb.execute("set detach-on-fork on")
if CHILD:
    gdb.execute("set startup-with-shell off")
    gdb.execute("set follow-fork-mode child")
    gdb.execute("catch exec")
else:
    gdb.execute("set follow-fork-mode parent")
for n in open(SYMS).read().split():
    try:
        B(n, internal=True)
    except Exception:
        pass
try:
    gdb.execute("run")
    while not done[0]:
        gdb.execute("continue")
except gdb.error:
    pass
with open(OUT, "w") as f:
    f.write("\n".join(sorted(hits)) + "\n")
'''


def nm(ward):
    out = subprocess.run(["nm", "-S", "--defined-only", ward], capture_output=True, text=True, check=True).stdout
    text, data = set(), []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tTiW":
            text.add(f[3])
        elif len(f) == 4 and f[2] in "rRdDbBvV":
            data.append((int(f[0], 16), int(f[1], 16), f[3]))
        elif len(f) == 3 and f[1] in "tTiW":
            text.add(f[2])
    return sorted(text), sorted(data)


def scenarios(ward, helper):
    # each in a PID namespace of its own (under gdb, ward is a subreaper
    # there, not PID 1: the TERM goes to the shell's parent)
    ns = ["unshare", "-fp", "--mount-proc"]
    return [ns + [ward, "--", "/bin/true"],
            ns + [ward, "--", "/bin/sleep", "0.3"],
            ns + [ward, "--", "/bin/sh", "-c", "kill -TERM $PPID; sleep 0.3"],
            ns + [ward, "--", helper, "orphans", "30"]]


def text_hits(ward, helper, text, work):
    syms = os.path.join(work, "syms")
    with open(syms, "w") as f:
        f.write("\n".join(text) + "\n")
    hits = set()
    for i, argv in enumerate(scenarios(ward, helper)):
        out, script = os.path.join(work, f"hits{i}"), os.path.join(work, f"trace{i}.py")
        with open(script, "w") as f:
            f.write(f"SYMS = {syms!r}\nOUT = {out!r}\nCHILD = False\n" + GDB)
        n = argv.index(ward)
        subprocess.run(argv[:n] + ["gdb", "-q", "-batch", "-x", script, "--args"] + argv[n:],
                       capture_output=True, timeout=600)
        with open(out) as f:
            hits |= set(f.read().split())
    out, script = os.path.join(work, "hits-child"), os.path.join(work, "trace-child.py")
    with open(script, "w") as f:
        f.write(f"SYMS = {syms!r}\nOUT = {out!r}\nCHILD = True\n" + GDB)
    # found on PATH after a miss, as `ward -- sleep 1` is: the search runs
    # in the child too
    env = dict(os.environ, PATH="/nonexistent:/usr/bin:/bin")
    subprocess.run(["gdb", "-q", "-batch", "-x", script, "--args", ward, "--", "true"],
                   capture_output=True, timeout=600, env=env)
    with open(out) as f:
        hits |= set(f.read().split())
    return hits


# glibc's IFUNC variants: which one runs is the CPU's choice, and valgrind's
# emulated CPU is not this one (those come from gdb's run)
VARIANT = re.compile(r"_(avx2|avx512|evex|sse2|sse4_1|sse4_2|sse42|ssse3|avx|erms|unaligned)")


def callgrind_hits(ward, helper, work, chosen, names):
    """What gdb does not see: what runs only as PID 1 (vm_detect's probes;
    under gdb, gdb is the namespace's PID 1, where valgrind runs ward in its
    own process) and in the agent's child between fork and exec (gdb stays
    with the parent). An IFUNC variant valgrind's CPU picked stands for the
    one this CPU picks: the variant of that family gdb saw, else its evex and
    avx2 ones."""
    hits = set()
    for i, argv in enumerate(scenarios(ward, helper)):
        out = os.path.join(work, f"callgrind{i}")
        n = argv.index(ward)
        subprocess.run(argv[:n] + ["valgrind", "--tool=callgrind", "--trace-children=no",
                                   f"--callgrind-out-file={out}.%p"] + argv[n:], capture_output=True, timeout=600)
        for name in os.listdir(work):
            if not name.startswith(f"callgrind{i}."):
                continue
            with open(os.path.join(work, name)) as f:
                for line in f:
                    m = re.match(r"^c?fn=\(\d+\) (\S+)$", line.rstrip("\n"))
                    if not m or m.group(1).startswith("0x"):
                        continue
                    fn = m.group(1)
                    v = VARIANT.search(fn)
                    if not v:
                        hits.add(fn)
                        continue
                    family = fn[:v.start()] + "_"
                    mine = [c for c in chosen if c.startswith(family)]
                    hits |= set(mine or [x for x in names if x.startswith(family) and
                                         ("_evex" in x or "_avx2" in x) and "_rtm" not in x])
    return hits


def data_hits(ward, helper, data, work):
    starts = [d[0] for d in data]
    hits = set()
    for i, argv in enumerate(scenarios(ward, helper)):
        log = os.path.join(work, f"lackey{i}")
        n = argv.index(ward)
        subprocess.run(argv[:n] + ["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={log}"] + argv[n:],
                       capture_output=True, timeout=600)
        with open(log) as f:
            for line in f:
                m = re.match(r"^ ?[LSM]\s+([0-9a-f]+),", line)
                if not m:
                    continue
                a = int(m.group(1), 16)
                j = bisect.bisect_right(starts, a) - 1
                if j >= 0 and data[j][0] <= a < data[j][0] + max(data[j][1], 1):
                    hits.add(data[j][2])
    return hits


def relro(ward):
    """[start, end) of .data.rel.ro: glibc writes its startup variables
    there before it is made read-only, and packed first they would spread
    over more written pages, not fewer; that section keeps lld's order."""
    out = subprocess.run(["readelf", "-SW", ward], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 5 and f[1] == ".data.rel.ro":
            return int(f[3], 16), int(f[3], 16) + int(f[5], 16)
    return 0, 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--helper", required=True)
    a = ap.parse_args()
    text, data = nm(a.ward)
    with tempfile.TemporaryDirectory() as work:
        t = text_hits(a.ward, a.helper, text, work)
        t |= callgrind_hits(a.ward, a.helper, work, t, text) & set(text)
        lo, hi = relro(a.ward)
        # nor anything over 2 KiB (a buffer, a table): one field of it read
        # would spread the small hot variables over its untouched pages
        d = data_hits(a.ward, a.helper, [x for x in data if not lo <= x[0] < hi and x[1] <= 2048], work)
    if len(t) < 100:
        sys.exit(f"gen-order: only {len(t)} functions traced: is gdb working here?")
    sys.stdout.write("\n".join(sorted(t)) + "\n" + "\n".join(sorted(d - t)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
