"""What a response does: its side effects, by method.

:func:`response_handlers` builds the table :class:`~acp_lite.core._book.RequestBook`
runs on each completion, one handler per method with side effects (the others
only deliver their result). Each handler acts through the parts that own the
state it changes: the session router (sessions, early updates), the reports (the
``initialize`` answer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from acp_lite.core._book import Handler, Outcome
from acp_lite.core._reports import Reports
from acp_lite.core._router import ApplyHeld, SessionRouter
from acp_lite.core.records import PendingRequest
from acp_lite.errors import ProtocolError

if TYPE_CHECKING:
    from acp_lite.protocol import InitializeResponse, ResumeSessionResponse

__all__ = ["CREATING", "response_handlers"]

#: Requests whose session may send updates before the response names it.
CREATING = frozenset({"session/new", "session/fork", "session/resume"})


def response_handlers(
    router: SessionRouter, reports: Reports, apply_held: ApplyHeld
) -> dict[str, Handler]:
    """The response handler of each method with side effects (see the module doc);
    ``apply_held``: how the dialect applies an update held for a new session."""

    def initialize(entry: PendingRequest, outcome: Outcome) -> None:
        wire = outcome.wire
        if wire is not None and isinstance(wire.result, dict):
            reports.initialize_result = wire.result  # as received, v1 included
        if entry.error is None:
            # The book structured it to the method's result class (MethodSpec).
            reports.initialize_response = cast("InitializeResponse", entry.result)

    def prompt(entry: PendingRequest, outcome: Outcome) -> None:
        state = router.sessions.get(entry.session_id or "")
        if state is None:
            return
        wire = outcome.wire
        if wire is not None and wire.error is not None:
            state.model.prompt_rejected(entry.id, wire.error)
        else:
            # A success response, even one whose result does not structure (the
            # caller gets a ProtocolError): the prompt was inserted.
            mid = getattr(entry.result, "message_id", None)
            if entry.result is None and wire is not None and isinstance(wire.result, dict):
                mid = wire.result.get("messageId")
            state.model.prompt_accepted(entry.id, mid)
        router.touch(state)

    def opening(entry: PendingRequest, outcome: Outcome) -> None:
        if entry.error is None:
            _open(router, reports, entry, apply_held)
        router.settle(entry.id)

    def resume(entry: PendingRequest, outcome: Outcome) -> None:
        _resumed(router, entry)
        router.settle(entry.id)

    def set_config_option(entry: PendingRequest, outcome: Outcome) -> None:
        # The agent MUST answer with the complete list (schema
        # SetSessionConfigOptionResponse): it replaces the model's.
        state = router.sessions.get(entry.session_id or "")
        options = getattr(entry.result, "config_options", None)
        if entry.error is None and state is not None and isinstance(options, list):
            state.model.config_options_replaced(options)
            router.touch(state)

    def close(entry: PendingRequest, outcome: Outcome) -> None:
        state = router.sessions.get(entry.session_id or "")
        if entry.error is None and state is not None:
            state.model.finish()
            router.touch(state)

    return {
        "initialize": initialize,
        "session/prompt": prompt,
        "session/new": opening,
        "session/fork": opening,
        "session/resume": resume,
        "session/set_config_option": set_config_option,
        "session/close": close,
    }


def _open(
    router: SessionRouter, reports: Reports, entry: PendingRequest, apply_held: ApplyHeld
) -> None:
    sid = getattr(entry.result, "session_id", None)
    if not isinstance(sid, str):  # pragma: no cover - the typed class requires it
        entry.error = ProtocolError(f"{entry.method} result has no sessionId")
        entry.result = None
        return
    if sid in router.sessions:
        entry.error = ProtocolError(
            f"{entry.method} answered session id {sid!r}, which is already open on "
            "this connection; the first session is kept",
            method=entry.method,
            session_id=sid,
            stderr_tail=reports.stderr_tail(),
        )
        entry.result = None
        return
    router.open(sid, entry.result, apply_held)


def _resumed(router: SessionRouter, entry: PendingRequest) -> None:
    sid = entry.session_id or ""
    state = router.sessions.get(sid)
    if state is None:
        return
    state.replaying = False
    if entry.error is not None:
        state.model.resume_failed()
        if state.resume_pending:
            router.forget(sid)
        router.touch(state)
        return
    state.resume_pending = False
    state.model.setup_response(cast("ResumeSessionResponse", entry.result), resumed=True)
    router.touch(state)
