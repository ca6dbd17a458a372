"""Fast constructors of tools/gen_protocol.py: the wire classes hot paths build directly.

A streamed chunk's line is decoded into a ``session/update`` notification of one
message or thought chunk of one plain text block, thousands of times a turn; the
keyword ``__init__`` (and its ``extra`` dict per object) costs ~3x what filling the
slots does. Each class named in :data:`FAST_CONSTRUCTORS` gets a ``fast`` static
method that fills them: no checks, its tag field (a ``Literal``) set to its one value,
``extra`` the shared read-only ``NO_EXTRA`` unless given. It builds what the
generated structure function builds for the same values (the objects compare equal
and hold the same shared constants).
"""

from __future__ import annotations

FAST_CONSTRUCTORS = frozenset(
    {"AgentMessageChunk", "AgentThoughtChunk", "TextContent", "UpdateSessionNotification"}
)
"""The classes that get a ``fast`` constructor (those the wire layer's fast paths and
the model's compact blocks build)."""


def emit_fast(name: str, fields: list[tuple[str, str, str | None, bool]]) -> list[str]:
    """The lines of class ``name``'s ``fast`` static method.

    ``fields``: ``(name, annotation, default expression or None, is extra)`` in
    ``__init__`` order. A field typed ``Literal[...]`` with a default is the class's
    tag: set, not a parameter. Parameters without a default come first.
    """
    fixed = [(f, d) for f, a, d, _ in fields if a.startswith("Literal[") and d is not None]
    params = [x for x in fields if not (x[1].startswith("Literal[") and x[2] is not None)]
    params.sort(key=lambda x: x[2] is not None or x[3])  # stable: required ones first
    args = []
    for f, ann, default, is_extra in params:
        if is_extra:
            args.append(f"{f}: {ann} = NO_EXTRA")
        else:
            args.append(f"{f}: {ann}" + ("" if default is None else f" = {default}"))
    out = [
        "",
        "    @staticmethod",
        f"    def fast({', '.join(args)}) -> {name}:",
        '        """Made as decoding makes it (no checks, no copies; ``extra`` the shared',
        '        ``NO_EXTRA``): for hot paths, the values must be valid."""',
        f"        o: {name} = _new({name})",
    ]
    out += [f"        o.{f} = {d}" for f, d in fixed]
    out += [f"        o.{f} = {f}" for f, _, _, _ in params]
    out.append("        return o")
    return out
