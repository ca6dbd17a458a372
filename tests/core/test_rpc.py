"""The sans-IO JSON-RPC engine, fed decoded lines."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_lite.core.rpc import (
    InvalidReceived,
    NotificationReceived,
    PeerCancelled,
    RequestReceived,
    ResponseReceived,
    RpcEngine,
    TooManyPendingRequests,
    UnhandledRequest,
    UnmatchedResponse,
)
from acp_lite.protocol import decode_line


def feed(engine: RpcEngine, obj: Any) -> list[Any]:
    line = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return engine.receive(decode_line(line))


def sent(engine: RpcEngine) -> list[Any]:
    return [json.loads(line) for line in engine.data_to_send()]


PERMISSION_PARAMS = {
    "sessionId": "s1",
    "title": "Write?",
    "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}],
}


def test_monotonic_ids_many_in_flight_matched_by_id() -> None:
    e = RpcEngine()
    a = e.request("session/new", {"cwd": "/"})
    b = e.request("_x/ping", {})
    c = e.request("session/list", {})
    assert (a.id, b.id, c.id) == (1, 2, 3)
    assert [m["id"] for m in sent(e)] == [1, 2, 3]
    # Answered out of order.
    (ev,) = feed(e, {"jsonrpc": "2.0", "id": 3, "result": {"sessions": []}})
    assert isinstance(ev, ResponseReceived) and ev.pending is c
    (ev,) = feed(e, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad"}})
    assert isinstance(ev, ResponseReceived) and ev.pending is a
    assert ev.error is not None and ev.error.code == -32602 and ev.result is None
    assert set(e.pending) == {2}


def test_response_for_unknown_id_is_recorded_not_fatal() -> None:
    e = RpcEngine()
    (ev,) = feed(e, {"jsonrpc": "2.0", "id": 99, "result": {}})
    assert isinstance(ev, UnmatchedResponse)
    # A second response for an already answered request is unmatched too.
    r = e.request("x", {})
    feed(e, {"jsonrpc": "2.0", "id": r.id, "result": 1})
    (ev,) = feed(e, {"jsonrpc": "2.0", "id": r.id, "result": 2})
    assert isinstance(ev, UnmatchedResponse)


def test_unimplemented_agent_request_gets_method_not_found() -> None:
    e = RpcEngine()
    (ev,) = feed(e, {"jsonrpc": "2.0", "id": 7, "method": "fs/read_text_file", "params": {}})
    assert isinstance(ev, UnhandledRequest) and ev.method == "fs/read_text_file"
    (answer,) = sent(e)
    assert answer["id"] == 7 and answer["error"]["code"] == -32601


def test_handled_request_is_answered_once() -> None:
    e = RpcEngine()
    params = PERMISSION_PARAMS
    (ev,) = feed(
        e,
        {"jsonrpc": "2.0", "id": "p1", "method": "session/request_permission", "params": params},
    )
    assert isinstance(ev, RequestReceived) and ev.params.options[0].option_id == "ok"
    assert e.respond("p1", {"outcome": {"outcome": "selected", "optionId": "ok"}})
    assert not e.respond("p1", {})  # already answered
    assert sent(e) == [
        {
            "jsonrpc": "2.0",
            "id": "p1",
            "result": {"outcome": {"outcome": "selected", "optionId": "ok"}},
        }
    ]


def test_peer_cancel_request_answers_permission_cancelled_and_others_32800() -> None:
    e = RpcEngine()
    feed(
        e,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/request_permission",
            "params": PERMISSION_PARAMS,
        },
    )
    feed(
        e,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "elicitation/create",
            "params": {
                "sessionId": "s1",
                "message": "?",
                "mode": "form",
                "requestedSchema": {"type": "object", "properties": {}},
            },
        },
    )
    for rid in (1, 2):
        (ev,) = feed(
            e, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}}
        )
        assert isinstance(ev, PeerCancelled) and ev.id == rid
    out = sent(e)
    assert out[0] == {"jsonrpc": "2.0", "id": 1, "result": {"outcome": {"outcome": "cancelled"}}}
    assert out[1]["id"] == 2 and out[1]["error"]["code"] == -32800
    assert not e.respond(1, {})  # the late answer of a callback is dropped
    # Cancelling something unknown is ignored.
    assert (
        feed(e, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}}) == []
    )
    assert sent(e) == []


def test_cancel_request_for_our_request_keeps_it_pending() -> None:
    e = RpcEngine()
    r = e.request("session/prompt", {"sessionId": "s", "prompt": []})
    sent(e)
    assert e.cancel_request(r.id)
    assert not e.cancel_request(r.id)  # once
    assert sent(e) == [
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": r.id}}
    ]
    (ev,) = feed(e, {"jsonrpc": "2.0", "id": r.id, "error": {"code": -32800, "message": "c"}})
    assert isinstance(ev, ResponseReceived) and ev.pending.cancel_sent


def test_batch_is_handled_and_answered_as_one_array() -> None:
    e = RpcEngine()
    r = e.request("x", {})
    sent(e)
    batch = [
        {"jsonrpc": "2.0", "id": r.id, "result": "ok"},
        {"jsonrpc": "2.0", "method": "_ext/hello", "params": {"a": 1}},
        {"jsonrpc": "2.0", "id": 10, "method": "unknown/method"},
        {
            "jsonrpc": "2.0",
            "id": 11,
            "method": "session/request_permission",
            "params": PERMISSION_PARAMS,
        },
        {"foo": 1},
    ]
    events = feed(e, batch)
    kinds = [type(ev) for ev in events]
    assert kinds == [
        ResponseReceived,
        NotificationReceived,
        UnhandledRequest,
        RequestReceived,
        InvalidReceived,
    ]
    assert sent(e) == []  # waits for the permission answer
    e.respond(11, {"outcome": {"outcome": "cancelled"}})
    (answer,) = sent(e)
    assert isinstance(answer, list) and [a["id"] for a in answer] == [10, None, 11]
    assert answer[0]["error"]["code"] == -32601 and answer[1]["error"]["code"] == -32600


def test_batch_of_notifications_and_responses_gets_no_answer() -> None:
    e = RpcEngine()
    feed(e, [{"jsonrpc": "2.0", "method": "_a"}, {"jsonrpc": "2.0", "id": 5, "result": 1}])
    assert sent(e) == []


def test_garbage_line_is_an_event_not_an_answer() -> None:
    e = RpcEngine()
    (ev,) = feed(e, b"Loading model weights...")
    assert isinstance(ev, InvalidReceived) and "Parse error" in str(ev.error)
    assert sent(e) == []


def test_invalid_request_with_id_is_answered() -> None:
    e = RpcEngine()
    (ev,) = feed(
        e, {"jsonrpc": "2.0", "id": 4, "method": "session/request_permission", "params": {}}
    )
    assert isinstance(ev, InvalidReceived)
    (answer,) = sent(e)
    assert answer["id"] == 4 and answer["error"]["code"] == -32602


def test_max_pending_requests() -> None:
    e = RpcEngine(max_pending=2)
    e.request("a", {})
    e.request("b", {})
    with pytest.raises(TooManyPendingRequests, match="max_pending_requests=2"):
        e.request("c", {})
    assert len(e.fail_all()) == 2 and not e.pending
    e.request("c", {})
