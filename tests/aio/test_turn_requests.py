"""What a turn says about the agent's requests and tool calls.

``turn.updates`` holds only what the agent streamed; a permission request (or an
elicitation) is its own record on the turn and the model (``turn.requests``,
``turn.permission_requests``, ``turn.elicitations``, ``session.model.requests``)
with the answer the client sent. ``turn.tool_calls`` are the tool calls the turn
created or updated, typed like ``session.model.tool_calls``.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite import aio, connect_in_memory, permissions
from acp_lite.aio._turn_view import EventSlice
from acp_lite.model import ElicitationRecord, PermissionRequestRecord, ToolCallEntity

from .conftest import FAST, inproc, inproc_scripted

PERMISSION = "session/request_permission"


@pytest.mark.trio
async def test_async_turn_keeps_the_permission_request_apart_from_the_updates() -> None:
    async with aio.connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, on_permission=permissions.allow_once
    ) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("go")
    assert {e.source for e in turn.updates} == {"session/update"}
    # The model still applied the request's tool call (and says where it came from).
    assert [e.source for e in session.model.events].count(PERMISSION) == 1
    assert len(turn.updates) == len(session.model.events) - 1
    assert [e.index for e in turn.updates] == [
        e.index for e in session.model.events if e.source == "session/update"
    ]
    assert [e.index for e in turn.updates[2:4]] == [e.index for e in list(turn.updates)[2:4]]
    assert turn.updates[-1].tag == "state_update"

    (request,) = turn.permission_requests
    assert isinstance(request, PermissionRequestRecord)
    assert list(turn.requests) == [request] and turn.elicitations == ()
    assert session.model.requests.permissions == [request]
    assert (request.title, request.tool_call_id, request.status) == (
        "Allow writing notes.txt?",
        "call-1",
        "answered",
    )
    assert [o.kind for o in request.options] == ["allow_once", "allow_always", "reject_once"]
    assert (request.outcome, request.option_id) == ("selected", "allow")
    assert request.option is not None and request.option.kind == "allow_once"
    assert request.response is not None and request.response.outcome.outcome == "selected"
    # In the stream: after the pending tool call and the states before it.
    assert [e.tag for e in session.model.events[: request.event_index]][-1] == "state_update"
    assert session.model.events[request.event_index].source == PERMISSION

    (call,) = turn.tool_calls
    assert isinstance(call, ToolCallEntity)
    assert call is session.model.entity("tool_call", "call-1")
    assert call.status == "completed"


def test_blocking_turn_has_the_same_records() -> None:
    with connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, on_permission=permissions.reject
    ) as client:
        session = client.new_session(cwd="/tmp")
        turn = session.run("go")
        second = session.run("again")
    assert [r.option_id for r in turn.permission_requests] == ["reject"]
    assert [r.option_id for r in second.permission_requests] == ["reject"]
    assert turn.permission_requests[0] is not second.permission_requests[0]
    assert [c.status for c in turn.tool_calls] == ["failed"]
    assert PERMISSION not in {e.source for e in second.updates}


@pytest.mark.trio
async def test_elicitation_record_and_cancelled_permission() -> None:
    async with aio.connect_in_memory(
        inproc("elicitation"), limits=FAST, on_elicitation=permissions.accept({"name": "Ada"})
    ) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("hi")
    (asked,) = turn.elicitations
    assert isinstance(asked, ElicitationRecord) and turn.permission_requests == ()
    assert (asked.message, asked.action, asked.content) == (
        "What is your name?",
        "accept",
        {"name": "Ada"},
    )
    assert asked.response is not None and asked.response.action == "accept"
    assert turn.text == "Thanks!" and turn.tool_calls == ()


@pytest.mark.trio
async def test_request_status_failed_and_withdrawn() -> None:
    def broken(request: Any, session: Any) -> str:
        raise RuntimeError("no")

    async with aio.connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, on_permission=broken
    ) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("go")
    (failed,) = turn.permission_requests
    assert failed.status == "failed" and failed.outcome is None
    assert failed.error is not None and "RuntimeError: no" in str(failed.error["message"])

    release = threading.Event()

    def waits(request: Any, session: Any) -> Any:
        release.wait(10)
        return permissions.decline(request, session)

    try:
        async with aio.connect_in_memory(
            inproc("elicitation"), limits=FAST, on_elicitation=waits
        ) as client:
            session = await client.new_session(cwd="/tmp")
            await session.submit("hi")
            with trio.fail_after(5):
                while not session.model.requests:
                    await trio.sleep(0.01)
            await session.cancel()
            await session.wait_idle()
            (record,) = session.model.requests
            # The agent withdrew it ($/cancel_request) before anyone answered.
            assert record.status == "withdrawn" and record.result is None
    finally:
        release.set()


@settings(max_examples=examples(2))
@given(
    start=st.integers(0, 30),
    length=st.integers(0, 30),
    skip=st.sets(st.integers(0, 70), max_size=8),
)
def test_event_slice_skips_indices_consistently(start: int, length: int, skip: set[int]) -> None:
    events = list(range(70))
    view = EventSlice(events, start, start + length, sorted(skip))  # type: ignore[arg-type]
    expected = [i for i in range(start, start + length) if i not in skip]
    assert list(view) == expected
    assert len(view) == len(expected)
    assert [view[i] for i in range(len(view))] == expected
    assert [view[-i] for i in range(1, len(view) + 1)] == expected[::-1]
    assert view[1:4] == expected[1:4] and view[::2] == expected[::2]
    with pytest.raises(IndexError):
        view[len(expected)]


def test_requests_outside_the_turn_are_not_in_it() -> None:
    # Two turns on one session: each turn's requests are its own (by stream position).
    script = {
        "turns": [
            {"steps": [{"type": "permission", "title": "first"}, {"type": "text", "text": "a"}]},
            {"steps": [{"type": "permission", "title": "second"}, {"type": "text", "text": "b"}]},
        ]
    }
    with connect_in_memory(
        inproc_scripted(script), limits=FAST, on_permission=permissions.allow_once
    ) as client:
        session = client.new_session(cwd="/tmp")
        first, second = session.run("1"), session.run("2")
    assert [r.title for r in first.permission_requests] == ["first"]
    assert [r.title for r in second.permission_requests] == ["second"]
    assert [r.title for r in session.model.requests] == ["first", "second"]
