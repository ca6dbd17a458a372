"""Every public import path users already have keeps working (issue 22).

``tests/data/public_names_before_relayout.txt`` lists, one ``module:name`` a line,
every public name of every public module (no ``_private`` part in its path) of
acp_lite and pytest_acp as they were before the tree got one package per layer
(commit 2997905): the module's ``__all__``, or else the public names it defines.
Each must still import, from the same module. A name may only leave this list
with a reason in ``REMOVED``.
"""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LISTED = ROOT / "tests" / "data" / "public_names_before_relayout.txt"

#: ``module:name`` -> why it no longer imports from there.
REMOVED: dict[str, str] = {
    "acp_lite.core.v1:V1Translator": "now V1Dialect (acp_lite.core.v1): it took the whole "
    "ClientConnection and wrote its private fields; the dialect stands on the core's parts",
    "acp_lite.transcript:LineShape": "a compactly kept line is a "
    "acp_lite.protocol.chunk_lines.CompactLine (CompactLine.line(text) rebuilds it); the "
    "fast path's types stay in the wire layer (issue 22 item 5)",
}


def _listed() -> list[tuple[str, str]]:
    pairs = []
    for line in LISTED.read_text(encoding="utf-8").splitlines():
        module, _, name = line.partition(":")
        pairs.append((module, name))
    return pairs


def test_the_list_is_whole() -> None:
    modules = {module for module, _ in _listed()}
    assert {"acp_lite", "acp_lite.client", "acp_lite.cli", "acp_lite.aio", "pytest_acp"} <= modules
    assert len(_listed()) > 700


def test_every_public_name_still_imports() -> None:
    missing = []
    for module, name in _listed():
        if f"{module}:{name}" in REMOVED:
            continue
        try:
            found = importlib.import_module(module)
        except ImportError as exc:
            missing.append(f"{module}: {exc}")
            continue
        if name and not hasattr(found, name):
            missing.append(f"{module}:{name}")
    assert not missing, "public names that no longer import:\n" + "\n".join(missing)


def test_removed_names_are_gone() -> None:
    for entry in REMOVED:
        module, _, name = entry.partition(":")
        assert not hasattr(importlib.import_module(module), name), entry


@pytest.mark.parametrize(
    ("group", "key"),
    [("scripts", "acp-lite"), ("scripts", "acp-lite-agent"), ("entry-points", "pytest11")],
)
def test_entry_points_resolve(group: str, key: str) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    targets = (
        project["entry-points"][key] if group == "entry-points" else {key: project[group][key]}
    )
    for target in targets.values():
        module, _, attr = target.partition(":")
        found = importlib.import_module(module)
        if attr:
            assert callable(getattr(found, attr)), target


def test_the_trio_classes_are_importable_from_the_package() -> None:
    """AsyncClient / AsyncSession sit next to Client / Session (issue 22), as the same
    classes acp_lite.aio gives, without importing trio before they are asked for."""
    import acp_lite
    import acp_lite.aio

    assert acp_lite.AsyncClient is acp_lite.aio.AsyncClient
    assert acp_lite.AsyncSession is acp_lite.aio.AsyncSession
    assert {"AsyncClient", "AsyncSession"} <= set(acp_lite.__all__)
