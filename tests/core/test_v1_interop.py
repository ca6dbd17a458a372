"""v1 translator bugs found by the interop tests against the official SDKs
(``tests/interop/test_sdk_v1_agents.py``), each replayed here with the exact wire
lines the SDK agent wrote, bytes only."""

from __future__ import annotations

from typing import Any

import pytest

from acp_lite.core import AgentRequestReceived, ClientConnection
from acp_lite.errors import PromptRejected, ProtocolError
from tests.core.v1_wire import (
    MODES,
    V2_INIT_PARAMS,
    chunk,
    error,
    line,
    prompt,
    result,
    sources,
    update,
    v1_conn,
)


def test_second_turn_has_no_background_violation() -> None:
    """Every synthesized state carries ``background: []``: the first idle reported an
    (empty) background list, so a later ``running`` without one broke the spec's MUST
    ("include background on every state_update") and the model flagged every turn
    after the first with ``background-omitted``."""
    conn = v1_conn()
    for text in ("one", "two", "three"):
        entry, _, _ = prompt(conn, text)
        conn.receive_data(update("s1", chunk(text)) + result(entry.id, {"stopReason": "end_turn"}))
    model = conn.sessions["s1"].model
    assert model.completions == 3
    states = [e.raw for e in model.events if e.tag == "state_update"]
    assert [s["state"] for s in states] == ["running", "idle"] * 3
    assert all(s["background"] == [] for s in states)
    assert model.violations == []


def test_a_bare_echoed_2_is_v1() -> None:
    """The Python SDK's example echo agent answers ``InitializeResponse(
    protocol_version=protocol_version)``, which the SDK writes as exactly this line
    when asked for 2: no ``info`` (required in v2), nothing but the version. Only
    v1 can read it (v1 requires nothing else), so it is v1, as a bare 1 is."""
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    conn.data_to_send()
    conn.receive_data(b'{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":2}}\n' % entry.id)
    assert entry.error is None and conn.protocol_version == 1
    assert entry.result.info.name == "unknown"  # v1 agentInfo is optional


def test_a_2_with_v2_capabilities_but_no_info_stays_an_error() -> None:
    """A v2-shaped answer that lacks ``info`` is a broken v2 agent, not a v1 one."""
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    conn.data_to_send()
    conn.receive_data(result(entry.id, {"protocolVersion": 2, "capabilities": {}}))
    assert isinstance(entry.error, ProtocolError) and "info" in str(entry.error)
    assert conn.protocol_version == 2


#: What both SDK agents send right after the ``session/new`` response, as Claude
#: Code's adapter does: it can reach the client after the first prompt was sent.
COMMANDS = {
    "sessionUpdate": "available_commands_update",
    "availableCommands": [{"name": "plan", "description": "Make a plan"}],
}


@pytest.mark.parametrize(
    "session_update",
    [
        COMMANDS,
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
        {"sessionUpdate": "session_info_update", "title": "A title"},
        {"sessionUpdate": "usage_update", "used": 10, "size": 100},
        {"sessionUpdate": "x_custom", "any": 1},
    ],
    ids=["commands", "mode", "session_info", "usage", "unknown"],
)
def test_a_session_level_update_does_not_insert_the_prompt(session_update: Any) -> None:
    """Only turn content (a chunk, a tool call, a plan) shows the agent took the
    prompt: session-level updates come at any time. Before, the commands sent
    after ``session/new`` made a prompt the agent then refused count as
    inserted, and its error an ``error`` stop instead of ``PromptRejected``."""
    conn = v1_conn(modes=MODES)
    entry, sub, _ = prompt(conn, "invalid")
    conn.receive_data(update("s1", session_update))
    assert sub.status == "pending" and not entry.done
    conn.receive_data(error(entry.id, -32602, "Invalid params", {"reason": "refused"}))
    assert isinstance(entry.error, PromptRejected) and entry.error.code == -32602
    assert sub.status == "rejected"
    model = conn.sessions["s1"].model
    # Running from the send (synthesized), the update, and the idle the rejection
    # ends it with: no user message made up.
    tag = structure_tag(session_update)
    assert [e.tag for e in model.events] == ["state_update", tag, "state_update"]
    assert model.state == "idle" and model.stop_reason == "error" and model.violations == []


def structure_tag(session_update: dict[str, Any]) -> str:
    tag = str(session_update["sessionUpdate"])
    return "config_option_update" if tag == "current_mode_update" else tag


def test_a_session_level_update_before_the_echo_keeps_the_echo() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn, "recap this")
    conn.receive_data(update("s1", COMMANDS))
    conn.receive_data(update("s1", chunk("recap this", "user_message_chunk")))
    conn.receive_data(update("s1", chunk("recapped")))
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    model = conn.sessions["s1"].model
    assert [(e.tag, e.synthesized) for e in model.events] == [
        ("state_update", True),  # running from the send
        ("available_commands_update", False),
        ("user_message_chunk", False),  # the echo is the user message: none made up
        ("agent_message_chunk", False),
        ("state_update", True),
    ]
    assert sub.user_message is not None and sub.user_message.id == sub.message_id
    assert [(m.kind, m.text) for m in model.timeline] == [
        ("user_message", "recap this"),
        ("agent_message", "recapped"),
    ]
    assert [c.name for c in model.available_commands] == ["plan"]


def test_a_turn_of_session_level_updates_only_is_inserted_at_the_response() -> None:
    conn = v1_conn(modes=MODES)
    entry, sub, _ = prompt(conn, "mode")
    conn.receive_data(
        update("s1", {"sessionUpdate": "current_mode_update", "currentModeId": "code"})
    )
    assert sub.status == "pending"
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    assert sub.status == "inserted" and sub.done and sub.stop_reason == "end_turn"
    model = conn.sessions["s1"].model
    assert [e.tag for e in model.events] == [
        "state_update",
        "config_option_update",
        "user_message",
        "state_update",
    ]
    assert model.config_options[0].current_value == "code"


def test_a_permission_request_first_inserts_the_prompt() -> None:
    """A v1 agent may ask before it reports anything (the tool call comes with the
    request). That is turn activity: the prompt is inserted and the session runs
    before the tool call the request carries is applied. Before, the session
    stayed idle with the prompt pending while the user was asked, and the tool
    call came before the user message."""
    conn = v1_conn()
    entry, sub, _ = prompt(conn, "list the files")
    tool_call = {"toolCallId": "t1", "title": "Run ls", "kind": "execute", "rawInput": {"c": 1}}
    ask = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s1",
            "toolCall": tool_call,
            "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"}],
        },
    }
    conn.receive_data(line(ask))
    model = conn.sessions["s1"].model
    assert sub.status == "inserted" and sub.message_id == f"v1-prompt-{entry.id}"
    assert entry.done and model.state == "running"
    (received,) = [e for e in conn.next_events() if isinstance(e, AgentRequestReceived)]
    assert received.request.params.title == "Run ls"
    assert sources(conn) == [
        ("state_update", "v1:synthesized"),
        ("user_message", "v1:synthesized"),
        ("tool_call_update", "session/request_permission"),
    ]
    conn.respond(0, {"outcome": {"outcome": "selected", "optionId": "yes"}})
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}
    conn.receive_data(update("s1", done) + result(entry.id, {"stopReason": "end_turn"}))
    assert sub.done and sub.stop_reason == "end_turn"
    assert [e.kind for e in model.timeline] == ["user_message", "tool_call"]
    call = model.entity("tool_call", "t1")
    assert (call.title, call.tool_kind, call.status) == ("Run ls", "execute", "completed")
    assert model.violations == []
