"""``Blocks``: a message's content list holds plain text compactly, reads as received."""

from __future__ import annotations

import copy
import gc
import pickle
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from acp_lite.model.blocks import Blocks, block_texts
from acp_lite.protocol import ImageContent, TextContent, converter, structure_update, unstructure

blocks = st.one_of(
    st.text(max_size=4).map(lambda t: TextContent(text=t)),
    st.text(max_size=4).map(lambda t: TextContent(text=t, meta={"k": 1})),
    st.text(max_size=4).map(lambda t: TextContent(text=t, extra={"x": 1})),
    st.just(ImageContent(data="aGk=", mime_type="image/png")),
)


@settings(max_examples=examples(2))
@given(items=st.lists(blocks, max_size=6), more=blocks)
def test_reads_as_the_blocks_received(items: list[Any], more: Any) -> None:
    held = Blocks(items)
    assert held == items and list(held) == items and len(held) == len(items)
    assert [type(b) for b in held] == [type(b) for b in items]
    assert held[:] == items and held[::-1] == items[::-1] and list(reversed(held)) == items[::-1]
    for i, b in enumerate(items):
        assert held[i] == b and held[i - len(items)] == b and b in held
        assert held.index(b) == items.index(b) and held.count(b) == items.count(b)
    assert repr(held) == repr(items) and held.copy() == items
    assert held + [more] == [*items, more] and [more] + held == [more, *items]  # noqa: RUF005
    assert pickle.loads(pickle.dumps(held)) == items and copy.deepcopy(held) == items
    held.append(more)
    items.append(more)
    assert held == items and held.pop() == items.pop() and held == items
    assert block_texts(held) == [b.text for b in items if type(b) is TextContent]
    wire = [converter.unstructure(b) for b in items]
    assert converter.unstructure(held) == wire and unstructure(held) == wire


def test_plain_text_is_held_as_its_text() -> None:
    """What the memory saving rests on (a test that can fail): a plain text block is
    held as a ``str``, no GC-tracked object; any other block as itself."""
    decoded = structure_update(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": "hi"},
        }
    ).content
    held = Blocks([decoded, TextContent(text="x", meta={})])
    raw = list.__getitem__(held, slice(None))
    assert raw[0] == "hi" and not gc.is_tracked(raw[0])
    assert type(raw[1]) is TextContent
    assert held[0] == decoded and held[0].extra == {} and type(held[0]) is TextContent


def test_message_text_and_content_after_chunks_and_replace() -> None:
    from acp_lite.model import SessionModel

    def chunk(text: str, **content: Any) -> Any:
        return structure_update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": text, **content},
            }
        )

    model = SessionModel()
    for t in ("a", "b"):
        model.apply(chunk(t))
    model.apply(chunk("c", annotations={"priority": 1}))
    msg = model.entity("agent_message", "m")
    assert msg.text == "abc" and [b.text for b in msg.content] == ["a", "b", "c"]
    assert msg.content[2].annotations.priority == 1
    model.apply(structure_update({"sessionUpdate": "agent_message", "messageId": "m",
                                  "content": [{"type": "text", "text": "Z"}]}))  # fmt: skip
    model.apply(chunk("y"))
    assert msg.text == "Zy" and msg.content == [TextContent(text="Z"), TextContent(text="y")]
    assert isinstance(msg.content, Blocks)
