"""What a connection reports: its violations, failures, event log and the agent's stderr.

A mixin of :class:`~acp_lite.core.connection.ClientConnection` (split out for
size): read-only reports built from the connection's state, and the bounded client
event log (:attr:`ClientConnection.log`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from time import monotonic
from typing import TYPE_CHECKING, Any

import attrs

from acp_lite.auth import auth_methods_from
from acp_lite.core.events import ConnectionEvent, ConnectionEventKind
from acp_lite.core.findings import FindingsLog
from acp_lite.core.records import SessionState
from acp_lite.errors import AcpError, AgentExited, AuthRequired
from acp_lite.model.rules import Violation

__all__ = ["ConnectionReports"]


class ConnectionReports:
    """Reports of one connection (see the module doc)."""

    if TYPE_CHECKING:
        sessions: dict[str, SessionState]
        findings: FindingsLog | None
        failure: AcpError | None
        initialize_result: dict[str, Any]
        log: deque[ConnectionEvent]
        log_counts: dict[str, int]
        _per_kind: int | None
        _stderr_tail: Callable[[], Sequence[str]] | None

    def violations(self, *, since: int = 0) -> list[Violation]:
        """The session models' conformance violations so far, plus what ending the
        traffic now would add (nothing is recorded; the models keep running).

        With ``locate_findings``, each carries ``entry_index`` (its line's position
        in :attr:`transcript`, counting lines a retention bound dropped) and the
        sessions not opened here are judged too; only sessions used at or after
        transcript index ``since`` add end findings. Without it, the open
        sessions' violations, unlocated.
        """
        if self.findings is not None:
            models = [(sid, state.model) for sid, state in self.sessions.items()]
            models += list(self.findings.observed.items())
            return self.findings.snapshot(models, since=since)
        out: list[Violation] = []
        for sid, state in self.sessions.items():
            model = state.model
            for v in (*model.violations, *model.end_findings()):
                out.append(attrs.evolve(v, session_id=sid, source="model"))
        return out

    def name_auth_methods(self, error: AcpError) -> None:
        """An auth error that names no way to log in gets those ``initialize`` advertised."""
        if isinstance(error, AuthRequired) and not error.auth_methods:
            error.auth_methods = auth_methods_from(self.initialize_result.get("authMethods"))

    def stderr_tail(self) -> list[str]:
        """The agent's last stderr lines, as the IO layer reports them."""
        return list(self._stderr_tail()) if self._stderr_tail is not None else []

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
