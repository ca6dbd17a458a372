#!/usr/bin/env python3
"""A stdlib-only ACP v2 agent that streams one message in a chosen traffic shape.

``bench/compare.py`` measures clients against it: the floor and acp_lite read the very
same bytes. Shapes (``--shape``):

* ``same``: every chunk's text is ``"x"`` (one string CPython shares), 2,000 lines
  per write: the best case for any client.
* ``distinct``: distinct 20-40-character texts, plain ASCII, 2,000 lines per write.
* ``escaped``: distinct texts, about one in five holding a newline (``\\n`` on the
  wire), some quotes and non-ASCII (written as raw UTF-8, as the TypeScript and
  Python SDKs write it), 2,000 lines per write.
* ``per_write``: the ``escaped`` texts, one ``write`` per chunk, as the SDK agents
  write (a flush per message): the client reads what has arrived when it looks.

The texts are a pure function of the chunk's index, so every run sends the same
bytes. It answers ``initialize``, ``session/new``, ``session/prompt`` (``running``,
insertion, the user message's echo, the chunks, ``idle`` with ``end_turn``: a
conforming turn) and echoes ``_`` requests.

    python bench/flood_agent.py --count 100000 --shape per_write
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Mapping

SHAPES = ("same", "distinct", "escaped", "per_write")
BATCH = 2000
_WORDS = (
    "the", "model", "reads", "a", "file", "and", "writes", "its", "answer", "token",
    "stream", "of", "text", "with", "some", "longer", "words", "between", "short", "ones",
)  # fmt: skip
_ODD = ("é", "→", "日本", "ü", "—")


def text(i: int, shape: str) -> str:
    """The text of chunk ``i``: 20-40 characters, distinct, a pure function of ``i``."""
    if shape == "same":
        return "x"
    n = 20 + (i * 7919) % 21
    words, k = [str(i)], i
    while sum(map(len, words)) + len(words) < n:
        k = (k * 1103515245 + 12345) & 0x7FFFFFFF
        words.append(_WORDS[k % len(_WORDS)])
    out = " ".join(words)[:n]
    if shape == "distinct":
        return out
    if i % 5 == 0:
        out = out[: n // 2] + "\n" + out[n // 2 :]
    if i % 9 == 0:
        out = out[:5] + '"' + out[5:] + '"'
    if i % 13 == 0:
        out += _ODD[i % len(_ODD)]
    return out


def _line(msg: dict[str, object]) -> bytes:
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _update(sid: str, update: Mapping[str, object]) -> bytes:
    return _line(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": sid, "update": update},
        }
    )


def chunk_lines(sid: str, count: int, shape: str) -> Iterator[bytes]:
    """The chunk lines of the message, in writes: one per chunk (``per_write``), else
    :data:`BATCH` lines per write."""
    per_write = shape == "per_write"
    kind = "escaped" if per_write else shape

    def line(i: int) -> bytes:
        return _update(
            sid,
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "agent-1",
                "content": {"type": "text", "text": text(i, kind)},
            },
        )

    if per_write:
        yield from map(line, range(count))
        return
    if shape == "same":  # one line, encoded once (as the reference agent's flood)
        for start in range(0, count, BATCH):
            yield line(0) * (min(start + BATCH, count) - start)
        return
    for start in range(0, count, BATCH):
        yield b"".join(map(line, range(start, min(start + BATCH, count))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--shape", choices=SHAPES, default="distinct")
    args = parser.parse_args()
    out = sys.stdout.fileno()
    # Written in batches: encoded before the turn, so the agent writes as fast as the
    # pipe takes it (a line per write is encoded as it goes, as an SDK agent does).
    ready: Iterator[bytes] = chunk_lines("s1", args.count, args.shape)
    if args.shape != "per_write":
        ready = iter(list(ready))

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]

    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue  # a notification (session/cancel is not honoured: a benchmark)
        if method == "initialize":
            result: object = {"protocolVersion": 2, "capabilities": {},
                              "info": {"name": "flood-agent", "version": "0"}}  # fmt: skip
        elif method == "session/new":
            result = {"sessionId": "s1"}
        elif method == "session/prompt":
            sid = msg["params"]["sessionId"]
            running = {"sessionUpdate": "state_update", "state": "running", "background": []}
            echo = {"sessionUpdate": "user_message", "messageId": "user-1",
                    "content": msg["params"]["prompt"]}  # fmt: skip
            write(_update(sid, running) + _line({"jsonrpc": "2.0", "id": rid,
                                                 "result": {"messageId": "user-1"}})
                  + _update(sid, echo))  # fmt: skip
            for data in ready if sid == "s1" else chunk_lines(sid, args.count, args.shape):
                write(data)
            write(_update(sid, {"sessionUpdate": "state_update", "state": "idle",
                                "background": [], "stopReason": "end_turn"}))  # fmt: skip
            continue
        elif isinstance(method, str) and method.startswith("_"):
            result = msg.get("params") or {}
        else:
            write(_line({"jsonrpc": "2.0", "id": rid,
                         "error": {"code": -32601, "message": "method not found"}}))  # fmt: skip
            continue
        write(_line({"jsonrpc": "2.0", "id": rid, "result": result}))


if __name__ == "__main__":
    main()
