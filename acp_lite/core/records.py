"""The core's bookkeeping records: our requests, the agent's requests, sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.model import SessionModel

if TYPE_CHECKING:
    from acp_lite.errors import AcpError
    from acp_lite.model import AgentRequestRecord

__all__ = ["AgentRequest", "PendingRequest", "RequestId", "SessionState"]

RequestId = int | str


@lazy_attrs.define(eq=False)
class PendingRequest:
    """A request we sent; ``done`` once its response (or the connection's end) came.

    Then exactly one of ``result`` (the typed result, e.g. a ``PromptResponse``;
    the raw JSON value for methods the schema does not type) and ``error`` is set.
    """

    id: int
    method: str
    session_id: str | None = None
    #: ``$/cancel_request`` was sent for it.
    cancel_sent: bool = False
    done: bool = False
    result: object = None
    error: AcpError | None = None
    #: Free slot for the IO layer (e.g. the object a waiter blocks on).
    waiter: Any = None


@lazy_attrs.define(eq=False)
class AgentRequest:
    """A request from the agent that the client has not answered yet."""

    id: RequestId
    method: str
    #: The typed params (``RequestPermissionRequest``, ``CreateElicitationRequest``).
    params: object
    session_id: str | None
    tool_call_id: str | None = None
    #: Free slot for the IO layer (e.g. the cancel scope of the task deciding it).
    handle: Any = None
    #: The session model's record of it (``SessionModel.requests``), if any.
    record: AgentRequestRecord | None = None


@lazy_attrs.define(eq=False)
class SessionState:
    """One session of the connection: its model and the core's flags for it."""

    id: str
    model: SessionModel
    #: Updates are part of a history replay (between ``session/resume`` with
    #: ``replay`` and its response).
    replaying: bool = False
    #: Opened by ``session/resume`` and not confirmed yet: forgotten if refused.
    resume_pending: bool = False
    #: Already in the changed list (woken once per batch of received lines).
    changed: bool = False
    #: Free slot for the IO layer (its session object).
    handle: Any = None
