"""Snapshots pin the agent's requests and the answers given, in stream order.

"Asked before writing, offered allow_once/reject_once, we allowed": a request line
(``request`` first) sits where the request arrived, normalised like the updates
around it; ``acp_snapshot(requests=False)`` leaves them out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_acp import normalize

from .conftest import IN_PROCESS, LEAN

SUITE = """
import pytest
from acp_lite import permissions
from scenarios import scenario


@scenario("tool_call_permission")
@pytest.mark.acp_permission("allow_once")
def test_allowed(acp_session, acp_snapshot):
    turn = acp_session.run("write")
    assert turn.updates == acp_snapshot
    assert turn.updates == acp_snapshot(requests=False)
    assert acp_session == acp_snapshot(view="final")


@scenario("elicitation")
@pytest.mark.acp_elicitation(policy=permissions.accept({"name": "Ada"}))
def test_form(acp_session, acp_snapshot):
    assert acp_session.run("hi").updates == acp_snapshot(view="raw")
"""


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_snapshots_hold_requests_and_answers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_requests=SUITE, scenarios=IN_PROCESS)
    pytester.syspathinsert()
    result = pytester.runpytest_inprocess(*LEAN, "--snapshot-update")
    result.assert_outcomes(passed=2)
    folder = pytester.path / "__snapshots__" / "test_requests"

    merged = lines(folder / "test_allowed.acp.jsonl")
    assert merged[0] == {"acp_snapshot": 1, "view": "merged"}
    kinds = [u.get("sessionUpdate") or u["request"] for u in merged[1:]]
    at = kinds.index("session/request_permission")
    assert kinds[at - 2 : at + 2] == [
        "tool_call_update",
        "state_update",
        "session/request_permission",
        "state_update",
    ]
    asked = merged[1 + at]
    assert list(asked) == ["request", "params", "result"]
    assert asked["params"]["subject"]["toolCall"] == {"toolCallId": "<tool_call:1>"}
    assert [o["kind"] for o in asked["params"]["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
    ]
    assert asked["result"] == {"outcome": {"optionId": "allow", "outcome": "selected"}}
    assert "sessionId" not in asked["params"]
    # The request's own tool call is not an update the agent streamed.
    assert kinds.count("tool_call_update") == 3

    without = lines(folder / "test_allowed.1.acp.jsonl")
    assert without[0] == {"acp_snapshot": 1, "view": "merged", "requests": False}
    assert without[1:] == [u for u in merged[1:] if "request" not in u]

    final = lines(folder / "test_allowed.2.acp.jsonl")
    assert [u["request"] for u in final if "request" in u] == ["session/request_permission"]

    form = lines(folder / "test_form.acp.jsonl")
    (line,) = [u for u in form if "request" in u]
    assert line["request"] == "elicitation/create"
    assert line["params"]["message"] == "What is your name?"
    assert line["result"] == {"action": "accept", "content": {"name": "Ada"}}

    # The committed files pass as they are; a different answer fails the assertion.
    again = pytester.runpytest_inprocess(*LEAN)
    again.assert_outcomes(passed=2)
    pytester.makepyfile(test_requests=SUITE.replace('"allow_once"', '"reject"'))
    changed = pytester.runpytest_inprocess(*LEAN, "-k", "allowed")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(['*- {"request": "session/request_permission"*"allow"*'])


def _rpc(direction: str, **msg: Any) -> dict[str, Any]:
    return {"dir": direction, "t": 0.0, "msg": {"jsonrpc": "2.0", **msg}}


def test_transcript_requests_answered_failed_withdrawn_pending() -> None:
    def ask(rid: int, title: str) -> dict[str, Any]:
        params = {"sessionId": "s", "title": title, "options": []}
        return _rpc("recv", id=rid, method="session/request_permission", params=params)

    def line(title: str, **answer: Any) -> dict[str, Any]:
        params = {"options": [], "title": title}
        return {"request": "session/request_permission", **answer, "params": params}

    text = {"type": "text", "text": "x"}
    update = {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text}
    cancelled = {"outcome": {"outcome": "cancelled"}}
    transcript = [
        ask(1, "one"),
        ask(2, "two"),
        ask(3, "three"),
        ask(4, "four"),
        _rpc("recv", method="session/update", params={"sessionId": "s", "update": update}),
        _rpc("send", id=1, result=cancelled),
        _rpc("send", id=2, error={"code": -32603, "message": "boom", "data": 1}),
        _rpc("recv", method="$/cancel_request", params={"requestId": 3}),
        _rpc("send", id=3, result=cancelled),  # too late: withdrawn first
    ]
    assert normalize(transcript, view="raw") == [
        line("one", result=cancelled),
        line("two", error={"code": -32603, "message": "boom"}),
        line("three", status="withdrawn"),
        line("four", status="pending"),
        {"sessionUpdate": "agent_message_chunk", "content": text, "messageId": "<message:1>"},
    ]
    assert [u["sessionUpdate"] for u in normalize(transcript, requests=False)] == [
        "agent_message_chunk"
    ]
