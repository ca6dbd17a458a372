"""The cattrs converter for every ACP wire type (docs/architecture.md, "Wire layer").

The generated module supplies one straight-line structure / unstructure function per
class and per union; this module registers them, so ``converter`` is the single entry
point while the hot path pays no per-field dispatch.
"""

from __future__ import annotations

from typing import Any

import cattrs

from acp_lite.protocol import _generated as g


def _make_converter() -> cattrs.Converter:
    # detailed_validation=False: let WireError through instead of cattrs exception groups.
    conv = cattrs.Converter(detailed_validation=False)
    structure, unstructure = g.STRUCTURE, g.UNSTRUCTURE

    # One predicate hook for all wire types instead of ~270 registrations: registering
    # attrs classes one by one makes cattrs resolve their type hints (slow imports).
    # cattrs caches the dispatch per type, so this costs nothing per call.
    def known(t: Any) -> bool:
        try:
            return t in structure
        except TypeError:  # unhashable type expressions
            return False

    conv.register_structure_hook_func(known, lambda d, t: structure[t](d, t))
    conv.register_unstructure_hook_func(
        lambda t: t in unstructure, lambda obj: unstructure[obj.__class__](obj)
    )
    return conv


converter: cattrs.Converter = _make_converter()
"""Structures JSON values into wire classes and back; round trips are exact."""


def structure_update(update: Any) -> g.SessionUpdate:
    """Typed shortcut for ``converter.structure(update, SessionUpdate)``.

    Never raises for a JSON object: unknown or malformed variants become
    ``UnrecognizedSessionUpdate``. Raises ``WireError`` only when ``update`` is not
    an object. (mypy cannot type ``converter.structure`` with a union alias.)
    """
    return g.STRUCTURE[g.SessionUpdate](update, None)  # type: ignore[no-any-return]


def unstructure(obj: Any) -> Any:
    """Typed shortcut for ``converter.unstructure(obj)`` (wire object -> JSON value)."""
    fn = g.UNSTRUCTURE.get(type(obj))
    return converter.unstructure(obj) if fn is None else fn(obj)


__all__ = ["converter", "structure_update", "unstructure"]
