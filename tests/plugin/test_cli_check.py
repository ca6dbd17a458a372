"""python -m pytest_acp check / explain, on saved transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_acp.__main__ import main


def write(path: Path, records: list[dict[str, object]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def update(state: str, **fields: object) -> dict[str, object]:
    params = {
        "sessionId": "s",
        "update": {"sessionUpdate": "state_update", "state": state, **fields},
    }
    msg = {"jsonrpc": "2.0", "method": "session/update", "params": params}
    return {"dir": "recv", "t": 0.0, "msg": msg}


OPEN = [
    {
        "dir": "send",
        "t": 0.0,
        "msg": {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": "/", "mcpServers": []},
        },
    },
    {"dir": "recv", "t": 0.1, "msg": {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}}},
]


def test_check_clean_and_broken_transcripts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = write(tmp_path / "clean.ndjson", OPEN)
    assert main(["check", clean]) == 0
    assert "no conformance violation in 2 lines" in capsys.readouterr().out
    garbage = {"dir": "recv", "t": 0.2, "raw": "oops"}
    broken = write(tmp_path / "broken.ndjson", [*OPEN, garbage, update("running")])
    assert main(["check", broken]) == 1
    out = capsys.readouterr().out
    assert "stdout-not-jsonrpc (transcript line 2)" in out and "work-not-ended" in out
    assert main(["check", "--live", broken]) == 1
    assert "work-not-ended" not in capsys.readouterr().out


def test_explain_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "output-while-idle"]) == 0
    assert "output-while-idle (MUST): agent messages" in capsys.readouterr().out
    assert main(["explain", "nope"]) == 2
    assert main(["check", str(tmp_path / "missing.ndjson")]) == 2
    (tmp_path / "bad.ndjson").write_text("{not json\n")
    assert main(["check", str(tmp_path / "bad.ndjson")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_check_agent_exited(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A crash mid-turn: running, then nothing. Not a protocol violation once we know
    # the process exited (spec 000, "Failures": clients detect an exited agent).
    crashed = write(tmp_path / "crashed.ndjson", [*OPEN, update("running")])
    assert main(["check", crashed]) == 1
    assert "work-not-ended" in capsys.readouterr().out
    assert main(["check", "--agent-exited", crashed]) == 0
    assert "no conformance violation" in capsys.readouterr().out
