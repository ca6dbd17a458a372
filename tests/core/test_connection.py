"""The sans-IO core, driven with bytes only: no trio, no process, no threads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_lite.core import (
    AgentRequestReceived,
    AgentRequestWithdrawn,
    ClientConnection,
    ResponseArrived,
    SessionOpened,
    UpdateApplied,
)
from acp_lite.errors import (
    AgentExited,
    MethodNotFound,
    PromptRejected,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from acp_lite.limits import Limits
from acp_lite.protocol import (
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    SessionConfigOption,
    SetSessionConfigOptionResponse,
)

INIT_RESULT = {"protocolVersion": 2, "info": {"name": "fake", "version": "1"}, "capabilities": {}}


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def result(rid: int, value: Any) -> bytes:
    return line({"jsonrpc": "2.0", "id": rid, "result": value})


def update(sid: str, upd: dict[str, Any]) -> bytes:
    return line(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": sid, "update": upd},
        }
    )


def sent(conn: ClientConnection) -> list[Any]:
    data = conn.data_to_send()
    return [json.loads(x) for x in data.splitlines()]


def state(value: str, **extra: Any) -> dict[str, Any]:
    return {"sessionUpdate": "state_update", "state": value, **extra}


def option(current: str) -> dict[str, Any]:
    return {
        "configId": "mode",
        "name": "Mode",
        "type": "select",
        "currentValue": current,
        "options": [{"value": "normal", "name": "Normal"}, {"value": "fast", "name": "Fast"}],
    }


def opened(conn: ClientConnection, sid: str = "s1", **extra: Any) -> None:
    entry = conn.send_request("session/new", {"cwd": "/", "mcpServers": []})
    conn.data_to_send()
    conn.receive_data(result(entry.id, {"sessionId": sid, **extra}))


def test_initialize_is_typed_and_bytes_round_trip() -> None:
    conn = ClientConnection()
    entry = conn.initialize({"protocolVersion": 2, "info": {"name": "c"}, "capabilities": {}})
    (req,) = sent(conn)
    assert req["method"] == "initialize" and req["id"] == entry.id
    # A response split across two reads.
    data = result(entry.id, INIT_RESULT)
    conn.receive_data(data[:10])
    assert not entry.done and conn.next_events() == []
    conn.receive_data(data[10:])
    assert conn.next_events() == [ResponseArrived(entry)]
    assert isinstance(entry.result, InitializeResponse)
    assert conn.initialize_response is entry.result
    assert conn.initialize_result == INIT_RESULT
    assert [e.direction for e in conn.transcript] == ["send", "recv"]


def test_initialize_with_another_version_is_an_error_value() -> None:
    conn = ClientConnection()
    entry = conn.initialize({})
    conn.receive_data(result(entry.id, {**INIT_RESULT, "protocolVersion": 7}))
    assert isinstance(entry.error, UnsupportedProtocolVersion)
    assert entry.error.version == 7


def test_early_updates_are_applied_when_session_new_answers() -> None:
    conn = ClientConnection()
    entry = conn.send_request("session/new", {"cwd": "/", "mcpServers": []})
    conn.receive_data(update("s1", state("running")) + update("s1", state("idle")))
    assert conn.sessions == {}
    conn.receive_data(result(entry.id, {"sessionId": "s1", "configOptions": [option("normal")]}))
    events = conn.next_events()
    assert isinstance(entry.result, NewSessionResponse)
    assert [type(e) for e in events] == [SessionOpened, ResponseArrived]
    model = conn.sessions["s1"].model
    assert len(model.events) == 2 and model.state == "idle"
    assert conn.changed_sessions() == [conn.sessions["s1"]]
    assert conn.changed_sessions() == []


def test_config_options_are_typed_after_session_new() -> None:
    # Defect: the session/new options stayed raw dicts, unlike config_option_update's.
    conn = ClientConnection()
    opened(conn, configOptions=[option("normal")])
    (opt,) = conn.sessions["s1"].model.config_options
    assert isinstance(opt, SessionConfigOption)
    assert opt.current_value == "normal"


def test_set_config_option_response_replaces_the_options() -> None:
    # Defect: the complete list the agent MUST answer with was not applied.
    conn = ClientConnection()
    opened(conn, configOptions=[option("normal")])
    entry = conn.send_request(
        "session/set_config_option",
        {"sessionId": "s1", "configId": "mode", "type": "id", "value": "fast"},
        session_id="s1",
    )
    conn.receive_data(result(entry.id, {"configOptions": [option("fast")]}))
    assert isinstance(entry.result, SetSessionConfigOptionResponse)
    (opt,) = conn.sessions["s1"].model.config_options
    assert opt.current_value == "fast"


def test_prompt_insertion_in_any_order() -> None:
    conn = ClientConnection()
    opened(conn)
    entry, sub = conn.prompt("s1", [{"type": "text", "text": "hi"}])
    (req,) = sent(conn)
    assert req["params"] == {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}
    um = {
        "sessionUpdate": "user_message",
        "messageId": "m1",
        "content": [{"type": "text", "text": "hi"}],
    }
    conn.receive_data(update("s1", state("running")) + update("s1", um))
    conn.receive_data(update("s1", state("idle", stopReason="end_turn")))
    assert sub.status == "pending"
    conn.receive_data(result(entry.id, {"messageId": "m1"}))
    assert isinstance(entry.result, PromptResponse)
    assert sub.status == "inserted" and sub.message_id == "m1" and sub.done
    assert sub.stop_reason == "end_turn"


def test_prompt_error_is_rejected_and_classified_by_code() -> None:
    conn = ClientConnection()
    opened(conn)
    entry, sub = conn.prompt("s1", [{"type": "text", "text": "hi"}])
    conn.receive_data(
        line({"jsonrpc": "2.0", "id": entry.id, "error": {"code": -32602, "message": "bad"}})
    )
    assert isinstance(entry.error, PromptRejected)
    assert sub.status == "rejected"
    assert conn.sessions["s1"].model.outstanding() == []


def test_duplicate_session_id_is_a_protocol_error_and_keeps_the_first() -> None:
    conn = ClientConnection()
    opened(conn)
    first = conn.sessions["s1"]
    conn.receive_data(update("s1", state("running")))
    entry = conn.send_request("session/new", {"cwd": "/", "mcpServers": []})
    conn.receive_data(result(entry.id, {"sessionId": "s1"}))
    assert isinstance(entry.error, ProtocolError)
    assert "s1" in str(entry.error)
    assert conn.sessions["s1"] is first and first.model.state == "running"


def test_unknown_method_answer_and_agent_requests_lifecycle() -> None:
    conn = ClientConnection()
    opened(conn)
    conn.receive_data(line({"jsonrpc": "2.0", "id": 7, "method": "fs/nope", "params": {}}))
    (answer,) = sent(conn)
    assert answer["error"]["code"] == -32601 and answer["id"] == 7
    ask = {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s1",
            "title": "May I?",
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "t1", "title": "Write"}},
            "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
        },
    }
    conn.receive_data(line(ask))
    events = conn.next_events()
    (received,) = [e for e in events if isinstance(e, AgentRequestReceived)]
    assert received.request.tool_call_id == "t1"
    # The permission subject's tool call is applied to the model, marked as such.
    model = conn.sessions["s1"].model
    assert model.entity("tool_call", "t1").title == "Write"
    assert model.events[-1].source == "session/request_permission"
    # The agent withdraws it: answered cancelled by the core, the IO layer told.
    conn.receive_data(
        line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 8}})
    )
    assert [type(e) for e in conn.next_events()] == [AgentRequestWithdrawn]
    (answer,) = sent(conn)
    assert answer == {"jsonrpc": "2.0", "id": 8, "result": {"outcome": {"outcome": "cancelled"}}}
    assert conn.agent_requests == {}


def test_cancel_answers_foreground_permission_requests() -> None:
    conn = ClientConnection()
    opened(conn)
    conn.receive_data(update("s1", state("running")))
    conn.receive_data(
        line(
            {
                "jsonrpc": "2.0",
                "id": "p1",
                "method": "session/request_permission",
                "params": {
                    "sessionId": "s1",
                    "title": "May I?",
                    "subject": {"type": "tool_call", "toolCall": {"toolCallId": "t1"}},
                    "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
                },
            }
        )
    )
    conn.next_events()
    conn.data_to_send()
    answered = conn.cancel("s1")
    assert [r.id for r in answered] == ["p1"]
    out = sent(conn)
    assert out[0] == {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}
    assert out[1]["id"] == "p1" and out[1]["result"]["outcome"] == {"outcome": "cancelled"}


def _permission(rid: str, tool_call_id: str = "t1") -> bytes:
    return line(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "session/request_permission",
            "params": {
                "sessionId": "s1",
                "title": "May I?",
                "subject": {"type": "tool_call", "toolCall": {"toolCallId": tool_call_id}},
                "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
            },
        }
    )


def test_permission_request_after_cancel_belongs_to_the_cancelled_work() -> None:
    """Sent by the agent before it saw our session/cancel: answered ``cancelled`` by the
    core, no handler asked (tool calls, "Requesting permission"); once the work is idle,
    or a new prompt starts work, requests are the handler's again."""
    conn = ClientConnection()
    opened(conn)
    conn.receive_data(update("s1", state("running")))
    conn.cancel("s1")
    conn.data_to_send()
    conn.receive_data(_permission("late"))
    assert not [e for e in conn.next_events() if isinstance(e, AgentRequestReceived)]
    assert sent(conn) == [
        {"jsonrpc": "2.0", "id": "late", "result": {"outcome": {"outcome": "cancelled"}}}
    ]
    conn.receive_data(update("s1", state("idle", stopReason="cancelled")))
    conn.receive_data(update("s1", state("running")))  # background-less new work
    conn.receive_data(_permission("after-idle"))
    assert [e.request.id for e in conn.next_events() if isinstance(e, AgentRequestReceived)] == [
        "after-idle"
    ]
    assert sent(conn) == []


