"""What the sans-IO core hands back: events for the IO layer and the client event log.

:class:`ConnectionEvent` entries make up ``client.events`` (what happened on the
connection outside sessions). The other classes are what
:meth:`~acp_lite.core.ClientConnection.next_events` returns: the things an IO
layer must act on (wake a waiter, run a callback, run a hook).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from acp_lite import _lazy_attrs as lazy_attrs

if TYPE_CHECKING:
    from acp_lite.core.records import AgentRequest, PendingRequest, SessionState
    from acp_lite.jsontypes import JsonValue
    from acp_lite.model.events import Event

__all__ = [
    "AgentRequestReceived",
    "AgentRequestWithdrawn",
    "ConnectionEvent",
    "ConnectionEventKind",
    "CoreEvent",
    "ExtensionNotificationReceived",
    "ResponseArrived",
    "SessionOpened",
    "UpdateApplied",
]

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
    "agent_request_refused",  # answered by the core, no handler asked (v1: docs/v1.md)
]


@lazy_attrs.frozen
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


@lazy_attrs.frozen
class ResponseArrived:
    """The response to one of our requests: ``request.result`` or ``request.error``."""

    request: PendingRequest


@lazy_attrs.frozen
class SessionOpened:
    """A ``session/new`` (or fork) response created ``session`` on this connection."""

    session: SessionState


@lazy_attrs.frozen
class AgentRequestReceived:
    """The agent asks the client something; answer with ``ClientConnection.respond``."""

    request: AgentRequest


@lazy_attrs.frozen
class AgentRequestWithdrawn:
    """An agent request is answered already (the agent withdrew it, or a cancel did):
    stop deciding it."""

    request: AgentRequest


@lazy_attrs.frozen
class UpdateApplied:
    """One update applied to ``session`` (emitted only when asked: hooks want it)."""

    session: SessionState
    event: Event


@lazy_attrs.frozen
class ExtensionNotificationReceived:
    """A ``_``-prefixed notification from the agent (also in the client event log)."""

    method: str
    params: JsonValue


CoreEvent: TypeAlias = (
    ResponseArrived
    | SessionOpened
    | AgentRequestReceived
    | AgentRequestWithdrawn
    | UpdateApplied
    | ExtensionNotificationReceived
)
