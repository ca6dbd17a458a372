"""Structured-output requests (a JSON Schema the answer must fit) are answered with
an object built from the schema and use up no script step, in every API: agents
send them for side tasks (Gemini CLI's model router; Codex's auto-review
"guardian", which retried three times on a scripted prose answer)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_lite.models import HttpRequest, HttpResponse, ScriptedModel

# The schema Codex 2.6's auto-review sends (text.format, Responses API).
GUARDIAN = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "risk_level": {"type": "string", "enum": ["low", "medium", "high", "critical"]},
        "outcome": {"type": "string", "enum": ["allow", "deny"]},
        "rationale": {"type": "string"},
    },
    "required": ["outcome"],
}
USER = {"role": "user", "content": "hi"}


def post(path: str, body: dict[str, Any]) -> HttpRequest:
    return HttpRequest("POST", path, {}, (), json.dumps(body).encode())


def answer_text(api: str, answer: object) -> str:
    assert isinstance(answer, HttpResponse), answer
    body = json.loads(answer.body)
    if api == "chat":
        return str(body["choices"][0]["message"]["content"])
    if api == "responses":
        return str(body["output"][0]["content"][0]["text"])
    if api == "anthropic":
        return str(body["content"][0]["text"])
    return str(body["candidates"][0]["content"]["parts"][0]["text"])


CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    # api: (path, a structured-output request, a plain request)
    "chat": (
        "/v1/chat/completions",
        {
            "model": "m",
            "messages": [USER],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "g", "schema": GUARDIAN, "strict": True},
            },
        },
        {"model": "m", "messages": [USER]},
    ),
    "responses": (
        "/v1/responses",
        {
            "model": "m",
            "input": [USER],
            "text": {"format": {"type": "json_schema", "name": "g", "schema": GUARDIAN}},
        },
        {"model": "m", "input": [USER], "text": {"format": {"type": "text"}}},
    ),
    "anthropic": (
        "/v1/messages",
        {
            "model": "m",
            "max_tokens": 9,
            "messages": [USER],
            "output_config": {"format": {"type": "json_schema", "schema": GUARDIAN}},
        },
        {"model": "m", "max_tokens": 9, "messages": [USER], "output_config": {"effort": "low"}},
    ),
    "anthropic-beta": (
        "/v1/messages",
        {
            "model": "m",
            "max_tokens": 9,
            "messages": [USER],
            "output_format": {"type": "json_schema", "schema": GUARDIAN},
        },
        {"model": "m", "max_tokens": 9, "messages": [USER]},
    ),
    "gemini": (
        "/v1beta/models/g:generateContent",
        {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"responseJsonSchema": GUARDIAN},
        },
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    ),
}


@pytest.mark.parametrize("api", list(CASES))
def test_a_schema_request_gets_a_fitting_object_and_uses_no_step(api: str) -> None:
    path, structured, plain = CASES[api]
    model = ScriptedModel({"steps": [{"type": "reply", "text": "the scripted turn"}]})
    assert json.loads(answer_text(api.split("-")[0], model(post(path, structured)))) == {
        "outcome": "allow"
    }
    assert answer_text(api.split("-")[0], model(post(path, plain))) == "the scripted turn"
    assert [r.step for r in model.requests] == [None, 0]
    model.check(all_steps_used=True)


def test_a_json_object_format_is_not_a_schema_request() -> None:
    # json_object names no schema to fit: the script answers it.
    model = ScriptedModel({"steps": [{"type": "reply", "text": "{}"}]})
    body = {"model": "m", "messages": [USER], "response_format": {"type": "json_object"}}
    assert answer_text("chat", model(post("/v1/chat/completions", body))) == "{}"
    assert [r.step for r in model.requests] == [0]
