"""The client side of one ACP connection as a state machine: bytes in, events out.

h11 style: :class:`ClientConnection` does no IO. Feed it what the agent wrote
(:meth:`~ClientConnection.receive_data`), take what it wants written
(:meth:`~ClientConnection.data_to_send`) and what the IO layer must act on
(:meth:`~ClientConnection.next_events`, :meth:`~ClientConnection.changed_sessions`).
It owns framing, request ids, ``$/cancel_request`` both ways, every session's
model, the early-update buffer, prompt insertion bookkeeping, the lifecycle of the
agent's requests and the side effects of every response on the models. Every
response is structured with its method's typed class (``METHODS[method].result``).
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from acp_lite.core._agent_requests import AgentRequests
from acp_lite.core._receive import LineReceiver
from acp_lite.core._reports import ConnectionReports
from acp_lite.core._responses import CREATING, PROTOCOL_VERSION, on_response
from acp_lite.core.events import (
    AgentRequestWithdrawn,
    ConnectionEvent,
    CoreEvent,
    ExtensionNotificationReceived,
    UpdateApplied,
)
from acp_lite.core.findings import FindingsLog
from acp_lite.core.framing import LineFramer
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
from acp_lite.errors import (
    AcpError,
    AgentExited,
)
from acp_lite.limits import Limits
from acp_lite.model import SessionModel
from acp_lite.model.submissions import Submission
from acp_lite.protocol import (
    InitializeResponse,
    Notification,
    decode_line,
)
from acp_lite.protocol._chunk_lines import Template, with_text
from acp_lite.protocol.jsonrpc import loads_json
from acp_lite.transcript import Transcript

if TYPE_CHECKING:
    from acp_lite.core.v1 import V1Translator

__all__ = ["PROTOCOL_VERSION", "ClientConnection"]

logger = logging.getLogger("acp_lite.connection")

_UPDATE = "session/update"
_PROMPT = "session/prompt"
_PERMISSION = "session/request_permission"
_RESUME = "session/resume"
#: How many non-ACP lines (and how many bytes of each) the core keeps to quote.
_FOREIGN_KEPT = 3
_FOREIGN_BYTES = 200


class ClientConnection(LineReceiver, AgentRequests, ConnectionReports):
    """The protocol state of one client connection to an agent (no IO, no trio).

    ``stderr_tail`` (a callable) supplies the agent's last stderr lines for error
    messages; ``update_events`` makes :meth:`next_events` report every applied
    update as an :class:`UpdateApplied` (what ``acp_session_update`` hooks need;
    off by default, since the notification path is the hot path).
    ``protocol_version``: ``"auto"`` (default) offers v2 and switches to the v1
    translator (:mod:`acp_lite.core.v1`) when the agent answers in v1; ``1``
    speaks v1 from ``initialize`` on; ``2`` refuses a v1 answer.
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
        # --- v1 hook: the translator, once the connection speaks v1 (v1.py).
        self._requested_version = protocol_version
        self._v1: V1Translator | None = None
        if protocol_version == 1:
            self._v1 = v1_translator(self)
        self.limits = limits = limits or Limits()
        self.rpc = RpcEngine(max_pending=limits.max_pending_requests)
        #: Every wire line, both ways, in order.
        self.transcript = Transcript(limits.max_transcript_entries)
        #: The client event log (what happened outside sessions).
        self.log: deque[ConnectionEvent] = deque(maxlen=limits.max_events)
        #: How many events of each kind happened (kept in :attr:`log` or not).
        self.log_counts: dict[str, int] = {}
        self._per_kind = limits.max_events_per_kind
        #: Sessions opened or resumed on this connection, by id.
        self.sessions: dict[str, SessionState] = {}
        #: Why the connection ended (``None`` while it is open).
        self.failure: AcpError | None = None
        #: The typed ``initialize`` result, once it arrived.
        self.initialize_response: InitializeResponse | None = None
        #: The ``initialize`` result as received (a raw payload, for display).
        self.initialize_result: dict[str, Any] = {}
        self.update_events = update_events
        self._stderr_tail = stderr_tail
        self._framer = LineFramer(limits.max_line_bytes)
        # The chunk template of the latest hits and how many in a row: a stream's
        # lines are kept compactly only past _COMPACT_AFTER (receive_data).
        self._hot: tuple[Template | None, int] = (None, 0)
        self._keep_raw = limits.keep_raw_updates
        self._events: list[CoreEvent] = []
        self._changed: list[SessionState] = []
        # Updates kept until their session is known: sid -> [(update, raw, line index)].
        self._early: dict[str, list[tuple[Any, Any, int | None]]] = {}
        # Ids of our session-creating requests still awaiting an answer.
        self._creating: set[int] = set()
        self.agent_requests: dict[RequestId, AgentRequest] = {}
        #: The first lines the agent wrote that are not ACP (not JSON-RPC, or our own
        #: ``initialize`` echoed back): what a "not an ACP agent" error quotes.
        self.foreign: list[bytes] = []
        #: Located conformance findings (``None`` unless ``locate_findings``).
        self.findings: FindingsLog | None = (
            FindingsLog(limits.max_session_events) if locate_findings else None
        )

    def __repr__(self) -> str:
        return (
            f"<ClientConnection sessions={len(self.sessions)} "
            f"pending={len(self.rpc.pending)} failed={self.failure is not None}>"
        )

    @property
    def protocol_version(self) -> int:
        """The protocol spoken on the wire: 1 (v1 translator) or 2."""
        return 1 if self._v1 is not None else 2

    # ------------------------------------------------------------------ IO-facing

    def data_to_send(self) -> bytes:
        """Take the bytes to write to the agent (recorded in the transcript)."""
        lines = self.rpc.data_to_send()
        if not lines:
            return b""
        record = self.transcript.record
        for line in lines:
            record("send", line[:-1])
        return b"".join(lines)

    def next_events(self) -> list[CoreEvent]:
        """Take the events the IO layer must act on, in the order they happened."""
        events = self._events
        self._events = []
        return events

    def changed_sessions(self) -> list[SessionState]:
        """Take the sessions whose model changed since the last call (wake their waiters)."""
        changed = self._changed
        if not changed:
            return changed
        self._changed = []
        for state in changed:
            state.changed = False
        return changed

    # ------------------------------------------------------------------ sending

    def check(self, *, method: str | None = None, session_id: str | None = None) -> None:
        """Raise the connection's failure (naming ``method``/``session_id``), if it ended."""
        if self.failure is not None:
            raise self.failure_for(method, session_id)

    def send_request(
        self, method: str, params: Any, *, session_id: str | None = None
    ) -> PendingRequest:
        """Queue a request; its :class:`PendingRequest` gets the typed result.

        A ``session/prompt`` or ``session/resume`` sent this way (a raw request)
        gets the same bookkeeping as :meth:`prompt` and :meth:`resume`: the model
        must know what was asked to judge what the agent answers.
        """
        sid = params.get("sessionId") if isinstance(params, dict) else None
        if method == _PROMPT and isinstance(sid, str) and sid in self.sessions:
            return self.prompt(sid, params.get("prompt"), params=params)[0]
        if method == _RESUME and isinstance(sid, str) and self._v1 is None:
            replay = isinstance(params, dict) and params.get("replayFrom") is not None
            return self.resume(sid, params, replay=replay)
        return self._send(method, params, session_id)

    def _send(self, method: str, params: Any, session_id: str | None) -> PendingRequest:
        self.check(method=method, session_id=session_id)
        if self._v1 is not None:  # v1 hook: the translator sends the v1 request
            entry = self._v1.send_request(method, params, session_id)
        else:
            entry = self.rpc.request(method, params, session_id=session_id)
        if method in CREATING:
            self._creating.add(entry.id)
        if session_id is not None and self.findings is not None:
            # Where its line will be: at or after the transcript's current end.
            self.findings.touch(session_id, self.transcript.dropped + len(self.transcript))
        return entry

    def send_notification(self, method: str, params: Any) -> None:
        """Queue a notification (a raw ``session/cancel`` is :meth:`cancel`)."""
        sid = params.get("sessionId") if isinstance(params, dict) else None
        if method == "session/cancel" and isinstance(sid, str) and sid in self.sessions:
            self.cancel(sid)
            return
        self.check(method=method)
        self.rpc.notify(method, params)

    def initialize(self, params: Any) -> PendingRequest:
        """Queue ``initialize``; its response sets :attr:`initialize_response`."""
        return self.send_request("initialize", params)

    def prompt(
        self, session_id: str, blocks: Any, *, params: dict[str, Any] | None = None
    ) -> tuple[PendingRequest, Submission]:
        """Queue ``session/prompt`` and record its pending :class:`Submission`
        (``params``: the whole request's, when it has more than the prompt)."""
        state = self._session(session_id, _PROMPT)
        if self._v1 is not None:  # v1 hook: one prompt at a time
            self._v1.check_prompt(session_id)
        if params is None:
            params = {"sessionId": session_id, "prompt": blocks}
        entry = self._send(_PROMPT, params, session_id)
        submission = state.model.submit(entry.id, blocks)
        if self._v1 is not None:  # v1 hook: the turn the translator synthesizes
            self._v1.prompt_sent(entry, blocks)
        return entry, submission

    def resume(self, session_id: str, params: Any, *, replay: bool) -> PendingRequest:
        """Queue ``session/resume`` (a new session state unless it is open here)."""
        self.check(method=_RESUME, session_id=session_id)
        if self._v1 is not None:  # v1 hook: session/load or v1 resume, if advertised
            self._v1.check_resume(session_id, replay=replay)
        state = self.sessions.get(session_id)
        if state is None:
            state = self._new_state(session_id)
            state.resume_pending = True
        state.replaying = replay
        state.model.resume_requested()
        self.sessions[session_id] = state
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
        if entry.id in self._creating:
            self._creating.discard(entry.id)
            if not self._creating and self._early:
                self._flush_early()

    def connection_lost(self, failure: AcpError) -> list[PendingRequest]:
        """The connection ended (``failure`` says why): fail every pending request,
        run every model's end-of-session checks. Returns the requests failed."""
        if self.failure is not None:
            return []
        self.failure = failure
        if isinstance(failure, AgentExited):
            self.transcript.agent_exited(failure.returncode)
        failed = self.rpc.fail_all()
        for entry in failed:
            if entry.done:  # v1 hook: a v1 prompt answered at insertion keeps its result
                continue
            entry.done = True
            entry.error = self.failure_for(entry.method, entry.session_id)
        for req in self.agent_requests.values():
            self._events.append(AgentRequestWithdrawn(req))
        self.agent_requests.clear()
        if self.findings is not None:
            self.findings.at = None  # what is missing at the end is located nowhere
        for state in self.sessions.values():
            state.model.finish()  # end-of-session checks (idempotent)
            self._touch(state)
        return failed

    # ------------------------------------------------------------------ receiving

    def _on_update(self, msg: Notification, line: bytes | None = None) -> None:
        params = msg.params
        self._route_update(params.session_id, params.update, line, msg)

    def _route_update(
        self,
        sid: str,
        update: Any,
        line: bytes | None,
        msg: Notification | None,
        template: Template | None = None,
    ) -> None:
        """Apply a ``session/update`` (``msg``, decoded from ``line`` when it was a
        line of its own; ``None`` when only its update was decoded, by ``template``)
        to its session, keep it, or log it."""
        if self._v1 is not None:  # v1 hook: translated there
            self._v1.route_update(sid, cast("Notification", msg))
            return
        raw_update: dict[str, Any] | bytes | Template | None = None
        if self._keep_raw:
            if template is not None:
                # Smaller still: the event log rebuilds the payload from the
                # template and the chunk's text (model/events.py).
                raw_update = template
            elif line is not None:
                # The line itself (the transcript holds it anyway): the event log
                # decodes the payload again only if it is read (model/events.py).
                raw_update = line
            elif msg is not None:
                raw = msg.raw_params
                raw_update = raw.get("update") if raw.__class__ is dict else None
        state = self.sessions.get(sid)
        if state is not None:
            self._apply(state, update, raw_update)
        elif self._creating:
            # Maybe for the session a pending session/new is creating: keep it and
            # apply it once the response names the session (spec: "Initial state
            # and synchronization": updates may arrive before the response).
            at = self.findings.at if self.findings is not None else None
            self._early.setdefault(sid, []).append((update, raw_update, at))
        else:
            if msg is None and line is not None:
                msg = cast("Notification", decode_line(line))  # as logged for any line
            self.log_event("unknown_session_update", data=msg, session_id=sid)
            if self.findings is not None:
                self._observe(sid, update, raw_update)

    def _apply(self, state: SessionState, update: Any, raw: Any, source: str | None = None) -> None:
        if self.findings is not None:
            self.findings.event(state.id, self.findings.at)
        if self.update_events:
            event = state.model.apply(
                update, raw=raw, session_id=state.id, replayed=state.replaying, source=source
            )
            self._events.append(UpdateApplied(state, event))
        else:
            # Hot path: no Event object that nobody reads.
            state.model.feed(update, raw, state.id, state.replaying, source)
        if not state.changed:
            state.changed = True
            self._changed.append(state)

    def _touch(self, state: SessionState) -> None:
        if not state.changed:
            state.changed = True
            self._changed.append(state)

    def _dispatch(self, message: Any) -> None:
        for ev in self.rpc.receive(message):
            cls = ev.__class__
            if cls is ResponseReceived:
                on_response(self, cast("ResponseReceived", ev))
            elif cls is NotificationReceived:
                self._on_notification(cast("NotificationReceived", ev).message)
            elif cls is RequestReceived:
                self._on_request(cast("RequestReceived", ev))
            elif cls is PeerCancelled:
                pc = cast("PeerCancelled", ev)
                req = self.agent_requests.pop(pc.id, None)
                if req is not None:
                    if req.record is not None:
                        req.record._withdraw()
                    self._events.append(AgentRequestWithdrawn(req))
                self.log_event("agent_cancelled_request", data=pc)
            elif cls is UnhandledRequest:
                method = cast("UnhandledRequest", ev).method
                self.log_event("unhandled_request", data=ev, method=method)
                if method == "initialize":
                    # Our own request read back (`cat` as the agent): not an ACP agent.
                    self._foreign_line(b"our initialize request, echoed back")
            elif cls is UnmatchedResponse:
                self.log_event("unmatched_response", data=cast("UnmatchedResponse", ev).message)
            elif cls is InvalidReceived:
                inv = cast("InvalidReceived", ev)
                self.log_event("protocol_error", data=inv.message, error=inv.error)
                if inv.message.method is None:  # not JSON-RPC at all (not bad params)
                    raw = inv.message.raw
                    if isinstance(raw, bytes | bytearray):
                        self._foreign_line(bytes(raw))
                    else:
                        text = raw if isinstance(raw, str) else json.dumps(raw, default=repr)
                        self._foreign_line(text.encode("utf-8", "replace"))

    def _on_notification(self, msg: Notification) -> None:
        method = msg.method
        if method == _UPDATE:
            # A batch member (single lines take the hot path): JSON-RPC 2.0 section
            # 6, each member is handled as if it had been sent alone.
            self._on_update(msg)
        elif method.startswith("_"):
            self.log_event("extension_notification", data=msg.params, method=method)
            self._events.append(ExtensionNotificationReceived(method, msg.params))
        else:
            self.log_event("notification", data=msg, method=method)

    def _foreign_line(self, line: bytes) -> None:
        if len(self.foreign) < _FOREIGN_KEPT:
            self.foreign.append(bytes(line[:_FOREIGN_BYTES]))

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
                elif raw.__class__ is Template:
                    raw = with_text(raw.raw, update.content.text)["update"]
                self.log_event("unknown_session_update", data=raw or update, session_id=sid)
        self._early.clear()

    def _observe(self, sid: str, update: Any, raw: Any) -> None:
        # A session not opened here (a subagent's child, say): judged by a model of
        # its own in the findings log, never a client session.
        findings = self.findings
        assert findings is not None
        model = findings.observe(sid)
        findings.event(sid, findings.at)
        model.feed(update, raw, sid, False, None)

    # ------------------------------------------------------------------ helpers

    def _new_state(self, session_id: str) -> SessionState:
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

    def _session(self, session_id: str, method: str) -> SessionState:
        self.check(method=method, session_id=session_id)
        state = self.sessions.get(session_id)
        if state is None:
            raise KeyError(f"session {session_id!r} is not open on this connection")
        return state


def v1_translator(conn: ClientConnection) -> V1Translator:
    """The v1 translator for ``conn``, imported when a connection speaks v1 (most
    never do, and it is a sizeable module)."""
    from acp_lite.core.v1 import V1Translator

    return V1Translator(conn)
