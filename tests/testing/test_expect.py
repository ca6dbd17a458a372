"""Expect scripts: the reference agent playing each turn for the prompt that matches
it, once, and reporting what it saw (the engine of pytest_acp's acp_fake_agent).
On the raw wire, so every line it writes is checked against the v2 schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_lite.testing import Script, ScriptError
from acp_lite.testing._expect import ReportFile

from ._agentproc import RawAgent

Spawn = Callable[..., RawAgent]

SCRIPT = {
    "expect": "unordered",
    "allowed_methods": ["session/list"],
    "initialize_result": {"info": {"name": "fake", "version": "1"}},
    "turns": [
        {"prompt": "hello", "steps": [{"type": "text", "text": "hi"}]},
        {"prompt_pattern": "^deploy", "label": "the deploy", "stop_reason": "refusal"},
    ],
}


def test_turns_are_matched_once_in_any_order(spawn: Spawn) -> None:
    events: list[dict[str, Any]] = []
    agent = spawn(script=SCRIPT, events=events.append)
    init = agent.call("initialize", {"protocolVersion": 2})
    assert init["info"] == {"name": "fake", "version": "1"}
    sid = agent.call("session/new", {"cwd": "/tmp"})["sessionId"]
    assert "result" in agent.response(agent.prompt(sid, "deploy now"))
    assert agent.wait_idle(sid)["stopReason"] == "refusal"
    wrong = agent.response(agent.prompt(sid, "hello?"))["error"]
    assert wrong == {
        "code": -32602,
        "message": "unexpected prompt 'hello?': expected: 'hello'",
    }
    agent.response(agent.prompt(sid, "hello"))
    agent.wait_idle(sid)
    again = agent.response(agent.prompt(sid, "hello"))["error"]
    assert again["message"].endswith("every expected prompt was already asked")
    assert agent.call("session/list", {})["sessions"]
    unknown = agent.response(agent.request("session/delete", {"sessionId": sid}))["error"]
    assert unknown["code"] == -32601
    kinds = [(e["event"], e.get("turn"), e.get("method")) for e in events]
    assert kinds == [
        ("start", None, None),
        ("request", None, "initialize"),
        ("request", None, "session/new"),
        ("request", None, "session/prompt"),
        ("prompt", 1, None),
        ("request", None, "session/prompt"),
        ("unexpected", None, "session/prompt"),
        ("request", None, "session/prompt"),
        ("prompt", 0, None),
        ("request", None, "session/prompt"),
        ("unexpected", None, "session/prompt"),
        ("request", None, "session/list"),
        ("unexpected", None, "session/delete"),
    ]


def test_ordered_turns_name_the_next_one(spawn: Spawn) -> None:
    agent = spawn(script={**SCRIPT, "expect": "ordered"})
    sid = agent.start_session()
    error = agent.response(agent.prompt(sid, "deploy"))["error"]
    assert error["message"] == "unexpected prompt 'deploy': the next expected prompt is 'hello'"


def test_a_bad_expect_mode_is_a_script_error() -> None:
    with pytest.raises(ScriptError, match="expect"):
        Script.from_dict({"expect": "sometimes"})


def test_the_report_file_has_one_line_per_event_with_the_pid(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    report = ReportFile(str(path))
    report({"event": "request", "method": "initialize"})
    report({"event": "prompt", "turn": 0})
    report.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["event"] for line in lines] == ["request", "prompt"]
    assert len({line["pid"] for line in lines}) == 1
