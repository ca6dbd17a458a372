"""The scripted model (``ScriptedModel``) behind the real server, on a socket.

tests/models/test_providers_clients.py checks every API's shapes against the official
clients through an in-process transport; here the same handler goes over TCP: HTTP
framing, Gemini's ``model:method?alt=sse`` target, a script's delays really slept,
a scripted hang that the client gives up on, and a body that is not JSON.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from acp_lite.models import ModelScript, ScriptedModel
from acp_lite.models.server import ModelServer, run_in_thread

USER: Any = [{"role": "user", "content": "hi"}]
ARGS = {"command": "ls -la", "cwd": "/tmp"}


@pytest.fixture
def served() -> Iterator[tuple[ScriptedModel, ModelServer]]:
    steps = [
        {"type": "hang", "text": "thinking", "when": {"last_user_text_contains": "hang"}},
        {"type": "reply", "text": "from gemini", "when": {"api": "gemini"}},
        {"type": "tool_call", "name": "bash", "arguments": ARGS, "id": "call_1"},
        {"type": "reply", "text": "three short words", "chunk_delay": 0.005},
    ]
    model = ScriptedModel(ModelScript.from_dict({"name": "socket", "steps": steps}))
    with run_in_thread(model) as server:
        yield model, server


def connection(server: ModelServer, timeout: float = 5.0) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)


def test_openai_streams_tool_call_deltas_and_text_over_tcp(
    served: tuple[ScriptedModel, ModelServer],
) -> None:
    model, server = served
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="sk-secret", max_retries=0)
    with client.chat.completions.stream(model="gpt-test", messages=USER) as stream:
        final = stream.get_final_completion()
    (call,) = final.choices[0].message.tool_calls or []
    assert final.choices[0].finish_reason == "tool_calls"
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_1",
        "bash",
        ARGS,
    )
    chunks = list(client.chat.completions.create(model="gpt-test", messages=USER, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "three short words"
    )
    client.close()
    assert [r.path for r in model.requests] == ["/v1/chat/completions"] * 2
    assert dict(model.requests[0].headers)["authorization"] == "<redacted>"


def test_gemini_stream_target_and_a_body_that_is_not_json(
    served: tuple[ScriptedModel, ModelServer],
) -> None:
    model, server = served
    http_ = connection(server)
    body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    http_.request("POST", "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", body=body)
    response = http_.getresponse()
    assert response.status == 200 and response.getheader("content-type") == "text/event-stream"
    events = [
        json.loads(line.removeprefix(b"data: "))
        for line in response.read().split(b"\n")
        if line.startswith(b"data: ")
    ]
    text = "".join(
        p.get("text", "") for e in events for p in e["candidates"][0]["content"]["parts"]
    )
    assert text == "from gemini"
    http_.request("POST", "/v1/messages", body=b"{not json", headers={"x-api-key": "k"})
    refused = http_.getresponse()  # the same connection, kept alive
    assert refused.status == 400 and b"the request body is not JSON" in refused.read()
    http_.close()
    assert model.requests[0].query == {"alt": "sse"}
    assert len(model.failures) == 1


def test_a_scripted_hang_outlasts_the_clients_timeout(
    served: tuple[ScriptedModel, ModelServer],
) -> None:
    _, server = served
    client = openai.OpenAI(
        base_url=server.url + "/v1", api_key="sk-secret", max_retries=0, timeout=0.2
    )
    messages: Any = [{"role": "user", "content": "please hang"}]
    seen: list[str] = []
    with pytest.raises(openai.APITimeoutError):  # the stream times out midway
        for chunk in client.chat.completions.create(model="m", messages=messages, stream=True):
            seen.extend(c.delta.content or "" for c in chunk.choices)
    assert "".join(seen) == "thinking"
    client.close()
    ping = connection(server)
    ping.request("GET", "/v1/models")
    assert ping.getresponse().status == 200  # still serving
    ping.close()
