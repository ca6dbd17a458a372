"""Record, then replay, with the providers' official clients on real sockets: the
upstream is a scripted model on 127.0.0.1 (no network), the recorder and then the
replay sit between it and the client. What the client reads (streamed text, a tool
call split over deltas, usage) is the same from the upstream, the recorder and the
replay."""

from __future__ import annotations

from typing import Any

import anthropic
import openai

from acp_lite.models import ModelCassette, Redaction, ReplayModel, ScriptedModel
from acp_lite.models.server import run_in_thread
from acp_lite.models.upstream import RecordingModel

STEPS = [
    {"type": "reply", "chunks": ["streamed ", "through ", "the ", "recorder"]},
    {"type": "tool_calls", "calls": [{"name": "bash", "arguments": {"command": "ls -la"}}]},
    {"type": "reply", "text": "from anthropic's api"},
]


def openai_turns(url: str) -> list[Any]:
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-openai-0123456789", max_retries=0)
    out: list[Any] = []
    for text in ("hi", "run ls"):
        stream = client.chat.completions.create(
            model="gpt-x",
            messages=[{"role": "user", "content": text}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        out.append("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))
        deltas = [
            t.function
            for c in chunks
            if c.choices and c.choices[0].delta.tool_calls
            for t in c.choices[0].delta.tool_calls
            if t.function is not None
        ]
        # A tool call comes in deltas: its name first, its arguments in pieces.
        out.append(
            [([d.name for d in deltas if d.name], "".join(d.arguments or "" for d in deltas))]
            if deltas
            else []
        )
        out.append([c.choices[0].finish_reason for c in chunks if c.choices][-1])
    return out


def anthropic_turn(url: str) -> list[Any]:
    client = anthropic.Anthropic(base_url=url, api_key="sk-ant-0123456789", max_retries=0)
    with client.messages.stream(
        model="claude-x", max_tokens=100, messages=[{"role": "user", "content": "hello"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    return [text, final.stop_reason]


def test_official_clients_read_the_same_from_upstream_recorder_and_replay() -> None:
    upstream = ScriptedModel({"name": "upstream", "steps": STEPS})
    recorder_model: RecordingModel
    with run_in_thread(upstream) as up:
        recorder_model = RecordingModel(up.url, redaction=Redaction(secrets={}))
        with run_in_thread(recorder_model) as recorder:
            recorded = openai_turns(recorder.url) + anthropic_turn(recorder.url)
    assert recorded == [
        "streamed through the recorder",
        [],
        "stop",
        "",
        [(["bash"], '{"command":"ls -la"}')],
        "tool_calls",
        "from anthropic's api",
        "end_turn",
    ]
    recorder_model.check()
    upstream.check(all_steps_used=True)
    text = recorder_model.cassette().dumps()
    assert "sk-openai-0123456789" not in text and "sk-ant-0123456789" not in text
    cassette = ModelCassette.loads(text)
    assert [i.response.events is not None for i in cassette.interactions] == [True] * 3
    replay = ReplayModel(cassette, redaction=Redaction(secrets={}))
    with run_in_thread(replay) as replaying:  # the upstream is gone
        replayed = openai_turns(replaying.url) + anthropic_turn(replaying.url)
    assert replayed == recorded
    replay.check(all_steps_used=True)
