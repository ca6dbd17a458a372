"""``Limits(keep_raw_updates=False)`` is never bigger or slower than the default on a
streamed message: its chunks are kept as their text and compact line, applied in runs,
and read back exactly as with the default."""

from __future__ import annotations

import json

from acp_lite.core import ClientConnection
from acp_lite.limits import Limits
from acp_lite.protocol.chunk_lines import CompactLine

from .test_compact_lines import chunk_line
from .test_connection import opened


def _stream(limits: Limits) -> ClientConnection:
    conn = ClientConnection(limits)
    opened(conn)
    texts = [f"chunk {i}" for i in range(40)]
    lines = [chunk_line(t, "m-off", ascii_only=False) for t in texts]
    conn.receive_data(b"".join(x + b"\n" for x in lines[:20]))
    conn.receive_data(b"".join(x + b"\n" for x in lines[20:]))  # a run of the hot stream
    return conn


def test_chunks_are_kept_compactly_and_read_back_the_same() -> None:
    on, off = _stream(Limits()), _stream(Limits(keep_raw_updates=False))
    log_on, log_off = on.sessions["s1"].model._log, off.sessions["s1"].model._log
    assert [u.__class__ for u in log_off._updates[-30:]] == [CompactLine] * 30
    assert log_off._raws[-1] == "chunk 39"  # the text: no typed update, no dict
    assert [e.raw for e in log_off] == [e.raw for e in log_on]
    assert [e.update for e in log_off] == [e.update for e in log_on]
    assert [e.line for e in off.transcript] == [e.line for e in on.transcript]


def _tool_updates(limits: Limits) -> ClientConnection:
    conn = ClientConnection(limits)
    opened(conn)
    for i in range(5):
        update = {"sessionUpdate": "tool_call_update", "toolCallId": f"c{i}", "status": "completed"}
        line = json.dumps(
            {"jsonrpc": "2.0", "method": "session/update",
             "params": {"sessionId": "s1", "update": update}}
        ).encode()  # fmt: skip
        conn.receive_data(line + b"\n")
    return conn


def test_other_updates_keep_the_line_while_the_transcript_keeps_every_line() -> None:
    """A reference to a line the transcript holds costs less than the typed update;
    once the transcript lets lines go, False keeps the typed update instead."""
    on = _tool_updates(Limits())
    off = _tool_updates(Limits(keep_raw_updates=False))
    bounded = _tool_updates(Limits(keep_raw_updates=False, max_transcript_entries=3))
    log_on, log_off = on.sessions["s1"].model._log, off.sessions["s1"].model._log
    log_bounded = bounded.sessions["s1"].model._log
    assert [r.__class__ for r in log_off._raws] == [bytes] * 5
    assert log_off._raws == log_on._raws
    assert log_bounded._raws == [None] * 5  # the typed update is kept instead
    assert [e.raw for e in log_bounded] == [e.raw for e in log_on]
