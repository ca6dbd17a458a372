"""The ``UNSET`` sentinel: a field that was omitted on the wire.

ACP patch fields have three states (spec: prompt lifecycle, "Entity IDs"; and
extensibility, "Metadata patches"): omitted leaves the stored value unchanged,
``null`` clears it and a value replaces it. ``None`` already means ``null``, so
omission needs its own value.
"""

from __future__ import annotations

import enum
from typing import Literal, TypeAlias


class _Unset(enum.Enum):
    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Literal[_Unset.UNSET] = _Unset.UNSET
"""The value of a field that was omitted on the wire."""

Unset: TypeAlias = Literal[_Unset.UNSET]
"""The type of :data:`UNSET`, for annotations such as ``str | None | Unset``."""

__all__ = ["UNSET", "Unset"]
