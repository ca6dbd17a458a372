"""The sessions of one connection: their models, updates routed to them, early updates.

:class:`SessionRouter` owns every :class:`~acp_lite.core.records.SessionState`
opened or resumed on the connection, the sessions changed since the IO layer last
asked, the updates held for a session a pending ``session/new`` / ``fork`` /
``resume`` may create (with the ids of those requests), and the located findings
(:class:`~acp_lite.core.findings.FindingsLog`, with ``locate_findings``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import attrs

from acp_lite.core._reports import Reports
from acp_lite.core.events import CoreEvent, SessionOpened, UpdateApplied
from acp_lite.core.findings import FindingsLog
from acp_lite.core.records import SessionState
from acp_lite.limits import Limits
from acp_lite.model import SessionModel
from acp_lite.model.rules import Violation
from acp_lite.protocol import Notification, decode_line
from acp_lite.protocol.chunk_lines import CompactLine
from acp_lite.protocol.jsonrpc import loads_json

__all__ = ["ApplyHeld", "SessionRouter"]

#: How a held update is applied once its session opened: ``(state, update, raw)``
#: (the dialect's way: v1 updates are translated only then).
ApplyHeld = Callable[[SessionState, Any, Any], None]


class SessionRouter:
    """Sessions, the routing of their updates, and the early-update buffer."""

    def __init__(
        self,
        limits: Limits,
        reports: Reports,
        emit: Callable[[CoreEvent], None],
        *,
        update_events: bool,
        locate_findings: bool,
    ) -> None:
        self.limits = limits
        #: Sessions opened or resumed on this connection, by id.
        self.sessions: dict[str, SessionState] = {}
        #: Located conformance findings (``None`` unless ``locate_findings``).
        self.findings: FindingsLog | None = (
            FindingsLog(limits.max_session_events) if locate_findings else None
        )
        #: Every applied update is reported as an :class:`UpdateApplied`.
        self.update_events = update_events
        #: Models keep each update's raw payload (``Limits.keep_raw_updates``).
        self.keep_raw = limits.keep_raw_updates
        #: Models keep the received line of an update: with the raw payloads, or while
        #: the transcript keeps every line (a reference to a line it holds anyway
        #: costs less than the typed update: ``keep_raw_updates=False`` is then
        #: never bigger or slower than the default).
        self.keep_line = self.keep_raw or limits.max_transcript_entries is None
        self._reports = reports
        self._emit = emit
        self._changed: list[SessionState] = []
        # Updates kept until their session is known: sid -> [(update, raw, line index)].
        self._early: dict[str, list[tuple[Any, Any, int | None]]] = {}
        # Ids of our session-creating requests still awaiting an answer.
        self._creating: set[int] = set()

    # ------------------------------------------------------------------ sessions

    def new_state(self, session_id: str) -> SessionState:
        """A fresh state (and model, with the connection's bounds) for a session."""
        limits = self.limits
        model = SessionModel(
            session_id,
            max_events=limits.max_session_events,
            max_blocks=limits.max_message_blocks,
            max_entities=limits.max_session_entities,
        )
        if self.findings is not None:
            self.findings.watch(session_id, model)
        return SessionState(session_id, model)

    def session(self, session_id: str, method: str) -> SessionState:
        """The open session ``session_id`` (``KeyError``), if the connection is open."""
        self._reports.check(method=method, session_id=session_id)
        state = self.sessions.get(session_id)
        if state is None:
            raise KeyError(f"session {session_id!r} is not open on this connection")
        return state

    def open(self, session_id: str, result: Any, apply_held: ApplyHeld) -> SessionState:
        """Open a session answered by ``session/new`` / ``fork``: its setup, then the
        updates held for it (each located at its own line)."""
        state = self.new_state(session_id)
        state.model.setup_response(result)
        self.sessions[session_id] = state
        findings = self.findings
        now = findings.at if findings is not None else None
        for update, raw, at in self._early.pop(session_id, ()):
            if findings is not None:
                findings.at = at
            apply_held(state, update, raw)
        if findings is not None:
            findings.at = now
        self.touch(state)
        self._emit(SessionOpened(state))
        return state

    def resuming(self, session_id: str, *, replay: bool) -> SessionState:
        """The state a ``session/resume`` is sent for (new unless it is open here)."""
        state = self.sessions.get(session_id)
        if state is None:
            state = self.new_state(session_id)
            state.resume_pending = True
        state.replaying = replay
        state.model.resume_requested()
        self.sessions[session_id] = state
        return state

    def forget(self, session_id: str) -> None:
        """Drop a session (a refused resume of a session not open before)."""
        self.sessions.pop(session_id, None)

    def sent_for(self, session_id: str, at: int) -> None:
        """A request for the session will be transcript line ``at`` (or later)."""
        if self.findings is not None:
            self.findings.touch(session_id, at)

    def finish_all(self) -> None:
        """The connection ended: every model's end-of-session checks (idempotent)."""
        if self.findings is not None:
            self.findings.at = None  # what is missing at the end is located nowhere
        for state in self.sessions.values():
            state.model.finish()
            self.touch(state)

    def violations(self, *, since: int = 0) -> list[Violation]:
        """The session models' conformance violations so far, plus what ending the
        traffic now would add (nothing is recorded; the models keep running).

        With ``locate_findings``, each carries ``entry_index`` (its line's position
        in the transcript, counting lines a retention bound dropped) and the
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

    # ------------------------------------------------------------------ updates

    def route(
        self,
        sid: str,
        update: Any,
        line: bytes | None,
        msg: Notification | None,
        compact: CompactLine | None = None,
    ) -> None:
        """Apply a ``session/update`` (``msg``, decoded from ``line`` when it was a
        line of its own; ``None`` when only its update was decoded, by its stream's
        ``compact`` line) to its session, hold it, or log it."""
        raw_update: dict[str, Any] | bytes | CompactLine | None = None
        if compact is not None:
            # Smaller still, so kept whatever keep_raw says: the event log rebuilds
            # the payload (and the typed update) from the compact line and the
            # chunk's text (model/events.py), which costs less than the update.
            raw_update = compact
        elif line is not None and self.keep_line:
            # The line itself (the transcript holds it anyway): the event log
            # decodes the payload again only if it is read (model/events.py).
            raw_update = line
        elif self.keep_raw and msg is not None:
            raw = msg.raw_params
            raw_update = raw.get("update") if raw.__class__ is dict else None
        state = self.sessions.get(sid)
        if state is not None:
            self.apply(state, update, raw_update)
        elif not self.hold(sid, update, raw_update):
            if msg is None and line is not None:
                msg = cast("Notification", decode_line(line))  # as logged for any line
            self._reports.log_event("unknown_session_update", data=msg, session_id=sid)
            if self.findings is not None:
                self._observe(sid, update, raw_update)

    def apply(self, state: SessionState, update: Any, raw: Any, source: str | None = None) -> None:
        """Apply one typed update to ``state``'s model (``raw``: what the model keeps)."""
        if self.findings is not None:
            self.findings.event(state.id, self.findings.at)
        if self.update_events:
            event = state.model.apply(
                update, raw=raw, session_id=state.id, replayed=state.replaying, source=source
            )
            self._emit(UpdateApplied(state, event))
        else:
            # Hot path: no Event object that nobody reads.
            state.model.feed(update, raw, state.id, state.replaying, source)
        if not state.changed:
            state.changed = True
            self._changed.append(state)

    def touch(self, state: SessionState) -> None:
        """``state``'s model changed: its waiters are woken (once per batch)."""
        if not state.changed:
            state.changed = True
            self._changed.append(state)

    def take_changed(self) -> list[SessionState]:
        """Take the sessions changed since the last call."""
        changed = self._changed
        if not changed:
            return changed
        self._changed = []
        for state in changed:
            state.changed = False
        return changed

    # ------------------------------------------------------------------ early updates

    def expect(self, request_id: int) -> None:
        """Request ``request_id`` may create a session: hold updates of unknown ones."""
        self._creating.add(request_id)

    def settle(self, request_id: int) -> None:
        """Request ``request_id`` creates no more sessions (answered, or given up)."""
        self._creating.discard(request_id)
        if not self._creating and self._early:
            self._flush_early()

    def expecting(self, request_id: int) -> bool:
        """Whether request ``request_id`` may still create a session."""
        return request_id in self._creating

    def hold(self, sid: str, update: Any, raw: Any) -> bool:
        """Keep an update of an unknown session while a session-creating request is
        pending (spec: "Initial state and synchronization": updates may arrive before
        the response); ``False``: none is, nothing kept."""
        if not self._creating:
            return False
        at = self.findings.at if self.findings is not None else None
        self._early.setdefault(sid, []).append((update, raw, at))
        return True

    def _flush_early(self) -> None:
        # No session-creating request is in flight any more: these belonged to no
        # session opened on this connection.
        findings = self.findings
        for sid, items in self._early.items():
            for update, raw, at in items:
                if findings is not None and update is not None:
                    now, findings.at = findings.at, at
                    self._observe(sid, update, raw)
                    findings.at = now
                if raw.__class__ is bytes:
                    raw = loads_json(raw)["params"]["update"]
                elif raw.__class__ is CompactLine:
                    raw = raw.params(update.content.text)["update"]
                self._reports.log_event(
                    "unknown_session_update", data=raw or update, session_id=sid
                )
        self._early.clear()

    def _observe(self, sid: str, update: Any, raw: Any) -> None:
        # A session not opened here (a subagent's child, say): judged by a model of
        # its own in the findings log, never a client session.
        findings = self.findings
        assert findings is not None
        model = findings.observe(sid)
        findings.event(sid, findings.at)
        model.feed(update, raw, sid, False, None)
