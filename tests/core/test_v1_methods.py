"""The v1 translator (sans-IO core, bytes only): v2 methods mapped to v1 or refused
before sending, the agent's requests v1 cannot carry, and the wire itself (the
transcript's exact bytes, batches)."""

from __future__ import annotations

import json

import pytest

from acp_lite.core import AgentRequestReceived, ClientConnection
from acp_lite.errors import UnsupportedInV1
from tests.core.v1_wire import (
    MODES,
    V1_INIT,
    V2_INIT_PARAMS,
    chunk,
    line,
    prompt,
    result,
    sent,
    update,
    v1_conn,
    validate_v1,
)


def test_methods_without_v1_equivalent_are_refused_before_sending() -> None:
    conn = v1_conn()
    for method in ("tool_call/cancel", "terminal/cancel", "session/fork", "session/archive"):
        with pytest.raises(UnsupportedInV1, match=method):
            conn.send_request(method, {"sessionId": "s1"}, session_id="s1")
    assert conn.data_to_send() == b""
    assert conn.rpc.pending == {}


def test_login_is_authenticate() -> None:
    conn = v1_conn()
    entry = conn.send_request("auth/login", {"methodId": "key"})
    (req,) = sent(conn)
    assert req["method"] == "authenticate" and req["params"] == {"methodId": "key"}
    conn.receive_data(result(entry.id, {}))
    assert entry.error is None and entry.method == "auth/login"


def test_fs_and_terminal_requests_are_method_not_found() -> None:
    conn = v1_conn()
    ask = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "fs/read_text_file",
        "params": {"sessionId": "s1", "path": "/w/a"},
    }
    conn.receive_data(line(ask))
    (answer,) = [json.loads(x) for x in conn.data_to_send().splitlines()]
    assert answer["id"] == 5 and answer["error"]["code"] == -32601


def test_transcript_holds_the_exact_wire_bytes() -> None:
    conn = ClientConnection()
    wire: list[tuple[str, bytes]] = []

    def out() -> None:
        data = conn.data_to_send()
        wire.extend(("send", x) for x in data.splitlines())

    def feed(data: bytes) -> None:
        conn.receive_data(data)
        wire.extend(("recv", x) for x in data.splitlines())

    init = conn.initialize(V2_INIT_PARAMS)
    out()
    feed(result(init.id, V1_INIT))
    new = conn.send_request("session/new", {"cwd": "/w"})
    out()
    feed(result(new.id, {"sessionId": "s1", "modes": MODES}))
    entry, _ = conn.prompt("s1", [{"type": "text", "text": "hi"}])
    out()
    feed(update("s1", chunk("a")) + update("s1", {"sessionUpdate": "plan", "entries": []}))
    feed(result(entry.id, {"stopReason": "end_turn"}))
    assert [(e.direction, e.line) for e in conn.transcript] == wire


def test_a_batch_with_a_permission_request_and_an_update() -> None:
    conn = v1_conn()
    prompt(conn)
    batch = [
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s1", "update": chunk("x")},
        },
        {
            "jsonrpc": "2.0",
            "id": 11,
            "method": "session/request_permission",
            "params": {
                "sessionId": "s1",
                "toolCall": {"toolCallId": "t1", "title": "Run"},
                "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
            },
        },
    ]
    conn.receive_data(line(batch))
    received = [e for e in conn.next_events() if isinstance(e, AgentRequestReceived)]
    assert [r.request.params.title for r in received] == ["Run"]
    model = conn.sessions["s1"].model
    assert model.state == "running" and model.entity("tool_call", "t1").title == "Run"
    conn.respond(11, {"outcome": {"outcome": "selected", "optionId": "a"}})
    (answers,) = [json.loads(x) for x in conn.data_to_send().splitlines()]
    assert answers == [
        {
            "jsonrpc": "2.0",
            "id": 11,
            "result": {"outcome": {"outcome": "selected", "optionId": "a"}},
        }
    ]
    validate_v1(answers[0], "session/request_permission")
