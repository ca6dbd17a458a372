"""The client side of one ACP connection as a state machine: bytes in, events out.

h11 style: :class:`ClientConnection` does no IO. It composes parts that each own
their state (``docs/architecture.md``, "The core"): ``Receiver`` (framing,
transcript, hot path), ``RequestBook`` (our requests and their one completion),
``SessionRouter`` (sessions, early updates, findings), ``AgentRequests``,
``Reports`` (failure, handshake, event log) and the wire's ``Dialect``. It owns
the event queue and the choice of dialect, and dispatches what the JSON-RPC
engine reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from acp_lite.core._agent_requests import AgentRequests
from acp_lite.core._book import PROTOCOL_VERSION, RequestBook
from acp_lite.core._dialect import Dialect, V2Dialect
from acp_lite.core._receive import Receiver
from acp_lite.core._reports import Reports
from acp_lite.core._responses import CREATING, response_handlers
from acp_lite.core._router import SessionRouter
from acp_lite.core.events import CoreEvent, ExtensionNotificationReceived
from acp_lite.core.records import AgentRequest, PendingRequest, RequestId, SessionState
from acp_lite.core.rpc import (
    InvalidReceived,
    NotificationReceived,
    PeerCancelled,
    RequestReceived,
    ResponseReceived,
    RpcEngine,
    UnhandledRequest,
    UnmatchedResponse,
)
from acp_lite.errors import AcpError, AgentExited
from acp_lite.jsontypes import JsonObject
from acp_lite.limits import Limits
from acp_lite.model.submissions import Submission, SubmittedContent
from acp_lite.protocol import InitializeResponse
from acp_lite.protocol.chunk_lines import ChunkLines

__all__ = ["PROTOCOL_VERSION", "ClientConnection"]

_PROMPT = "session/prompt"
_RESUME = "session/resume"


class ClientConnection:
    """The protocol state of one client connection to an agent (no IO, no trio).

    ``stderr_tail`` (a callable) supplies the agent's last stderr lines for error
    messages; ``update_events`` makes :meth:`next_events` report every applied
    update as an :class:`UpdateApplied` (what ``acp_session_update`` hooks need;
    off by default, since the notification path is the hot path).
    ``protocol_version``: ``"auto"`` (default) offers v2 and switches to the v1
    dialect (:mod:`acp_lite.core.v1`) when the agent answers in v1; ``1`` speaks
    v1 from ``initialize`` on; ``2`` refuses a v1 answer.
    ``locate_findings`` keeps :attr:`findings`: every session model's violations
    located in the transcript, sessions not opened here included (what a
    conformance report needs; it costs a few bytes per update).
    """

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        protocol_version: int | Literal["auto"] = "auto",
        stderr_tail: Callable[[], Sequence[str]] | None = None,
        update_events: bool = False,
        locate_findings: bool = False,
    ) -> None:
        if protocol_version not in (1, 2, "auto"):
            raise ValueError(f"protocol_version must be 1, 2 or 'auto', not {protocol_version!r}")
        self.limits = limits = limits or Limits()
        self._events: list[CoreEvent] = []
        emit = self._events.append  # the list is emptied in place, never replaced
        self.reports = reports = Reports(limits, stderr_tail)
        self.router = router = SessionRouter(
            limits, reports, emit, update_events=update_events, locate_findings=locate_findings
        )
        handlers = response_handlers(router, reports, self._apply_held)
        rpc = RpcEngine(max_pending=limits.max_pending_requests)
        self.book = RequestBook(rpc, reports, emit, handlers, protocol_version=protocol_version)
        self.agent = AgentRequests(
            rpc,
            router,
            reports,
            emit,
            lambda sid, params: self.dialect.refuse_permission(sid, params),
        )
        #: The protocol spoken on the wire (v2 until ``initialize`` says v1). The v2
        #: dialect decodes with this connection's own cache of its chunk streams'
        #: lines: how it decodes never depends on another connection's traffic.
        self.dialect: Dialect = V2Dialect(router, rpc, ChunkLines())
        self.receiver = Receiver(limits, reports, router, self._dispatch, self.dialect)
        self._on_rpc: dict[type, Callable[[Any], None]] = {
            ResponseReceived: self._on_response,
            NotificationReceived: self._on_notification,
            RequestReceived: self.agent.received,
            PeerCancelled: self.agent.withdrawn,
            UnhandledRequest: reports.unhandled,
            UnmatchedResponse: reports.unmatched,
            InvalidReceived: reports.invalid,
        }
        if protocol_version == 1:
            self._speak_v1()
        # Views of the parts' state (each part owns what it names).
        #: The JSON-RPC engine (``RequestBook``).
        self.rpc = rpc
        #: Every wire line, both ways, in order (``Receiver``).
        self.transcript = self.receiver.transcript
        #: Sessions opened or resumed on this connection, by id (``SessionRouter``).
        self.sessions: dict[str, SessionState] = router.sessions
        #: Located conformance findings, ``None`` unless ``locate_findings``.
        self.findings = router.findings
        #: The agent's requests not answered yet (``AgentRequests``).
        self.agent_requests: dict[RequestId, AgentRequest] = self.agent.open
        #: The client event log, and how many events of each kind (``Reports``).
        self.log, self.log_counts = reports.log, reports.log_counts
        #: The first lines the agent wrote that are not ACP (``Reports``).
        self.foreign: list[bytes] = reports.foreign
        # The parts' operations, as they are (their docstrings say what they do).
        self.changed_sessions = router.take_changed
        self.violations = router.violations
        self.log_event = reports.log_event
        self.check = reports.check
        self.cancel = self.agent.cancel
        self.respond = self.agent.respond
        self.respond_error = self.agent.respond_error

    def __repr__(self) -> str:
        return (
            f"<ClientConnection sessions={len(self.sessions)} "
            f"pending={len(self.rpc.pending)} failed={self.failure is not None}>"
        )

    @property
    def protocol_version(self) -> int:
        """The protocol spoken on the wire: 1 (v1 dialect) or 2."""
        return self.dialect.version

    @property
    def failure(self) -> AcpError | None:
        """Why the connection ended (``None`` while it is open)."""
        return self.reports.failure

    @property
    def initialize_response(self) -> InitializeResponse | None:
        """The typed ``initialize`` result, once it arrived."""
        return self.reports.initialize_response

    @property
    def initialize_result(self) -> JsonObject:
        """The ``initialize`` result as received (a raw payload, for display)."""
        return self.reports.initialize_result

    @property
    def update_events(self) -> bool:
        """Every applied update is reported as an ``UpdateApplied``."""
        return self.router.update_events

    @property
    def streaming(self) -> bool:
        """Whether the bytes received last ended inside a streamed message (a run of
        one chunk stream's lines): more of it is likely on its way."""
        return self.receiver.streaming

    # ------------------------------------------------------------------ IO-facing

    def receive_data(self, data: bytes) -> None:
        """Feed bytes the agent wrote; ``b""`` means its output ended."""
        self.receiver.receive_data(data)

    def data_to_send(self) -> bytes:
        """Take the bytes to write to the agent (recorded in the transcript)."""
        lines = self.rpc.data_to_send()
        if not lines:
            return b""
        self.receiver.record_sent(lines)
        return b"".join(lines)

    def next_events(self) -> list[CoreEvent]:
        """Take the events the IO layer must act on, in the order they happened."""
        events = self._events[:]
        self._events.clear()
        return events

    # ------------------------------------------------------------------ sending

    def send_request(
        self, method: str, params: object, *, session_id: str | None = None
    ) -> PendingRequest:
        """Queue a request; its :class:`PendingRequest` gets the typed result.

        A ``session/prompt`` or ``session/resume`` sent this way (a raw request)
        gets the same bookkeeping as :meth:`prompt` and :meth:`resume`: the model
        must know what was asked to judge what the agent answers.
        """
        if isinstance(params, dict):
            sid = params.get("sessionId")
            if method == _PROMPT and isinstance(sid, str) and sid in self.sessions:
                return self.prompt(sid, params.get("prompt"), params=params)[0]
            if method == _RESUME and isinstance(sid, str) and self.dialect.resume_bookkeeping:
                replay = params.get("replayFrom") is not None
                return self.resume(sid, params, replay=replay)
        return self._send(method, params, session_id)

    def _send(self, method: str, params: object, session_id: str | None) -> PendingRequest:
        self.check(method=method, session_id=session_id)
        entry = self.dialect.send_request(method, params, session_id)
        if method in CREATING:
            self.router.expect(entry.id)
        if session_id is not None:
            # Where its line will be: at or after the transcript's current end.
            self.router.sent_for(session_id, self.receiver.next_index)
        return entry

    def send_notification(self, method: str, params: object) -> None:
        """Queue a notification (a raw ``session/cancel`` is :meth:`cancel`)."""
        sid = params.get("sessionId") if isinstance(params, dict) else None
        if method == "session/cancel" and isinstance(sid, str) and sid in self.sessions:
            self.cancel(sid)
            return
        self.check(method=method)
        self.rpc.notify(method, params)

    def initialize(self, params: object) -> PendingRequest:
        """Queue ``initialize``; its response sets :attr:`initialize_response`."""
        return self.send_request("initialize", params)

    def prompt(
        self, session_id: str, blocks: SubmittedContent, *, params: object = None
    ) -> tuple[PendingRequest, Submission]:
        """Queue ``session/prompt`` and record its pending :class:`Submission`
        (``params``: the whole request's, when it has more than the prompt)."""
        state = self.router.session(session_id, _PROMPT)
        self.dialect.check_prompt(session_id)
        if params is None:
            params = {"sessionId": session_id, "prompt": blocks}
        entry = self._send(_PROMPT, params, session_id)
        self.agent.prompt_sent(session_id)
        submission = state.model.submit(entry.id, blocks)
        self.dialect.prompt_sent(entry, blocks)
        return entry, submission

    def resume(self, session_id: str, params: object, *, replay: bool) -> PendingRequest:
        """Queue ``session/resume`` (a new session state unless it is open here)."""
        self.check(method=_RESUME, session_id=session_id)
        self.dialect.check_resume(session_id, replay=replay)
        self.router.resuming(session_id, replay=replay)
        return self._send(_RESUME, params, session_id)

    def withdraw(self, request_id: int) -> bool:
        """Send ``$/cancel_request`` for one of our pending requests (once)."""
        if self.failure is not None:
            return False
        return self.rpc.cancel_request(request_id)

    def abandon(self, entry: PendingRequest) -> None:
        """The caller stopped waiting for ``entry`` (timeout, cancellation).

        It is withdrawn with ``$/cancel_request`` (a late response is still
        applied), and a session-creating request no longer holds updates for the
        session it might create: they go to the client event log instead.
        """
        if entry.done:
            return
        self.withdraw(entry.id)
        if self.router.expecting(entry.id):
            self.router.settle(entry.id)

    def connection_lost(self, failure: AcpError) -> list[PendingRequest]:
        """The connection ended (``failure`` says why): fail every pending request,
        run every model's end-of-session checks. Returns the requests failed."""
        if not self.reports.end(failure):
            return []
        if isinstance(failure, AgentExited):
            self.transcript.agent_exited(failure.returncode)
        failed = self.book.fail_all()
        self.agent.withdraw_all()
        self.router.finish_all()
        return failed

    # ------------------------------------------------------------------ receiving

    def _dispatch(self, message: Any) -> None:
        on_rpc = self._on_rpc
        for ev in self.rpc.receive(message):
            on_rpc[ev.__class__](ev)

    def _on_response(self, ev: ResponseReceived) -> None:
        if self.book.on_response(ev, self.dialect) and self.dialect.version != 1:
            self._speak_v1()  # the agent answered initialize in v1

    def _on_notification(self, ev: NotificationReceived) -> None:
        msg = ev.message
        method = msg.method
        if method == "session/update":
            # A batch member (single lines take the hot path): JSON-RPC 2.0 section
            # 6, each member is handled as if it had been sent alone.
            params = msg.params
            self.dialect.route_update(params.session_id, params.update, None, msg)
        elif method.startswith("_"):
            self.log_event("extension_notification", data=msg.params, method=method)
            self._events.append(ExtensionNotificationReceived(method, msg.params))
        else:
            self.log_event("notification", data=msg, method=method)

    def _speak_v1(self) -> None:
        # Imported when a connection speaks v1 (most never do; a sizeable module).
        from acp_lite.core.v1 import V1Dialect

        self.dialect = V1Dialect(self.router, self.book, self.reports)
        self.receiver.speak(self.dialect)

    def _apply_held(self, state: SessionState, update: Any, raw: Any) -> None:
        # The dialect in use when the session opens translates what was held.
        self.dialect.apply_held(state, update, raw)
