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


@cache
def _validator(name: str | None) -> Any:
    """The validator of the whole message (``None``) or of one ``$defs`` entry, built
    once: building one crawls the schema, which costs more than most validations."""
    schema = _schema()
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema if name is None else {"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"})


def validate_v1(msg: dict[str, Any], direction: str, methods: dict[tuple[str, Any], str]) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``msg`` (a line ``direction``
    ``recv`` from the agent or ``send`` to it) is v1. ``methods`` maps (direction
    of the request, its id) to its method, to know what a result answers."""
    _validator(None).validate(msg)
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
        _validator(name).validate(body)
