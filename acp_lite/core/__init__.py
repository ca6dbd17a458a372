"""The sans-IO protocol core: one :class:`ClientConnection` per agent connection.

Pure Python (no trio, no threads, no IO): bytes in, typed events out, and calls
turned into bytes to send. The trio pump (:mod:`acp_lite.aio`) only moves bytes,
sleeps and spawns; see ``docs/architecture.md``.
"""

from __future__ import annotations

from acp_lite.core.connection import PROTOCOL_VERSION, ClientConnection
from acp_lite.core.events import (
    AgentRequestReceived,
    AgentRequestWithdrawn,
    ConnectionEvent,
    ConnectionEventKind,
    CoreEvent,
    ExtensionNotificationReceived,
    ResponseArrived,
    SessionOpened,
    UpdateApplied,
)
from acp_lite.core.framing import LineFramer, OversizeLine
from acp_lite.core.records import AgentRequest, PendingRequest, RequestId, SessionState
from acp_lite.core.v1_shapes import is_v1_initialize

__all__ = [
    "PROTOCOL_VERSION",
    "AgentRequest",
    "AgentRequestReceived",
    "AgentRequestWithdrawn",
    "ClientConnection",
    "ConnectionEvent",
    "ConnectionEventKind",
    "CoreEvent",
    "ExtensionNotificationReceived",
    "LineFramer",
    "OversizeLine",
    "PendingRequest",
    "RequestId",
    "ResponseArrived",
    "SessionOpened",
    "SessionState",
    "UpdateApplied",
    "is_v1_initialize",
]
