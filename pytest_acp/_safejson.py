"""JSON helpers that survive whatever the agent printed (deep nesting, odd values).

The plugin reads agent output in many places; none may raise on it (a
``RecursionError`` or ``TypeError`` there would abort the pytest run).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["NOT_JSON", "key", "loads", "short"]

NOT_JSON: Any = object()
"""What :func:`loads` returns for a line that is not (readable) JSON."""


def loads(line: bytes | str) -> Any:
    """The JSON value of ``line``, or :data:`NOT_JSON` (not JSON, or nested too deep)."""
    try:
        return json.loads(line)
    except (ValueError, TypeError, RecursionError):
        return NOT_JSON


def key(value: Any) -> str:
    """A stable string key for a JSON value (ids, merge keys)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True)
    except (ValueError, TypeError, RecursionError):
        return f"<unkeyable {type(value).__name__}>"


def short(value: Any, limit: int = 80) -> str:
    """At most ``limit`` characters of ``value`` as JSON, for a message."""
    try:
        text = json.dumps(value)
    except (ValueError, TypeError, RecursionError):
        text = f"<{type(value).__name__} nested too deeply to show>"
    return text[:limit]
