#!/usr/bin/python3
"""Load on the bridge, against socat on the same load, one run.

  load_bench.py --ward build/ward [--streams 1000] [--hold 60] [--requests 10000] [--out F]

The upstream (asyncio, a unix socket) serves an SSE stream that sends one
event a second, and small MCP-like JSON POSTs. Two loads, through socat
(`TCP-LISTEN,fork -> UNIX-CONNECT`) and then through a ward route:

- STREAMS concurrent SSE streams held for HOLD seconds: every stream must
  stay open and receive an event every second; the serving side's memory
  (RSS of socat and its children, or of the bridge) is read at the end;
- REQUESTS small POSTs at the highest rate the client reaches (64 workers,
  a new connection each, as the bridge serves one request per connection):
  p50/p99 latency, requests per second.

Errors (a failed connect, a stream that ends early or misses events, a
response that is not 200) are counted and printed; the run exits 1 if
there is any, since a load test with errors is not a result. No timing is
asserted.
"""
import argparse
import asyncio
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Relays, rss_kb, write_results  # noqa: E402

UPSTREAM = r'''
import asyncio, os, sys
path = sys.argv[1]

async def handle(r, w):
    try:
        head = await r.readuntil(b"\r\n\r\n")
        line = head.split(b"\r\n")[0].split(b" ")
        n = 0
        for l in head.split(b"\r\n")[1:]:
            k, _, v = l.partition(b":")
            if k.strip().lower() == b"content-length":
                n = int(v)
        if n:
            await r.readexactly(n)
        if line[1].startswith(b"/sse"):
            w.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n")
            i = 0
            while True:
                w.write(b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tick\",\"params\":{\"n\":%d}}\n\n" % i)
                await w.drain()
                i += 1
                await asyncio.sleep(1)
        else:
            body = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'
            w.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            await w.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        w.close()

async def main():
    if os.path.exists(path):
        os.unlink(path)
    srv = await asyncio.start_unix_server(handle, path, backlog=4096)
    os.chmod(path, 0o666)
    async with srv:
        await srv.serve_forever()

asyncio.run(main())
'''

SSE_REQ = b"GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
POST_BODY = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
POST_REQ = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s"
            % (len(POST_BODY), POST_BODY))


async def one_stream(port, hold, stats):
    try:
        r, w = await asyncio.open_connection("127.0.0.1", port)
    except OSError as e:
        stats["errors"].append(f"connect: {e}")
        return
    events = 0
    try:
        w.write(SSE_REQ)
        await w.drain()
        head = await asyncio.wait_for(r.readuntil(b"\r\n\r\n"), 30)
        if not head.startswith(b"HTTP/1.1 200"):
            stats["errors"].append(f"status {head[:20]!r}")
            return
        stats["open"] += 1
        end = time.monotonic() + hold
        while time.monotonic() < end:
            ev = await asyncio.wait_for(r.readuntil(b"\n\n"), 5)
            if b"notifications/tick" in ev:
                events += 1
    except asyncio.TimeoutError:
        stats["errors"].append("no event for 5 s")
    except (asyncio.IncompleteReadError, ConnectionError) as e:
        stats["errors"].append(f"stream ended: {e!r}"[:80])
    finally:
        stats["events"].append(events)
        w.close()


async def streams(port, n, hold, serving_pids):
    stats = {"open": 0, "errors": [], "events": []}
    tasks = []
    for _ in range(n):
        tasks.append(asyncio.create_task(one_stream(port, hold, stats)))
        await asyncio.sleep(0.001)  # a connect storm is not what is measured
    await asyncio.sleep(hold * 0.8)
    stats["rss_kb"] = rss_kb(serving_pids())
    stats["open_at_peak"] = stats["open"]
    await asyncio.gather(*tasks)
    low = [e for e in stats["events"] if e < hold - 3]
    if low:
        stats["errors"].append(f"{len(low)} stream(s) missed events (fewest {min(stats['events'])} in {hold} s)")
    return stats


