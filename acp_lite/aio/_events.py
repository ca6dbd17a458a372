"""Entries of a client's event log: what happened on the connection outside sessions."""

from __future__ import annotations

from typing import Any, Literal

import attrs

__all__ = ["ConnectionEvent", "ConnectionEventKind"]

ConnectionEventKind = Literal[
    "protocol_error",  # a line or batch member that is not a valid message
    "oversize_line",  # a line over Limits.max_line_bytes (skipped)
    "unmatched_response",  # a response whose id matches no request of ours
    "unknown_session_update",  # session/update for a session never opened here
    "notification",  # another agent notification (e.g. elicitation/complete)
    "extension_notification",  # a `_`-prefixed notification
    "unhandled_request",  # an agent request answered -32601
    "callback_error",  # a permission/elicitation callback or hook raised
    "agent_cancelled_request",  # the agent withdrew one of its requests to us
]


@attrs.frozen(slots=True)
class ConnectionEvent:
    """One entry of ``client.events``: ``kind``, monotonic ``time`` and details.

    ``data`` is the decoded message or raw value involved, ``error`` an exception
    when there is one (e.g. a :class:`~acp_lite.errors.ProtocolError`), and
    ``session_id`` the session concerned, when known.
    """

    kind: ConnectionEventKind
    time: float
    data: Any = None
    error: BaseException | None = None
    session_id: str | None = None
    method: str | None = None
