"""The spec's closed value sets: stop reasons and foreground states, one home each.

Wire fields holding these values are typed plain ``str`` so that unknown values
survive; the generated ``Literal`` aliases (``StopReason`` in ``_generated.py``) and
the state classes (``IdleStateUpdate`` ...) document them, and
tests/protocol/test_constants.py checks these sets against them. Values outside a
set are custom (implementation-specific) when they start with ``_`` (spec
"Extensibility"), otherwise reserved. JSON-RPC error codes: ``ErrorCode`` in
:mod:`acp_lite.protocol.jsonrpc`.

This module imports nothing: the session model, the CLI and pytest_acp use it
without loading the wire types. (The reference agent, ``acp_lite.testing``, keeps
its own copies on purpose: it checks the client independently.)
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

__all__ = [
    "BUSY_STATES",
    "CANCELLED",
    "END_TURN",
    "ERROR",
    "IDLE",
    "MAX_TOKENS",
    "MAX_TURN_REQUESTS",
    "REFUSAL",
    "REQUIRES_ACTION",
    "RUNNING",
    "STATES",
    "STOP_REASONS",
    "UNKNOWN",
    "SessionState",
    "is_custom",
]

# --- stop reasons (spec "Stop reasons"; schema StopReason) ---------------------------

END_TURN: Final = "end_turn"
MAX_TOKENS: Final = "max_tokens"
MAX_TURN_REQUESTS: Final = "max_turn_requests"
REFUSAL: Final = "refusal"
CANCELLED: Final = "cancelled"
ERROR: Final = "error"

STOP_REASONS: Final[frozenset[str]] = frozenset(
    {END_TURN, MAX_TOKENS, MAX_TURN_REQUESTS, REFUSAL, CANCELLED, ERROR}
)
"""The standard stop reasons. Custom ones start with ``_``."""

# --- foreground states (spec "Session states"; schema StateUpdate) --------------------

IDLE: Final = "idle"
RUNNING: Final = "running"
REQUIRES_ACTION: Final = "requires_action"
UNKNOWN: Final = "unknown"

SessionState: TypeAlias = Literal["idle", "running", "requires_action", "unknown"]
"""Known ``state`` values of a ``state_update`` (fields are typed ``str``)."""

STATES: Final[frozenset[str]] = frozenset({IDLE, RUNNING, REQUIRES_ACTION, UNKNOWN})
"""The states the spec defines; any other state string is kept as given."""

BUSY_STATES: Final[frozenset[str]] = frozenset({RUNNING, REQUIRES_ACTION})
"""The states of foreground work in progress."""


def is_custom(value: str) -> bool:
    """Custom (implementation-specific) enum values start with ``_``."""
    return value.startswith("_")