async def small(port, n, workers=64):
    lat, errors, left = [], [], [n]

    async def worker():
        while left[0] > 0:
            left[0] -= 1
            t0 = time.monotonic()
            try:
                r, w = await asyncio.open_connection("127.0.0.1", port)
                w.write(POST_REQ)
                await w.drain()
                data = await asyncio.wait_for(r.read(), 30)
                w.close()
                if not data.startswith(b"HTTP/1.1 200") or not data.endswith(b"}"):
                    errors.append(f"response {data[:30]!r}")
                    continue
            except (OSError, asyncio.TimeoutError) as e:
                errors.append(repr(e)[:80])
                continue
            lat.append((time.monotonic() - t0) * 1e6)

    t0 = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return {"lat": lat, "errors": errors, "rate": len(lat) / (time.monotonic() - t0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ward", required=True)
    ap.add_argument("--streams", type=int, default=1000)
    ap.add_argument("--hold", type=int, default=60)
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--out", help="append the report to this markdown file")
    ap.add_argument("--json", help="also write the results here (for tests/bench/plot.py)")
    a = ap.parse_args()
    need = a.streams * 3 + 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(need, soft), max(need, hard)))
    rel = Relays(a.ward, UPSTREAM, 17911, 17912, prefix="ward-load-", backlog=4096)
    targets = {"socat": (17911, rel.socat_pids), "ward": (17912, rel.bridge_pids)}
    res = {}
    try:
        for name, (port, pids) in targets.items():
            idle = rss_kb(pids())
            st = asyncio.run(streams(port, a.streams, a.hold, pids))
            sm = asyncio.run(small(port, a.requests))
            res[name] = (idle, st, sm)
            print(f"{name}: {st['open_at_peak']}/{a.streams} streams open, {len(st['errors'])} stream errors, "
                  f"RSS {st['rss_kb']} KiB at peak (idle {idle}); {len(sm['lat'])}/{a.requests} small requests, "
                  f"{len(sm['errors'])} errors, {sm['rate']:.0f}/s", flush=True)
    finally:
        rel.stop()

    def pct(v, q):
        return statistics.quantiles(v, n=100)[q - 1] if len(v) >= 2 else float("nan")

    s, w = res["socat"], res["ward"]
    errs = {k: len(v[1]["errors"]) + len(v[2]["errors"]) for k, v in res.items()}
    lines = ["", f"## Bridge under load: ward route vs socat, one run", "",
             f"{a.streams} concurrent SSE streams (one event a second each) held for {a.hold} s, then "
             f"{a.requests} small MCP-like POSTs as fast as 64 client workers go (a new connection each). "
             f"Upstream: asyncio on a unix socket. Command: `make bench` (tests/bench/load_bench.py).", "",
             "| metric | socat | ward | ward/socat |", "|---|---|---|---|"]
    lines.append(f"| streams open at the peak | {s[1]['open_at_peak']} | {w[1]['open_at_peak']} | - |")
    sm_s, sm_w = s[1]["rss_kb"] - s[0], w[1]["rss_kb"] - w[0]
    lines.append(f"| serving memory with all streams open (MiB RSS) | {s[1]['rss_kb'] / 1024:.1f} | "
                 f"{w[1]['rss_kb'] / 1024:.1f} | {w[1]['rss_kb'] / s[1]['rss_kb']:.3f} |")
    lines.append(f"| per stream (KiB, above idle) | {sm_s / a.streams:.1f} | {sm_w / a.streams:.1f} | "
                 f"{(sm_w / sm_s) if sm_s else float('nan'):.3f} |")
    lines.append(f"| small requests per second | {s[2]['rate']:.0f} | {w[2]['rate']:.0f} | "
                 f"{w[2]['rate'] / s[2]['rate']:.2f} |")
    for q in (50, 99):
        ps, pw = pct(s[2]["lat"], q), pct(w[2]["lat"], q)
        lines.append(f"| small request latency p{q} (µs) | {ps:.0f} | {pw:.0f} | {pw / ps:.2f} |")
    lines.append(f"| errors (streams + requests) | {errs['socat']} | {errs['ward']} | - |")
    lines += ["", "Memory and latency below 1.0 ×socat mean the bridge is ahead, rate above 1.0. "
              "socat forks a process per connection; the bridge is one process with an event loop.", ""]
    write_results("\n".join(lines), a.out, a.json, {k: {"rss_kb": v[1]["rss_kb"], "idle_kb": v[0], "rate": v[2]["rate"],
                           "p50": pct(v[2]["lat"], 50), "p99": pct(v[2]["lat"], 99), "errors": errs[k],
                           "streams": a.streams} for k, v in res.items()})
    for k, v in res.items():
        for e in (v[1]["errors"] + v[2]["errors"])[:5]:
            print(f"  {k} error: {e}")
    return 1 if any(errs.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
