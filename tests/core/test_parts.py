"""The core's parts on their own, without a ClientConnection: the request book's one
completion, the session router's early-update buffer, and the v1 dialect turning
v1 wire messages into v2 shapes over the parts' operations only."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_lite.core._book import Outcome, RequestBook
from acp_lite.core._reports import Reports
from acp_lite.core._router import SessionRouter
from acp_lite.core.events import CoreEvent, ResponseArrived, SessionOpened
from acp_lite.core.records import PendingRequest
from acp_lite.core.rpc import ResponseReceived, RpcEngine
from acp_lite.core.v1 import SOURCE_TRANSLATED, V1Dialect
from acp_lite.errors import AgentExited, AuthRequired, ProtocolError, UnsupportedInV1
from acp_lite.limits import Limits
from acp_lite.protocol import (
    ErrorObject,
    NewSessionResponse,
    Notification,
    PromptResponse,
    Request,
    converter,
)

from .v1_wire import MODES, V1_INIT, chunk, update


class Parts:
    """Reports, router, book and their event queue, wired as a connection wires them."""

    def __init__(self, handlers: dict[str, Any] | None = None) -> None:
        self.events: list[CoreEvent] = []
        limits = Limits()
        self.reports = Reports(limits, None)
        self.router = SessionRouter(
            limits, self.reports, self.events.append, update_events=False, locate_findings=False
        )
        self.rpc = RpcEngine()
        self.book = RequestBook(self.rpc, self.reports, self.events.append, handlers or {})

    def sent(self) -> list[Any]:
        return [json.loads(x) for x in self.rpc.data_to_send()]


def test_complete_reports_once_and_runs_the_handler_when_asked() -> None:
    calls: list[tuple[int, Outcome]] = []
    parts = Parts({"x/y": lambda entry, outcome: calls.append((entry.id, outcome))})
    entry = parts.rpc.request("x/y", {})
    parts.book.complete(entry, Outcome(result=1))
    assert entry.done and entry.result == 1 and entry.error is None
    assert [e.request for e in parts.events if isinstance(e, ResponseArrived)] == [entry]
    assert [rid for rid, _ in calls] == [entry.id]
    # A later completion (a v1 prompt's final result) amends, never reports again.
    parts.book.complete(entry, Outcome(result=2), effects=False)
    assert entry.result == 2 and len(parts.events) == 1 and len(calls) == 1


def test_a_handler_may_turn_the_result_into_an_error() -> None:
    def refuse(entry: PendingRequest, outcome: Outcome) -> None:
        entry.result, entry.error = None, ProtocolError("no")

    parts = Parts({"x/y": refuse})
    entry = parts.rpc.request("x/y", {})
    parts.book.complete(entry, Outcome(result="fine"))
    assert entry.result is None and isinstance(entry.error, ProtocolError)
    (arrived,) = parts.events
    assert isinstance(arrived, ResponseArrived) and arrived.request is entry


def test_fail_all_fails_the_open_requests_and_keeps_the_completed_ones() -> None:
    parts = Parts()
    answered, waiting = parts.rpc.request("a", {}), parts.rpc.request("b", {}, session_id="s")
    parts.book.complete(answered, Outcome(result=PromptResponse(message_id="m")))
    parts.events.clear()
    parts.reports.end(AgentExited("gone", returncode=3))
    assert parts.book.fail_all() == [answered, waiting]
    assert isinstance(answered.result, PromptResponse) and answered.error is None
    assert isinstance(waiting.error, AgentExited) and waiting.error.returncode == 3
    assert waiting.error.method == "b" and waiting.error.session_id == "s"
    assert parts.events == []  # the IO layer wakes what fail_all returns


def test_an_error_response_names_the_advertised_auth_methods() -> None:
    parts = Parts()
    parts.reports.initialize_result = {"authMethods": [{"id": "key", "name": "Key"}]}
    entry = parts.rpc.request("session/new", {})
    parts.rpc.pending.pop(entry.id)
    ev = ResponseReceived(entry, None, ErrorObject(-32000, "Authentication required"))
    parts.book.on_response(ev, V1Dialect(parts.router, parts.book, parts.reports))
    assert isinstance(entry.error, AuthRequired)
    assert [m.method_id for m in entry.error.auth_methods] == ["key"]


def test_updates_are_held_while_a_session_may_be_created() -> None:
    parts = Parts()
    router = parts.router
    upd = object()
    assert not router.hold("s1", upd, None)  # nothing pending: not held
    router.expect(7)
    assert router.hold("s1", upd, None) and router.hold("s2", upd, {"sessionUpdate": "x"})
    applied: list[tuple[str, Any]] = []
    state = router.open("s1", None, lambda st, u, raw: applied.append((st.id, u)))
    assert applied == [("s1", upd)] and router.sessions["s1"] is state
    assert any(isinstance(e, SessionOpened) and e.session is state for e in parts.events)
    assert not parts.reports.log
    router.settle(7)  # no creating request left: s2's update belonged to no session
    (logged,) = parts.reports.log
    assert logged.kind == "unknown_session_update" and logged.session_id == "s2"
    assert logged.data == {"sessionUpdate": "x"}


def _v1_dialect(**setup: Any) -> tuple[Parts, V1Dialect]:
    """The v1 dialect over bare parts, with session ``s1`` opened as v1 answered it."""
    parts = Parts()
    parts.reports.initialize_result = V1_INIT
    v1 = V1Dialect(parts.router, parts.book, parts.reports)
    entry = v1.send_request("session/new", {"cwd": "/w", "mcpServers": []}, None)
    parts.sent()
    v2 = v1.translate_result(entry, {"sessionId": "s1", **setup})
    parts.router.open("s1", converter.structure(v2, NewSessionResponse), v1.apply_held)
    return parts, v1


def _route(v1: V1Dialect, line: bytes) -> None:
    msg = v1.decode(line.rstrip(b"\n"))
    assert isinstance(msg, Notification)
    v1.route_update(msg.params.session_id, msg.params.update, line, msg)


def test_the_v1_dialect_turns_v1_updates_into_v2_ones() -> None:
    parts, v1 = _v1_dialect(modes=MODES)
    model = parts.router.sessions["s1"].model
    (mode,) = model.config_options
    assert mode.config_id == "mode" and mode.current_value == "ask"
    _route(v1, update("s1", {"sessionUpdate": "plan", "entries": []}))
    _route(v1, update("s1", chunk("hello")))
    _route(v1, update("s1", {"sessionUpdate": "current_mode_update", "currentModeId": "code"}))
    tags = [(e.tag, e.source) for e in model.events]
    assert tags == [
        ("plan_update", SOURCE_TRANSLATED),
        ("agent_message_chunk", SOURCE_TRANSLATED),
        ("config_option_update", SOURCE_TRANSLATED),
    ]
    # A chunk without messageId gets one per history segment; the mode moved.
    assert model.events[1].update.message_id == "v1-h0-agent"
    assert model.config_options[0].current_value == "code"


def test_the_v1_dialect_sends_v1_requests() -> None:
    parts, v1 = _v1_dialect(modes=MODES)
    params = {"sessionId": "s1", "configId": "mode", "type": "id", "value": "code"}
    entry = v1.send_request("session/set_config_option", params, "s1")
    (req,) = parts.sent()
    assert entry.method == "session/set_config_option"  # the v2 name, for the caller
    assert req["method"] == "session/set_mode"
    assert req["params"] == {"sessionId": "s1", "modeId": "code"}
    with pytest.raises(UnsupportedInV1):
        v1.send_request("session/fork", {"sessionId": "s1"}, "s1")
    assert parts.sent() == []


def test_the_v1_dialect_gives_permission_requests_v2_params() -> None:
    _, v1 = _v1_dialect()
    call = {"toolCallId": "t1", "title": "Edit", "kind": "edit", "status": "pending"}
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "session/request_permission",
            "params": {"sessionId": "s1", "toolCall": call, "options": []},
        }
    ).encode()
    msg = v1.decode(line)
    assert isinstance(msg, Request)
    assert msg.params.title == "Edit"
    assert msg.params.subject.tool_call.tool_call_id == "t1"
