"""A v1 session's turns stay apart in its snapshot: v1 messages have no messageId,
so the turn boundaries separate them, as in the model (issue 24 item 11)."""

from __future__ import annotations

import pytest

from acp_lite import connect_in_memory
from acp_lite.testing import InProcessAgent
from pytest_acp.normalize import normalize


@pytest.fixture(scope="module")
def v1_run() -> tuple[object, object, list[str]]:
    with connect_in_memory(InProcessAgent(protocol=1)) as client:
        session = client.new_session(cwd="/tmp")
        for text in ("one", "two", "three"):
            session.run(text)
        model_texts = [
            "".join(b.text for b in e.content if hasattr(b, "text"))
            for e in session.timeline
            if e.kind == "agent_message"
        ]
        return session, [e.to_record() for e in client.transcript.entries()], model_texts


def _texts(payloads: list[dict[str, object]]) -> list[str]:
    out = []
    for p in payloads:
        content = p.get("content")
        items = content if isinstance(content, list) else [content]
        out.append("".join(str(c.get("text", "")) for c in items if isinstance(c, dict)))
    return out


@pytest.mark.parametrize("source", ["session", "transcript"])
@pytest.mark.parametrize("view", ["merged", "final"])
def test_each_v1_turn_keeps_its_own_agent_message(
    v1_run: tuple[object, object, list[str]], source: str, view: str
) -> None:
    session, records, model_texts = v1_run
    data = session if source == "session" else records
    messages = [
        p
        for p in normalize(data, view)
        if p.get("sessionUpdate") in ("agent_message", "agent_message_chunk")
    ]
    assert _texts(messages) == model_texts == ["one", "two", "three"]
