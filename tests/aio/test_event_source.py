"""Updates the client derives from other messages are marked with their source.

A permission request's ``toolCall`` is applied "exactly like a tool_call_update"
(schema, ``ToolCallPermissionSubject.toolCall``), but the agent never streamed it:
the event log says where it came from, and ``turn.updates`` and snapshots (which
show what the agent streamed) leave it out, as the transcript view does.
"""

from __future__ import annotations

import pytest

from acp_lite import aio, permissions
from acp_lite.model import SessionModel
from acp_lite.protocol import structure_update
from pytest_acp import normalize

from .conftest import FAST, inproc


@pytest.mark.trio
async def test_permission_tool_call_event_is_marked_and_left_out_of_snapshots() -> None:
    async with aio.connect_in_memory(
        inproc("tool_call_permission"), limits=FAST, on_permission=permissions.allow_once
    ) as client:
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("go")
        sources = [e.source for e in session.model.events]
        assert sources.count("session/request_permission") == 1
        derived = next(e for e in session.model.events if e.source != "session/update")
        assert derived.tag == "tool_call_update"
        assert derived.raw["toolCallId"] == "call-1"
        assert {e.source for e in turn.updates} == {"session/update"}
        streamed = [e for e in session.model.events if e.source == "session/update"]
        # The snapshot of the turn equals the snapshot of what came as session/update
        # (with the request line in its place), and of the wire transcript.
        (asked,) = [u for u in normalize(turn.updates, view="raw") if "request" in u]
        assert normalize(turn.updates, view="raw", requests=False) == normalize(
            streamed, view="raw"
        )
        assert normalize(turn.updates, view="raw") == normalize(client.transcript, view="raw")
        assert asked["result"] == {"outcome": {"optionId": "allow", "outcome": "selected"}}


def test_model_source_defaults_to_session_update() -> None:
    model = SessionModel("s")
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "pending"}
    first = model.apply(structure_update(update), raw=update)
    second = model.apply(structure_update(update), raw=update, source="session/request_permission")
    assert first.source == "session/update"
    assert second.source == "session/request_permission"
    assert model.events[1].source == "session/request_permission"
    assert model.entity("tool_call", "t").status == "pending"  # applied all the same
