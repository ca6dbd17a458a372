"""Checks that a transcript line is ACP v1: the message against the v1 schema
(``tests/data/schema/v1/schema.json``), and its params or result against the
definition for its method. Independent of acp_lite's translator on purpose."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
from rawpipe import HERE

SCHEMA_V1 = HERE.parent / "data" / "schema" / "v1" / "schema.json"

#: The v1 schema definition of each message's params (requests, notifications)
#: or result (responses, by the request's method).
AGENT_PARAMS = {
    "session/update": "SessionNotification",
    "session/request_permission": "RequestPermissionRequest",
}
AGENT_RESULTS = {
    "initialize": "InitializeResponse",
    "authenticate": "AuthenticateResponse",
    "session/new": "NewSessionResponse",
    "session/load": "LoadSessionResponse",
    "session/list": "ListSessionsResponse",
    "session/set_mode": "SetSessionModeResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse",
    "session/prompt": "PromptResponse",
}
CLIENT_PARAMS = {
    "initialize": "InitializeRequest",
    "authenticate": "AuthenticateRequest",
    "session/new": "NewSessionRequest",
    "session/load": "LoadSessionRequest",
    "session/list": "ListSessionsRequest",
    "session/set_mode": "SetSessionModeRequest",
    "session/set_config_option": "SetSessionConfigOptionRequest",
    "session/prompt": "PromptRequest",
    "session/cancel": "CancelNotification",
}
CLIENT_RESULTS = {"session/request_permission": "RequestPermissionResponse"}


@cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_V1.read_text())
    return loaded


def validate_v1(msg: dict[str, Any], direction: str, methods: dict[tuple[str, Any], str]) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``msg`` (a line ``direction``
    ``recv`` from the agent or ``send`` to it) is v1. ``methods`` maps (direction
    of the request, its id) to its method, to know what a result answers."""
    schema = _schema()
    cls = jsonschema.validators.validator_for(schema)
    cls(schema).validate(msg)
    # recv: what the agent wrote (its requests, notifications and results).
    params, results = (
        (AGENT_PARAMS, AGENT_RESULTS) if direction == "recv" else (CLIENT_PARAMS, CLIENT_RESULTS)
    )
    if "method" in msg:
        name, body = params.get(msg["method"]), msg.get("params")
    elif "result" in msg:
        # A response answers a request of the other side.
        asker = "send" if direction == "recv" else "recv"
        name, body = results.get(methods.get((asker, msg["id"]), "")), msg["result"]
    else:
        name, body = None, None
    if name is not None:
        cls({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}).validate(body)
