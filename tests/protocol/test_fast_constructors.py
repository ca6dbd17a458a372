"""The generated fast constructors build what decoding builds (``tools/gen_protocol_fast.py``).

The hot paths (the wire layer's chunk decoding, the model's compact text blocks)
build a few wire classes with their ``fast`` constructor instead of the keyword
``__init__``: the objects must be those the structure functions make of the same
JSON, shared constants included (the tag, ``UNSET``, the read-only ``NO_EXTRA``).
"""

from __future__ import annotations

import inspect
from typing import Any

from test_fast_decode import same

from acp_lite.protocol import (
    UNSET,
    AgentMessageChunk,
    AgentThoughtChunk,
    TextContent,
    UpdateSessionNotification,
    _generated,
    converter,
)
from acp_lite.protocol._runtime import NO_EXTRA


def test_each_fast_constructor_builds_what_decoding_builds() -> None:
    block = TextContent.fast("hi")
    same(block, converter.structure({"type": "text", "text": "hi"}, TextContent))
    assert block.extra is NO_EXTRA and block.annotations is UNSET and block.meta is UNSET
    wire: dict[str, Any] = {"messageId": "m", "content": {"type": "text", "text": "hi"}}
    for cls, tag in [
        (AgentMessageChunk, "agent_message_chunk"),
        (AgentThoughtChunk, "agent_thought_chunk"),
    ]:
        chunk = cls.fast("m", TextContent.fast("hi"))
        same(chunk, converter.structure({"sessionUpdate": tag, **wire}, cls))
        assert chunk.session_update == tag and chunk.extra is NO_EXTRA
    params = UpdateSessionNotification.fast("s", AgentMessageChunk.fast("m", block))
    decoded = {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", **wire}}
    same(params, converter.structure(decoded, UpdateSessionNotification))
    # Every field can be given (the defaults are the decoder's for an absent key).
    meta = {"k": 1}
    full = TextContent.fast("t", UNSET, meta, {"x": 2})
    same(
        full, converter.structure({"type": "text", "text": "t", "_meta": meta, "x": 2}, TextContent)
    )


def test_only_the_listed_classes_get_one() -> None:
    """The tag field is set, not a parameter; the required fields come first."""
    have = sorted(
        name
        for name in _generated.__all__
        if isinstance(getattr(_generated, name), type) and "fast" in vars(getattr(_generated, name))
    )
    assert have == [
        "AgentMessageChunk",
        "AgentThoughtChunk",
        "TextContent",
        "UpdateSessionNotification",
    ]
    assert list(inspect.signature(AgentMessageChunk.fast).parameters) == [
        "message_id",
        "content",
        "meta",
        "extra",
    ]
    assert list(inspect.signature(TextContent.fast).parameters) == [
        "text",
        "annotations",
        "meta",
        "extra",
    ]
