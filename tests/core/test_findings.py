"""The connection's located conformance findings (``connect(..., conformance=True)``,
``client.violations()``): the live session models judge the traffic as a replay of
the transcript into fresh models does, and locate each finding at the same line.

The replay (``pytest_acp._model_replay``) is what saved transcripts are checked
with; the live path is what ``pytest_acp`` uses for running clients. Every built-in
scenario, conforming and broken, is run through both here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_lite import connect_in_memory
from acp_lite.core import ClientConnection
from acp_lite.limits import Limits
from acp_lite.model.rules import RULES as MODEL_RULES
from acp_lite.testing import SCENARIOS, InProcessAgent
from acp_lite.testing.scenarios import BROKEN_RULES, FAULTS
from pytest_acp._model_replay import Replay, feed_replay
from tests.testing._gated import GATED, gated

FAST = Limits(default_timeout=10.0)
#: Sizes that keep the sized scenarios quick.
COUNTS = {"flood": 200, "many_sessions": 3}
#: Scenarios whose turn cannot be driven by one run (they hang, crash, wait for input).
NOT_ONE_TURN = set(FAULTS) | {"auth_required", "many_sessions"}
TWO_PROMPTS = {"broken_duplicate_message_id", *GATED}
#: Scenarios whose turn only ends when cancelled.
CANCEL_TO_END = {"slow_cancel", "broken_cancel_not_confirmed"}
#: Scenarios whose work never ends: judged once their output is in.
NEVER_IDLE = {"broken_no_idle"}


def replayed(client: Any) -> set[tuple[str, int | None, str | None]]:
    replay = Replay()
    for i, entry in enumerate(client.transcript.entries()):
        feed_replay(replay, entry.direction, entry.line, False, i)
    return {(v.rule, v.entry_index, v.session_id) for v in replay.finish()}


def live(client: Any, since: int = 0) -> set[tuple[str, int | None, str | None]]:
    return {(v.rule, v.entry_index, v.session_id) for v in client.violations(since=since)}


@pytest.mark.parametrize("name", sorted(n for n in SCENARIOS if n not in NOT_ONE_TURN))
def test_live_models_find_what_a_replay_finds(name: str) -> None:
    # "steering" / "queueing": their second prompt arrives while the first one's
    # work runs, which holds until it does (tests/testing/_gated.py).
    agent = (
        InProcessAgent(script=gated(name))
        if name in GATED
        else InProcessAgent(name, count=COUNTS.get(name))
    )
    with connect_in_memory(agent, limits=FAST, conformance=True) as client:
        session = client.new_session(cwd="/tmp")
        prompts = 2 if name in TWO_PROMPTS else 1
        for i in range(prompts):
            submission = session.submit(f"hello {i}")
            if name in CANCEL_TO_END:
                session.cancel()
                client.request("_acp_lite/sync")  # answered: the cancel was read
            if name in GATED and i == 0:
                continue  # the next prompt is what ends this work
            if name in NEVER_IDLE:  # all of its output: the echo of the prompt
                for _ in session.iter_updates(from_start=True):
                    if session.text(submission) == f"hello {i}":
                        break
            else:
                session.wait_idle()
        client.request("_acp_lite/sync")  # everything the agent sent has arrived
        found = live(client)
        assert found == replayed(client)
    broken = BROKEN_RULES.get(name)
    if broken in MODEL_RULES:
        assert broken in {rule for rule, _, _ in found}


# -- the bookkeeping, bytes in ---------------------------------------------------------


def line(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg).encode() + b"\n"


def update(sid: str, body: dict[str, Any]) -> bytes:
    return line(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": body}}
    )


def opened(conn: ClientConnection, sid: str = "s1") -> None:
    conn.initialize({"protocolVersion": 2})
    conn.data_to_send()
    conn.receive_data(
        line({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2, "info": {"name": "a"}}})
    )
    entry = conn.send_request("session/new", {"cwd": "/", "mcpServers": []})
    conn.data_to_send()
    conn.receive_data(line({"jsonrpc": "2.0", "id": entry.id, "result": {"sessionId": sid}}))


def test_a_finding_is_located_at_its_line_and_end_findings_are_not_recorded() -> None:
    conn = ClientConnection(locate_findings=True)
    opened(conn)
    # Transcript: 0 initialize, 1 its response, 2 session/new, 3 its response.
    conn.receive_data(update("s1", {"sessionUpdate": "agent_message_chunk", "content": {}}))
    found = conn.violations()
    assert [(v.rule, v.entry_index, v.session_id) for v in found] == [
        ("chunk-without-message-id", 4, "s1")
    ]
    # A raw prompt gets the submission bookkeeping of Session.prompt: its response
    # without a messageId is judged, located at the response line.
    entry = conn.send_request("session/prompt", {"sessionId": "s1", "prompt": []})
    conn.data_to_send()  # 5
    conn.receive_data(line({"jsonrpc": "2.0", "id": entry.id, "result": {}}))  # 6
    rules = [(v.rule, v.entry_index) for v in conn.violations()]
    assert ("prompt-response-without-message-id", 6) in rules
    # Asking twice records nothing: the end findings are computed, not kept.
    assert conn.violations() == conn.violations()
    assert conn.sessions["s1"].model.violations[-1].rule == "prompt-response-without-message-id"


def test_sessions_not_opened_here_are_judged_but_not_opened() -> None:
    conn = ClientConnection(locate_findings=True)
    opened(conn)
    conn.receive_data(update("child", {"sessionUpdate": "agent_message_chunk", "content": {}}))
    assert "child" not in conn.sessions
    assert [(v.rule, v.entry_index, v.session_id) for v in conn.violations()] == [
        ("chunk-without-message-id", 4, "child")
    ]
    assert conn.log_counts["unknown_session_update"] == 1


def test_early_updates_are_located_at_their_own_lines() -> None:
    conn = ClientConnection(locate_findings=True)
    conn.initialize({"protocolVersion": 2})
    conn.data_to_send()
    conn.receive_data(
        line({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2, "info": {"name": "a"}}})
    )
    entry = conn.send_request("session/new", {"cwd": "/", "mcpServers": []})
    conn.data_to_send()
    # Before the response names the session (kept, applied once it is known).
    conn.receive_data(update("s1", {"sessionUpdate": "agent_message_chunk", "content": {}}))  # 3
    conn.receive_data(line({"jsonrpc": "2.0", "id": entry.id, "result": {"sessionId": "s1"}}))
    assert [(v.rule, v.entry_index) for v in conn.violations()] == [("chunk-without-message-id", 3)]


def test_only_sessions_used_since_add_end_findings() -> None:
    conn = ClientConnection(locate_findings=True)
    opened(conn)
    # A user message no prompt response returned: an end finding of s1.
    conn.receive_data(
        update(
            "s1",
            {
                "sessionUpdate": "user_message_chunk",
                "messageId": "u1",
                "content": {"type": "text", "text": "x"},
            },
        )
    )  # 4
    assert [v.rule for v in conn.violations(since=0)] == ["user-message-unmatched"]
    assert conn.violations(since=5) == []  # s1 was not used since entry 5


def test_without_locating_violations_are_reported_unlocated() -> None:
    conn = ClientConnection()
    opened(conn)
    conn.receive_data(update("s1", {"sessionUpdate": "agent_message_chunk", "content": {}}))
    conn.receive_data(update("child", {"sessionUpdate": "agent_message_chunk", "content": {}}))
    assert [(v.rule, v.entry_index, v.session_id) for v in conn.violations()] == [
        ("chunk-without-message-id", None, "s1")
    ]
