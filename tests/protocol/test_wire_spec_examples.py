"""Round trip of every JSON example in the spec texts (tests/data/spec: seeds + v2 draft docs).

Every ```json block is harvested. JSON-RPC messages go through decode_line/encode_message
exactly; params, results and bare payloads are structured with their schema type and must
come back unchanged, without any Unrecognized* part and valid against the schema. The few
examples that are not valid v2 (older texts, abbreviated excerpts) are listed in
DEVIATIONS with the reason; the test checks that they really deviate, so the list cannot
go stale silently.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from protocol_examples import SpecExample, harvest, schema_errors, unrecognized_parts

from acp_lite.protocol import (
    DEFINITIONS,
    METHODS,
    ErrorResponse,
    InvalidMessage,
    Request,
    Response,
    converter,
    decode_line,
    encode_message,
    jsonrpc,
)

PROMPT_V1 = (
    "older prompt lifecycle: the session/prompt result is `{}`; the primary spec (seed 000) "
    "and the schema require `messageId` (PromptResponse)"
)
INIT_EXCERPT = "abbreviated excerpt: initialize result without the required `info`"
DEVIATIONS: dict[str, str] = {
    "001_ed106adc9db6f7ab.txt:114": PROMPT_V1,
    "prompt-lifecycle.mdx:111": PROMPT_V1,
    "authentication.mdx:60": INIT_EXCERPT,
    "extensibility.mdx:128": INIT_EXCERPT,
    "session-delete.mdx:37": INIT_EXCERPT,
    "session-setup.mdx:436": INIT_EXCERPT,
    "authentication.mdx:125": "abbreviated excerpt: initialize params without the required `info`",
    "slash-commands.mdx:12": (
        'older draft: available commands without `"type": "command"`; the schema\'s '
        "AvailableCommand is tagged by `type` (kept as UnrecognizedSessionUpdate with .error)"
    ),
}

# Responses whose request is not shown in the same file: the method they answer.
RESULT_METHODS = {
    "authentication.mdx:60": "initialize",
    "extensibility.mdx:128": "initialize",
    "session-delete.mdx:37": "initialize",
    "session-setup.mdx:436": "initialize",
    "session-config-options.mdx:12": "session/new",
}


def _bare_type(value: dict[str, Any]) -> str | None:
    """The schema definition of a bare (non JSON-RPC) example, by its shape."""
    tag = value.get("type")
    if "sessionUpdate" in value:
        return "SessionUpdate"
    if "methodId" in value:
        return "AuthMethod"
    if tag in ("text", "image", "audio", "resource", "resource_link"):
        return "ContentBlock"
    if tag in ("content", "diff", "terminal"):
        return "ToolCallContent"
    if tag in ("stdio", "http", "acp"):
        return "McpServer"
    if "configId" in value:
        return "SessionConfigOption"
    if set(value) == {"path", "line"}:
        return "ToolCallLocation"
    return None


# Bare examples that are fragments of a larger object (not a schema type of their own).
FRAGMENTS = {
    "elicitation.mdx:29": "fragment of initialize params: only the `capabilities` member",
    "tool-calls.mdx:242": "fragment of session/request_permission params (no sessionId/options)",
}

EXAMPLES = harvest()


def test_examples_were_found() -> None:
    assert len(EXAMPLES) >= 90
    assert {e.file for e in EXAMPLES} >= {"001_ed106adc9db6f7ab.txt", "tool-calls.mdx"}
    keys = {e.key for e in EXAMPLES}
    assert set(DEVIATIONS) <= keys and set(FRAGMENTS) <= keys and set(RESULT_METHODS) <= keys


def _check_typed(value: Any, definition: str) -> list[str]:
    """Structure + unstructure with the schema type; return what went wrong."""
    try:
        obj = converter.structure(value, DEFINITIONS[definition])
    except Exception as exc:
        return [f"{definition}: {exc}"]
    problems = unrecognized_parts(obj)
    if converter.unstructure(obj) != value:
        problems.append(f"{definition}: round trip differs")
    problems += schema_errors(converter.unstructure(obj), definition)
    return problems


def _definition_of(cls: Any) -> str:
    return next(name for name, t in DEFINITIONS.items() if t is cls)


def _methods_by_id(example: SpecExample) -> dict[Any, str]:
    ids: dict[Any, str] = {}
    for e in EXAMPLES:
        if e.file != example.file or e.line >= example.line:
            continue
        msg = decode_line(json.dumps(e.value))
        if isinstance(msg, Request):
            ids[msg.id] = msg.method
    return ids


def _problems(example: SpecExample) -> list[str]:
    value = example.value
    if not (isinstance(value, dict) and "jsonrpc" in value):
        definition = _bare_type(value)
        assert definition is not None, f"{example.key}: unclassified bare example {value}"
        return _check_typed(value, definition)
    line = json.dumps(value).encode()
    msg = decode_line(line)
    if isinstance(msg, InvalidMessage):
        return [f"decode: {msg.error.message}"]
    assert isinstance(msg, list) is False
    encoded = encode_message(msg)
    assert json.loads(encoded) == value, "the envelope must round-trip exactly"
    assert schema_errors(json.loads(encoded), None) == []
    problems: list[str] = []
    if isinstance(msg, Response):
        method = RESULT_METHODS.get(example.key) or _methods_by_id(example).get(msg.id)
        assert method is not None, f"{example.key}: cannot tell which method this answers"
        spec = METHODS.get(method)
        if spec is not None and spec.result is not None:
            problems += _check_typed(msg.result, _definition_of(spec.result))
    elif isinstance(msg, ErrorResponse):
        pass  # code, message and data are checked by the envelope round trip and schema
    elif isinstance(msg.params, dict | list) or msg.method not in METHODS:
        assert msg.method.startswith("_"), f"{msg.method}: known method left untyped"
    else:
        problems += unrecognized_parts(msg.params)
        problems += schema_errors(
            jsonrpc._wire(msg.params), _definition_of(METHODS[msg.method].params)
        )
    return problems


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.key for e in EXAMPLES])
def test_spec_example(example: SpecExample) -> None:
    if example.key in FRAGMENTS:
        assert _bare_type(example.value) is None
        return
    problems = _problems(example)
    if example.key in DEVIATIONS:
        assert problems, f"{example.key} is listed as deviating but is valid now: unlist it"
    else:
        assert problems == []
