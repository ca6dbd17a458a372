"""Patch fields: omitted (UNSET), explicit null (None) and a value all round-trip exactly.

Which fields are patch fields comes from the schema descriptions (PATCH_FIELDS, generated).
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from protocol_examples import def_example

from acp_lite.protocol import (
    DEFINITIONS,
    PATCH_FIELDS,
    UNSET,
    SessionUpdate,
    ToolCallUpdate,
    UserMessage,
    converter,
    structure_update,
    unstructure,
)

# Class name -> (schema definition, tag to add so it structures as a SessionUpdate).
SESSION_UPDATE_TAGS = {
    "AgentMessage": "agent_message",
    "AgentThought": "agent_thought",
    "UserMessage": "user_message",
    "CompactionUpdate": "compaction_update",
    "SessionInfoUpdate": "session_info_update",
    "SessionMessage": "session_message",
    "SubagentUpdate": "subagent_update",
    "TerminalUpdate": "terminal_update",
    "ToolCallUpdate": "tool_call_update",
    "UsageUpdate": "usage_update",
}


def test_patch_fields_documented() -> None:
    assert set(SESSION_UPDATE_TAGS) <= set(PATCH_FIELDS)
    assert PATCH_FIELDS["ToolCallUpdate"][:4] == ("name", "title", "kind", "status")
    assert "content" in PATCH_FIELDS["UserMessage"]
    assert PATCH_FIELDS["UsageUpdate"] == ("cost",)
    # Chunk metadata is not a patch (schema: "does not patch stored metadata").
    assert "AgentMessageChunk" not in PATCH_FIELDS


def _wire_name(cls: type, field: str) -> str:
    obj_fields = {f.name for f in attrs.fields(cls)}
    assert field in obj_fields
    return (
        "_meta"
        if field == "meta"
        else "".join(
            part if i == 0 else part.capitalize() for i, part in enumerate(field.split("_"))
        )
    )


CASES = [(name, field) for name in SESSION_UPDATE_TAGS for field in PATCH_FIELDS[name]]


@pytest.mark.parametrize(("name", "field"), CASES, ids=[f"{n}.{f}" for n, f in CASES])
def test_three_states_round_trip(name: str, field: str) -> None:
    definition = "ToolCallUpdate" if name == "ToolCallUpdate" else name
    full: dict[str, Any] = def_example(definition, "full")
    full["sessionUpdate"] = SESSION_UPDATE_TAGS[name]
    cls = type(structure_update(full))
    assert cls.__name__ == name
    key = _wire_name(cls, field)
    assert key in full
    omitted = {k: v for k, v in full.items() if k != key}
    nulled = {**full, key: None}
    for wire, expected in ((omitted, UNSET), (nulled, None)):
        obj = structure_update(wire)
        assert getattr(obj, field) is expected
        assert unstructure(obj) == wire
    valued = structure_update(full)
    assert getattr(valued, field) not in (UNSET, None)
    assert unstructure(valued) == full


def test_building_patches_in_python() -> None:
    patch = ToolCallUpdate(tool_call_id="t1", title=None, status="completed")
    assert unstructure(patch) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "title": None,
        "status": "completed",
    }
    cleared = UserMessage(message_id="m", content=None)
    wire = converter.unstructure(cleared)
    assert wire == {"sessionUpdate": "user_message", "messageId": "m", "content": None}
    assert converter.structure(wire, DEFINITIONS["UserMessage"]) == cleared
    assert converter.structure(
        {"sessionUpdate": "user_message", "messageId": "m"},
        SessionUpdate,  # type: ignore[arg-type]
    ) == UserMessage(message_id="m")
