"""The measured programs of ``bench/compare.py``: each runs in a fresh process
(``compare.py --child MODE``) and prints one JSON object.

Throughput children read one turn of the flood agent (``bench/flood_agent.py``, or
the TypeScript SDK's ``tests/interop/ts_flood_agent.mjs`` for the ``ts_sdk`` shape):
``floor`` is plain Python (``json.loads`` or ``orjson.loads`` per line, reading
64 KiB at a time), ``blocking`` / ``async`` are acp_lite. Each reports the turn's
wall and CPU time, ``held`` (RSS after the turn, text joined, minus RSS before the
prompt) and ``added`` (peak RSS during the turn minus RSS before the prompt: the
peak is reset just before the prompt, ``/proc/self/clear_refs``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]
NOOP = "_acp_lite/bench_noop"
TS_FLOOD = HERE.parent / "tests" / "interop" / "ts_flood_agent.mjs"
SHAPES = ("same", "distinct", "escaped", "per_write", "ts_sdk")
#: The floor's read size: what a careful hand-written client would use.
READ = 65536


def have_ts() -> bool:
    """Whether the TypeScript SDK flood agent can run here (Node and the SDK)."""
    sdk = TS_FLOOD.parent / "node_modules" / "@agentclientprotocol" / "sdk"
    return shutil.which("node") is not None and sdk.is_dir()


def flood_command(n: int, shape: str) -> list[str]:
    """The agent that streams ``n`` chunks in ``shape``."""
    if shape == "ts_sdk":
        return ["node", str(TS_FLOOD), str(n)]
    return [sys.executable, str(HERE / "flood_agent.py"), "--count", str(n), "--shape", shape]


def _reset_peak() -> None:
    """Reset VmHWM to the current RSS (Linux: ``clear_refs`` 5), so the peak read after
    the turn is the turn's own."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rss() -> int:
    """Current resident set size in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int:
    """Peak resident set size of this program, in bytes: ``VmHWM``, which ``exec``
    resets. (``ru_maxrss`` survives ``exec``: it would report the parent's size at
    the fork when that is larger than this program ever gets.)"""
    return hwm(open("/proc/self/status").read())


def hwm(status: str) -> int:
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024  # kB
    raise RuntimeError("no VmHWM in /proc/self/status")


def _flood(n: int) -> list[str]:
    return [*AGENT, "--scenario", "flood", "--count", str(n)]


def _turn_memory(rss0: int) -> dict[str, int]:
    gc.collect()
    return {"held": _rss() - rss0, "added": _peak_rss() - rss0}


# --------------------------------------------------------------------------- children


def child_floor(n: int, backend: str, shape: str) -> dict[str, Any]:
    """A hand-written client: JSON-RPC by hand, one ``loads`` per line, 64 KiB reads."""
    if backend == "orjson":
        import orjson

        loads: Callable[[bytes], Any] = orjson.loads
    else:
        loads = json.loads
    proc = subprocess.Popen(
        flood_command(n, shape), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, bufsize=READ,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def send(msg: dict[str, Any]) -> None:
        stdin.write(json.dumps(msg).encode() + b"\n")
        stdin.flush()

    def response(rid: int) -> Any:
        for line in stdout:
            msg = loads(line)
            if msg.get("id") == rid and "method" not in msg:
                return msg
        raise RuntimeError("agent closed stdout")

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": 2, "info": {"name": "floor", "version": "0"},
                     "capabilities": {}}})  # fmt: skip
    response(1)
    send({"jsonrpc": "2.0", "id": 2, "method": "session/new",
          "params": {"cwd": "/tmp", "mcpServers": []}})  # fmt: skip
    sid = response(2)["result"]["sessionId"]
    gc.collect()
    texts: list[str] = []
    _reset_peak()
    rss0, start, cpu = _rss(), time.perf_counter(), _cpu()
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
            texts.append(update["content"]["text"])
        elif kind == "state_update" and update.get("state") == "idle" and texts:
            break
    text = "".join(texts)
    elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
    memory = _turn_memory(rss0)
    stdin.close()
    proc.wait(30)
    assert len(texts) == n and text, (len(texts), n)
    return {"seconds": elapsed, "cpu": cpu, **memory, "peak": _peak_rss()}


def _limits(bounded: str | None) -> Any:
    if not bounded:
        return None
    import acp_lite

    if bounded == "preset":
        return acp_lite.Limits.bounded()
    fields = dict(kv.split("=") for kv in bounded.split(","))
    return acp_lite.Limits(**{k: int(v) for k, v in fields.items()})


def child_blocking(n: int, shape: str, bounded: str | None = None) -> dict[str, Any]:
    import acp_lite

    with acp_lite.connect(flood_command(n, shape), limits=_limits(bounded)) as client:
        session = client.new_session(cwd="/tmp")
        gc.collect()
        _reset_peak()
        rss0, start, cpu = _rss(), time.perf_counter(), _cpu()
        turn = session.run("go", timeout=3600)
        text = turn.text
        elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
        memory = _turn_memory(rss0)
        assert text, "no text"
        updates = len(turn.updates)
        assert updates >= n, (updates, n)
        del turn, text
    return {"seconds": elapsed, "cpu": cpu, **memory, "peak": _peak_rss(), "events": updates}


def child_async(n: int, shape: str) -> dict[str, Any]:
    import trio

    from acp_lite import aio

    out: dict[str, Any] = {}

    async def main() -> None:
        async with aio.connect(flood_command(n, shape)) as client:
            session = await client.new_session(cwd="/tmp")
            gc.collect()
            _reset_peak()
            rss0, start, cpu = _rss(), time.perf_counter(), _cpu()
            turn = await session.run("go", timeout=3600)
            text = turn.text
            elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
            out.update(seconds=elapsed, cpu=cpu, **_turn_memory(rss0))
            assert text

    trio.run(main)
    out["peak"] = _peak_rss()
    return out


def _median_of(fn: Callable[[], object], k: int) -> float:
    lat = []
    for _ in range(k):
        t = time.perf_counter()
        fn()
        lat.append(time.perf_counter() - t)
    return statistics.median(lat)


def child_calls(k: int) -> dict[str, Any]:
    """Blocking and async round trips on one connection, in alternating rounds."""
    import acp_lite

    with acp_lite.connect(_flood(1)) as client:
        aclient = client.async_client

        async def async_round(gap: float = 0.0) -> float:
            import trio

            lat = []
            for _ in range(k):
                t = time.perf_counter()
                await aclient.request(NOOP)
                lat.append(time.perf_counter() - t)
                if gap:  # idle between requests, as a blocking caller's thread hops are
                    await trio.sleep(gap)
            return statistics.median(lat)

        async def noop() -> None:
            return None

        token = client._portal._token
        assert token is not None

        def hop() -> None:  # one thread crossing each way, nothing else
            lock = threading.Lock()
            lock.acquire()
            token.run_sync_soon(lock.release)
            lock.acquire()

        _median_of(lambda: client.request(NOOP), 50)  # warm up
        sync, asyn, gaps, portal, hops = [], [], [], [], []
        for _ in range(5):
            sync.append(_median_of(lambda: client.request(NOOP), k))
            asyn.append(client._portal.call(async_round))
            gaps.append(client._portal.call(async_round, 0.0002))
            portal.append(_median_of(lambda: client._portal.call(noop, timeout=60), k))
            hops.append(_median_of(hop, k))
    return {"blocking": min(sync), "async": min(asyn), "async_gap": min(gaps),
            "portal": min(portal), "hop": min(hops)}  # fmt: skip


def child_raw_trio(k: int) -> dict[str, Any]:
    import trio

    out: dict[str, Any] = {}

    async def main() -> None:
        proc = await trio.lowlevel.open_process(
            _flood(1), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        if True:
            assert proc.stdin is not None and proc.stdout is not None
            buf = bytearray()

            async def call(i: int, method: str, params: Any) -> None:
                line = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
                await proc.stdin.send_all(json.dumps(line).encode() + b"\n")  # type: ignore[union-attr]
                while True:
                    nl = buf.find(b"\n")
                    if nl >= 0:
                        msg = json.loads(bytes(buf[:nl]))
                        del buf[: nl + 1]
                        if msg.get("id") == i and "method" not in msg:
                            return
                        continue
                    buf.extend(await proc.stdout.receive_some(65536))  # type: ignore[union-attr]

            await call(0, "initialize", {"protocolVersion": 2, "capabilities": {}})
            rounds = []
            i = 1
            for _ in range(5):
                lat = []
                for _ in range(k):
                    t = time.perf_counter()
                    await call(i, NOOP, {})
                    lat.append(time.perf_counter() - t)
                    i += 1
                rounds.append(statistics.median(lat))
            out["raw_trio"] = min(rounds)
            await proc.stdin.aclose()  # type: ignore[union-attr]
            await proc.wait()

    trio.run(main)
    return out


def child_readline(k: int) -> dict[str, Any]:
    proc = subprocess.Popen(
        _flood(1), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    ids = iter(range(1_000_000))

    def call(method: str, params: Any) -> None:
        i = next(ids)
        stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                                "params": params}).encode() + b"\n")  # fmt: skip
        stdin.flush()
        while True:
            msg = json.loads(stdout.readline())
            if msg.get("id") == i and "method" not in msg:
                return

    call("initialize", {"protocolVersion": 2, "capabilities": {}})
    best = min(_median_of(lambda: call(NOOP, {}), k) for _ in range(5))
    stdin.close()
    proc.wait(10)
    return {"raw_readline": best}


def child(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run the child ``mode`` with the driver's arguments."""
    n, shape = args.updates, args.shape
    if mode == "floor":
        return child_floor(n, args.loads, shape)
    if mode == "blocking":
        return child_blocking(n, shape, args.bounded)
    if mode == "async":
        return child_async(n, shape)
    if mode == "calls":
        return child_calls(args.calls)
    if mode == "raw_trio":
        return child_raw_trio(args.calls)
    if mode == "raw_readline":
        return child_readline(args.calls)
    raise SystemExit(f"unknown mode {mode}")
