"""A saved transcript is valid NDJSON whatever the agent wrote, and reloads the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_lite.transcript import Transcript

DEEP = b"[" * 5000 + b"]" * 5000
HOSTILE = [
    b'{"jsonrpc":"2.0","method":"session/update","params":{"text":"\\ud800"}}',  # lone surrogate
    b'{"a": NaN, "b": Infinity}',  # not JSON; the stdlib would accept it
    DEEP,  # decodes, but too deep to encode again
    b"\xff\xfe not utf-8",
    b"plain log line",
    b'{"ok": true}',
]


@pytest.mark.parametrize("line", HOSTILE)
def test_hostile_lines_save_as_valid_ndjson_and_reload(tmp_path: Path, line: bytes) -> None:
    t = Transcript()
    t.record("recv", line)
    t.record("send", b'{"jsonrpc":"2.0","id":1,"result":{}}')
    path = tmp_path / "t.jsonl"
    t.save(path)  # must not raise
    text = path.read_text(encoding="utf-8")
    records = [json.loads(x, parse_constant=lambda c: pytest.fail(c)) for x in text.splitlines()]
    assert [r["dir"] for r in records] == ["recv", "send"]
    again = Transcript.load(path)
    assert [e.direction for e in again] == ["recv", "send"]
    first = again[0].line
    if "msg" in records[0]:
        assert json.loads(first) == json.loads(line)
    else:
        assert first == line  # kept as text, byte for byte


def test_load_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"dir": "recv", "t": 0, "msg": {}}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"t\.jsonl:2"):
        Transcript.load(path)
