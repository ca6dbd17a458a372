"""ACP v2 wire layer (sans-IO): typed messages and the JSON-RPC envelope codec.

* ``converter`` structures JSON values into the generated attrs classes and back
  (``structure_update`` / ``unstructure`` are typed shortcuts).
* ``SessionUpdate`` is the union of every ``session/update`` payload, with
  ``UnrecognizedSessionUpdate`` for unknown (or malformed known) variants.
* ``UNSET`` marks an omitted field; ``None`` is an explicit ``null``.
* ``decode_line`` / ``encode_message``: one JSON-RPC line <-> message objects.
* ``STOP_REASONS``, ``STATES`` ...: the spec's value sets (:mod:`.constants`).

Names are imported lazily (PEP 562): importing a light submodule such as
``acp_lite.protocol.constants`` does not load the generated wire types.

See docs/architecture.md ("Wire layer").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp_lite.protocol._converter import converter, structure_update, unstructure
    from acp_lite.protocol._errors import WireError
    from acp_lite.protocol._generated import *  # noqa: F403
    from acp_lite.protocol._generated import __all__ as _generated_all
    from acp_lite.protocol._runtime import WireObject
    from acp_lite.protocol._unset import UNSET, Unset
    from acp_lite.protocol.constants import BUSY_STATES, STATES, STOP_REASONS, SessionState
    from acp_lite.protocol.jsonrpc import (
        JSON_BACKEND,
        METHODS,
        ErrorCode,
        ErrorObject,
        ErrorResponse,
        InvalidMessage,
        Message,
        MethodSpec,
        Notification,
        Request,
        Response,
        decode_line,
        decode_value,
        encode_message,
        to_wire,
    )

_OWN: dict[str, str] = {
    **dict.fromkeys(["converter", "structure_update", "unstructure"], "_converter"),
    "WireError": "_errors",
    "WireObject": "_runtime",
    "UNSET": "_unset",
    "Unset": "_unset",
    **dict.fromkeys(["BUSY_STATES", "STATES", "STOP_REASONS", "SessionState"], "constants"),
    **dict.fromkeys(
        [
            "JSON_BACKEND",
            "METHODS",
            "ErrorCode",
            "ErrorObject",
            "ErrorResponse",
            "InvalidMessage",
            "Message",
            "MethodSpec",
            "Notification",
            "Request",
            "Response",
            "decode_line",
            "decode_value",
            "encode_message",
            "to_wire",
        ],
        "jsonrpc",
    ),
}
"""Hand-written names -> their submodule; every other name is a generated one."""

_SUBMODULES = frozenset(
    {"constants", "jsonrpc", "_converter", "_errors", "_generated", "_runtime", "_unset"}
)

if TYPE_CHECKING:
    __all__ = [
        "BUSY_STATES",
        "JSON_BACKEND",
        "METHODS",
        "STATES",
        "STOP_REASONS",
        "UNSET",
        "ErrorCode",
        "ErrorObject",
        "ErrorResponse",
        "InvalidMessage",
        "Message",
        "MethodSpec",
        "Notification",
        "Request",
        "Response",
        "SessionState",
        "Unset",
        "WireError",
        "WireObject",
        "converter",
        "decode_line",
        "decode_value",
        "encode_message",
        "structure_update",
        "to_wire",
        "unstructure",
        *_generated_all,
    ]
else:

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            generated = importlib.import_module("acp_lite.protocol._generated")
            value: Any = [*sorted(_OWN), *generated.__all__]
        elif name in _OWN:
            value = getattr(importlib.import_module(f"acp_lite.protocol.{_OWN[name]}"), name)
        elif name in _SUBMODULES:  # as when this package imported them eagerly
            value = importlib.import_module(f"acp_lite.protocol.{name}")
        else:
            generated = importlib.import_module("acp_lite.protocol._generated")
            if name.startswith("__") or name not in generated.__all__:
                raise AttributeError(f"module 'acp_lite.protocol' has no attribute {name!r}")
            value = getattr(generated, name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__getattr__("__all__")))
