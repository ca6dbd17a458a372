"""The v1 translator in the sans-IO core, driven with bytes only.

A v1 agent is played by hand: every test feeds the exact v1 lines an agent
would write and checks what the v2 model shows and what the client wrote, the
latter validated against the v1 schema (``tests/data/schema/v1/schema.json``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from acp_lite.core import AgentRequestReceived, ClientConnection, ResponseArrived, SessionOpened
from acp_lite.errors import (
    AgentExited,
    InternalError,
    PromptRejected,
    Unsupported,
    UnsupportedInV1,
    UnsupportedProtocolVersion,
)
from acp_lite.protocol import (
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestPermissionRequest,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
)

SCHEMA = Path(__file__).parent.parent / "data" / "schema" / "v1" / "schema.json"

V1_INIT = {
    "protocolVersion": 1,
    "agentInfo": {"name": "v1-agent", "version": "0.1"},
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
        "mcpCapabilities": {"http": True, "sse": False},
    },
    "authMethods": [{"id": "key", "name": "API key", "description": None}],
}
V2_INIT_PARAMS = {
    "protocolVersion": 2,
    "info": {"name": "client", "version": "1"},
    "capabilities": {"auth": {"terminal": {}}},
}
MODES = {
    "currentModeId": "ask",
    "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
}
#: v1 method (or "response:<method>" for our answers to the agent) -> v1 params def.
PARAMS_DEF = {
    "initialize": "InitializeRequest",
    "authenticate": "AuthenticateRequest",
    "session/new": "NewSessionRequest",
    "session/load": "LoadSessionRequest",
    "session/resume": "ResumeSessionRequest",
    "session/prompt": "PromptRequest",
    "session/set_mode": "SetSessionModeRequest",
    "session/set_config_option": "SetSessionConfigOptionRequest",
    "session/cancel": "CancelNotification",
    "response:session/request_permission": "RequestPermissionResponse",
}


# ---------------------------------------------------------------------- helpers


@cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA.read_text())
    return loaded


def validate_v1(msg: dict[str, Any], answering: str | None = None) -> None:
    """``msg`` is a valid v1 client message, and its params (or result) too."""
    schema = _schema()
    cls = jsonschema.validators.validator_for(schema)
    cls(schema).validate(msg)  # the envelope (root anyOf)
    key = f"response:{answering}" if answering else msg.get("method")
    name = PARAMS_DEF.get(str(key))
    if name is not None:
        body = msg["result"] if answering else msg.get("params")
        cls({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}).validate(body)


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def result(rid: int, value: Any) -> bytes:
    return line({"jsonrpc": "2.0", "id": rid, "result": value})


def error(rid: int, code: int, message: str, data: Any = None) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return line({"jsonrpc": "2.0", "id": rid, "error": err})


def update(sid: str, upd: dict[str, Any]) -> bytes:
    return line(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": upd}}
    )


def chunk(text: str, kind: str = "agent_message_chunk") -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def mode_update(mode: str) -> dict[str, Any]:
    return {"sessionUpdate": "current_mode_update", "currentModeId": mode}


def sent(conn: ClientConnection, answering: str | None = None) -> list[Any]:
    """What the client wrote, each message checked against the v1 schema."""
    msgs = [json.loads(x) for x in conn.data_to_send().splitlines()]
    for msg in msgs:
        validate_v1(msg, answering if "method" not in msg else None)
    return msgs


def v1_conn(init: dict[str, Any] | None = None, **session: Any) -> ClientConnection:
    """An initialized v1 connection with session ``s1`` open (``session``: extra
    fields of the session/new result)."""
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    conn.data_to_send()  # v2 params: the agent ignores what it does not know
    conn.receive_data(result(entry.id, init or V1_INIT))
    assert conn.protocol_version == 1
    new = conn.send_request("session/new", {"cwd": "/w", "mcpServers": []})
    (req,) = sent(conn)
    assert req["method"] == "session/new"
    conn.receive_data(result(new.id, {"sessionId": "s1", **session}))
    assert new.error is None, new.error
    conn.next_events()
    return conn


def prompt(conn: ClientConnection, text: str = "hi") -> tuple[Any, Any, dict[str, Any]]:
    entry, sub = conn.prompt("s1", [{"type": "text", "text": text}])
    (req,) = sent(conn)
    return entry, sub, req


def sources(conn: ClientConnection, sid: str = "s1") -> list[tuple[str, str]]:
    return [(e.tag, e.source) for e in conn.sessions[sid].model.events]


# ---------------------------------------------------------------------- negotiation


def test_auto_switches_to_v1_when_the_agent_answers_1() -> None:
    conn = ClientConnection()
    assert conn.protocol_version == 2
    entry = conn.initialize(V2_INIT_PARAMS)
    (req,) = [json.loads(x) for x in conn.data_to_send().splitlines()]
    assert req["params"] == V2_INIT_PARAMS  # auto offers v2 as given
    conn.receive_data(result(entry.id, V1_INIT))
    assert entry.error is None and conn.protocol_version == 1
    resp = entry.result
    assert isinstance(resp, InitializeResponse) and conn.initialize_response is resp
    assert conn.initialize_result == V1_INIT  # the raw v1 result
    assert resp.protocol_version == 1
    assert resp.info.name == "v1-agent"
    session = resp.capabilities.session
    assert session.prompt.image is not None and session.prompt.embedded_context is not None
    assert not session.prompt.audio  # false in v1: omitted in v2
    assert session.mcp.http is not None and session.mcp.stdio is not None
    assert session.extra["resume"] == {}  # loadSession
    assert resp.capabilities.extra["loadSession"] is True
    (method,) = resp.auth_methods
    assert method.method_id == "key" and method.type == "agent"


def test_auto_switches_to_v1_on_a_v1_shaped_answer_to_2() -> None:
    # Some agents echo protocolVersion 2 and answer with v1 field names.
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(entry.id, {**V1_INIT, "protocolVersion": 2}))
    assert entry.error is None and conn.protocol_version == 1
    assert entry.result.info.name == "v1-agent"


def test_a_1_in_the_v2_shape_is_refused() -> None:
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    odd = {"protocolVersion": 1, "info": {"name": "odd", "version": "1"}, "capabilities": {}}
    conn.receive_data(result(entry.id, odd))
    assert isinstance(entry.error, UnsupportedProtocolVersion) and entry.error.version == 1
    assert conn.protocol_version == 2


def test_a_bare_1_is_v1() -> None:
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(entry.id, {"protocolVersion": 1}))
    assert entry.error is None and conn.protocol_version == 1
    assert entry.result.info.name == "unknown"  # v1 agentInfo is optional


def test_auto_stays_v2_on_a_v2_answer() -> None:
    conn = ClientConnection()
    entry = conn.initialize(V2_INIT_PARAMS)
    v2 = {"protocolVersion": 2, "info": {"name": "v2", "version": "1"}, "capabilities": {}}
    conn.receive_data(result(entry.id, v2))
    assert entry.error is None and conn.protocol_version == 2


def test_explicit_1_sends_v1_initialize_params() -> None:
    conn = ClientConnection(protocol_version=1)
    assert conn.protocol_version == 1
    entry = conn.initialize(V2_INIT_PARAMS)
    (req,) = sent(conn)
    assert req["params"] == {
        "protocolVersion": 1,
        "clientInfo": {"name": "client", "version": "1"},
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False},
            "terminal": False,
            "auth": {"terminal": True},
        },
    }
    conn.receive_data(result(entry.id, V1_INIT))
    assert entry.error is None and isinstance(entry.result, InitializeResponse)


def test_explicit_1_refuses_a_v2_answer() -> None:
    conn = ClientConnection(protocol_version=1)
    entry = conn.initialize(V2_INIT_PARAMS)
    v2 = {"protocolVersion": 2, "info": {"name": "v2", "version": "1"}, "capabilities": {}}
    conn.receive_data(result(entry.id, v2))
    assert isinstance(entry.error, UnsupportedProtocolVersion)


def test_explicit_2_refuses_a_v1_answer() -> None:
    conn = ClientConnection(protocol_version=2)
    entry = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(entry.id, V1_INIT))
    assert isinstance(entry.error, UnsupportedProtocolVersion) and entry.error.version == 1
    assert conn.protocol_version == 2


def test_bad_protocol_version_argument() -> None:
    with pytest.raises(ValueError, match="protocol_version"):
        ClientConnection(protocol_version=3)


# ---------------------------------------------------------------------- turns


def test_echo_turn() -> None:
    conn = v1_conn()
    entry, sub, req = prompt(conn, "hello")
    assert req["method"] == "session/prompt"
    assert req["params"] == {"sessionId": "s1", "prompt": [{"type": "text", "text": "hello"}]}
    model = conn.sessions["s1"].model
    assert sub.status == "pending" and not entry.done and model.state == "idle"
    conn.receive_data(update("s1", chunk("hel")))
    # Inserted at the first update: running, the user message, and the prompt
    # answered with its messageId (as a v2 prompt response would).
    assert sub.status == "inserted" and sub.message_id == f"v1-prompt-{entry.id}"
    assert model.state == "running"
    assert entry.done and isinstance(entry.result, PromptResponse)
    assert entry.result.message_id == sub.message_id
    assert conn.next_events() == [ResponseArrived(entry)]
    conn.receive_data(update("s1", chunk("lo")))
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    assert conn.next_events() == []  # the prompt was reported at insertion
    assert sub.done and sub.stop_reason == "end_turn"
    assert model.state == "idle" and model.stop_reason == "end_turn" and model.is_quiet
    assert model.text(sub) == "hello"
    assert entry.result.extra["stopReason"] == "end_turn"
    user = model.entity("user_message", sub.message_id)
    assert user.text == "hello"
    assert sources(conn) == [
        ("state_update", "v1:synthesized"),
        ("user_message", "v1:synthesized"),
        ("agent_message_chunk", "v1:session/update"),
        ("agent_message_chunk", "v1:session/update"),
        ("state_update", "v1:synthesized"),
    ]
    events = list(model.events)
    assert [e.synthesized for e in events] == [True, True, False, False, True]
    assert events[2].raw == chunk("hel")  # the v1 payload as received
    assert events[2].update.message_id == f"v1-{entry.id}-agent"
    assert model.violations == []


def test_response_without_updates_still_inserts_then_idles() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(result(entry.id, {"stopReason": "refusal"}))
    assert sub.status == "inserted" and sub.done and sub.stop_reason == "refusal"
    assert conn.next_events() == [ResponseArrived(entry)]
    assert [t for t, _ in sources(conn)] == ["state_update", "user_message", "state_update"]


def test_next_turn_gets_new_message_ids() -> None:
    conn = v1_conn()
    first, sub1, _ = prompt(conn, "one")
    conn.receive_data(update("s1", chunk("A")) + result(first.id, {"stopReason": "end_turn"}))
    second, sub2, _ = prompt(conn, "two")
    conn.receive_data(update("s1", chunk("B")) + result(second.id, {"stopReason": "end_turn"}))
    model = conn.sessions["s1"].model
    assert model.text(sub1) == "A" and model.text(sub2) == "B"
    assert sub2.message_id != sub1.message_id and model.completions == 2
    # A chunk after the turn ended is a message of its own.
    conn.receive_data(update("s1", chunk("late")))
    assert model.timeline[-1].text == "late" and model.text(sub2) == "B"


def test_an_echoed_prompt_is_the_user_message() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn, "hello")
    conn.receive_data(update("s1", chunk("hel", "user_message_chunk")))
    conn.receive_data(update("s1", chunk("lo", "user_message_chunk")))
    conn.receive_data(update("s1", chunk("hi")) + update("s1", chunk("!", "user_message_chunk")))
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    model = conn.sessions["s1"].model
    assert sub.done and sub.user_message is not None and sub.user_message.text == "hello"
    assert [(m.kind, m.text) for m in model.timeline] == [
        ("user_message", "hello"),
        ("agent_message", "hi"),
        ("user_message", "!"),
    ]
    assert [t for t, _ in sources(conn)][:2] == ["state_update", "user_message_chunk"]


def test_chunk_with_message_id_keeps_it() -> None:
    conn = v1_conn()
    prompt(conn)
    conn.receive_data(update("s1", {**chunk("x"), "messageId": "m-1"}))
    assert conn.sessions["s1"].model.entity("agent_message", "m-1").text == "x"


def test_second_prompt_during_a_turn_is_refused_before_sending() -> None:
    conn = v1_conn()
    entry, _, _ = prompt(conn)
    with pytest.raises(UnsupportedInV1, match="one prompt at a time") as info:
        conn.prompt("s1", [{"type": "text", "text": "again"}])
    assert isinstance(info.value, Unsupported)
    assert conn.data_to_send() == b""
    assert len(conn.sessions["s1"].model.submissions) == 1
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    prompt(conn)  # allowed once the turn ended


def test_prompt_error_before_updates_is_a_rejection() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(error(entry.id, -32000, "Authentication required", {"authMethods": []}))
    assert isinstance(entry.error, PromptRejected) and entry.error.code == -32000
    assert sub.status == "rejected"
    assert conn.next_events() == [ResponseArrived(entry)]
    assert len(conn.sessions["s1"].model.events) == 0  # nothing made up
    prompt(conn)  # the turn is over


def test_prompt_error_after_updates_is_an_idle_with_error() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(update("s1", chunk("partial")))
    conn.receive_data(error(entry.id, -32603, "model crashed"))
    model = conn.sessions["s1"].model
    assert sub.status == "inserted" and sub.done and sub.stop_reason == "error"
    assert model.state == "idle" and model.stop_reason == "error"
    assert model.error.code == -32603 and model.error.message == "model crashed"
    assert entry.error is None and entry.result.message_id == sub.message_id
    last = model.events[-1]
    assert last.synthesized and last.raw["stopReason"] == "error"
    assert not isinstance(entry.error, InternalError)


def test_cancel() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(
        update("s1", {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run"})
    )
    conn.cancel("s1")
    (note,) = sent(conn)
    assert note == {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}
    model = conn.sessions["s1"].model
    conn.receive_data(
        update("s1", {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed"})
    )
    conn.receive_data(result(entry.id, {"stopReason": "cancelled"}))
    assert sub.done and sub.stop_reason == "cancelled" and model.stop_reason == "cancelled"
    assert model.entity("tool_call", "t1").status == "failed"


# ---------------------------------------------------------------------- tool calls


def test_tool_call_update_and_permission_allow_and_reject() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(
        update("s1", {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit a.py"})
    )
    model = conn.sessions["s1"].model
    call = model.entity("tool_call", "t1")
    assert call.status == "pending" and call.tool_kind == "other" and call.title == "Edit a.py"
    options = [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ]
    ask = {
        "jsonrpc": "2.0",
        "id": "p1",
        "method": "session/request_permission",
        "params": {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "t1", "status": "pending"},
            "options": options,
        },
    }
    conn.receive_data(line(ask))
    events = conn.next_events()
    (received,) = [e for e in events if isinstance(e, AgentRequestReceived)]
    req = received.request
    assert isinstance(req.params, RequestPermissionRequest)
    assert req.params.title == "Edit a.py"  # the reported tool call's title
    assert req.params.subject.tool_call.tool_call_id == "t1"
    assert req.tool_call_id == "t1" and req.session_id == "s1"
    assert [o.option_id for o in req.params.options] == ["yes", "no"]
    assert conn.data_to_send() == b""  # not answered -32602
    conn.respond("p1", {"outcome": {"outcome": "selected", "optionId": "yes"}})
    (answer,) = sent(conn, answering="session/request_permission")
    assert answer == {
        "jsonrpc": "2.0",
        "id": "p1",
        "result": {"outcome": {"outcome": "selected", "optionId": "yes"}},
    }
    # A second one, with its own title, rejected.
    ask2 = {**ask, "id": 7}
    ask2["params"] = {**ask["params"], "toolCall": {"toolCallId": "t2", "title": "rm -rf"}}
    conn.receive_data(line(ask2))
    (received,) = [e for e in conn.next_events() if isinstance(e, AgentRequestReceived)]
    assert received.request.params.title == "rm -rf"
    conn.respond(7, {"outcome": {"outcome": "selected", "optionId": "no"}})
    (answer,) = sent(conn, answering="session/request_permission")
    assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "no"}
    conn.receive_data(
        update(
            "s1",
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "done"}}],
            },
        )
    )
    assert model.entity("tool_call", "t1").status == "completed"
    conn.receive_data(result(entry.id, {"stopReason": "end_turn"}))
    assert sub.done


def test_permission_cancelled_by_session_cancel_answers_in_v1_shape() -> None:
    conn = v1_conn()
    prompt(conn)
    ask = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "t9"},
            "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
        },
    }
    conn.receive_data(line(ask))
    assert conn.next_events()[-1].request.params.title == "Permission for tool call t9"
    conn.cancel("s1")
    lines = [json.loads(x) for x in conn.data_to_send().splitlines()]
    answers = [m for m in lines if "result" in m]
    assert answers == [{"jsonrpc": "2.0", "id": 3, "result": {"outcome": {"outcome": "cancelled"}}}]
    for msg in answers:
        validate_v1(msg, "session/request_permission")


def test_diff_content_maps_to_v2_changes_and_patch() -> None:
    conn = v1_conn()
    prompt(conn)
    diff = {"type": "diff", "path": "/w/a.py", "oldText": "a\nb\n", "newText": "a\nc\n"}
    add = {"type": "diff", "path": "/w/new.py", "newText": "x"}
    conn.receive_data(
        update(
            "s1",
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Edit",
                "kind": "edit",
                "status": "in_progress",
                "content": [diff, add],
            },
        )
    )
    call = conn.sessions["s1"].model.entity("tool_call", "t1")
    assert call.tool_kind == "edit" and call.status == "in_progress"
    modify, added = call.content
    assert [(c.operation, c.path) for c in modify.changes] == [("modify", "/w/a.py")]
    assert modify.patch.format == "git_patch"
    assert "-b\n" in modify.patch.text and "+c\n" in modify.patch.text
    assert modify.patch.text.startswith("diff --git /w/a.py /w/a.py\n")
    assert modify.meta["acp_lite/v1"]["oldText"] == "a\nb\n"
    assert added.changes[0].operation == "add"
    assert "\\ No newline at end of file" in added.patch.text


# ---------------------------------------------------------------------- plans, modes, options


def test_plan_becomes_one_plan_entity() -> None:
    conn = v1_conn()
    entries = [{"content": "step 1", "priority": "high", "status": "pending"}]
    conn.receive_data(update("s1", {"sessionUpdate": "plan", "entries": entries}))
    done = [{**entries[0], "status": "completed"}]
    conn.receive_data(update("s1", {"sessionUpdate": "plan", "entries": done}))
    model = conn.sessions["s1"].model
    (plan,) = model.plans
    assert plan.id == "v1-plan" and [e.status for e in plan.entries] == ["completed"]
    assert sources(conn) == [("plan_update", "v1:session/update")] * 2


def test_modes_become_a_mode_option_and_set_mode() -> None:
    real = {
        "id": "model",
        "name": "Model",
        "type": "select",
        "currentValue": "m1",
        "options": [{"value": "m1", "name": "M1"}, {"value": "m2", "name": "M2"}],
    }
    conn = v1_conn(modes=MODES, configOptions=[real])
    model = conn.sessions["s1"].model
    by_id = {o.config_id: o for o in model.config_options}
    mode = by_id["mode"]
    assert mode.type == "select" and mode.current_value == "ask"
    assert [o.value for o in mode.options] == ["ask", "code"]
    assert mode.meta["acp_lite/v1"]["synthesized"] is True
    assert by_id["model"].current_value == "m1"
    # Setting the mode option sends session/set_mode and applies its answer.
    entry = conn.send_request(
        "session/set_config_option",
        {"sessionId": "s1", "configId": "mode", "type": "id", "value": "code"},
        session_id="s1",
    )
    (req,) = sent(conn)
    assert req["method"] == "session/set_mode"
    assert req["params"] == {"sessionId": "s1", "modeId": "code"}
    conn.receive_data(result(entry.id, {}))
    assert isinstance(entry.result, SetSessionConfigOptionResponse)
    by_id = {o.config_id: o for o in model.config_options}
    assert by_id["mode"].current_value == "code" and "model" in by_id
    # The agent switches modes on its own.
    conn.receive_data(
        update("s1", {"sessionUpdate": "current_mode_update", "currentModeId": "ask"})
    )
    assert {o.config_id: o for o in model.config_options}["mode"].current_value == "ask"
    assert model.events[-1].tag == "config_option_update"
    assert model.events[-1].raw["sessionUpdate"] == "current_mode_update"
    # Another option: v1 session/set_config_option (a value id has no "type" in v1).
    entry = conn.send_request(
        "session/set_config_option",
        {"sessionId": "s1", "configId": "model", "type": "id", "value": "m2"},
        session_id="s1",
    )
    (req,) = sent(conn)
    assert req["method"] == "session/set_config_option"
    assert req["params"] == {"sessionId": "s1", "configId": "model", "value": "m2"}
    conn.receive_data(result(entry.id, {"configOptions": [{**real, "currentValue": "m2"}]}))
    by_id = {o.config_id: o for o in model.config_options}
    assert by_id["model"].current_value == "m2" and by_id["mode"].current_value == "ask"


def test_session_new_result_is_a_v2_response_with_extras() -> None:
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, V1_INIT))
    conn.data_to_send()
    entry = conn.send_request("session/new", {"cwd": "/w"})
    (req,) = sent(conn)
    assert req["params"] == {"cwd": "/w", "mcpServers": []}
    models = {"currentModelId": "a", "availableModels": []}
    conn.receive_data(result(entry.id, {"sessionId": "s9", "modes": MODES, "models": models}))
    assert isinstance(entry.result, NewSessionResponse)
    assert entry.result.extra["models"] == models and entry.result.extra["modes"] == MODES
    assert [o.config_id for o in entry.result.config_options] == ["mode"]


def test_config_option_update_and_other_updates() -> None:
    conn = v1_conn(modes=MODES)
    opt = {
        "id": "effort",
        "name": "Effort",
        "type": "boolean",
        "currentValue": True,
    }
    conn.receive_data(
        update("s1", {"sessionUpdate": "config_option_update", "configOptions": [opt]})
    )
    model = conn.sessions["s1"].model
    assert [o.config_id for o in model.config_options] == ["effort", "mode"]
    cmds = [{"name": "web", "description": "Search the web", "input": None}]
    conn.receive_data(
        update("s1", {"sessionUpdate": "available_commands_update", "availableCommands": cmds})
    )
    (cmd,) = model.available_commands
    assert cmd.name == "web" and cmd.type == "command"
    conn.receive_data(update("s1", {"sessionUpdate": "session_info_update", "title": "T"}))
    conn.receive_data(update("s1", {"sessionUpdate": "usage_update", "used": 5, "size": 100}))
    conn.receive_data(update("s1", {"sessionUpdate": "future_thing", "x": 1}))
    # A v2-only tag from a v1 agent does not drive the v2 model.
    conn.receive_data(update("s1", {"sessionUpdate": "state_update", "state": "running"}))
    assert model.state == "idle"
    assert type(model.events[-1].update).__name__ == "UnrecognizedSessionUpdate"
    assert model.title == "T" and model.usage is not None and model.usage.used == 5
    last = model.events[-2]
    assert type(last.update).__name__ == "UnrecognizedSessionUpdate"
    assert last.raw == {"sessionUpdate": "future_thing", "x": 1}
    assert model.violations == []


# ---------------------------------------------------------------------- sessions


def test_early_updates_are_translated_when_session_new_answers() -> None:
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, V1_INIT))
    entry = conn.send_request("session/new", {"cwd": "/w", "mcpServers": []})
    conn.receive_data(
        update("s1", {"sessionUpdate": "current_mode_update", "currentModeId": "code"})
    )
    assert conn.sessions == {}
    conn.receive_data(result(entry.id, {"sessionId": "s1", "modes": MODES}))
    assert any(isinstance(e, SessionOpened) for e in conn.next_events())
    model = conn.sessions["s1"].model
    assert model.config_options[0].current_value == "code"


def test_resume_is_session_load_with_replay() -> None:
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, V1_INIT))
    conn.data_to_send()
    entry = conn.resume("old", {"sessionId": "old", "cwd": "/w"}, replay=True)
    (req,) = sent(conn)
    assert req["method"] == "session/load"
    assert req["params"] == {"sessionId": "old", "cwd": "/w", "mcpServers": []}
    history = [
        chunk("question 1", "user_message_chunk"),
        chunk("answer ", "agent_message_chunk"),
        chunk("1", "agent_message_chunk"),
        chunk("question 2", "user_message_chunk"),
        chunk("answer 2", "agent_message_chunk"),
    ]
    conn.receive_data(b"".join(update("old", h) for h in history))
    conn.receive_data(result(entry.id, {"modes": MODES}))
    assert entry.error is None and isinstance(entry.result, ResumeSessionResponse)
    model = conn.sessions["old"].model
    assert [e.replayed for e in model.events] == [True] * 6
    texts = [(m.kind, m.text) for m in model.timeline]
    assert texts == [
        ("user_message", "question 1"),
        ("agent_message", "answer 1"),
        ("user_message", "question 2"),
        ("agent_message", "answer 2"),
    ]
    assert model.events[-1].synthesized and model.state == "idle"
    assert model.config_options[0].config_id == "mode"
    assert model.violations == []
    assert conn.sessions["old"].replaying is False
    # Live again: a prompt works.
    entry, sub = conn.prompt("old", [{"type": "text", "text": "q3"}])
    conn.receive_data(update("old", chunk("a3")) + result(entry.id, {"stopReason": "end_turn"}))
    assert model.text(sub) == "a3" and not model.events[-1].replayed


def test_load_without_replay_asked_still_marks_the_history_replayed() -> None:
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, V1_INIT))
    conn.data_to_send()
    entry = conn.resume("old", {"sessionId": "old", "cwd": "/w"}, replay=False)
    (req,) = sent(conn)
    assert req["method"] == "session/load"  # the only way this agent resumes
    conn.receive_data(update("old", chunk("q", "user_message_chunk")) + result(entry.id, {}))
    assert [e.replayed for e in conn.sessions["old"].model.events] == [True, True]


def test_connection_lost_keeps_an_inserted_v1_prompt_result() -> None:
    conn = v1_conn()
    entry, sub, _ = prompt(conn)
    conn.receive_data(update("s1", chunk("a")))
    conn.connection_lost(AgentExited("gone", returncode=1))
    assert entry.error is None and entry.result.message_id == sub.message_id


def test_resume_needs_load_session() -> None:
    caps = {**V1_INIT, "agentCapabilities": {"loadSession": False}}
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, caps))
    conn.data_to_send()
    with pytest.raises(UnsupportedInV1, match="loadSession"):
        conn.resume("old", {"sessionId": "old", "cwd": "/w"}, replay=True)
    assert conn.data_to_send() == b"" and "old" not in conn.sessions


def test_resume_without_replay_uses_v1_resume_when_advertised() -> None:
    caps = {**V1_INIT, "agentCapabilities": {"sessionCapabilities": {"resume": {}}}}
    conn = ClientConnection()
    init = conn.initialize(V2_INIT_PARAMS)
    conn.receive_data(result(init.id, caps))
    conn.data_to_send()
    entry = conn.resume("old", {"sessionId": "old", "cwd": "/w"}, replay=False)
    (req,) = sent(conn)
    assert req["method"] == "session/resume"
    conn.receive_data(result(entry.id, {}))
    assert entry.error is None and conn.sessions["old"].model.state == "idle"


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


def test_update_for_an_unknown_session_is_logged() -> None:
    conn = v1_conn()
    conn.receive_data(update("nope", chunk("x")))
    assert [e.kind for e in conn.log][-1] == "unknown_session_update"
    assert len(conn.sessions["s1"].model.events) == 0
