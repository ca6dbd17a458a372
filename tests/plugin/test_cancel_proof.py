"""``cancel-not-cancelled`` (v2) and ``v1-cancel-not-cancelled`` fire only on what the
trace proves (issue 24 item 12). The agent reads its stdin in order, so it has
provably read a ``session/cancel`` once it has answered (result or error) a request
the client sent after it; a turn that ends otherwise than ``cancelled`` after such
an answer ignored the cancel. A turn that ends before it may have crossed the
cancel on the wire (an instant ``end_turn``): no finding. The checker is fed the
lines directly."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_acp.conformance import check_transcript

SID = "s"
CANCEL = {"method": "session/cancel", "params": {"sessionId": SID}}
PING = {"id": 9, "method": "_x/ping", "params": {}}  # an unknown extension method
PING_ANSWERED = {"id": 9, "error": {"code": -32601, "message": "Method not found"}}
PING_ECHOED = {"id": 9, "result": {}}


def rec(direction: str, msg: dict[str, Any]) -> dict[str, Any]:
    return {"dir": direction, "msg": {"jsonrpc": "2.0", **msg}}


def update(body: dict[str, Any]) -> dict[str, Any]:
    return rec("recv", {"method": "session/update", "params": {"sessionId": SID, "update": body}})


def opening(version: int) -> list[dict[str, Any]]:
    init = {"protocolVersion": version, "agentCapabilities": {}} if version == 1 else {
        "protocolVersion": 2, "info": {"name": "a"}, "capabilities": {}}  # fmt: skip
    return [
        rec("send", {"id": 0, "method": "initialize", "params": {"protocolVersion": 2}}),
        rec("recv", {"id": 0, "result": init}),
        rec("send", {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
        rec("recv", {"id": 1, "result": {"sessionId": SID}}),
        rec("send", {"id": 2, "method": "session/prompt", "params": {"sessionId": SID}}),
    ]


def turn_end(version: int, stop: str) -> dict[str, Any]:
    if version == 1:
        return rec("recv", {"id": 2, "result": {"stopReason": stop}})
    return update({"sessionUpdate": "state_update", "state": "idle", "stopReason": stop})


def started(version: int) -> list[dict[str, Any]]:
    """The turn is running: v1 from its request, v2 once inserted and running."""
    if version == 1:
        return opening(1)
    user = {"sessionUpdate": "user_message", "messageId": "u1", "content": []}
    return [
        *opening(2),
        update({"sessionUpdate": "state_update", "state": "running"}),
        rec("recv", {"id": 2, "result": {"messageId": "u1"}}),
        update(user),
    ]


RULE = {1: "v1-cancel-not-cancelled", 2: "cancel-not-cancelled"}


def rules(records: Any) -> list[str]:
    return [v.rule for v in check_transcript(records, ended=True)]


@pytest.mark.parametrize("version", [1, 2])
def test_an_end_turn_that_crossed_the_cancel_is_not_a_finding(version: int) -> None:
    # Nothing the agent answered was sent after the cancel: it may not have read it.
    records = [*started(version), rec("send", CANCEL), turn_end(version, "end_turn")]
    assert rules(records) == []


@pytest.mark.parametrize("version", [1, 2])
def test_an_answer_to_a_later_request_after_the_end_proves_nothing(version: int) -> None:
    records = [
        *started(version),
        rec("send", CANCEL),
        rec("send", PING),
        turn_end(version, "end_turn"),  # written before the agent read the ping
        rec("recv", PING_ANSWERED),
    ]
    assert rules(records) == []


@pytest.mark.parametrize("version", [1, 2])
def test_an_answer_to_a_request_sent_before_the_cancel_proves_nothing(version: int) -> None:
    records = [
        *started(version),
        rec("send", PING),
        rec("send", CANCEL),
        rec("recv", PING_ANSWERED),
        turn_end(version, "end_turn"),
    ]
    assert rules(records) == []


@pytest.mark.parametrize("answer", [PING_ANSWERED, PING_ECHOED])
@pytest.mark.parametrize("version", [1, 2])
def test_an_end_turn_after_the_cancel_was_provably_read_is_a_finding(
    version: int, answer: dict[str, Any]
) -> None:
    records = [
        *started(version),
        rec("send", CANCEL),
        rec("send", PING),
        rec("recv", answer),  # read in order: the cancel was read before the ping
        turn_end(version, "end_turn"),
    ]
    found = check_transcript(records, ended=True)
    assert [(v.rule, v.entry_index) for v in found] == [(RULE[version], len(records) - 1)]
    assert "answered _x/ping request 9" in found[0].message


@pytest.mark.parametrize("version", [1, 2])
def test_a_cancelled_end_after_the_proof_is_conforming(version: int) -> None:
    records = [
        *started(version),
        rec("send", CANCEL),
        rec("send", PING),
        rec("recv", PING_ANSWERED),
        turn_end(version, "cancelled"),
    ]
    assert rules(records) == []


@pytest.mark.parametrize("version", [1, 2])
def test_a_batch_does_not_order_its_members(version: int) -> None:
    # One line [cancel, ping]: the agent MAY process batch entries "in any order"
    # (spec "Transports"): the ping's answer does not prove the cancel was seen.
    batch = {"dir": "send", "msg": [{"jsonrpc": "2.0", **CANCEL}, {"jsonrpc": "2.0", **PING}]}
    records = [*started(version), batch, rec("recv", PING_ANSWERED), turn_end(version, "end_turn")]
    assert rules(records) == []
    # A batch on a later line does prove it.
    ping = {"jsonrpc": "2.0", **PING}
    later = [*started(version), rec("send", CANCEL), {"dir": "send", "msg": [ping]}]
    answers = {"dir": "recv", "msg": [{"jsonrpc": "2.0", **PING_ANSWERED}]}
    later += [answers, turn_end(version, "end_turn")]
    assert rules(later) == [RULE[version]]


def test_the_proof_holds_only_for_the_work_it_was_sent_in() -> None:
    # v2: a later turn, started after the cancelled one ended, is not judged by
    # that cancel.
    records = [
        *started(2),
        rec("send", CANCEL),
        turn_end(2, "end_turn"),  # crossed: no finding
        rec("send", PING),
        rec("recv", PING_ANSWERED),
        update({"sessionUpdate": "state_update", "state": "running"}),
        turn_end(2, "end_turn"),
    ]
    assert rules(records) == []


@pytest.mark.parametrize("version", [1, 2])
def test_the_broken_reference_agent_is_caught_once_its_reading_is_proven(version: int) -> None:
    # broken_cancel_not_confirmed answers a request sent after the cancel, then
    # ends with end_turn: over v1 and v2, in this process.
    from acp_lite import connect_in_memory
    from acp_lite.limits import Limits
    from acp_lite.testing import InProcessAgent

    agent = InProcessAgent("broken_cancel_not_confirmed", protocol=version)
    with connect_in_memory(agent, limits=Limits(default_timeout=5.0)) as client:
        session = client.new_session(cwd="/tmp")
        session.wait_inserted(session.submit("work"))  # v1: its first output
        session.cancel()
        assert client.request("_acp_lite/sync") == {"echo": {}}
        session.wait_idle(timeout=5)
        assert session.stop_reason == "end_turn"
        assert rules(client.transcript) == [RULE[version]]
