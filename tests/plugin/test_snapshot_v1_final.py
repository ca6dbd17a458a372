"""A v1 session's snapshot folds as a v2 one and holds how each turn ended (issue 25
item 8): the ``final`` view gives a v1 ``tool_call`` and its updates one folded
``tool_call_update``, and every view has the turn's ``session/prompt`` answer as a
line (``{"response": "session/prompt", "stopReason": ...}``), the v1 counterpart
of v2's idle ``state_update``: an agent answering ``finished`` fails its snapshot."""

from __future__ import annotations

from typing import Any

import pytest

from acp_lite import connect_in_memory
from acp_lite.limits import Limits
from acp_lite.testing import InProcessAgent
from pytest_acp.normalize import extract_updates, normalize
from pytest_acp.snapshot import serialize_updates

FAST = Limits(default_timeout=5.0)


def run(scenario: str, protocol: int) -> tuple[Any, list[Any]]:
    with connect_in_memory(InProcessAgent(scenario, protocol=protocol), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        turn = session.run("x")
        return turn, [e.to_record() for e in client.transcript.entries()]


@pytest.fixture(scope="module")
def failure() -> dict[int, tuple[Any, list[Any]]]:
    return {protocol: run("failure", protocol) for protocol in (1, 2)}


def tools(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in payloads if str(p.get("sessionUpdate")).startswith("tool_call")]


@pytest.mark.parametrize("source", ["turn", "transcript"])
def test_the_final_view_folds_a_v1_tool_call_as_v2(
    failure: dict[int, tuple[Any, list[Any]]], source: str
) -> None:
    v1 = failure[1][0] if source == "turn" else failure[1][1]
    v2 = failure[2][0]
    folded = tools(normalize(v1, "final"))
    assert folded == tools(normalize(v2, "final"))
    assert [(p["sessionUpdate"], p["status"]) for p in folded] == [("tool_call_update", "failed")]
    assert folded[0]["title"] == "Call the model"  # what the v1 tool_call said, kept


@pytest.mark.parametrize("source", ["turn", "transcript"])
@pytest.mark.parametrize("view", ["raw", "merged", "final"])
def test_a_v1_turn_ends_with_its_prompt_answer(
    failure: dict[int, tuple[Any, list[Any]]], source: str, view: str
) -> None:
    turn, records = failure[1]
    found = normalize(turn if source == "turn" else records, view)
    error = {"code": -32603, "message": "Model provider unavailable"}
    assert found[-1] == {"response": "session/prompt", "error": error, "stopReason": "error"}


def v1_records(stop: Any) -> list[dict[str, Any]]:
    """A v1 turn, as saved transcript records, answered with ``stop``."""

    def rec(direction: str, msg: dict[str, Any]) -> dict[str, Any]:
        return {"dir": direction, "msg": {"jsonrpc": "2.0", **msg}}

    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    return [
        rec("send", {"id": 0, "method": "initialize", "params": {"protocolVersion": 2}}),
        rec("recv", {"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
        rec("send", {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
        rec("recv", {"id": 1, "result": {"sessionId": "s"}}),
        rec("send", {"id": 2, "method": "session/prompt", "params": {"sessionId": "s"}}),
        rec("recv", {"method": "session/update", "params": {"sessionId": "s", "update": chunk}}),
        rec("recv", {"id": 2, "result": {"stopReason": stop}}),
    ]


@pytest.mark.parametrize("view", ["raw", "merged", "final"])
def test_a_v1_snapshot_tells_the_stop_reasons_apart(view: str) -> None:
    ended = serialize_updates(v1_records("end_turn"))
    finished = serialize_updates(v1_records("finished"))
    assert ended != finished
    last = normalize(v1_records("end_turn"), view)[-1]
    assert last == {"response": "session/prompt", "stopReason": "end_turn"}


def test_the_turn_of_the_model_and_of_the_transcript_snapshot_alike() -> None:
    turn, records = run("echo", 1)
    assert normalize(turn, "merged") == normalize(records, "merged")
    assert normalize(turn, "merged")[-1] == {"response": "session/prompt", "stopReason": "end_turn"}


def test_a_v2_turn_and_the_update_payloads_have_no_answer_line(
    failure: dict[int, tuple[Any, list[Any]]],
) -> None:
    _, records = failure[2]
    assert not [p for p in normalize(records, "raw") if "response" in p]
    # extract_updates gives update payloads only.
    assert not [p for p in extract_updates(failure[1][1]) if "response" in p]


def test_the_final_view_keeps_a_v1_plan_and_mode_as_last_sent() -> None:
    # v1 replaces the whole plan with each `plan` update (v1 schema Plan), and the
    # mode with each current_mode_update: one line each, the last.
    def plan(*statuses: str) -> dict[str, Any]:
        entries = [{"content": f"step {i}", "priority": "medium", "status": s}
                   for i, s in enumerate(statuses)]  # fmt: skip
        return {"sessionUpdate": "plan", "entries": entries}

    mode = {"sessionUpdate": "current_mode_update", "currentModeId": "ask"}
    payloads = [plan("pending", "pending"), mode, plan("completed", "in_progress")]
    found = normalize([*payloads, {**mode, "currentModeId": "code"}], "final")
    assert found == [
        plan("completed", "in_progress"),
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
    ]
