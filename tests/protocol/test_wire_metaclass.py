"""The generated module's classes get their slots from ``WireObject``'s metaclass as
the class statement runs: each class is created once, ``wire_class`` leaves it."""

from __future__ import annotations

from types import MemberDescriptorType

import attrs

import acp_lite.protocol
from acp_lite.protocol import _generated as g
from acp_lite.protocol._runtime import WireObject, wire_class


def test_generated_classes_are_made_once_with_their_slots() -> None:
    classes = [
        c
        for c in vars(g).values()
        if isinstance(c, type) and issubclass(c, WireObject) and c is not WireObject
    ]
    assert len(classes) > 200
    for cls in classes:
        assert wire_class(cls) is cls  # already a wire class: not created again
        own = [name for name, *_ in cls.__dict__["__lazy_attrs__"].fields]
        slots = cls.__dict__["__slots__"]
        assert set(slots) <= set(own)  # the fields a base does not hold already
        assert all(isinstance(cls.__dict__[name], MemberDescriptorType) for name in slots)
    update = g.ToolCallUpdate(tool_call_id="t")
    assert not hasattr(update, "__dict__")
    assert g.ToolCallUpdate.__dict__["__slots__"] == ("session_update",)  # the rest: ToolCall's
    assert [a.name for a in attrs.fields(g.ToolCallUpdate)][:2] == ["tool_call_id", "name"]
    assert attrs.fields(g.ToolCallUpdate).session_update.default == "tool_call_update"


def test_wire_object_is_public() -> None:
    """Code outside the wire layer names the base of the wire classes by its public
    name (``acp_lite.protocol.WireObject``)."""
    assert acp_lite.protocol.WireObject is WireObject
    assert "WireObject" in acp_lite.protocol.__all__
    assert isinstance(g.TextContent(text="x"), acp_lite.protocol.WireObject)
