"""docs/architecture.md shows the layer map the import check enforces (issue 22).

The diagram under "## Layers" is parsed: an entry line is ``<layer>  <paths>  <what
it holds>``, with ``<paths>`` a comma-separated list of the modules or packages of
one layer (``acp_lite/aio/``, ``acp_lite/limits.py``; a bare name such as
``turn.py`` is in the directory of the list's first path), description lines are
indented and dividers are dashes. Every entry of ``LAYERS`` must be drawn, at its
layer, and nothing else: a module moved in the code and not in the docs fails, and
so does a stale line in the docs.
"""

from __future__ import annotations

import re

import pytest
from test_import_boundary import LAYERS, ROOT

DOC = ROOT / "docs" / "architecture.md"
ENTRY = re.compile(r"^(?P<layer>\d)  (?P<paths>\S.*?)(?:\s{2,}.*)?$")


def _diagram(text: str) -> list[str]:
    """The lines of the code block under the "## Layers" heading."""
    section = text.split("\n## Layers", 1)[1]
    block = section.split("```", 2)[1]
    return block.splitlines()[1:]  # the first line is the fence's info string


def _module_of(path: str) -> str:
    """``acp_lite/aio/`` -> ``acp_lite.aio``; ``acp_lite/__init__.py`` -> ``acp_lite``."""
    path = path.removesuffix("/").removesuffix(".py").removesuffix("/__init__")
    return path.replace("/", ".")


def drawn_layers(text: str) -> dict[str, int]:
    """Module or package -> the layer the diagram draws it in."""
    drawn: dict[str, int] = {}
    for line in _diagram(text):
        found = ENTRY.match(line)
        if found is None:
            assert not line[:1].isdigit(), f"unreadable entry line: {line!r}"
            continue
        names = [name.strip() for name in found["paths"].split(",")]
        base = names[0].rsplit("/", 1)[0] if "/" in names[0].rstrip("/") else ""
        for name in names:
            full = name if "/" in name or not base else f"{base}/{name}"
            module = _module_of(full)
            assert module not in drawn, f"{module} is drawn twice"
            drawn[module] = int(found["layer"])
    return drawn


def test_docs_draw_the_layer_map() -> None:
    """Each LAYERS entry is drawn at its layer in docs/architecture.md, and only those."""
    drawn = drawn_layers(DOC.read_text(encoding="utf-8"))
    missing = sorted(set(LAYERS) - set(drawn))
    extra = sorted(set(drawn) - set(LAYERS))
    wrong = sorted(
        f"{m}: drawn {drawn[m]}, is {LAYERS[m]}"
        for m in drawn
        if m in LAYERS and drawn[m] != LAYERS[m]
    )
    assert not (missing or extra or wrong), f"not drawn: {missing}; not in LAYERS: {extra}; {wrong}"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("3  acp_lite/aio/          the pump", {"acp_lite.aio": 3}),
        ("0  acp_lite/limits.py, turn.py   plain data", {"acp_lite.limits": 0, "acp_lite.turn": 0}),
        ("5  acp_lite/__init__.py   lazy re-exports", {"acp_lite": 5}),
        ("5  pytest_acp/   plugin", {"pytest_acp": 5}),
    ],
)
def test_entry_lines_parse(line: str, expected: dict[str, int]) -> None:
    """The parser reads the shapes the diagram uses (so the check can fail)."""
    assert drawn_layers(f"\n## Layers\n\n```\n{line}\n   more words\n```\n") == expected


def test_a_moved_module_fails() -> None:
    """Guard against a check that cannot fail: the real doc with one layer changed."""
    text = DOC.read_text(encoding="utf-8").replace("\n3  acp_lite/aio/", "\n2  acp_lite/aio/", 1)
    drawn = drawn_layers(text)
    assert drawn["acp_lite.aio"] == 2 != LAYERS["acp_lite.aio"]
