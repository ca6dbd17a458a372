#!/usr/bin/env python3
"""End-to-end client throughput and per-call overhead.

1. Streaming: the reference agent's ``flood`` scenario streams N (default 200,000)
   ``agent_message_chunk`` updates in one turn. Measured from sending the prompt to
   the idle that ends the turn:
   * ``floor``: plain Python, no acp_lite: spawn the same agent, write the JSON-RPC
     lines by hand, read stdout lines and ``json.loads`` each one;
   * ``blocking``: ``acp_lite.connect`` + ``Session.run`` (the blocking facade);
   * ``async``: ``acp_lite.aio.connect`` + ``await AsyncSession.run`` in ``trio.run``.
   Target: blocking >= 50% of the floor's updates/s.
2. Per-call overhead: a no-op ``_``-prefixed extension request (the reference agent
   echoes it) round trip, median over many calls, blocking (``Client.request``) vs
   async (``await AsyncClient.request`` on the same connection, in alternating rounds,
   best round each). Target: blocking < 2x async.
3. Peak RSS of the client process (each measurement runs in a fresh subprocess).

acp_lite is run with the stdlib ``json`` backend (``ACP_LITE_JSON=json``, the default
without the ``fast`` extra) and with ``orjson`` when installed; the floor always uses
``json.loads``. ``CPU µs/upd`` is the client process's CPU time per update: it stays
comparable on a busy machine, where wall-clock rates depend on what else runs.

    python bench/bench_client.py [--updates 200000] [--calls 2000] [--repeat 1]
                                 [--backends json,orjson] [--profile blocking]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]
NOOP = "_acp_lite/bench_noop"


def _cpu() -> float:
    # CPU seconds of this process (all threads): comparable even on a loaded machine,
    # where wall-clock rates depend on what else runs.
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _peak_rss_mib() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --------------------------------------------------------------------------- floor


def run_floor(n: int) -> dict[str, Any]:
    """Plain Python: same agent, hand-written JSON-RPC, ``json.loads`` on every line."""
    loads = json.loads
    proc = subprocess.Popen(
        [*AGENT, "--scenario", "flood", "--count", str(n)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=1 << 16,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def send(msg: dict[str, Any]) -> None:
        stdin.write(json.dumps(msg).encode() + b"\n")
        stdin.flush()

    def response(rid: int) -> dict[str, Any]:
        for line in stdout:
            msg = loads(line)
            if msg.get("id") == rid and "method" not in msg:
                return msg  # type: ignore[no-any-return]
        raise RuntimeError("agent closed stdout")

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": 2, "info": {"name": "floor", "version": "0"},
                     "capabilities": {}}})  # fmt: skip
    response(1)
    send({"jsonrpc": "2.0", "id": 2, "method": "session/new",
          "params": {"cwd": "/tmp", "mcpServers": []}})  # fmt: skip
    sid = response(2)["result"]["sessionId"]
    chunks = 0
    start, cpu = time.perf_counter(), _cpu()
    send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
          "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}})  # fmt: skip
    for line in stdout:
        msg = loads(line)
        params = msg.get("params")
        if params is None:
            continue
        update = params.get("update") or {}
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            chunks += 1
        elif kind == "state_update" and update.get("state") == "idle" and chunks:
            break
    elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
    stdin.close()
    proc.wait(10)
    assert chunks == n, (chunks, n)
    return {"seconds": elapsed, "cpu": cpu, "updates": chunks, "rss_mib": _peak_rss_mib()}


# --------------------------------------------------------------------------- acp_lite


def run_blocking(n: int, calls: int, profile: bool) -> dict[str, Any]:
    import acp_lite.client as blocking

    with blocking.connect([*AGENT, "--scenario", "flood", "--count", str(n)]) as client:
        session = client.new_session(cwd="/tmp")
        aclient = client.async_client

        async def async_calls(k: int) -> float:
            # The async client's round trip, on the same connection, at the same time.
            latencies = []
            for _ in range(k):
                t = time.perf_counter()
                await aclient.request(NOOP)
                latencies.append(time.perf_counter() - t)
            return statistics.median(latencies)

        def blocking_calls(k: int) -> float:
            latencies = []
            for _ in range(k):
                t = time.perf_counter()
                client.request(NOOP)
                latencies.append(time.perf_counter() - t)
            return statistics.median(latencies)

        # Alternate rounds and keep each side's best median: thread wake-ups are very
        # sensitive to what else the machine runs, so compare like with like.
        blocking_calls(50)  # warm up
        rounds = 5
        per_round = max(1, calls // rounds)
        sync_us = min(blocking_calls(per_round) for _ in range(rounds)) * 1e6
        async_us = min(client._portal.call(async_calls, per_round) for _ in range(rounds)) * 1e6
        if profile:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            # The work happens on the trio thread: profile it there.
            client._portal.run_sync(prof.enable)
            start, cpu = time.perf_counter(), _cpu()
            turn = session.run("go", timeout=600)
            elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
            client._portal.run_sync(prof.disable)
            stats = pstats.Stats(prof, stream=sys.stderr)
            stats.sort_stats("tottime").print_stats(25)
        else:
            start, cpu = time.perf_counter(), _cpu()
            turn = session.run("go", timeout=600)
            elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
        chunks = sum(1 for e in turn.updates if e.tag == "agent_message_chunk")
    assert chunks == n, (chunks, n)
    return {
        "seconds": elapsed,
        "cpu": cpu,
        "updates": chunks,
        "call_us": sync_us,
        "async_call_us": async_us,
        "rss_mib": _peak_rss_mib(),
    }


def run_async(n: int) -> dict[str, Any]:
    import trio

    from acp_lite import aio

    out: dict[str, Any] = {}

    async def main() -> None:
        async with aio.connect([*AGENT, "--scenario", "flood", "--count", str(n)]) as client:
            session = await client.new_session(cwd="/tmp")
            await client.request(NOOP)
            start, cpu = time.perf_counter(), _cpu()
            turn = await session.run("go", timeout=600)
            elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
            chunks = sum(1 for e in turn.updates if e.tag == "agent_message_chunk")
            assert chunks == n, (chunks, n)
            out.update(
                seconds=elapsed,
                cpu=cpu,
                updates=chunks,
            )

    trio.run(main)
    out["rss_mib"] = _peak_rss_mib()
    return out


# --------------------------------------------------------------------------- driver


def child(args: argparse.Namespace) -> None:
    if args.no_gc:
        import gc

        gc.disable()
    if args.mode == "floor":
        result = run_floor(args.updates)
    elif args.mode == "blocking":
        result = run_blocking(args.updates, args.calls, args.profile == "blocking")
    else:
        result = run_async(args.updates)
    from acp_lite.protocol.jsonrpc import JSON_BACKEND

    result["backend"] = JSON_BACKEND
    print(json.dumps(result), flush=True)


def spawn(mode: str, backend: str, args: argparse.Namespace) -> dict[str, Any]:
    env = dict(os.environ)
    if backend == "json":
        env["ACP_LITE_JSON"] = "json"
    else:
        env.pop("ACP_LITE_JSON", None)
    argv = [
        sys.executable,
        __file__,
        "--child",
        mode,
        "--updates",
        str(args.updates),
        "--calls",
        str(args.calls),
        "--loads",
        backend,
    ]
    if args.profile:
        argv += ["--profile", args.profile]
    if args.no_gc:
        argv.append("--no-gc")
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1200)
    if args.profile and mode == args.profile:
        sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"{mode}/{backend} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=200_000)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=1, help="best of R runs per cell")
    parser.add_argument("--backends", default="json,orjson")
    parser.add_argument("--profile", choices=["blocking"], default=None)
    parser.add_argument(
        "--no-gc",
        action="store_true",
        help="diagnostic: disable the cyclic garbage collector in the measured processes",
    )
    parser.add_argument("--child", dest="mode", choices=["floor", "blocking", "async"])
    parser.add_argument("--loads", default="json")
    args = parser.parse_args()
    if args.mode:
        child(args)
        return

    backends = [b for b in args.backends.split(",") if b]
    if "orjson" in backends:
        try:
            import orjson  # noqa: F401
        except ImportError:
            print("orjson not installed: stdlib json only")
            backends = [b for b in backends if b != "orjson"]
    print(f"N = {args.updates:,} agent_message_chunk updates in one turn; "
          f"{args.calls:,} no-op request round trips; best of {args.repeat}")  # fmt: skip
    print(f"{'backend':8} {'mode':9} {'updates/s':>11} {'% floor':>8} {'CPU µs/upd':>10} "
          f"{'call µs':>8} {'peak RSS':>9}")  # fmt: skip

    def best(mode: str, backend: str) -> dict[str, Any]:
        runs = [spawn(mode, backend, args) for _ in range(args.repeat)]
        return min(runs, key=lambda r: r["seconds"])

    def row(backend: str, mode: str, cell: dict[str, Any], floor_rate: float) -> None:
        rate = cell["updates"] / cell["seconds"]
        cpu_us = 1e6 * cell["cpu"] / cell["updates"]
        call = f"{cell['call_us']:8.1f}" if "call_us" in cell else f"{'-':>8}"
        print(f"{backend:8} {mode:9} {rate:11,.0f} {100 * rate / floor_rate:7.0f}% "
              f"{cpu_us:10.2f} {call} {cell['rss_mib']:6.0f} MiB")  # fmt: skip

    floor = best("floor", "json")
    floor_rate = floor["updates"] / floor["seconds"]
    row("json", "floor", floor, floor_rate)
    verdicts = []
    for backend in backends:
        sync, asyn = best("blocking", backend), best("async", backend)
        asyn["call_us"] = sync["async_call_us"]
        row(backend, "blocking", sync, floor_rate)
        row(backend, "async", asyn, floor_rate)
        share = sync["updates"] / sync["seconds"] / floor_rate
        cpu_share = (floor["cpu"] / floor["updates"]) / (sync["cpu"] / sync["updates"])
        ratio = sync["call_us"] / sync["async_call_us"]
        verdicts.append(
            f"{backend}: blocking = {100 * share:.0f}% of the floor's updates/s "
            f"({100 * cpu_share:.0f}% in CPU per update; target >= 50%: "
            f"{'ok' if share >= 0.5 else 'MISSED'}); per-call blocking/async = "
            f"{ratio:.2f}x (target < 2x: {'ok' if ratio < 2 else 'MISSED'})"
        )
    print()
    print("\n".join(verdicts))


if __name__ == "__main__":
    main()
