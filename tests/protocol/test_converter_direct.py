"""The converter: wire types by the generated functions directly, the rest by cattrs,
which is imported only when something needs it."""

from __future__ import annotations

from typing import Any

import cattrs

from acp_lite.protocol import ContentBlock, TextContent, converter
from acp_lite.protocol._converter import _WireConverter


def test_results_are_cattrs_results() -> None:
    conv = _WireConverter()
    reference = converter.cattrs  # the cattrs converter behind the shared one
    block = TextContent(text="t", extra={"x": 1})
    values: list[Any] = [block, [block], {"k": block, "n": None}, (block,), "s", 1, 2.5]
    for value in values:
        assert conv.unstructure(value) == reference.unstructure(value)
    wire = {"type": "text", "text": "t"}
    assert conv.structure(wire, TextContent) == reference.structure(wire, TextContent)
    assert conv.structure([wire], list[ContentBlock]) == [TextContent(text="t")]
    assert conv.unstructure(block, unstructure_as=TextContent) == {
        "type": "text",
        "text": "t",
        "x": 1,
    }
    assert conv._cattrs is not None  # the list and the tuple needed cattrs


def test_hooks_registered_first_win_before_and_after_cattrs_is_built() -> None:
    conv = _WireConverter()
    conv.register_unstructure_hook(TextContent, lambda b: f"<{b.text}>")
    conv.register_structure_hook(TextContent, lambda d, _: TextContent(text=d.upper()))
    assert conv._cattrs is None
    assert conv.unstructure(TextContent(text="a")) == "<a>"
    assert conv.structure("a", TextContent) == TextContent(text="A")
    assert conv.unstructure((TextContent(text="b"),)) == ["<b>"]  # via cattrs, built now
    assert isinstance(conv.cattrs, cattrs.Converter)
    conv.register_unstructure_hook(TextContent, lambda b: b.text)
    assert conv.unstructure([TextContent(text="c")]) == ["c"]
    assert conv.cattrs.unstructure((TextContent(text="d"),)) == ["d"]


def test_a_connection_does_not_import_cattrs() -> None:
    """A process with a blocking client that converts wire objects does not import
    cattrs. Checked in the fresh interpreter of tests/test_import_boundary.py's
    runtime checks (one start for both): it imports every sans-IO module, the
    reference agent, ``acp_lite.aio`` and ``acp_lite.client``, converts a dict of
    wire objects both ways, then a tuple, which does import cattrs."""
    from test_import_boundary import _loaded_after

    assert _loaded_after()["cattrs_after_conversions"] is False
    assert _loaded_after()["cattrs_after_a_tuple"] is True  # the check can fail
