"""v1 permission requests no handler can answer rightly (issue 24, item 9).

v1 asks permission within a prompt turn (schema v1 ``RequestPermissionRequest``,
docs "Tool Calls: Requesting Permission"; the ``cancelled`` outcome is "The
prompt turn was cancelled before the user responded"). The core answers these
itself and never announces them to the IO layer (no handler is called):

* after the turn's response: ``cancelled``;
* for a session the client does not know: -32002;
* with ``options: []``: -32602 (nothing can be selected).
"""

from __future__ import annotations

from typing import Any

import pytest

from acp_lite.core import AgentRequestReceived, ClientConnection

from .v1_wire import line, prompt, result, sent, v1_conn

OPTIONS = [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}]


def ask(rid: int, sid: str = "s1", options: Any = OPTIONS) -> bytes:
    params = {"sessionId": sid, "toolCall": {"toolCallId": "t1"}, "options": options}
    return line(
        {"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": params}
    )


def refused(conn: ClientConnection) -> list[Any]:
    events = conn.next_events()
    assert not [e for e in events if isinstance(e, AgentRequestReceived)]
    assert conn.agent_requests == {}
    return [e for e in conn.log if e.kind == "agent_request_refused"]


def test_during_the_turn_the_handlers_decide() -> None:
    conn = v1_conn()
    prompt(conn)
    conn.receive_data(ask(5))
    events = conn.next_events()
    assert [e for e in events if isinstance(e, AgentRequestReceived)]
    assert conn.data_to_send() == b""


def test_after_the_turn_ended_it_is_answered_cancelled() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    assert sub.done
    conn.next_events()
    conn.receive_data(ask(5))
    (logged,) = refused(conn)
    assert "no prompt turn" in logged.data["message"] and logged.session_id == "s1"
    (answer,) = sent(conn, answering="session/request_permission")
    assert answer == {"jsonrpc": "2.0", "id": 5, "result": {"outcome": {"outcome": "cancelled"}}}


def test_before_any_prompt_it_is_answered_cancelled() -> None:
    conn = v1_conn()
    conn.receive_data(ask(5))
    refused(conn)
    (answer,) = sent(conn, answering="session/request_permission")
    assert answer["result"] == {"outcome": {"outcome": "cancelled"}}


@pytest.mark.parametrize(
    ("sid", "options", "code"),
    [("nope", OPTIONS, -32002), ("s1", [], -32602)],
    ids=["unknown-session", "no-options"],
)
def test_unanswerable_requests_get_an_error(sid: str, options: Any, code: int) -> None:
    conn = v1_conn()
    prompt(conn)
    conn.receive_data(ask(5, sid, options))
    (logged,) = refused(conn)
    assert logged.data["code"] == code
    (answer,) = sent(conn)
    assert answer["id"] == 5 and answer["error"]["code"] == code
    assert "session/request_permission" in answer["error"]["message"]
