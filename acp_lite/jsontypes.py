"""JSON value types: what the protocol's open values (``_meta``, unknown keys, a tool
call's ``rawInput`` ...) and raw wire payloads are, once decoded.

``JsonValue`` is what ``json.loads`` returns; ``JsonObject`` a decoded JSON object.
Plain data (layer 0): any module may use them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ForwardRef, TypeAlias

__all__ = ["JsonObject", "JsonValue"]

if TYPE_CHECKING:
    JsonValue: TypeAlias = (
        str | int | float | bool | list["JsonValue"] | dict[str, "JsonValue"] | None
    )
else:
    # The same alias; its self-reference resolves here, whichever module's
    # annotations typing.get_type_hints evaluates.
    _SELF = ForwardRef("JsonValue", module=__name__)
    JsonValue = str | int | float | bool | list[_SELF] | dict[str, _SELF] | None
"""Any decoded JSON value."""

JsonObject: TypeAlias = dict[str, JsonValue]
"""A decoded JSON object."""
