"""The core's bookkeeping records: our requests, the agent's requests, sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.model import SessionModel

if TYPE_CHECKING:
    from acp_lite.errors import AcpError
    from acp_lite.model import AgentRequestRecord

__all__ = [
    "AgentRequest",
    "Cancellable",
    "PendingRequest",
    "Refusal",
    "RequestId",
    "SessionState",
    "Waiter",
]

RequestId = int | str


class Waiter(Protocol):
    """What the IO layer parks on a pending request: woken once it is ``done``
    (a ``trio.Event``, a parked task, a blocking caller's driver)."""

    def set(self) -> None:
        """Wake whoever waits for the request."""


class Cancellable(Protocol):
    """What the IO layer keeps on an agent request while deciding it (a
    ``trio.CancelScope``): cancelled when the agent withdraws it or the connection
    ends."""

    def cancel(self) -> None:
        """Stop deciding the request."""


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
    #: The IO layer's slot: what wakes the request's waiter.
    waiter: Waiter | None = None


@lazy_attrs.define(eq=False)
class AgentRequest:
    """A request from the agent that the client has not answered yet."""

    id: RequestId
    method: str
    #: The typed params (``RequestPermissionRequest``, ``CreateElicitationRequest``).
    params: object
    session_id: str | None
    tool_call_id: str | None = None
    #: The IO layer's slot: the cancel scope of the task deciding it.
    handle: Cancellable | None = None
    #: The session model's record of it (``SessionModel.requests``), if any.
    record: AgentRequestRecord | None = None


@lazy_attrs.frozen
class Refusal:
    """How the core answers an agent request without asking the IO layer:
    ``code`` an error answer with ``message``; ``None`` the request's cancelled
    result (``message`` is then only logged)."""

    message: str
    code: int | None = None


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
    #: The IO layer's slot: its session object (``AsyncSession``), made on first use.
    handle: object = None
