"""What one connection knows of its agent, and the client event log.

:class:`Reports` owns the connection's end (:attr:`~Reports.failure`), the agent's
``initialize`` answer, the first lines it wrote that are not ACP, the way to its
stderr tail, and the bounded client event log (``ClientConnection.log``). Every
other part of the core reports through it; none keeps a copy of these.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Sequence
from time import monotonic
from typing import Any

from acp_lite.auth import auth_methods_from
from acp_lite.core.events import ConnectionEvent, ConnectionEventKind
from acp_lite.core.rpc import InvalidReceived, UnhandledRequest, UnmatchedResponse
from acp_lite.errors import AcpError, AgentExited, AuthRequired
from acp_lite.jsontypes import JsonObject
from acp_lite.limits import Limits
from acp_lite.protocol import InitializeResponse

__all__ = ["Reports"]

#: How many non-ACP lines (and how many bytes of each) are kept to quote.
_FOREIGN_KEPT = 3
_FOREIGN_BYTES = 200


class Reports:
    """The connection's end, the agent's handshake and stderr, the event log."""

    def __init__(self, limits: Limits, stderr_tail: Callable[[], Sequence[str]] | None) -> None:
        #: The client event log (what happened outside sessions).
        self.log: deque[ConnectionEvent] = deque(maxlen=limits.max_events)
        #: How many events of each kind happened (kept in :attr:`log` or not).
        self.log_counts: dict[str, int] = {}
        #: Why the connection ended (``None`` while it is open).
        self.failure: AcpError | None = None
        #: The typed ``initialize`` result, once it arrived.
        self.initialize_response: InitializeResponse | None = None
        #: The ``initialize`` result as received (a raw payload, for display).
        self.initialize_result: JsonObject = {}
        #: The first lines the agent wrote that are not ACP (not JSON-RPC, or our own
        #: ``initialize`` echoed back): what a "not an ACP agent" error quotes.
        self.foreign: list[bytes] = []
        self._per_kind = limits.max_events_per_kind
        self._stderr_tail = stderr_tail

    def end(self, failure: AcpError) -> bool:
        """Record why the connection ended; ``False`` if it had ended already."""
        if self.failure is not None:
            return False
        self.failure = failure
        return True

    def check(self, *, method: str | None = None, session_id: str | None = None) -> None:
        """Raise the connection's failure (naming ``method``/``session_id``), if it ended."""
        if self.failure is not None:
            raise self.failure_for(method, session_id)

    def failure_for(self, method: str | None, session_id: str | None) -> AcpError:
        """A copy of the connection's failure that names ``method`` and ``session_id``."""
        failure = self.failure
        assert failure is not None
        if isinstance(failure, AgentExited):
            return AgentExited(
                failure.message,
                returncode=failure.returncode,
                method=method,
                session_id=session_id,
                stderr_tail=failure.stderr_tail,
            )
        return type(failure)(
            failure.message, method=method, session_id=session_id, stderr_tail=self.stderr_tail()
        )

    def stderr_tail(self) -> list[str]:
        """The agent's last stderr lines, as the IO layer reports them."""
        return list(self._stderr_tail()) if self._stderr_tail is not None else []

    def name_auth_methods(self, error: AcpError) -> None:
        """An auth error that names no way to log in gets those ``initialize`` advertised."""
        if isinstance(error, AuthRequired) and not error.auth_methods:
            error.auth_methods = auth_methods_from(self.initialize_result.get("authMethods"))

    def foreign_line(self, line: bytes) -> None:
        """Keep (the head of) a line that is not ACP, if fewer than three are kept."""
        if len(self.foreign) < _FOREIGN_KEPT:
            self.foreign.append(bytes(line[:_FOREIGN_BYTES]))

    def log_event(
        self,
        kind: ConnectionEventKind,
        *,
        data: Any = None,
        error: BaseException | None = None,
        session_id: str | None = None,
        method: str | None = None,
    ) -> None:
        """Append an entry to the client event log (counted; sampled past the bound)."""
        counts = self.log_counts
        n = counts.get(kind, 0) + 1
        counts[kind] = n
        cap = self._per_kind
        # Keep the first `cap` of a kind, then a sample of one in `cap`.
        if cap is not None and n > cap and n % cap:
            return
        self.log.append(ConnectionEvent(kind, monotonic(), data, error, session_id, method))

    # ------------------------------------------------------------------ what is only logged

    def unhandled(self, ev: UnhandledRequest) -> None:
        """An agent request for a method we do not implement (answered -32601)."""
        self.log_event("unhandled_request", data=ev, method=ev.method)
        if ev.method == "initialize":
            # Our own request read back (`cat` as the agent): not an ACP agent.
            self.foreign_line(b"our initialize request, echoed back")

    def unmatched(self, ev: UnmatchedResponse) -> None:
        """A response whose id matches no request of ours."""
        self.log_event("unmatched_response", data=ev.message)

    def invalid(self, ev: InvalidReceived) -> None:
        """A line or batch member that is not a valid message."""
        self.log_event("protocol_error", data=ev.message, error=ev.error)
        if ev.message.method is None:  # not JSON-RPC at all (not bad params)
            raw = ev.message.raw
            if isinstance(raw, bytes | bytearray):
                self.foreign_line(bytes(raw))
            else:
                text = raw if isinstance(raw, str) else json.dumps(raw, default=repr)
                self.foreign_line(text.encode("utf-8", "replace"))
