"""What the method mixins, sessions and served client requests need from their
connection: :class:`Link`, which :class:`acp_lite.aio._connection.Connection` is.

It sits below them all: they name this protocol, not ``Connection``, so the
connection module may import them (it serves fs/* and terminal/* requests and
makes sessions) without an import circle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import trio

    from acp_lite.core import ClientConnection, PendingRequest
    from acp_lite.errors import AcpError
    from acp_lite.limits import Limits

__all__ = ["Link"]


class Link(Protocol):
    """One connection to an agent, as the objects built on it use it."""

    core: ClientConnection
    limits: Limits
    #: A wait on the agent timed out (closing then skips the close grace).
    timed_out: bool

    @property
    def failure(self) -> AcpError | None:
        """Why the connection ended (``None`` while open)."""

    @property
    def nursery(self) -> trio.Nursery:
        """Where the connection's tasks run (once started)."""

    def check(self, *, method: str | None = None, session_id: str | None = None) -> None:
        """Raise the connection's failure, if it failed or was closed."""

    def stderr_tail(self) -> list[str]:
        """The agent's last stderr lines."""

    def flush(self) -> None:
        """Write what the core queued (never blocks)."""

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""

    async def call(
        self,
        method: str,
        params: Any,
        *,
        session_id: str | None = None,
        timeout: float | None = None,
        state: Callable[[], str | None] | None = None,
    ) -> Any:
        """Send a request and wait for its result."""

    async def wait_response(
        self,
        entry: PendingRequest,
        *,
        timeout: float | None = None,
        state: Callable[[], str | None] | None = None,
        on_timeout: Callable[[], None] | None = None,
    ) -> Any:
        """Wait for the response of a request queued with the core (``on_timeout``:
        run when the wait times out, before the request is withdrawn)."""

    async def session_changed(self, session_id: str) -> None:
        """Wait until session ``session_id`` changes (trio tasks only)."""

    def cancel_session(self, session_id: str) -> None:
        """``session/cancel`` through the core."""

    def view_of(self, session_id: str | None) -> Any:
        """What callbacks receive as the session ``session_id`` (``None`` if unknown)."""
