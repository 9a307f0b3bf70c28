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

HEAD = """set terminal svg size 720,380 dynamic font 'sans,11' background '#ffffff'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top left
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


def init_plot(d, out):
    names = d["names"]
    anchors = names[1:]
    rows = [["metric"] + [f"ward/{a}" for a in anchors]]
    for key, label, unit in d["rows"]:
        m = d["metrics"][key]
        rows.append([label.replace("`", "")[:34]] +
                    [f"{med(m['ward']) / med(m[a]):.3f}" if med(m[a]) else "NaN" for a in anchors])
    f = dat(rows)
    cols = " , ".join(f"'' using {i + 2}:xtic(1) title columnhead" if i else f"'{f}' using 2:xtic(1) title columnhead"
                      for i in range(len(anchors)))
    gnuplot(f"set title 'ward / anchor, median (below 1: ward ahead)'\nset yrange [0:*]\n"
            f"set xtics rotate by -20\nset arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2\n"
            f"plot {cols}\n", out)
    os.unlink(f)


def bridge_plot(d, out_tp, out_lat):
    kinds = ["direct", "socat", "ward"]
    rows = [["what"] + kinds,
            ["256 MiB POST"] + [f"{med(d[k]['post']):.0f}" for k in kinds],
            ["256 MiB streamed response"] + [f"{med(d[k]['stream']):.0f}" for k in kinds]]
    f = dat(rows)
    gnuplot(f"set title 'bridge throughput (MiB/s, higher is better)'\nset yrange [0:*]\n"
            f"plot '{f}' using 2:xtic(1) title columnhead, '' using 3 title columnhead, "
            f"'' using 4 title columnhead\n", out_tp)
    os.unlink(f)

    def pct(v, q):
        return statistics.quantiles(v, n=100)[q - 1]
    rows = [["what"] + kinds] + [[f"p{q}"] + [f"{pct(d[k]['lat'], q):.0f}" for k in kinds] for q in (50, 99)]
    f = dat(rows)
    gnuplot(f"set title 'small request latency, new connection each (µs, lower is better)'\nset yrange [0:*]\n"
            f"plot '{f}' using 2:xtic(1) title columnhead, '' using 3 title columnhead, "
            f"'' using 4 title columnhead\n", out_lat)
    os.unlink(f)


def load_plot(d, out):
    rows = [["what", "socat", "ward"],
            [f"serving RSS, {d['ward']['streams']} SSE streams (MiB)", f"{d['socat']['rss_kb'] / 1024:.1f}",
             f"{d['ward']['rss_kb'] / 1024:.1f}"],
            ["small requests per second / 10", f"{d['socat']['rate'] / 10:.0f}", f"{d['ward']['rate'] / 10:.0f}"],
            ["small request p99 (ms)", f"{d['socat']['p99'] / 1000:.1f}", f"{d['ward']['p99'] / 1000:.1f}"]]
    f = dat(rows)
    gnuplot(f"set title 'bridge under load vs socat (log scale)'\nset logscale y\n"
            f"plot '{f}' using 2:xtic(1) title columnhead, '' using 3 title columnhead\n", out)
    os.unlink(f)


def image_plot(d, out):
    rows = [["what", "tini entrypoint", "ward entrypoint"],
            ["start to first RPC response (ms)", f"{med([x[0] for x in d['tini']]) * 1000:.0f}",
             f"{med([x[0] for x in d['ward']]) * 1000:.0f}"],
            ["Pss of the container (MiB)", f"{med([x[1] for x in d['tini']]) / 1024:.1f}",
             f"{med([x[1] for x in d['ward']]) / 1024:.1f}"]]
    f = dat(rows)
    gnuplot(f"set title 'reference image under runc: ward vs tini as the entrypoint'\nset yrange [0:*]\n"
            f"plot '{f}' using 2:xtic(1) title columnhead, '' using 3 title columnhead\n", out)
    os.unlink(f)


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
