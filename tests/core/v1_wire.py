"""Playing a v1 agent by hand, for the ``test_v1_*`` modules (the sans-IO core, bytes only).

Every test feeds the exact v1 lines an agent would write and checks what the v2 model
shows and what the client wrote, the latter validated against the v1 schema
(``tests/data/schema/v1/schema.json``) by :func:`sent` and :func:`validate_v1`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from acp_lite.core import ClientConnection

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
