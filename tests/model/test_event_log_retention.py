"""Limits.max_session_events: a bounded session event log (the
retention of the transcript and event logs is a limits setting)."""

from __future__ import annotations

import pytest

from acp_lite import aio
from acp_lite.limits import Limits
from acp_lite.model import SessionModel
from acp_lite.protocol import structure_update


def chunk(i: int) -> dict[str, object]:
    return {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": f"{i},"},
    }


def test_bounded_log_keeps_the_newest_events_and_the_whole_picture() -> None:
    model = SessionModel("s", max_events=10)
    for i in range(1000):
        update = chunk(i)
        model.apply(structure_update(update), raw=update)
    events = model.events
    assert len(events) == 1000  # absolute: every update received
    assert events.dropped >= 990 - 10 and 10 <= 1000 - events.dropped < 20
    kept = list(events)
    assert [e.index for e in kept] == list(range(events.dropped, 1000))
    assert kept[-1].raw == chunk(999) and events[-1].index == 999
    with pytest.raises(IndexError, match="dropped"):
        events[0]
    assert [e.index for e in events[:]] == [e.index for e in kept]
    # The model's picture is whole: every chunk applied.
    assert model.text() == "".join(f"{i}," for i in range(1000))


def test_unbounded_by_default() -> None:
    model = SessionModel("s")
    for i in range(50):
        update = chunk(i)
        model.apply(structure_update(update), raw=update)
    assert model.events.dropped == 0 and [e.index for e in model.events] == list(range(50))


def test_max_events_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        SessionModel("s", max_events=0)


@pytest.mark.trio
async def test_limits_bound_a_live_session() -> None:
    from acp_lite.testing import InProcessAgent

    limits = Limits(max_session_events=50)
    async with aio.connect_in_memory(InProcessAgent("flood", count=2000), limits=limits) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("go")
        assert turn.stop_reason == "end_turn"
        events = session.model.events
        assert len(events) > 2000 and events.dropped > 1900
        assert len(list(events)) < 100
        assert len(session.model.text()) == len(turn.text) > 0
