#!/usr/bin/env python3
"""Apply throughput and memory of the session model.

1. One session, one agent message, N already-decoded ``agent_message_chunk`` updates
   (default 1,000,000): updates/s for decoding the wire lines as the connection's reader
   does (``jsonrpc.decode_line``) and for applying the decoded updates with the
   line as the raw payload (as the connection passes it), their ratio (target: apply
   >= 3x faster than decode),
   and the apply rate per tenth of the run (linear time: later tenths are not slower).
2. 10,000 agent messages x 100 chunks each, interleaved round-robin: same numbers.
   For both: peak memory (tracemalloc) while applying the already-decoded updates
   (the model's own allocations), and the process's peak RSS at the end.
3. Memory (tracemalloc, streaming decode + apply as the connection does, raw payloads
   kept as the received lines): retained and peak bytes per chunk for two text sizes,
   retained fitted as ``a * text + c`` (target: a < 3), plus the model's own overhead
   on top of the decoded updates.

    python bench/bench_session.py [--updates 1000000] [--entities 10000] [--chunks 100]
                                  [--memory-updates 200000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from acp_lite.model import SessionModel
from acp_lite.protocol import Notification
from acp_lite.protocol.jsonrpc import decode_line

SID = "sess_abc123def456"
WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "\n"]


def make_lines(n: int, ids: int = 1, text_len: int | None = None) -> list[bytes]:
    """``n`` notification lines; chunk ``i`` goes to message ``i % ids`` (round-robin)."""
    lines = []
    for i in range(n):
        if text_len is None:
            text = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(1 + i % 6)) + " "
        else:
            text = "x" * text_len
        update = {
            "sessionUpdate": "agent_message_chunk",
            "messageId": f"msg_agent_{i % ids}",
            "content": {"type": "text", "text": text},
        }
        msg = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": SID, "update": update},
        }
        lines.append(json.dumps(msg).encode())
    return lines


Decoded = list[tuple[Any, bytes, str]]


def decode_one(line: bytes) -> tuple[Any, bytes, str]:
    """Decode a line as the connection's reader does: (update, raw = the line, session id)."""
    got = decode_line(line)
    assert isinstance(got, Notification)
    return got.params.update, line, got.params.session_id


def decode_all(lines: list[bytes]) -> Decoded:
    return [decode_one(line) for line in lines]


def apply_all(decoded: Decoded, *, keep_raw: bool = True) -> SessionModel:
    model = SessionModel(SID)
    apply = model.apply
    if keep_raw:
        for update, raw, sid in decoded:
            apply(update, raw=raw, session_id=sid)
    else:
        for update, _raw, _sid in decoded:
            apply(update)
    return model


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def tenths(decoded: Decoded) -> list[float]:
    """Apply rate (updates/s) of each tenth of the run, into one growing model."""
    model = SessionModel(SID)
    apply = model.apply
    step = max(1, len(decoded) // 10)
    rates = []
    gc.collect()
    for start in range(0, step * 10, step):
        t0 = time.perf_counter()
        for update, raw, sid in decoded[start : start + step]:
            apply(update, raw=raw, session_id=sid)
        rates.append(step / (time.perf_counter() - t0))
    return rates


def peak_apply(decoded: Decoded) -> tuple[int, int]:
    """(retained, peak) bytes the model allocates while applying ``decoded``."""
    gc.collect()
    tracemalloc.start()
    model = apply_all(decoded)
    gc.collect()
    retained, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(model.events) == len(decoded)
    return retained, peak


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def throughput(title: str, lines: list[bytes], repeat: int) -> None:
    n = len(lines)
    t_dec, decoded = timed(lambda: decode_all(lines), repeat)
    t_app, model = timed(lambda: apply_all(decoded), repeat)
    t_bare, _ = timed(lambda: apply_all(decoded, keep_raw=False), repeat)
    t0 = time.perf_counter()
    text = model.text()
    t_text = time.perf_counter() - t0
    assert len(model.events) == n and not model.violations
    rates = tenths(decoded)
    messages = len(model.timeline)
    del model
    retained, peak = peak_apply(decoded)
    print(f"== {title}: {n:,} updates, {messages:,} messages")
    print(f"  decode  (decode_line)   {n / t_dec:>12,.0f} updates/s")
    print(
        f"  apply   (raw + session id)     {n / t_app:>12,.0f} updates/s"
        f"   {t_dec / t_app:5.1f}x faster than decode (target >= 3x)"
    )
    print(f"  apply   (update only)          {n / t_bare:>12,.0f} updates/s")
    print(f"  text()  once                   {t_text * 1e3:>12.1f} ms for {len(text):,} chars")
    print(
        "  apply rate per tenth of the run (k updates/s): "
        + " ".join(f"{r / 1e3:.0f}" for r in rates)
    )
    print(
        f"  memory while applying (tracemalloc, model only): peak {peak / 2**20:,.1f} MiB, "
        f"retained {retained / 2**20:,.1f} MiB ({retained / n:.0f} B/update)"
    )
    print(f"  process peak RSS so far: {max_rss_mb():,.0f} MiB")


def retained_per_chunk(n: int, text_len: int) -> tuple[float, float, float]:
    """Bytes retained and peak per chunk after streaming decode + apply, and the model's
    own retained part."""
    lines = make_lines(n, text_len=text_len)
    gc.collect()
    tracemalloc.start()
    model = SessionModel(SID)
    for line in lines:
        update, raw, sid = decode_one(line)
        model.apply(update, raw=raw, session_id=sid)
    del update, raw
    gc.collect()
    total, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    decoded = decode_all(lines)
    gc.collect()
    tracemalloc.start()
    model2 = apply_all(decoded)
    gc.collect()
    own, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(model.events) == len(model2.events) == n
    return total / n, peak / n, own / n


def memory(n: int) -> None:
    print(f"== memory: {n:,} chunks into one message, streaming decode + apply, raw kept")
    points = []
    for text_len in (20, 220):
        per, peak, own = retained_per_chunk(n, text_len)
        points.append((text_len, per))
        print(
            f"  text {text_len:>3} chars: {per:8.1f} B retained per chunk, peak {peak:8.1f} B "
            f"(model's own structures: {own:5.1f} B)"
        )
    (x1, y1), (x2, y2) = points
    slope = (y2 - y1) / (x2 - x1)
    const = y1 - slope * x1
    print(f"  fit: retained ~= {slope:.2f} x text + {const:.0f} B  (target: factor < 3)")
    line = sys.getsizeof(make_lines(1, text_len=20)[0])
    print(
        f"  not counted above: the received line the log keeps as raw ({line} B for 20 chars "
        "of text, +1 B per char), which the client's transcript holds anyway"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--updates", type=int, default=1_000_000)
    ap.add_argument("--entities", type=int, default=10_000)
    ap.add_argument("--chunks", type=int, default=100)
    ap.add_argument("--memory-updates", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    throughput("one message", make_lines(args.updates), args.repeat)
    throughput(
        f"{args.entities:,} messages x {args.chunks} chunks, interleaved",
        make_lines(args.entities * args.chunks, ids=args.entities),
        args.repeat,
    )
    memory(args.memory_updates)


if __name__ == "__main__":
    main()
