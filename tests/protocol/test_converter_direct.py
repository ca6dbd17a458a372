"""The converter: wire types by the generated functions directly, the rest by cattrs,
which is imported only when something needs it."""

from __future__ import annotations

import subprocess
import sys
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
    code = (
        "import sys, acp_lite.client\n"
        "from acp_lite.protocol import converter, decode_line, TextContent\n"
        "converter.unstructure({'a': [TextContent(text='t')]})\n"
        "converter.structure({'type': 'text', 'text': 't'}, TextContent)\n"
        "print('cattrs' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
