"""The end-of-test connection check reads a streamed chunk's line kept compactly by
the client (its text and its stream's shape, ``Transcript.stored``) without rebuilding
and decoding it (``ConnectionChecker.feed_chunk``), and finds exactly what feeding
every line whole finds: output while idle, updates of an unknown session, the rest."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_lite.core import ClientConnection
from acp_lite.limits import Limits
from pytest_acp._incremental import IncrementalCheck
from pytest_acp.conformance import check_transcript


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **obj}).encode() + b"\n"


def _chunks(sid: str, mid: str, n: int, kind: str = "agent_message_chunk") -> bytes:
    out = b""
    for i in range(n):
        text = f"chunk {i}\n" if i % 3 else f'say "{i}"'  # verbatim and escaped lines
        update = {
            "sessionUpdate": kind,
            "messageId": mid,
            "content": {"type": "text", "text": text},
        }
        out += _line({"method": "session/update", "params": {"sessionId": sid, "update": update}})
    return out


def _traffic(limits: Limits) -> ClientConnection:
    conn = ClientConnection(limits, locate_findings=True)
    entry = conn.send_request("session/new", {"cwd": "/", "mcpServers": []})
    conn.data_to_send()
    conn.receive_data(_line({"id": entry.id, "result": {"sessionId": "s1"}}))
    conn.receive_data(_chunks("s1", "m1", 30))  # output while idle: no running yet
    running = {"sessionUpdate": "state_update", "state": "running", "background": []}
    conn.receive_data(
        _line({"method": "session/update", "params": {"sessionId": "s1", "update": running}})
    )
    conn.receive_data(_chunks("s9", "m1", 20))  # a session never opened
    conn.receive_data(_chunks("s1", "m2", 40, "agent_thought_chunk"))
    idle = {"sessionUpdate": "state_update", "state": "idle", "background": []}
    idle["stopReason"] = "end_turn"
    conn.receive_data(
        _line({"method": "session/update", "params": {"sessionId": "s1", "update": idle}})
    )
    # The hot stream goes on after the idle: output while idle, on a compact line.
    conn.receive_data(_chunks("s1", "m2", 5, "agent_thought_chunk") + b"not json\n")
    return conn


@pytest.mark.parametrize("limits", [Limits(), Limits(max_transcript_entries=25)])
def test_compact_lines_are_checked_as_whole_lines(limits: Limits) -> None:
    conn = _traffic(limits)
    transcript = conn.transcript
    kept = transcript.stored()
    assert sum(shape is not None for *_, shape in kept) > 10  # the fast path is used
    assert kept[-2][3] is not None  # the chunk after the idle (output while idle) is compact
    check = IncrementalCheck()
    dropped = check.feed_from(transcript)
    assert dropped == transcript.dropped
    fast = check.violations(start=0)
    # The reference: every retained line whole (positions offset by what was dropped).
    whole = IncrementalCheck()
    whole.feed(transcript.entries(), dropped)
    assert fast == whole.violations(start=0)
    if not dropped:
        assert fast == check_transcript(transcript, model=False)
        assert {v.rule for v in fast} >= {"output-while-idle", "update-unknown-session"}


def test_stored_rebuilds_every_line() -> None:
    transcript = _traffic(Limits()).transcript
    rebuilt = [
        item if shape is None else shape.line(item) for _, _, item, shape in transcript.stored()
    ]
    assert rebuilt == [e.line for e in transcript.entries()]
    assert [d for d, *_ in transcript.stored(3)] == [e.direction for e in transcript.entries()[3:]]