def test_permission_request_after_cancel_for_listed_background_work_is_asked() -> None:
    conn = ClientConnection()
    opened(conn)
    listed = [{"type": "tool_call", "toolCallId": "bg-1"}]
    conn.receive_data(update("s1", state("running", background=listed)))
    conn.cancel("s1")
    conn.data_to_send()
    conn.receive_data(_permission("bg", tool_call_id="bg-1"))
    assert [e.request.id for e in conn.next_events() if isinstance(e, AgentRequestReceived)] == [
        "bg"
    ]
    assert sent(conn) == []


def test_method_not_found_for_any_method() -> None:
    conn = ClientConnection()
    entry = conn.send_request("session/list", {})
    conn.receive_data(
        line({"jsonrpc": "2.0", "id": entry.id, "error": {"code": -32601, "message": "no"}})
    )
    assert isinstance(entry.error, MethodNotFound)


def test_invalid_result_is_a_protocol_error_naming_the_method() -> None:
    conn = ClientConnection()
    entry = conn.send_request("session/new", {"cwd": "/", "mcpServers": []})
    conn.receive_data(result(entry.id, {"noSessionId": True}))
    assert isinstance(entry.error, ProtocolError)
    assert entry.error.method == "session/new"


def test_oversize_and_garbage_lines_are_logged_and_the_connection_survives() -> None:
    conn = ClientConnection(Limits(max_line_bytes=150), stderr_tail=lambda: ["boom"])
    opened(conn)
    conn.receive_data(b"x" * 200 + b"\nnot json\n" + update("s1", state("running")))
    kinds = [e.kind for e in conn.log]
    assert kinds == ["oversize_line", "protocol_error"]
    assert conn.sessions["s1"].model.state == "running"
    assert b"...<truncated>" in conn.transcript[-3].line


