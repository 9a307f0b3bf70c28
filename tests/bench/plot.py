#!/usr/bin/python3
"""Plots of the last `make bench` run, with gnuplot (Debian's gnuplot-nox).

  plot.py --data build/bench --out docs/bench [--md docs/benchmarks.md]

Reads the JSON the bench scripts wrote (init.json, bridge.json, load.json,
image.json; those missing are left out), writes one SVG per comparison into
--out and, with --md, appends a "Plots" section linking them.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HEAD = """set terminal svg size 860,400 dynamic font 'sans,11' background '#ffffff'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key below
set bmargin 6
set xtics rotate by -12
set xtics noenhanced
set datafile separator '\\t'
"""


def gnuplot(script, out):
    with tempfile.NamedTemporaryFile("w", suffix=".gp", delete=False) as f:
        f.write(HEAD + f"set output '{out}'\n" + script)
    try:
        subprocess.run(["gnuplot", f.name], check=True)
    finally:
        os.unlink(f.name)


def dat(rows):
    f = tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False)
    for r in rows:
        f.write("\t".join(str(x) for x in r) + "\n")
    f.close()
    return f.name


def med(v):
    return statistics.median(v) if v else float("nan")


def bars(rows, title, out, extra=""):
    """A clustered bar chart: rows[0] is the header (first cell: the x
    label column), one cluster per following row."""
    f = dat(rows)
    cols = ", ".join((f"'{f}' using 2:xtic(1)" if i == 0 else f"'' using {i + 2}") + " title columnhead"
                     for i in range(len(rows[0]) - 1))
    try:
        gnuplot(f"set title '{title}'\n{extra}plot {cols}\n", out)
    finally:
        os.unlink(f)


def init_plot(d, out):
    anchors = d["names"][1:]
    rows = [["metric"] + [f"ward/{a}" for a in anchors]]
    for key, label, unit in d["rows"]:
        m = d["metrics"][key]
        short = {"start": "start /bin/true", "hwm": "VmHWM", "private": "anonymous memory",
                 "siglat": "TERM latency", "reap": "reap 10 000 orphans"}
        rows.append([short.get(key, label.replace("`", "")[:20])] +
                    [f"{med(m['ward']) / med(m[a]):.3f}" if med(m[a]) else "NaN" for a in anchors])
    bars(rows, "ward / anchor, median (below 1: ward ahead)", out,
         "set yrange [0:*]\nset arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2\n")


def bridge_plot(d, out_tp, out_lat):
    kinds = [k for k in ("direct-tcp", "direct-unix", "direct", "socat", "bare", "bare-splice", "ward", "ward-tcp") if k in d]
    bars([["what"] + kinds,
          ["256 MiB POST"] + [f"{med(d[k]['post']):.0f}" for k in kinds],
          ["256 MiB streamed response"] + [f"{med(d[k]['stream']):.0f}" for k in kinds]] +
         [[f"SSE, {e >> 10 or e} {'KiB' if e >= 1024 else 'B'} events"] + [f"{med(d[k][f'events{e}']):.0f}"
                                                                           for k in kinds]
          for e in (256, 4096, 65536) if all(d[k].get(f"events{e}") for k in kinds)],
         "bridge throughput (MiB/s, higher is better)", out_tp, "set yrange [0:*]\n")

    def pct(v, q):
        return statistics.quantiles(v, n=100)[q - 1]
    bars([["what"] + kinds] + [[f"p{q}"] + [f"{pct(d[k]['lat'], q):.0f}" for k in kinds] for q in (50, 99)],
         "small request latency, new connection each (µs, lower is better)", out_lat, "set yrange [0:*]\n")


def load_plot(d, out):
    bars([["what", "socat", "ward"],
          [f"RSS, {d['ward']['streams']} streams (MiB)", f"{d['socat']['rss_kb'] / 1024:.1f}",
           f"{d['ward']['rss_kb'] / 1024:.1f}"],
          ["requests/s ÷ 10", f"{d['socat']['rate'] / 10:.0f}", f"{d['ward']['rate'] / 10:.0f}"],
          ["request p99 (ms)", f"{d['socat']['p99'] / 1000:.1f}", f"{d['ward']['p99'] / 1000:.1f}"]],
         "bridge under load vs socat (log scale)", out, "set logscale y\n")


def image_plot(d, out):
    rows = [["what", "tini entrypoint", "ward entrypoint"]]
    for rt, res in d.items():
        rows.append([f"{rt}: first RPC response (ms)", f"{med([x[0] for x in res['tini']]) * 1000:.0f}",
                     f"{med([x[0] for x in res['ward']]) * 1000:.0f}"])
    bars(rows, "reference image: ward vs tini as the entrypoint", out, "set yrange [0:*]\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="build/bench")
    ap.add_argument("--out", default="docs/bench")
    ap.add_argument("--md")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    made = []

    def load(name):
        p = os.path.join(a.data, name + ".json")
        return json.load(open(p)) if os.path.exists(p) else None

    if (d := load("init")):
        init_plot(d, os.path.join(a.out, "init.svg"))
        made.append(("init.svg", "ward vs the anchors (ratios)"))
    if (d := load("bridge")):
        bridge_plot(d, os.path.join(a.out, "bridge-throughput.svg"), os.path.join(a.out, "bridge-latency.svg"))
        made += [("bridge-throughput.svg", "bridge throughput"), ("bridge-latency.svg", "bridge latency")]
    if (d := load("load")):
        load_plot(d, os.path.join(a.out, "load.svg"))
        made.append(("load.svg", "bridge under load"))
    if (d := load("image")):
        image_plot(d, os.path.join(a.out, "image.svg"))
        made.append(("image.svg", "the reference image"))
    if a.md and made:
        rel = os.path.relpath(a.out, os.path.dirname(os.path.abspath(a.md)))
        with open(a.md, "a") as f:
            f.write("\n## Plots\n\nDrawn by `tests/bench/plot.py` (gnuplot) from the same run.\n\n" +
                    "".join(f"![{t}]({rel}/{n})\n\n" for n, t in made))
    print(f"plot: {len(made)} plot(s) in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
