"""ScriptedModel: routing, step matching, bad input, recording, check(), and the
stream shapes the clients do not look at closely (pauses, hangs, [DONE])."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

import pytest

from acp_lite.models import (
    EventStream,
    Hang,
    HttpRequest,
    HttpResponse,
    Pause,
    ScriptedModel,
    SseEvent,
)
from acp_lite.models.providers.base import object_for_schema


def post(
    path: str, body: Any, *, query: dict[str, str] | None = None, **headers: str
) -> HttpRequest:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    pairs = tuple((k.replace("_", "-"), v) for k, v in headers.items())
    return HttpRequest("POST", path, query or {}, pairs, raw)


def chat(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], **extra}


def events(answer: HttpResponse | EventStream) -> list[Any]:
    assert isinstance(answer, EventStream)
    return list(answer.items)


def data(item: Any) -> Any:
    assert isinstance(item, SseEvent)
    return item.data if item.data == "[DONE]" else json.loads(item.data)


def test_steps_match_in_order_or_by_predicate() -> None:
    model = ScriptedModel(
        {
            "name": "pred",
            "steps": [
                {"type": "reply", "text": "for the tool", "when": {"tool_result_for": "c9"}},
                {"type": "reply", "text": "first"},
                {"type": "reply", "text": "about cats", "when": {"last_user_text_contains": "cat"}},
                {"type": "reply", "text": "gemini only", "when": {"api": "gemini"}, "repeat": True},
            ],
        }
    )

    def text(answer: HttpResponse | EventStream) -> str:
        assert isinstance(answer, HttpResponse)
        return str(json.loads(answer.body)["choices"][0]["message"]["content"])

    assert text(model(post("/v1/chat/completions", chat("tell me about a cat")))) == "first"
    assert text(model(post("/v1/chat/completions", chat("a cat again")))) == "about cats"
    tool = chat(messages=[{"role": "tool", "tool_call_id": "c9", "content": "ok"}])
    assert text(model(post("/v1/chat/completions", tool))) == "for the tool"
    gemini = {"contents": [{"role": "user", "parts": [{"text": "x"}]}]}
    for _ in range(2):
        answer = model(post("/v1beta/models/g:generateContent", gemini))
        assert isinstance(answer, HttpResponse)
        assert json.loads(answer.body)["candidates"][0]["content"]["parts"] == [
            {"text": "gemini only"}
        ]
    assert [r.step for r in model.requests] == [1, 2, 0, 3, 3]
    model.check(all_steps_used=True)


def test_an_unmatched_request_answers_a_provider_error_and_fails_check() -> None:
    model = ScriptedModel({"name": "tiny", "steps": [{"type": "reply", "when": {"api": "gemini"}}]})
    answer = model(
        post("/v1/messages", {"model": "claude", "messages": [{"role": "user", "content": "yo"}]})
    )
    assert isinstance(answer, HttpResponse) and answer.status == 400
    error = json.loads(answer.body)
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert "scripted model 'tiny'" in error["error"]["message"]
    assert "steps left: steps[0] (reply) when api='gemini'" in error["error"]["message"]
    assert [r.path for r in model.unmatched] == ["/v1/messages"]
    with pytest.raises(AssertionError) as caught:
        model.check()
    shown = str(caught.value)
    assert "scripted model 'tiny': 1 problem(s)" in shown
    assert "request #0: POST /v1/messages" in shown and '"content": "yo"' in shown


def test_bad_input_answers_the_right_status() -> None:
    model = ScriptedModel({"steps": [{"type": "reply", "repeat": True}]})
    not_json = model(post("/v1/chat/completions", b"{nope"))
    assert isinstance(not_json, HttpResponse) and not_json.status == 400
    assert "not JSON" in json.loads(not_json.body)["error"]["message"]
    not_object = model(post("/v1/messages", [1, 2]))
    assert isinstance(not_object, HttpResponse) and not_object.status == 400
    unknown = model(post("/v2/teleport", {}))
    assert isinstance(unknown, HttpResponse) and unknown.status == 404
    message = json.loads(unknown.body)["error"]["message"]
    assert "/v2/teleport" in message and "POST /v1/chat/completions" in message
    wrong = model(HttpRequest("GET", "/v1/chat/completions"))
    assert isinstance(wrong, HttpResponse) and wrong.status == 405
    assert len(model.failures) == 2  # the bodies; an unknown path is recorded only
    assert [r.status for r in model.requests] == [400, 400, 404, 405]
    assert model.requests[0].body == "{nope"


def test_secrets_are_redacted_and_the_rest_recorded() -> None:
    model = ScriptedModel({"steps": [{"type": "reply"}]})
    model(
        post(
            "/v1beta/models/g:generateContent",
            {"contents": []},
            query={"key": "goog-secret"},
            authorization="Bearer sk",
            x_goog_api_key="goog",
            cookie="c",
            user_agent="gemini-cli",
        )
    )
    (request,) = model.requests
    assert dict(request.headers) == {
        "authorization": "<redacted>",
        "x-goog-api-key": "<redacted>",
        "cookie": "<redacted>",
        "user-agent": "gemini-cli",
    }
    assert request.query == {"key": "<redacted>"} and request.api == "gemini"
    assert request.body == {"contents": []}


def test_requests_can_be_read_while_the_server_thread_answers() -> None:
    model = ScriptedModel({"steps": [{"type": "reply", "text": "x", "repeat": True}]})
    seen: list[int] = []

    def serve() -> None:
        for _ in range(200):
            model(post("/v1/chat/completions", chat()))

    thread = threading.Thread(target=serve)
    thread.start()
    while thread.is_alive():
        seen.append(len(model.requests))
    thread.join()
    assert seen == sorted(seen) and len(model.requests) == 200
    assert [r.index for r in model.requests] == list(range(200))


def test_openai_chat_stream_shape_pauses_and_done() -> None:
    model = ScriptedModel(
        {"steps": [{"type": "reply", "chunks": ["a", "b"], "delay": 2, "chunk_delay": 0.5}]}
    )
    items = events(model(post("/v1/chat/completions", chat(stream=True))))
    assert items[0] == Pause(2.0) and items[3] == Pause(0.5)
    assert data(items[-1]) == "[DONE]"
    chunks = [data(i) for i in items if isinstance(i, SseEvent)][:-1]
    assert {c["id"] for c in chunks} == {"chatcmpl-0001"}
    assert all("usage" not in c for c in chunks)  # no include_usage: no usage key
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_hang_streams_its_text_then_hangs_in_every_api() -> None:
    model = ScriptedModel({"steps": [{"type": "hang", "text": "thinking", "repeat": True}]})
    requests = [
        post("/v1/chat/completions", chat(stream=True)),
        post("/v1/responses", {"model": "m", "input": "hi", "stream": True}),
        post("/v1/messages", {"model": "m", "messages": [], "stream": True}),
        post("/v1beta/models/g:streamGenerateContent", {"contents": []}, query={"alt": "sse"}),
    ]
    for request in requests:
        items = events(model(request))
        assert items[-1] == Hang(), request.path
        assert "thinking" in "".join(i.data for i in items if isinstance(i, SseEvent))
    # Without a stream: the headers, then nothing.
    whole = events(model(post("/v1/chat/completions", chat())))
    assert whole == [Hang()]


def test_anthropic_and_responses_event_names() -> None:
    model = ScriptedModel(
        {"steps": [{"type": "tool_call", "name": "t", "arguments": {"a": "x" * 30}}] * 2}
    )
    items = events(model(post("/v1/messages", {"model": "m", "messages": [], "stream": True})))
    names = [i.event for i in items if isinstance(i, SseEvent)]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names.count("content_block_delta") == 3 and names[-2:] == [
        "message_delta",
        "message_stop",
    ]
    assert all(data(i)["type"] == i.event for i in items if isinstance(i, SseEvent))
    items = events(model(post("/v1/responses", {"model": "m", "input": [], "stream": True})))
    names = [i.event for i in items if isinstance(i, SseEvent)]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]


def test_error_shapes_per_provider() -> None:
    model = ScriptedModel(
        {"steps": [{"type": "error", "status": 529, "message": "busy", "repeat": True}]}
    )
    answers = {
        "chat": model(post("/v1/chat/completions", chat())),
        "anthropic": model(post("/v1/messages", {"model": "m", "messages": []})),
        "gemini": model(post("/v1beta/models/g:generateContent", {"contents": []})),
    }
    bodies = {}
    for name, answer in answers.items():
        assert isinstance(answer, HttpResponse) and answer.status == 529
        bodies[name] = json.loads(answer.body)
    assert bodies["chat"]["error"] == {
        "message": "busy",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert bodies["anthropic"] == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "busy"},
    }
    assert bodies["gemini"] == {"error": {"code": 529, "message": "busy", "status": "UNAVAILABLE"}}


def test_object_for_schema() -> None:
    schema = {
        "type": "OBJECT",
        "properties": {
            "n": {"type": "INTEGER"},
            "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "minItems": 2},
            "kind": {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
            "inner": {"properties": {"x": {"type": ["null", "number"]}}},
        },
    }
    assert object_for_schema(schema) == {
        "n": 0,
        "tags": ["scripted", "scripted"],
        "kind": False,
        "inner": {"x": 0},
    }
    assert object_for_schema({"const": "c"}) == "c"


def test_gemini_stream_without_sse_is_a_json_array_and_claude_beta_is_messages() -> None:
    model = ScriptedModel({"steps": [{"type": "reply", "text": "one two three four"}] * 2})
    answer = model(post("/v1beta/models/g:streamGenerateContent", {"contents": []}))
    assert isinstance(answer, HttpResponse)
    array = json.loads(answer.body)
    assert [r["candidates"][0]["content"]["parts"][0]["text"] for r in array] == [
        "one two three ",
        "four",
    ]
    assert array[-1]["candidates"][0]["finishReason"] == "STOP"
    beta = model(post("/v1/messages", {"model": "m", "messages": []}, query={"beta": "true"}))
    assert isinstance(beta, HttpResponse) and json.loads(beta.body)["type"] == "message"
    assert model.requests[1].query == {"beta": "true"}


def test_the_package_needs_no_client_and_no_trio() -> None:
    code = (
        "import sys, acp_lite.models, acp_lite.models.scripted\n"
        "heavy = [m for m in ('openai', 'anthropic', 'google', 'httpx2', 'trio', 'h11')"
        " if m in sys.modules]\n"
        "assert heavy == [], heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_a_delay_holds_a_whole_answer_as_it_holds_a_stream() -> None:
    model = ScriptedModel(
        {"name": "slow", "steps": [{"type": "reply", "text": "late", "delay": 2.5, "repeat": True}]}
    )
    whole = model(post("/v1/chat/completions", chat()))
    assert isinstance(whole, HttpResponse) and whole.delay == 2.5
    streamed = events(model(post("/v1/chat/completions", chat(stream=True))))
    assert streamed[0] == Pause(2.5)