def test_update_events_are_reported_only_when_asked() -> None:
    conn = ClientConnection(update_events=True)
    opened(conn)
    conn.next_events()
    conn.receive_data(update("s1", state("running")))
    (ev,) = conn.next_events()
    assert isinstance(ev, UpdateApplied) and ev.event.update.state == "running"


def test_unknown_session_updates_are_logged_once_no_request_could_own_them() -> None:
    conn = ClientConnection()
    entry = conn.send_request("session/new", {"cwd": "/", "mcpServers": []})
    conn.receive_data(update("other", state("running")))
    assert list(conn.log) == []  # held: the pending session/new may create "other"
    conn.abandon(entry)  # the caller gave up on it
    assert [e.kind for e in conn.log] == ["unknown_session_update"]
    assert sent(conn)[-1]["method"] == "$/cancel_request"


def test_streamed_chunks_apply_and_log_like_any_update() -> None:
    """Chunk lines decoded by their stream's compact line (protocol/chunk_lines.py) reach
    the model and the log as the full path would."""
    from acp_lite.protocol import Notification

    def chunk(sid: str, text: str) -> bytes:
        content = {"type": "text", "text": text}
        return update(sid, {"sessionUpdate": "agent_message_chunk", "messageId": "m1",
                            "content": content})  # fmt: skip

    conn = ClientConnection()
    opened(conn)
    conn.receive_data(b"".join(chunk("s1", f"part {i} ") for i in range(3)))
    conn.receive_data(chunk("s1", 'quote " and\n'))
    model = conn.sessions["s1"].model
    assert model.text() == 'part 0 part 1 part 2 quote " and\n'
    assert [model.events[i].raw["content"]["text"] for i in range(4)][-1] == 'quote " and\n'
    conn.receive_data(b"".join(chunk("gone", f"x{i}") for i in range(3)))
    logged = [e for e in conn.log if e.kind == "unknown_session_update"]
    assert len(logged) == 3 and all(isinstance(e.data, Notification) for e in logged)
    assert [e.data.params.update.content.text for e in logged] == ["x0", "x1", "x2"]


