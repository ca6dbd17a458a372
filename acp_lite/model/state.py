"""Foreground-state vocabulary, background-list helpers and session-level current values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp_lite import _lazy_attrs as lazy_attrs

# The spec's value sets live in acp_lite.protocol.constants; re-exported here.
# KNOWN_STATES: any other state string is kept as given and means busy.
from acp_lite.protocol.constants import (
    IDLE,
    REQUIRES_ACTION,
    RUNNING,
    STOP_REASONS,
    UNKNOWN,
    is_custom,
)
from acp_lite.protocol.constants import STATES as KNOWN_STATES

if TYPE_CHECKING:
    from acp_lite.protocol import Cost


def background_key(item: Any) -> tuple[str, str] | None:
    """(entity kind, id) of a background item, or ``None`` for an item of unknown type.

    ``terminal`` -> ("terminal", terminalId), ``tool_call`` -> ("tool_call", toolCallId),
    ``subagent`` -> ("subagent", sessionId). Unknown items still mean work is running
    (spec: "Background work") but reference nothing the model tracks.
    """
    kind = getattr(item, "type", None)
    if kind == "terminal":
        ident = getattr(item, "terminal_id", None)
    elif kind == "tool_call":
        ident = getattr(item, "tool_call_id", None)
    elif kind == "subagent":
        ident = getattr(item, "session_id", None)
    else:
        return None
    return (kind, ident) if isinstance(ident, str) else None


@lazy_attrs.define
class ContextUsage:
    """Current context-window usage (``usage_update``): ``used``/``size`` replaced, ``cost``
    patched (omitted = unchanged, ``null`` = cleared). ``cost`` is the wire ``Cost``."""

    used: int
    size: int
    cost: Cost | None = None


@lazy_attrs.define
class SessionInfo:
    """Session metadata from ``session_info_update`` (every field is a patch)."""

    title: str | None = None
    updated_at: str | None = None
    meta: dict[str, Any] | None = None


__all__ = [
    "IDLE",
    "KNOWN_STATES",
    "REQUIRES_ACTION",
    "RUNNING",
    "STOP_REASONS",
    "UNKNOWN",
    "ContextUsage",
    "SessionInfo",
    "background_key",
    "is_custom",
]
