#!/usr/bin/env python3
"""Decode throughput of the wire layer on the hot path.

Decodes N ``agent_message_chunk`` notification lines (line -> typed update via
``decode_line``) and, in the same run over the same lines, a plain ``json.loads`` loop.
Prints updates/s for both and the ratio (target: typed >= 50% of plain json.loads).
With orjson installed (the ``fast`` extra) it also measures the orjson backend.
Plain text chunks take decode_line's fast path (jsonrpc._fast_update); the same chunks
with a ``_meta`` member are measured too, as they take the generic structure path.

    python bench/bench_codec.py [--lines 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Any
from unittest import mock

from acp_lite.protocol import AgentMessageChunk, Notification, TextContent, decode_line, jsonrpc


def make_lines(n: int, meta: bool = False) -> list[bytes]:
    words = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "\n"]
    lines = []
    for i in range(n):
        text = " ".join(words[(i + k) % len(words)] for k in range(1 + i % 6))
        msg = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "sess_abc123def456",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "msg_agent_42",
                    "content": {"type": "text", "text": text},
                },
            },
        }
        if meta:  # any other member: the generic path
            msg["params"]["update"]["_meta"] = {"seq": i}  # type: ignore[index]
        lines.append(json.dumps(msg).encode() + b"\n")
    return lines


def measure(
    runs: dict[str, Callable[[list[bytes]], None]], lines: list[bytes], repeat: int
) -> dict[str, tuple[float, float]]:
    """Best (wall, CPU) updates/s per run; the runs are interleaved round by round so a
    noisy neighbour on a shared machine hurts all of them alike."""
    best: dict[str, tuple[float, float]] = {k: (float("inf"), float("inf")) for k in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            gc.collect()
            w0, c0 = time.perf_counter(), time.process_time()
            fn(lines)
            w, c = time.perf_counter() - w0, time.process_time() - c0
            best[name] = (min(best[name][0], w), min(best[name][1], c))
    n = len(lines)
    return {k: (n / w, n / c) for k, (w, c) in best.items()}


def report(rates: dict[str, tuple[float, float]], typed: str, plain: str) -> None:
    for name in (plain, typed):
        wall, cpu = rates[name]
        print(f"  {name:36s} {wall:11,.0f} updates/s wall  {cpu:11,.0f} updates/s CPU")
    (tw, tc), (pw, pc) = rates[typed], rates[plain]
    print(f"  ratio {typed} / {plain}: {tw / pw:.0%} wall, {tc / pc:.0%} CPU")


def plain(loads: Callable[[bytes], Any]) -> Callable[[list[bytes]], None]:
    def run(lines: list[bytes]) -> None:
        for line in lines:
            loads(line)

    return run


def typed(lines: list[bytes]) -> None:
    for line in lines:
        msg = decode_line(line)
        msg.params.update  # type: ignore[union-attr]  # noqa: B018 - the typed update


def check(lines: list[bytes]) -> None:
    msg = decode_line(lines[1])
    assert isinstance(msg, Notification)
    update = msg.params.update
    assert isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContent)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    lines = make_lines(args.lines)
    print(f"{len(lines)} agent_message_chunk lines, best of {args.repeat} interleaved rounds")
    with (
        mock.patch.object(jsonrpc, "_loads", jsonrpc._std_loads),
        mock.patch.object(jsonrpc, "_dumps", jsonrpc._std_dumps),
    ):
        check(lines)
        rates = measure({"json.loads": plain(json.loads), "decode_line": typed}, lines, args.repeat)
    print("stdlib json (the default):")
    report(rates, "decode_line", "json.loads")
    print("  target: decode_line >= 50% of json.loads")
    generic_lines = make_lines(args.lines, meta=True)
    with (
        mock.patch.object(jsonrpc, "_loads", jsonrpc._std_loads),
        mock.patch.object(jsonrpc, "_dumps", jsonrpc._std_dumps),
    ):
        check(generic_lines)
        generic = measure(
            {"json.loads": plain(json.loads), "decode_line": typed}, generic_lines, args.repeat
        )
    print("stdlib json, chunks with _meta (generic structure path, not the fast path):")
    report(generic, "decode_line", "json.loads")
    try:
        import orjson
    except ImportError:
        print("orjson not installed: skipping the `fast` backend")
        return
    if jsonrpc.JSON_BACKEND != "orjson":
        print("orjson disabled (ACP_LITE_JSON=json): skipping the `fast` backend")
        return
    check(lines)
    fast = measure(
        {"orjson.loads": plain(orjson.loads), "decode_line[orjson]": typed}, lines, args.repeat
    )
    print("orjson backend (the `fast` extra):")
    report(fast, "decode_line[orjson]", "orjson.loads")
    report({**fast, **rates}, "decode_line[orjson]", "json.loads")


if __name__ == "__main__":
    main()