def test_connection_lost_fails_pending_requests_with_method_and_session() -> None:
    conn = ClientConnection()
    opened(conn)
    entry, _sub = conn.prompt("s1", [{"type": "text", "text": "hi"}])
    failed = conn.connection_lost(AgentExited("the agent exited with code 3", returncode=3))
    assert failed == [entry]
    assert isinstance(entry.error, AgentExited)
    assert entry.error.method == "session/prompt" and entry.error.session_id == "s1"
    assert entry.error.returncode == 3
    with pytest.raises(AgentExited, match="code 3"):
        conn.send_request("session/list", {})


def test_end_of_stream_flushes_a_partial_last_line() -> None:
    conn = ClientConnection()
    opened(conn)
    conn.receive_data(update("s1", state("running"))[:-1])  # no newline
    assert conn.sessions["s1"].model.state == "idle"
    conn.receive_data(b"")
    assert conn.sessions["s1"].model.state == "running"


def test_garbage_is_counted_and_sampled_not_all_kept() -> None:
    conn = ClientConnection(Limits(max_events_per_kind=10))
    conn.receive_data(b"x\n" * 1000)
    assert conn.log_counts == {"protocol_error": 1000}
    # The first 10, then one in 10.
    assert len(conn.log) == 10 + 99
    assert len(conn.transcript) == 1000  # the lines themselves are all there
    keep_all = ClientConnection(Limits(max_events_per_kind=None))
    keep_all.receive_data(b"x\n" * 1000)
    assert len(keep_all.log) == 1000


def test_a_logged_protocol_error_does_not_copy_the_stderr_tail() -> None:
    tail = [f"line {i}" for i in range(200)]
    conn = ClientConnection(stderr_tail=lambda: tail)
    conn.receive_data(b"{}\n" * 5)
    assert all(e.error is not None and e.error.stderr_tail == () for e in conn.log)
