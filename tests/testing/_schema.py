"""Validate what the reference agent wrote against the v2 schema (tests/data copy)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # test-only dependency, no stubs

SCHEMA = Path(__file__).parent.parent / "data" / "schema" / "v2" / "schema.unstable.json"

# Agent -> client requests and notifications: method -> params definition.
PARAMS = {
    "session/update": "UpdateSessionNotification",
    "session/request_permission": "RequestPermissionRequest",
    "elicitation/create": "CreateElicitationRequest",
    "$/cancel_request": "CancelRequestNotification",
}
# Client -> agent requests: method -> result definition.
RESULTS = {
    "initialize": "InitializeResponse",
    "auth/login": "LoginAuthResponse",
    "auth/logout": "LogoutAuthResponse",
    "session/new": "NewSessionResponse",
    "session/list": "ListSessionsResponse",
    "session/delete": "DeleteSessionResponse",
    "session/resume": "ResumeSessionResponse",
    "session/close": "CloseSessionResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse",
    "session/prompt": "PromptResponse",
    "tool_call/cancel": "CancelToolCallResponse",
    "terminal/cancel": "CancelTerminalResponse",
}


@functools.cache
def _validator(definition: str) -> Any:
    defs = json.loads(SCHEMA.read_text())["$defs"]
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": defs})


def _check(definition: str, instance: Any, where: str) -> list[str]:
    key = json.dumps(instance, sort_keys=True)
    return [f"{where}: {error}" for error in _errors(definition, key)]


@functools.lru_cache(maxsize=4096)
def _errors(definition: str, instance_json: str) -> tuple[str, ...]:
    # Keyed by the instance's JSON: the agents of different tests send many identical
    # messages (initialize results, state updates, ...), and validating is the slow part.
    instance = json.loads(instance_json)
    return tuple(e.message[:300] for e in _validator(definition).iter_errors(instance))


def schema_errors(messages: list[Any], sent: dict[Any, str]) -> list[str]:
    """Every schema violation in the agent's messages; ``sent`` maps our request ids
    to their methods so responses can be checked against the right result type."""
    errors: list[str] = []
    for index, message in enumerate(messages):
        where = f"message {index} {json.dumps(message)[:200]}"
        if not isinstance(message, dict):
            continue  # batches are checked by the tests that send them
        method = message.get("method")
        if method is not None:
            definition = PARAMS.get(method)
            if definition is None:
                errors.append(f"{where}: unexpected method {method!r}")
            else:
                errors += _check(definition, message.get("params"), where)
        elif "error" in message:
            errors += _check("Error", message["error"], where)
        elif message.get("id") in sent:
            method = sent[message["id"]]
            if method in RESULTS:
                errors += _check(RESULTS[method], message.get("result"), where)
    return errors
