"""The opt-in bounded mode of the session model (``Limits.max_message_blocks``,
``Limits.max_session_entities``): what is kept, what is joined, what is let go and
how that is counted."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.core import ClientConnection
from acp_lite.limits import Limits
from acp_lite.model import SessionModel
from acp_lite.protocol import ImageContent, TextContent

from .helpers import chunk, feed, idle, message, state, text, tool

IMAGE = {"type": "image", "data": "AAAA", "mimeType": "image/png"}


def image_chunk(mid: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "messageId": mid, "content": IMAGE}


@settings(max_examples=examples(2))
@given(
    items=st.lists(st.one_of(st.text(max_size=3), st.none()), max_size=60),
    limit=st.integers(1, 6),
    read_every=st.integers(1, 7),
)
def test_joined_blocks_keep_the_text_and_every_other_block(
    items: list[str | None], limit: int, read_every: int
) -> None:
    bounded, whole = SessionModel("s", max_blocks=limit), SessionModel("s")
    for i, item in enumerate(items):
        update = image_chunk("m") if item is None else chunk("m", item)
        feed(bounded, update)
        feed(whole, update)
        if i % read_every == 0:  # reading text between chunks keeps its cache right
            assert (
                bounded.entity("agent_message", "m").text == whole.entity("agent_message", "m").text
            )
    if not items:
        return
    got, want = bounded.entity("agent_message", "m"), whole.entity("agent_message", "m")
    assert got.text == want.text and whole.entity("agent_message", "m").merged == 0

    # The images, in order, with the text between them joined: the same sequence of
    # text runs and images, only the chunk boundaries inside a run are gone.
    def runs(blocks: list[Any]) -> list[Any]:
        out: list[Any] = []
        for b in blocks:
            if isinstance(b, TextContent) and out and isinstance(out[-1], str):
                out[-1] += b.text
            else:
                out.append(b.text if isinstance(b, TextContent) else b)
        return [x for x in out if x != ""]

    assert runs(list(got.content)) == runs(list(want.content))
    assert got.merged == len(want.content) - len(got.content)
    images = sum(item is None for item in items)
    assert len(got.content) <= max(limit, 2 * images + 2) + 1 + len(items).bit_length()
    assert all(isinstance(b, TextContent | ImageContent) for b in got.content)


def test_a_long_stream_stays_within_the_block_limit() -> None:
    model = SessionModel("s", max_blocks=50)
    for i in range(6_000):
        feed(model, chunk("m", "ab"[i % 2]))
    msg = model.entity("agent_message", "m")
    assert msg.text == "ab" * 3_000
    assert len(msg.content) <= 50 + 20  # the limit plus O(log n) joined blocks
    assert msg.merged == 6_000 - len(msg.content)
    # A message update replacing the content starts over: nothing joined.
    feed(model, message("m", ["new"]))
    assert msg.text == "new" and msg.merged == 0 and len(msg.content) == 1


def turn(model: SessionModel, n: int, *extra: dict[str, Any]) -> None:
    """One prompt turn: the submission, its echoed user message, an answer, idle."""
    sub = model.submit(n, [text("hi")])
    feed(model, state("running"), chunk(f"u{n}", "hi", kind="user_message"))
    model.prompt_accepted(n, f"u{n}")
    feed(model, *extra, chunk(f"a{n}", f"answer {n}"), idle("end_turn"))
    assert sub.done


def test_finished_entities_are_let_go_and_counted() -> None:
    model = SessionModel("s", max_entities=3)
    turn(model, 0, tool("live", status="in_progress"), tool("done", status="completed"))
    for n in range(1, 12):
        turn(model, n)
    kept = model.timeline
    # At least the newest 3, at most twice as many; the live tool call stays.
    assert 3 <= len(kept) < 2 * 3 + 2
    assert model.entity("tool_call", "live").status == "in_progress"
    assert model.get_entity("tool_call", "done") is None
    assert model.get_entity("user_message", "u0") is None
    assert model.entity("agent_message", "a11").text == "answer 11"
    total = 2 * 12 + 2
    assert model.dropped_entities == total - len(kept)
    positions = [e.position for e in kept]
    assert positions == sorted(positions) and positions[-1] == total - 1
    # Submissions of let-go user messages follow; the newest ones are kept.
    assert model.dropped_submissions > 0
    assert len(model.submissions) + model.dropped_submissions == 12
    assert model.submissions[-1].request_id == 11
    assert model.text() == "\n".join(e.text for e in kept if e.kind == "agent_message")
    # Nothing was reported as missing: the end findings judge what is kept.
    assert model.finish() == []


def test_entities_of_unfinished_work_are_kept() -> None:
    model = SessionModel("s", max_entities=1)
    for n in range(6):  # no idle: the foreground work never ended
        feed(model, chunk(f"a{n}", "x"))
    assert model.dropped_entities == 0 and len(model.timeline) == 6


def test_unbounded_by_default_and_one_switch() -> None:
    model = SessionModel("s")
    for n in range(30):
        turn(model, n)
    assert model.dropped_entities == 0 and len(model.timeline) == 60
    bounded = Limits.bounded()
    assert bounded.max_message_blocks and bounded.max_session_entities
    assert bounded.max_transcript_entries and bounded.max_session_events and bounded.max_events
    assert Limits().max_message_blocks is None and Limits().max_session_entities is None
    # The connection gives each session's model the bounds.
    conn = ClientConnection(bounded)
    state_ = conn.router.new_state("s1")
    assert state_.model._store.max_blocks == bounded.max_message_blocks
    assert state_.model._max_entities == bounded.max_session_entities
    with pytest.raises(ValueError):
        SessionModel("s", max_blocks=0)
