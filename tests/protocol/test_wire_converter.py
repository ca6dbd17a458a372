"""Smoke tests of the converter entry points (docs/architecture.md, "Wire layer")."""

from __future__ import annotations

from typing import Any

import pytest

from acp_lite.protocol import (
    UNSET,
    AgentMessage,
    AgentMessageChunk,
    IdleStateUpdate,
    SessionUpdate,
    TextContent,
    ToolCallUpdate,
    UnrecognizedContentBlock,
    UnrecognizedSessionUpdate,
    UnrecognizedStateUpdate,
    WireError,
    converter,
    structure_update,
    unstructure,
)

UPDATES: list[dict[str, Any]] = [
    {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "text", "text": "hi"},
    },
    {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "_x", "a": [1]},
        "k": 1,
    },
    {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    {"sessionUpdate": "state_update", "state": "paused", "background": []},
    {"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": None, "status": "new_status"},
    {"sessionUpdate": "future_thing", "x": {"y": 1}},
]


@pytest.mark.parametrize("wire", UPDATES)
def test_converter_round_trips_updates(wire: dict[str, Any]) -> None:
    obj: SessionUpdate = converter.structure(wire, SessionUpdate)  # type: ignore[arg-type]
    assert converter.unstructure(obj) == wire
    assert unstructure(structure_update(wire)) == wire


def test_types_and_fallbacks() -> None:
    chunk = structure_update(UPDATES[0])
    assert isinstance(chunk, AgentMessageChunk)
    assert chunk.content == TextContent(text="hi")
    assert chunk.meta is UNSET
    other = structure_update(UPDATES[1])
    assert isinstance(other, AgentMessageChunk)
    assert isinstance(other.content, UnrecognizedContentBlock)
    assert other.content.type == "_x" and other.extra == {"k": 1}
    assert isinstance(structure_update(UPDATES[2]), IdleStateUpdate)
    state = structure_update(UPDATES[3])
    assert isinstance(state, UnrecognizedStateUpdate) and state.background == []
    tool = structure_update(UPDATES[4])
    assert isinstance(tool, ToolCallUpdate)
    assert (tool.title, tool.name, tool.status) == (None, UNSET, "new_status")
    unknown = structure_update(UPDATES[5])
    assert isinstance(unknown, UnrecognizedSessionUpdate)
    assert (unknown.session_update, unknown.raw, unknown.error) == (
        "future_thing",
        UPDATES[5],
        None,
    )


def test_malformed_known_update_is_kept_with_error() -> None:
    wire = {"sessionUpdate": "agent_message_chunk", "messageId": 7, "content": {"type": "text"}}
    got = structure_update(wire)
    assert isinstance(got, UnrecognizedSessionUpdate)
    assert got.error is not None and "messageId" in got.error
    assert unstructure(got) == wire


def test_update_without_tag_is_kept_with_error() -> None:
    got = structure_update({"messageId": "m"})
    assert isinstance(got, UnrecognizedSessionUpdate)
    assert got.session_update == "" and got.error is not None
    assert unstructure(got) == {"messageId": "m"}


def test_non_object_raises_wire_error() -> None:
    with pytest.raises(WireError):
        structure_update([1, 2])


def test_variant_structured_directly_checks_its_tag() -> None:
    wire = {
        "sessionUpdate": "agent_message",
        "messageId": "m",
        "content": {"type": "text", "text": "x"},
    }
    with pytest.raises(WireError, match="sessionUpdate"):
        converter.structure(wire, AgentMessageChunk)
    with pytest.raises(WireError, match="messageId"):
        converter.structure({"content": {"type": "text", "text": "x"}}, AgentMessageChunk)
    with pytest.raises(WireError, match="expected str"):
        converter.structure({"text": 1}, TextContent)
    direct = converter.structure(
        {"messageId": "m", "content": {"type": "text", "text": "x"}}, AgentMessageChunk
    )
    assert direct.session_update == "agent_message_chunk"


def test_converter_containers_raise_wire_error_not_cattrs_groups() -> None:
    assert converter.structure([{"type": "text", "text": "x"}], list[TextContent]) == [
        TextContent(text="x")
    ]
    with pytest.raises(WireError):
        converter.structure([{"type": "text"}], list[TextContent])
    assert converter.unstructure([TextContent(text="x")]) == [{"type": "text", "text": "x"}]


def test_invalid_items_of_skip_invalid_lists_are_kept_as_unrecognized() -> None:
    """Schema x-deserialize-skip-invalid-items: the list still replaces the content; the
    invalid item is kept (with .error), not dropped."""
    wire = {
        "sessionUpdate": "agent_message",
        "messageId": "m",
        "content": [{"type": "text", "text": "hi"}, {"type": "image", "mimeType": "image/png"}],
    }
    got = structure_update(wire)
    assert isinstance(got, AgentMessage) and isinstance(got.content, list)
    text, image = got.content
    assert text == TextContent(text="hi")
    assert isinstance(image, UnrecognizedContentBlock) and image.type == "image"
    assert image.error is not None and "data" in image.error
    assert unstructure(got) == wire
    # An item without a usable tag cannot be kept typed: the whole value goes to `extra`
    # (schema x-deserialize-default-on-error) and the field reads as omitted.
    odd = {"sessionUpdate": "agent_message", "messageId": "m", "content": [5]}
    got = structure_update(odd)
    assert isinstance(got, AgentMessage)
    assert got.content is UNSET and got.extra == {"content": [5]}
    assert unstructure(got) == odd
