"""The session models' conformance findings, located in the connection's transcript.

Kept by :class:`~acp_lite.core.ClientConnection` when it is created with
``locate_findings=True`` (what ``pytest_acp`` does). Every violation a session
model records is stored with the transcript position of the line that caused it
(``Violation.entry_index``, counted from the first line ever recorded, lines a
bounded transcript dropped included). Sessions that were never opened on the
connection (a subagent's child session, an id the agent made up) get a model of
their own here, so their traffic is judged too without becoming client sessions.

Pure bookkeeping: no IO. The connection tells it which line it is handling
(:attr:`FindingsLog.at`) and which model event each line became.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable

import attrs

from acp_lite.model import SessionModel
from acp_lite.model.rules import Violation

__all__ = ["FindingsLog"]


class FindingsLog:
    """Located model violations of one connection, and what is needed to locate them."""

    def __init__(self, max_session_events: int | None = None) -> None:
        #: Located violations, in the order they were recorded.
        self.found: list[Violation] = []
        #: Transcript index of the line being handled (``None``: no line, e.g. the
        #: end of the connection).
        self.at: int | None = None
        #: Models of sessions seen in traffic but not opened on the connection.
        self.observed: dict[str, SessionModel] = {}
        self._max_events = max_session_events
        # sid -> transcript index of each model event (8 bytes per update).
        self._entries: dict[str, array[int]] = {}
        # sid -> the last transcript index (or next index, for a send) that used it.
        self._touched: dict[str, int] = {}

    def watch(self, sid: str, model: SessionModel) -> None:
        """Locate ``model``'s violations from now on (a session opened after its
        traffic was observed gets its own model: the observed one is let go)."""
        if self.observed.get(sid) is not model:
            self.observed.pop(sid, None)
        self._entries[sid] = array("q")
        model.on_violation = self._locator(sid)

    def observe(self, sid: str) -> SessionModel:
        """The model of a session not opened on the connection (created on first use)."""
        model = self.observed.get(sid)
        if model is None:
            model = self.observed[sid] = SessionModel(sid, max_events=self._max_events)
            self.watch(sid, model)
        return model

    def event(self, sid: str, at: int | None) -> None:
        """The session's model is about to log an event for transcript line ``at``."""
        entries = self._entries.get(sid)
        if entries is not None:
            entries.append(-1 if at is None else at)
        if at is not None:
            self._touched[sid] = at

    def events(self, sid: str, first: int, n: int) -> None:
        """The session's model is about to log ``n`` events for the consecutive
        transcript lines from ``first`` (a run of a chunk stream's lines)."""
        entries = self._entries.get(sid)
        if entries is not None:
            entries.extend(range(first, first + n))
        self._touched[sid] = first + n - 1

    def withdraw(self, sid: str, n: int, touched: int | None) -> None:
        """Undo :meth:`events` (the model took none of them): ``touched`` is what the
        session's last use was before."""
        entries = self._entries.get(sid)
        if entries is not None and n:
            del entries[-n:]
        if touched is None:
            self._touched.pop(sid, None)
        else:
            self._touched[sid] = touched

    def touched(self, sid: str) -> int | None:
        """The last transcript index that used the session (``None``: none yet)."""
        return self._touched.get(sid)

    def touch(self, sid: str, at: int) -> None:
        """Traffic at transcript index ``at`` concerned the session (a request sent)."""
        self._touched[sid] = at

    def _locator(self, sid: str) -> Callable[[Violation], None]:
        def locate(found: Violation) -> None:
            self.found.append(self._located(sid, found, self.at))

        return locate

    def _located(self, sid: str, found: Violation, at: int | None) -> Violation:
        # A violation about an update is located at that update's line; others
        # (a response's, an end-of-session one) where the connection was.
        entries = self._entries.get(sid)
        if found.event_index is not None and entries is not None:
            i = found.event_index
            if 0 <= i < len(entries) and entries[i] >= 0:
                at = entries[i]
        return attrs.evolve(found, entry_index=at, session_id=sid, source="model")

    def snapshot(
        self, models: Iterable[tuple[str, SessionModel]], *, since: int
    ) -> list[Violation]:
        """The violations so far plus those ending the traffic now would add.

        Only sessions used at or after transcript index ``since`` are asked for their
        end findings (an older session's were reported with the traffic before
        ``since``); nothing is recorded, the models keep running.
        """
        out = list(self.found)
        for sid, model in models:
            if self._touched.get(sid, -1) < since:
                continue
            out.extend(self._located(sid, v, None) for v in model.end_findings())
        return out
