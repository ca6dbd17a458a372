"""Transcript recording, bounded retention and NDJSON export."""

from __future__ import annotations

import json
from pathlib import Path

from acp_lite.limits import Limits
from acp_lite.transcript import Transcript, TranscriptEntry


def test_records_raw_lines_in_order_with_monotonic_time(tmp_path: Path) -> None:
    t = Transcript()
    t.record("send", b'{"jsonrpc":"2.0","id":1,"method":"initialize"}')
    t.record("recv", b"not json at all")
    t.record("recv", b'{"jsonrpc":"2.0","id":1,"result":{}}')
    entries = t.entries()
    assert [e.direction for e in entries] == ["send", "recv", "recv"]
    assert entries[1].line == b"not json at all"
    assert entries[0].time <= entries[1].time <= entries[2].time
    assert t[2] == entries[2] and t[-1] == entries[2] and len(t) == 3
    records = [json.loads(line) for line in t.to_ndjson().splitlines()]
    assert records[0]["t"] == 0.0 and records[0]["dir"] == "send"
    assert records[0]["msg"]["method"] == "initialize"
    assert records[1] == {"dir": "recv", "t": records[1]["t"], "raw": "not json at all"}
    path = tmp_path / "t.ndjson"
    t.save(path)
    assert path.read_text(encoding="utf-8") == t.to_ndjson()


def test_bounded_retention_counts_dropped_entries() -> None:
    t = Transcript(max_entries=2)
    for i in range(5):
        t.record("recv", str(i).encode())
    assert [e.line for e in t] == [b"3", b"4"]
    assert t.dropped == 3 and t.max_entries == 2


def test_entry_json() -> None:
    assert TranscriptEntry("recv", 0.0, b"[1]").json() == [1]


def test_limits_defaults() -> None:
    limits = Limits()
    assert limits.max_line_bytes == 32 * 1024 * 1024
    assert limits.max_transcript_entries is None
    assert limits.shutdown_timeout == limits.close_grace + limits.terminate_grace + 1.0
