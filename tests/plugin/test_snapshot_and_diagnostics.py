"""Units of the snapshot format and the failure diagnostics (no pytest run needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from syrupy.filters import props
from syrupy.matchers import path_type

from acp_lite.transcript import Transcript
from pytest_acp._diagnostics import (
    HEAD_LINES,
    TAIL_LINES,
    render_stderr,
    render_transcript,
    save_transcript,
    transcript_file,
)
from pytest_acp.snapshot import FORMAT_VERSION, SnapshotOptions, serialize_updates

CHUNK = {"sessionUpdate": "agent_message_chunk", "messageId": "m"}
UPDATES = [
    {**CHUNK, "content": {"type": "text", "text": "a"}},
    {**CHUNK, "content": {"type": "text", "text": "b"}},
    {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "done", "title": "Read"},
]


def test_serialized_snapshot_is_a_header_then_one_update_per_line() -> None:
    text = serialize_updates(UPDATES)
    lines = text.splitlines()
    assert json.loads(lines[0]) == {"acp_snapshot": FORMAT_VERSION, "view": "merged"}
    assert lines[1] == (
        '{"sessionUpdate": "agent_message_chunk", "content": {"text": "ab", "type": "text"}, '
        '"messageId": "<message:1>"}'
    )
    assert len(lines) == 3 and text.endswith("\n")
    options = SnapshotOptions(view="raw", text=False, redact=frozenset({"cost"}))
    header = json.loads(serialize_updates(UPDATES, options).splitlines()[0])
    assert header == {
        "acp_snapshot": FORMAT_VERSION,
        "view": "raw",
        "text": False,
        "redact": ["cost"],
    }


def test_syrupy_filters_and_matchers_apply() -> None:
    text = serialize_updates(UPDATES, exclude=props("title"))
    assert "Read" not in text and '"status": "done"' in text
    matched = serialize_updates(UPDATES, matcher=path_type({"1.status": (str,)}))
    assert '"status": "str"' in matched
    assert json.loads(matched.splitlines()[2])["sessionUpdate"] == "tool_call_update"


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="unknown view"):
        SnapshotOptions(view="nice")


def _transcript(n: int) -> Transcript:
    t = Transcript()
    for i in range(n):
        t.record("send" if i % 2 == 0 else "recv", json.dumps({"jsonrpc": "2.0", "i": i}).encode())
    t.record("recv", b"x" * 1000)
    return t


def test_transcript_rendering_keeps_head_and_tail_and_clips_long_lines() -> None:
    short = render_transcript(_transcript(3).entries())
    assert short.count("\n") == 3 and "--> " in short and "<-- " in short
    assert "(+700 chars)" in short
    many = _transcript(500).entries()
    text = render_transcript(many, start=10)
    lines = text.splitlines()
    assert len(lines) == HEAD_LINES + TAIL_LINES + 1
    assert (
        "lines omitted" in lines[HEAD_LINES]
        and str(501 - HEAD_LINES - TAIL_LINES) in lines[HEAD_LINES]
    )
    assert lines[0].split()[0] == "10" and lines[-1].split()[0] == str(10 + 500)
    assert render_transcript([]) == "(no traffic)"
    assert render_stderr([]) == "(empty)" and render_stderr(["a\n", "b"]) == "a\nb"


def test_saved_transcript_files(tmp_path: Path) -> None:
    path = transcript_file(tmp_path, "tests/test_x.py::TestA::test_b[p/1 x]", 0)
    assert path.name == "tests_test_x.py_TestA_test_b[p_1_x].ndjson"
    assert transcript_file(tmp_path, "t.py::test", 1).name == "t.py_test.2.ndjson"
    t = _transcript(2)
    t.record("recv", b"not json")
    save_transcript(path, t.entries())
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0]["msg"] == {"jsonrpc": "2.0", "i": 0} and records[0]["t"] == 0.0
    assert records[-1] == {"dir": "recv", "t": records[-1]["t"], "raw": "not json"}
