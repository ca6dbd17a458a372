#!/usr/bin/env python3
"""acp_lite against hand-written floors, in one run, as a table of ratios.

Every measurement runs in a fresh subprocess; the repeats are interleaved (floor,
acp_lite, floor, acp_lite ...) and each ratio is the median of the per-repeat ratios,
so a machine whose speed drifts (shared CPUs) still compares like with like.

* **Throughput**: the flood agent (``bench/flood_agent.py``) streams N
  ``agent_message_chunk`` updates in one turn; timed from sending the prompt to the
  idle that ends it, *including joining the text*. ``floor``: plain Python, the same
  agent, hand-written JSON-RPC, 64 KiB reads, ``json.loads`` per line, texts
  appended and joined; ``raw orjson``: the same with ``orjson.loads``. acp_lite: ``blocking``
  (``acp_lite.connect`` + ``Session.run`` + ``Turn.text``) and ``async``
  (``acp_lite.aio``), with the stdlib ``json`` backend (``ACP_LITE_JSON=json``) and
  with ``orjson``. Wall-clock rate and client CPU per update.
* **Traffic shapes**: the same against the traffic real agents send (``--shapes``):
  ``same`` (one shared one-character text, 2,000 lines per write: the best case),
  ``distinct`` (distinct 20-40-character texts), ``escaped`` (those with newlines,
  quotes and non-ASCII), ``per_write`` (one write per chunk, as SDK agents write) and
  ``ts_sdk`` (the official TypeScript SDK agent, ``tests/interop/ts_flood_agent.mjs``,
  where Node and the SDK are installed). CPU and memory against the floor on the
  same shape, with the issue's targets.
* **Memory**: RSS the client holds after the turn (text joined, session still open)
  minus RSS before the prompt, per update (``held``); the peak RSS during the turn
  minus RSS before the prompt (``added``); the process's peak RSS.
  With ``--bounded`` also acp_lite with retention bounds (``--bounded-limits``,
  ``Limits.bounded()`` by default). ``--bytecode-cache`` lets the children use a
  ``__pycache__`` (as after ``pip install``); without it, an environment that sets
  ``PYTHONDONTWRITEBYTECODE`` compiles every module at each start, which costs
  start-up time and leaves freed compiler memory that the turn then reuses (so
  ``held`` reads low and peak RSS high).
* **Per-call latency**: a no-op ``_``-prefixed request the agent echoes, median
  round trip: blocking ``Client.request``, async ``AsyncClient.request``, a raw trio
  client (process pipes, one line out, read to the newline) and raw ``readline``; and
  what a blocking call adds: ``async_gap`` (async requests with 200 µs idle between
  them, as a blocking caller's thread hops leave), ``portal`` (a blocking call of a
  no-op coroutine) and ``hop`` (a bare ``run_sync_soon`` + lock round trip into the
  trio thread).
* **Start-up**: ``python -c "import acp_lite; acp_lite.connect"`` (what a connection
  imports), ``import trio`` and ``pass``; wall and CPU (of the child). Measured with a
  bytecode cache, as after ``pip install`` (``PYTHONDONTWRITEBYTECODE`` dropped, a
  warm-up run first), and again with none at all (everything compiled on each start).
* **Linearity**: blocking stdlib-json CPU per update at each size of ``--decades``.

    python bench/compare.py                       # 200k updates, 3 repeats
    python bench/compare.py --updates 20000 --repeat 3 --decades 1000,10000,100000
    python bench/compare.py --skip throughput,calls,startup,linearity   # shapes only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from compare_children import SHAPES, child, have_ts, hwm

# --------------------------------------------------------------------------- driver


def spawn(mode: str, *, backend: str = "json", updates: int = 0, calls: int = 0,
          bounded: str | None = None, shape: str = "same") -> dict[str, Any]:  # fmt: skip
    env = dict(os.environ)
    if backend == "json":
        env["ACP_LITE_JSON"] = "json"
    else:
        env.pop("ACP_LITE_JSON", None)
    argv = [sys.executable, __file__, "--child", mode, "--loads", backend,
            "--updates", str(updates), "--calls", str(calls), "--shape", shape]  # fmt: skip
    if bounded:
        argv += ["--bounded-limits", bounded]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=7200)
    if proc.returncode != 0:
        raise SystemExit(f"{mode}/{backend} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


_SELF_CPU = (
    "; import resource as _r; _u = _r.getrusage(_r.RUSAGE_SELF);"
    " print('self-cpu', _u.ru_utime + _u.ru_stime, flush=True)"
)
"""Appended to a start-up command: it prints its own CPU so far (no agent's, no exit's)."""


def startup(repeat: int, *, cache: bool = True) -> dict[str, dict[str, float]]:
    """Median wall, CPU and peak RSS (bytes) of each start-up command, interleaved.

    ``cache=True``: with a bytecode cache, as after ``pip install`` (the environment's
    ``PYTHONDONTWRITEBYTECODE`` dropped, one warm-up run of each command writes it);
    ``cache=False``: no cache at all (an empty ``PYTHONPYCACHEPREFIX``, nothing
    written), so every module, the standard library's too, is compiled on each start.
    """
    cmds = {
        "connect": "import acp_lite; acp_lite.connect",
        # Up to a connected client of the reference agent (its start included).
        "connected": "import sys, acp_lite; c = acp_lite.connect("
        "[sys.executable, '-m', 'acp_lite.testing'])" + _SELF_CPU + "; c.close()",
        "trio": "import trio" + _SELF_CPU,
        "pass": "pass",
    }
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    with tempfile.TemporaryDirectory() as empty:
        if cache:
            for c in cmds.values():
                subprocess.run([sys.executable, "-c", c], check=True, env=env,
                               capture_output=True)  # fmt: skip
        else:
            env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=empty)
        wall: dict[str, list[float]] = {k: [] for k in cmds}
        cpu: dict[str, list[float]] = {k: [] for k in cmds}
        own: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(repeat):
            for k, c in cmds.items():
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t = time.perf_counter()
                proc = subprocess.run([sys.executable, "-c", c], check=True, env=env,
                                      capture_output=True, text=True)  # fmt: skip
                wall[k].append(time.perf_counter() - t)
                for line in proc.stdout.splitlines():
                    if line.startswith("self-cpu "):
                        own[k].append(float(line.split()[1]))
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[k].append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
        # Peak RSS in separate, untimed runs: the command, then its VmHWM printed.
        peak: dict[str, float] = {}
        for k, c in cmds.items():
            show = "\nimport sys; sys.stdout.write(open('/proc/self/status').read())"
            out = subprocess.run([sys.executable, "-c", c + show], check=True, env=env,
                                 capture_output=True, text=True).stdout  # fmt: skip
            peak[k] = float(hwm(out))
    out: dict[str, dict[str, float]] = {
        k: {"wall": statistics.median(wall[k]), "cpu": statistics.median(cpu[k]),
            "peak": peak[k]} for k in cmds}  # fmt: skip
    # acp_lite's own share: the median of the per-repeat CPU differences to ``import trio``
    # (``connected``: the client's own CPU up to the connection, against trio's import).
    out["connect"]["own"] = statistics.median(
        a - b for a, b in zip(cpu["connect"], cpu["trio"], strict=True)
    )
    out["connected"]["own"] = statistics.median(
        a - b for a, b in zip(own["connected"], own["trio"], strict=True)
    )
    return out


def shapes_table(args: argparse.Namespace, have_orjson: bool) -> None:
    """CPU and memory against the floor on each traffic shape (the module doc)."""
    shapes = [s for s in args.shapes.split(",") if s]
    if "ts_sdk" in shapes and not have_ts():
        print("(ts_sdk skipped: no node or no tests/interop/node_modules)")
        shapes.remove("ts_sdk")
    backends = ["json", "orjson"] if have_orjson else ["json"]
    cells = [(m, b) for b in backends for m in ("floor", "blocking")]
    n, reps = args.shape_updates, args.repeat
    print(f"traffic shapes (N = {n:,}; x: the floor's CPU / this one's, >1 is faster; "
          "memory: this / the floor's; targets: json >= 1.5x, orjson >= 2x the json floor, "
          "memory <= 1.5x)")  # fmt: skip
    print(
        f"{'shape':10} {'floor µs/upd':>12} {'json x':>7} {'orjson x':>8} {'raw orjson x':>12} "
        f"{'held B/upd':>10} {'floor':>6} {'x':>5} {'added MiB':>9} {'floor':>6} {'x':>5}"
    )
    for shape in shapes:
        runs: dict[tuple[str, str], list[dict[str, Any]]] = {c: [] for c in cells}
        for _ in range(reps):
            for mode, backend in cells:
                runs[mode, backend].append(spawn(mode, backend=backend, updates=n, shape=shape))
        floor = runs["floor", "json"]

        def x_cpu(rs: list[dict[str, Any]], base: list[dict[str, Any]] = floor) -> float:
            return statistics.median(f["cpu"] / r["cpu"] for f, r in zip(base, rs, strict=True))

        def mem(rs: list[dict[str, Any]], key: str) -> float:
            return statistics.median(r[key] for r in rs)

        ours = runs["blocking", "json"]
        orj = f"{x_cpu(runs['blocking', 'orjson']):7.2f}x" if have_orjson else "      -"
        raw = (f"{x_cpu(runs['blocking', 'orjson'], runs['floor', 'orjson']):11.2f}x"
               if have_orjson else "          -")  # fmt: skip
        held, fheld = mem(ours, "held") / n, max(mem(floor, "held") / n, 1)
        added, fadded = mem(ours, "added"), max(mem(floor, "added"), 1)
        print(f"{shape:10} {1e6 * mem(floor, 'cpu') / n:12.2f} {x_cpu(ours):6.2f}x {orj} {raw} "
              f"{held:10.0f} {fheld:6.0f} {held / fheld:4.2f}x {added / 2**20:9.1f} "
              f"{fadded / 2**20:6.1f} {added / fadded:4.2f}x")  # fmt: skip
    print(
        "(raw orjson x: acp_lite with orjson against the floor with orjson; held and added"
        " are acp_lite's with stdlib json)"
    )
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=200_000)
    parser.add_argument("--calls", type=int, default=300, help="round trips per round")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--decades", default="1000,10000,100000,1000000",
                        help="linearity sizes (comma-separated; '' skips)")  # fmt: skip
    parser.add_argument("--startup-repeat", type=int, default=9)
    parser.add_argument("--bounded", action="store_true", help="add a bounded-retention row")
    parser.add_argument("--bounded-limits", dest="bounded_limits", default="preset",
                        help="'preset' (Limits.bounded()) or field=int,...")  # fmt: skip
    parser.add_argument("--bytecode-cache", action="store_true",
                        help="children may write and use __pycache__ (PYTHONDONTWRITEBYTECODE "
                        "unset), as after pip install; warmed first")  # fmt: skip
    parser.add_argument("--skip", default="", help="comma-separated: throughput,shapes,"
                        "calls,startup,linearity")  # fmt: skip
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help=f"traffic shapes to compare (of {', '.join(SHAPES)})")  # fmt: skip
    parser.add_argument("--shape-updates", type=int, default=100_000,
                        help="updates per turn in the shapes table")  # fmt: skip
    parser.add_argument("--shape", default="same", help=argparse.SUPPRESS)
    parser.add_argument("--child", dest="mode")
    parser.add_argument("--loads", default="json")
    args = parser.parse_args()
    if args.mode:
        args.bounded = args.bounded_limits if "--bounded-limits" in sys.argv else None
        print(json.dumps(child(args.mode, args)), flush=True)
        return
    skip = set(args.skip.split(","))
    try:
        import orjson  # noqa: F401

        have_orjson = True
    except ImportError:
        have_orjson = False
    n, reps = args.updates, args.repeat
    if args.bytecode_cache:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([sys.executable, "-c", "import acp_lite, acp_lite.aio, trio, "
                        "acp_lite.testing.agent, acp_lite.protocol._generated; "
                        "acp_lite.connect"], check=True)  # fmt: skip
    print(f"machine: {platform.machine()} {os.cpu_count()} CPUs, {platform.system()} "
          f"{platform.release()}, Python {platform.python_version()}; load average "
          f"{os.getloadavg()[0]:.2f} at start")  # fmt: skip
    dont = os.environ.get("PYTHONDONTWRITEBYTECODE", "")
    print(f"N = {n:,} updates, {reps} interleaved repeats, medians of per-repeat ratios; "
          f"PYTHONDONTWRITEBYTECODE={dont!r}\n")  # fmt: skip

    if "throughput" not in skip:
        cells: list[tuple[str, str, str]] = [("floor", "json", "floor (json.loads)")]
        if have_orjson:
            cells.append(("floor", "orjson", "raw orjson"))
        for backend in ["json", "orjson"] if have_orjson else ["json"]:
            cells += [("blocking", backend, f"blocking, {backend}"),
                      ("async", backend, f"async, {backend}")]  # fmt: skip
        if args.bounded:
            cells.append(("blocking_bounded", "json", "blocking, json, bounded"))
        runs: dict[str, list[dict[str, Any]]] = {label: [] for _, _, label in cells}
        for _ in range(reps):
            for mode, backend, label in cells:
                if mode == "blocking_bounded":
                    runs[label].append(spawn("blocking", backend=backend, updates=n,
                                             bounded=args.bounded_limits))  # fmt: skip
                else:
                    runs[label].append(spawn(mode, backend=backend, updates=n))
        floor = runs["floor (json.loads)"]
        print(f"{'throughput (N = ' + format(n, ',') + ')':28} {'updates/s':>10} {'x floor':>8} "
              f"{'CPU µs/upd':>10} {'x floor CPU':>11} {'best':>6} {'held B/upd':>10} "
              f"{'x floor':>8} {'peak RSS':>9} {'x floor':>8}")  # fmt: skip
        for _, _, label in cells:
            rs = runs[label]
            rate = statistics.median(n / r["seconds"] for r in rs)
            x = statistics.median(
                f["seconds"] / r["seconds"] for f, r in zip(floor, rs, strict=True)
            )
            cpu = statistics.median(1e6 * r["cpu"] / n for r in rs)
            xc = statistics.median(f["cpu"] / r["cpu"] for f, r in zip(floor, rs, strict=True))
            # best: the least disturbed run of each (min CPU), the floor's over this one's
            best = min(f["cpu"] for f in floor) / min(r["cpu"] for r in rs)
            held = statistics.median(r["held"] / n for r in rs)
            xh = statistics.median(
                r["held"] / max(f["held"], 1) for f, r in zip(floor, rs, strict=True)
            )
            peak = statistics.median(r["peak"] for r in rs)
            xp = statistics.median(r["peak"] / f["peak"] for f, r in zip(floor, rs, strict=True))
            print(f"{label:28} {rate:10,.0f} {x:7.2f}x {cpu:10.2f} {xc:10.2f}x {best:5.2f}x "
                  f"{held:10.0f} {xh:7.2f}x {peak / 2**20:6.0f} MiB {xp:6.2f}x")  # fmt: skip
        print(
            "(x floor: the floor's time / this one's, >1 is faster; best: the same for the"
            " least disturbed run of each, by CPU; memory: this / the floor's)"
        )
        print()

    if "shapes" not in skip:
        shapes_table(args, have_orjson)

    if "calls" not in skip:
        rows: dict[str, list[float]] = {"blocking": [], "async": [], "raw_trio": [],
                                        "raw_readline": [], "async_gap": [], "portal": [],
                                        "hop": []}  # fmt: skip
        for _ in range(reps):
            c = spawn("calls", calls=args.calls)
            for key in ("blocking", "async", "async_gap", "portal", "hop"):
                rows[key].append(c[key])
            rows["raw_trio"].append(spawn("raw_trio", calls=args.calls)["raw_trio"])
            rows["raw_readline"].append(spawn("raw_readline", calls=args.calls)["raw_readline"])
        med = {k: statistics.median(v) * 1e6 for k, v in rows.items()}
        bl = statistics.median(b / a for b, a in zip(rows["blocking"], rows["async"], strict=True))
        at = statistics.median(a / t for a, t in zip(rows["async"], rows["raw_trio"], strict=True))
        print("per-call round trip (no-op request), median µs:")
        print("  " + "  ".join(f"{k} {v:.0f}" for k, v in med.items()))
        print(f"  blocking / async = {bl:.2f}x (target <= 1.3x); "
              f"async / raw trio = {at:.2f}x (target <= 2x)")  # fmt: skip
        bg = statistics.median(
            b / g for b, g in zip(rows["blocking"], rows["async_gap"], strict=True)
        )
        print(f"  blocking / async_gap = {bg:.2f}x (async_gap: async with 200 µs idle between"
              " requests; portal: a blocking call of a no-op coroutine, no agent; hop: one"
              " bare thread crossing each way)")  # fmt: skip
        print()

    if "startup" not in skip:
        for cache in (True, False):
            s = startup(args.startup_repeat, cache=cache)
            label = "with a bytecode cache" if cache else "with no bytecode cache at all"
            print(f"start-up {label}, median of {args.startup_repeat} (wall / CPU ms):  "
                  + "  ".join(f"{k} {v['wall'] * 1e3:.0f} / {v['cpu'] * 1e3:.0f}"
                              for k, v in s.items()))  # fmt: skip
            own = s["connect"]["own"]
            target = " (target <= 200)" if cache else ""
            print(f"  import acp_lite; acp_lite.connect = {s['connect']['wall'] * 1e3:.0f} ms "
                  f"wall{target}; {own * 1e3:.0f} ms CPU beyond importing trio")  # fmt: skip
            print(
                f"  connected to acp_lite.testing: {s['connected']['own'] * 1e3:.0f} ms CPU "
                "beyond importing trio (the client's own CPU up to connected, against the same "
                f"measure of import trio{'; target <= 30' if cache else ''})"
            )
            if cache:
                # What the runtime dependency alone costs, against the throughput
                # floor's peak RSS (a whole 200k-update turn in plain Python).
                print("  peak RSS of the start-up alone: " + "  ".join(
                    f"{k} {v['peak'] / 2**20:.0f} MiB" for k, v in s.items()))  # fmt: skip
        print()

    sizes = [int(x) for x in args.decades.split(",") if x]
    if "linearity" not in skip and sizes:
        print("linearity (blocking, json): CPU µs per update by size, median of repeats")
        base = None
        for size in sizes:
            r = [spawn("blocking", updates=size) for _ in range(reps if size <= 100_000 else 1)]
            per = statistics.median(1e6 * x["cpu"] / size for x in r)
            held = statistics.median(x["held"] / size for x in r)
            base = base or per
            print(f"  {size:>9,}: {per:6.2f} µs/upd ({per / base:4.2f}x the first), "
                  f"held {held:5.0f} B/upd")  # fmt: skip


if __name__ == "__main__":
    main()
