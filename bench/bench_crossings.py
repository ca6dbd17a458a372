#!/usr/bin/env python3
"""What thread crossings cost a request/response round trip, with no acp_lite and no
trio: the floor under a blocking facade whose I/O runs in another thread.

A no-op request to the reference agent over its pipes, median round trip of the best
of 5 rounds of 300:

* ``same thread``: the caller writes the line and reads until the response (raw
  ``readline``);
* ``one crossing``: the caller writes; a reader thread reads and hands the response
  over (``queue.SimpleQueue``);
* ``two crossings``: a writer thread writes too (the caller hands the line over),
  as when every call is posted to an event loop in another thread.

    python bench/bench_crossings.py
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

from compare import NOOP, _median_of  # this directory: the scripts share their timing

AGENT = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", "flood", "--count", "1"]
ROUNDS, CALLS = 5, 300


def _best(fn: Callable[[], object]) -> float:
    return min(_median_of(fn, CALLS) for _ in range(ROUNDS))


def main() -> None:
    proc = subprocess.Popen(
        AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    ids = iter(range(10**9))

    def line(i: int, method: str, params: Any) -> bytes:
        msg = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
        return json.dumps(msg).encode() + b"\n"

    def same(method: str = NOOP, params: Any = None) -> None:
        i = next(ids)
        stdin.write(line(i, method, params or {}))
        stdin.flush()
        while True:
            msg = json.loads(stdout.readline())
            if msg.get("id") == i and "method" not in msg:
                return

    same("initialize", {"protocolVersion": 2, "capabilities": {}})
    r_same = _best(same)

    inboxes: dict[int, queue.SimpleQueue[Any]] = {}

    def reader() -> None:
        for raw in stdout:
            msg = json.loads(raw)
            inbox = inboxes.pop(msg.get("id"), None)
            if inbox is not None:
                inbox.put(msg)

    threading.Thread(target=reader, daemon=True).start()

    def one() -> None:
        i = next(ids)
        inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        inboxes[i] = inbox
        stdin.write(line(i, NOOP, {}))
        stdin.flush()
        inbox.get()

    r_one = _best(one)
    outbox: queue.SimpleQueue[bytes] = queue.SimpleQueue()

    def writer() -> None:
        while True:
            stdin.write(outbox.get())
            stdin.flush()

    threading.Thread(target=writer, daemon=True).start()

    def two() -> None:
        i = next(ids)
        inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        inboxes[i] = inbox
        outbox.put(line(i, NOOP, {}))
        inbox.get()

    r_two = _best(two)
    print(
        f"same thread {r_same * 1e6:.0f} µs; one crossing {r_one * 1e6:.0f} µs "
        f"(+{(r_one - r_same) * 1e6:.0f}); two crossings {r_two * 1e6:.0f} µs "
        f"(+{(r_two - r_same) * 1e6:.0f})"
    )
    proc.kill()
    proc.wait()


if __name__ == "__main__":
    main()
