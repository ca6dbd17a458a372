"""Every provider API against its OFFICIAL Python client (openai, anthropic,
google-genai), through an in-process transport: no socket, no key, no network.

The transport turns the client's request into an :class:`HttpRequest`, calls
the :class:`ScriptedModel`, and hands back its body or its encoded events (a
``Pause`` is skipped, not slept; a ``Hang`` ends the body there).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from acp_lite.models import (
    EventStream,
    Hang,
    HttpRequest,
    HttpResponse,
    ModelScript,
    ScriptedModel,
    SseEvent,
)

BASH_ARGS = {"command": "ls -la", "cwd": "/tmp", "nested": {"a": [1, 2, "x"]}}


def script(*steps: dict[str, Any], name: str = "clients") -> ScriptedModel:
    return ScriptedModel(ModelScript.from_dict({"name": name, "steps": list(steps)}))


def transport(model: ScriptedModel) -> httpx2.MockTransport:
    def handle(request: httpx2.Request) -> httpx2.Response:
        ours = HttpRequest(
            method=request.method,
            path=request.url.path,
            query=dict(request.url.params),
            headers=tuple((k.lower(), v) for k, v in request.headers.items()),
            body=request.read(),
        )
        answer = model(ours)
        if isinstance(answer, HttpResponse):
            return httpx2.Response(answer.status, headers=list(answer.headers), content=answer.body)
        assert isinstance(answer, EventStream)

        def body() -> Iterator[bytes]:
            for item in answer.items:
                if isinstance(item, Hang):
                    return
                if isinstance(item, SseEvent):
                    yield item.encode()

        return httpx2.Response(answer.status, headers=list(answer.headers), content=body())

    return httpx2.MockTransport(handle)


def openai_client(model: ScriptedModel) -> openai.OpenAI:
    http = httpx2.Client(transport=transport(model))
    return openai.OpenAI(
        base_url="http://test/v1", api_key="sk-secret", http_client=http, max_retries=0
    )


def anthropic_client(model: ScriptedModel) -> anthropic.Anthropic:
    http = httpx2.Client(transport=transport(model))
    return anthropic.Anthropic(
        base_url="http://test", api_key="sk-ant-secret", http_client=http, max_retries=0
    )


def gemini_client(model: ScriptedModel) -> genai.Client:
    http = httpx2.Client(transport=transport(model))
    options = genai_types.HttpOptions(base_url="http://test", httpx_client=http)
    return genai.Client(api_key="goog-secret", http_options=options)


TEXT_AND_TOOLS = (
    {"type": "reply", "text": "Hello there, I am a scripted model."},
    {
        "type": "tool_calls",
        "text": "Running two tools.",
        "calls": [
            {"name": "bash", "arguments": BASH_ARGS, "id": "call_a"},
            {"name": "read", "arguments": {"path": "README.md"}},
        ],
    },
)
USER: Any = [{"role": "user", "content": "hi"}]


# --- OpenAI Chat Completions -----------------------------------------------------------


def test_openai_chat_stream_yields_text_tool_calls_and_usage() -> None:
    model = script(*TEXT_AND_TOOLS)
    client = openai_client(model)
    chunks = list(
        client.chat.completions.create(
            model="gpt-test", messages=USER, stream=True, stream_options={"include_usage": True}
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "Hello there, I am a scripted model."
    )
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert {c.model for c in chunks} == {"gpt-test"} and chunks[0].id.startswith("chatcmpl-")
    # The helper reassembles tool calls from their deltas.
    with client.chat.completions.stream(model="gpt-test", messages=USER) as stream:
        final = stream.get_final_completion()
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content == "Running two tools."
    calls = choice.message.tool_calls or []
    assert [(c.id, c.function.name) for c in calls] == [("call_a", "bash"), ("call_0003", "read")]
    assert json.loads(calls[0].function.arguments) == BASH_ARGS
    assert model.requests[1].body["stream"] is True
    model.check(all_steps_used=True)


def test_openai_chat_without_stream_refusal_and_truncation() -> None:
    model = script(
        {"type": "reply", "text": "cut off", "truncated": True},
        {"type": "refusal", "text": "No."},
        {"type": "tool_call", "name": "bash", "arguments": BASH_ARGS},
    )
    client = openai_client(model)
    first = client.chat.completions.create(model="m", messages=USER)
    assert (
        first.choices[0].finish_reason == "length" and first.choices[0].message.content == "cut off"
    )
    assert first.usage.total_tokens == first.usage.prompt_tokens + first.usage.completion_tokens
    second = client.chat.completions.create(model="m", messages=USER)
    assert second.choices[0].message.refusal == "No." and second.choices[0].message.content is None
    third = client.chat.completions.create(model="m", messages=USER)
    (call,) = third.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == BASH_ARGS
    with pytest.raises(openai.BadRequestError, match="no step of scripted model 'clients'"):
        client.chat.completions.create(model="m", messages=USER, stream=True)
    assert len(model.unmatched) == 1 and "last user text 'hi'" in model.failures[0]


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (529, openai.InternalServerError),
    ],
)
def test_openai_errors_raise_the_clients_own_exceptions(
    status: int, error: type[Exception]
) -> None:
    model = script(
        {"type": "error", "status": status, "message": f"scripted {status}"},
        {"type": "error", "status": status, "message": f"again {status}"},
    )
    client = openai_client(model)
    with pytest.raises(error, match=f"scripted {status}"):
        client.chat.completions.create(model="m", messages=USER, stream=True)
    with pytest.raises(error, match=f"again {status}"):
        client.responses.create(model="m", input="hi")


def test_openai_models_list() -> None:
    model = ScriptedModel(ModelScript.from_dict({"models": ["a", "b"]}))
    assert [m.id for m in openai_client(model).models.list()] == ["a", "b"]
    assert [m.id for m in anthropic_client(model).models.list()] == ["a", "b"]


# --- OpenAI Responses ------------------------------------------------------------------


def test_openai_responses_stream_events_and_final_response() -> None:
    model = script(*TEXT_AND_TOOLS)
    client = openai_client(model)
    events = list(client.responses.create(model="codex-test", input="hi", stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) > 1 and "".join(deltas) == "Hello there, I am a scripted model."
    input_items: Any = [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ]
    with client.responses.stream(model="codex-test", input=input_items) as stream:
        arg_deltas = [e.delta for e in stream if e.type == "response.function_call_arguments.delta"]
        final = stream.get_final_response()
    assert len(arg_deltas) > 1
    assert final.output_text == "Running two tools." and final.status == "completed"
    calls = [item for item in final.output if item.type == "function_call"]
    assert [(c.call_id, c.name) for c in calls] == [("call_a", "bash"), ("call_0007", "read")]
    assert json.loads(calls[0].arguments) == BASH_ARGS
    assert final.usage is not None and final.usage.output_tokens > 0


def test_openai_responses_without_stream_and_matching_a_tool_result() -> None:
    model = script(
        {"type": "reply", "text": "after the tool", "when": {"tool_result_for": "call_1"}},
        {"type": "refusal", "text": "No way."},
    )
    client = openai_client(model)
    refused = client.responses.create(model="m", input="hi")
    assert refused.output[0].content[0].refusal == "No way."
    tool_output: Any = [{"type": "function_call_output", "call_id": "call_1", "output": "ok"}]
    answer = client.responses.create(model="m", input=tool_output)
    assert answer.output_text == "after the tool" and answer.id.startswith("resp_")


# --- Anthropic Messages ----------------------------------------------------------------


def test_anthropic_stream_text_tool_use_and_usage() -> None:
    model = script(*TEXT_AND_TOOLS)
    client = anthropic_client(model)
    with client.messages.stream(model="claude-test", max_tokens=100, messages=USER) as stream:
        texts = list(stream.text_stream)
        first = stream.get_final_message()
    assert len(texts) > 1 and "".join(texts) == "Hello there, I am a scripted model."
    assert first.stop_reason == "end_turn" and first.model == "claude-test"
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0
    with client.beta.messages.stream(model="claude-test", max_tokens=100, messages=USER) as stream:
        second = stream.get_final_message()
    assert second.stop_reason == "tool_use"
    tools = [b for b in second.content if b.type == "tool_use"]
    assert [(b.id, b.name) for b in tools] == [("call_a", "bash"), ("toolu_0003", "read")]
    assert tools[0].input == BASH_ARGS
    headers = dict(model.requests[1].headers)
    secret = headers.get("x-api-key", headers.get("authorization"))
    assert secret == "<redacted>" and "sk-ant-secret" not in repr(model.requests)


def test_anthropic_without_stream_refusal_count_tokens_and_errors() -> None:
    model = script(
        {"type": "refusal", "text": "I won't."},
        {"type": "error", "status": 529, "message": "Overloaded"},
        {"type": "error", "status": 429, "message": "slow down"},
    )
    client = anthropic_client(model)
    refused = client.messages.create(model="m", max_tokens=10, messages=USER)
    assert refused.stop_reason == "refusal" and refused.content[0].text == "I won't."
    counted = client.messages.count_tokens(model="m", messages=USER)
    assert counted.input_tokens > 0
    with pytest.raises(anthropic.OverloadedError, match="Overloaded") as overloaded:
        client.messages.create(model="m", max_tokens=10, messages=USER, stream=True)
    assert overloaded.value.body["error"]["type"] == "overloaded_error"
    with pytest.raises(anthropic.RateLimitError, match="slow down"):
        client.messages.create(model="m", max_tokens=10, messages=USER)


# --- Gemini ----------------------------------------------------------------------------


def test_gemini_generate_content_stream_and_not() -> None:
    model = script(*TEXT_AND_TOOLS, {"type": "reply", "text": "plain answer"})
    client = gemini_client(model)
    pieces = list(client.models.generate_content_stream(model="gemini-test", contents="hi"))
    assert len(pieces) > 1 and "".join(p.text or "" for p in pieces) == (
        "Hello there, I am a scripted model."
    )
    last = pieces[-1]
    assert last.candidates[0].finish_reason == genai_types.FinishReason.STOP
    assert last.usage_metadata is not None and last.usage_metadata.total_token_count
    with_tools = list(client.models.generate_content_stream(model="gemini-test", contents="hi"))
    calls = [c for p in with_tools for c in p.function_calls or []]
    assert [(c.name, c.args) for c in calls] == [
        ("bash", BASH_ARGS),
        ("read", {"path": "README.md"}),
    ]
    whole = client.models.generate_content(model="gemini-test", contents="hi")
    assert whole.text == "plain answer" and whole.model_version == "gemini-test"
    assert model.requests[0].path.endswith("/models/gemini-test:streamGenerateContent")
    assert model.requests[0].query == {"alt": "sse"}
    assert dict(model.requests[0].headers)["x-goog-api-key"] == "<redacted>"


def test_gemini_schema_requests_get_an_object_built_from_the_schema() -> None:
    # Gemini CLI's router: a response schema; any plain text would be retried forever.
    model = script({"type": "reply", "text": "the real turn"})
    client = gemini_client(model)
    schema = {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "model_choice": {"type": "string", "enum": ["flash", "pro"]},
            "unrequired": {"type": "integer"},
        },
        "required": ["reasoning", "model_choice"],
    }
    config = genai_types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=schema
    )
    routed = client.models.generate_content(model="flash-lite", contents="route", config=config)
    assert json.loads(routed.text or "") == {"reasoning": "scripted", "model_choice": "flash"}
    # The schema request used no step.
    assert client.models.generate_content(model="pro", contents="hi").text == "the real turn"
    assert client.models.count_tokens(model="pro", contents="hi").total_tokens
    assert [m.name for m in client.models.list()] == ["models/scripted-model"]
    model.check(all_steps_used=True)


def test_gemini_errors_and_refusal() -> None:
    model = script(
        {"type": "error", "status": 429, "message": "quota gone"},
        {"type": "error", "status": 500, "message": "boom"},
        {"type": "refusal", "text": "no"},
    )
    client = gemini_client(model)
    with pytest.raises(genai_errors.ClientError, match="quota gone") as quota:
        client.models.generate_content(model="g", contents="hi")
    assert quota.value.code == 429 and quota.value.status == "RESOURCE_EXHAUSTED"
    with pytest.raises(genai_errors.ServerError, match="boom"):
        list(client.models.generate_content_stream(model="g", contents="hi"))
    refused = client.models.generate_content(model="g", contents="hi")
    assert refused.candidates[0].finish_reason == genai_types.FinishReason.SAFETY


def test_errors_in_the_middle_of_a_stream() -> None:
    mid = {"type": "error", "status": 529, "message": "overloaded mid-stream", "mid_stream": True}
    model = script(*[mid] * 4)
    chat = openai_client(model).chat.completions.create(model="m", messages=USER, stream=True)
    with pytest.raises(openai.APIError, match="overloaded mid-stream"):
        list(chat)
    events = list(openai_client(model).responses.create(model="m", input="hi", stream=True))
    failed = events[-1]
    assert failed.type == "response.failed" and failed.response.error is not None
    assert failed.response.error.message == "overloaded mid-stream"
    claude = anthropic_client(model)
    with (
        pytest.raises(anthropic.APIStatusError, match="overloaded mid-stream"),
        claude.messages.stream(model="m", max_tokens=10, messages=USER) as stream,
    ):
        list(stream)
    gemini = gemini_client(model).models.generate_content_stream(model="g", contents="hi")
    with pytest.raises(genai_errors.ServerError, match="overloaded mid-stream"):
        list(gemini)
    assert [r.status for r in model.requests] == [200] * 4
