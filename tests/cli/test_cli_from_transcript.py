"""``acp-lite cassette from-transcript`` redacts by recording's rules, whatever shell
it runs in, says only what it did, and names the agent the transcript names
(issue 25 item 12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_lite.cassettes import Cassette, Record, redact_records

from .conftest import RunCli

KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2"


def _transcript(path: Path, agent_text: str, key: str = KEY) -> None:
    lines = [
        ("send", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        (
            "recv",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"protocolVersion": 2, "info": {"name": "bot", "version": "1.2"}},
            },
        ),
        (
            "send",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                # A name that does not look like a credential: only the value tells.
                "params": {
                    "cwd": "/w",
                    "mcpServers": [{"env": [{"name": "OPENAI", "value": key}]}],
                },
            },
        ),
        (
            "recv",
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": {"text": agent_text}},
            },
        ),
    ]
    path.write_text("".join(json.dumps({"dir": d, "t": 0.0, "msg": m}) + "\n" for d, m in lines))


def test_a_key_nothing_names_is_redacted_in_every_copy(
    run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another shell: the variable that held the key is not set here.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _transcript(tmp_path / "t.ndjson", f"using key {KEY} as told")
    proc = run_cli("cassette", "from-transcript", "t.ndjson", "c.acp.jsonl")
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "c.acp.jsonl").read_text()
    assert KEY not in text
    assert text.count("<redacted:credential>") == 2
    assert "2 of them with secrets replaced by placeholders" in proc.stderr
    assert "secrets redacted" not in proc.stderr


def test_it_claims_nothing_when_nothing_was_found(run_cli: RunCli, tmp_path: Path) -> None:
    _transcript(tmp_path / "t.ndjson", "nothing secret here", key="plain")
    proc = run_cli("cassette", "from-transcript", "t.ndjson", "c.acp.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert "no secret found to redact" in proc.stderr
    assert "secrets redacted" not in proc.stderr


def test_without_agent_the_header_names_the_transcripts_agent(
    run_cli: RunCli, tmp_path: Path
) -> None:
    _transcript(tmp_path / "t.ndjson", "hi")
    proc = run_cli("cassette", "from-transcript", "t.ndjson", "c.acp.jsonl")
    assert proc.returncode == 0, proc.stderr
    (recording,) = Cassette.load(tmp_path / "c.acp.jsonl").recordings
    assert recording.header.agent.startswith("bot 1.2 ")
    assert "command unknown" in recording.header.agent
    (tmp_path / "bare.ndjson").write_text('{"dir": "send", "t": 0, "msg": {"id": 1}}\n')
    bare = run_cli("cassette", "from-transcript", "bare.ndjson", "b.acp.jsonl")
    assert bare.returncode == 0, bare.stderr
    (recording,) = Cassette.load(tmp_path / "b.acp.jsonl").recordings
    assert recording.header.agent == "unknown"


def test_recording_finds_keys_by_their_shape_too() -> None:
    # The same rule at record time (redact_records is what recording uses).
    record = Record("recv", 0.0, message={"result": {"note": f"Bearer {KEY[3:]}"}})
    (redacted,) = redact_records([record], secrets={})
    assert redacted.message == {"result": {"note": "Bearer <redacted:credential>"}}
