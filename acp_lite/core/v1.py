"""An ACP v1 agent behind the v2 API: the v1 dialect of the core.

Once ``initialize`` is answered in v1 (or the connection was made with
``protocol_version=1``), the connection speaks through a :class:`V1Dialect` (the
:class:`~acp_lite.core._dialect.Dialect` interface): every outgoing request,
every incoming line and every response goes through it. The client keeps calling
v2 methods and reading the v2 model; the wire carries v1
(``tests/data/schema/v1/schema.json``), and the transcript holds the wire lines
untouched. The dialect works on the core's parts only through their operations:
the session router's ``apply`` / ``hold`` / ``touch``, the request book's
``complete``, the reports' log; what it remembers of each session is in
``core/_v1_sessions.py``.

What v1 does not say, the dialect makes up, and marks: every event it
synthesizes is applied with ``source="v1:synthesized"``, every translated wire
update with ``source="v1:session/update"``:

* v1 ``session/prompt`` answers only when the turn ends. The session runs from
  the moment the prompt is sent (a synthesized ``running``: v1 has no queue).
  When the first turn
  content of the session (a chunk, a tool call, a plan, a compaction; not a
  session-level update such as ``available_commands_update``) arrives after the
  prompt was sent (or the response, whichever comes first), the dialect
  applies the inserted
  ``user_message`` (id ``v1-prompt-<request id>``, the prompt's blocks) and
  accepts the submission; the prompt's :class:`PendingRequest` completes then
  with that ``messageId`` (as a v2 prompt response would at insertion). The v1
  response makes the ``idle`` (its ``stopReason``, ``background: []``); an error
  response before any update is a rejection (the running ends in an ``idle``
  with that error), after updates an ``idle`` with ``stopReason: "error"``.
* v1 chunks may lack ``messageId``: one synthetic id per kind per turn
  (``v1-<request id>-agent``), per history segment outside turns.
* v1 ``modes`` become a select config option ``mode`` (``_meta`` marks it);
  setting it sends ``session/set_mode``.

v1 allows one prompt at a time and has no method for some v2 requests: those are
refused with :class:`~acp_lite.errors.UnsupportedInV1` before anything is sent.
"""

from __future__ import annotations

from typing import Any

import attrs

from acp_lite.core import v1_shapes as shapes
from acp_lite.core._book import Outcome, RequestBook
from acp_lite.core._reports import Reports
from acp_lite.core._router import SessionRouter
from acp_lite.core._v1_sessions import (
    NO_V1,
    Turn,
    V1Session,
    pick,
    request_form,
    resume_method,
    setup,
    translate_update,
)
from acp_lite.core.records import PendingRequest, Refusal, SessionState
from acp_lite.core.rpc import ResponseReceived
from acp_lite.errors import UnsupportedInV1
from acp_lite.protocol import (
    UNSET,
    Message,
    Notification,
    PromptResponse,
    UnrecognizedSessionUpdate,
    converter,
    decode_line,
    decode_value,
    structure_update,
    unstructure,
)
from acp_lite.protocol.chunk_lines import ChunkLines
from acp_lite.protocol.jsonrpc import loads_json, text_chunk_update

__all__ = ["SOURCE_SYNTHESIZED", "SOURCE_TRANSLATED", "V1Dialect"]

#: ``Event.source`` of what the dialect made up (no wire update carried it).
SOURCE_SYNTHESIZED = "v1:synthesized"
#: ``Event.source`` of a v1 ``session/update`` translated to v2.
SOURCE_TRANSLATED = "v1:session/update"

_PROMPT = "session/prompt"
_UPDATE = "session/update"
_UPDATE_BYTES = b'"session/update"'
_PERMISSION = "session/request_permission"
_PERMISSION_BYTES = b'"session/request_permission"'
#: JSON-RPC "request cancelled" (a withdrawn prompt, ``$/cancel_request``).
_REQUEST_CANCELLED = -32800


@attrs.define(slots=True, eq=False)
class _V1Update:
    """The params of a v1 ``session/update`` as decoded: its session only (the
    payload is read raw from ``Notification.raw_params``)."""

    session_id: str
    update: Any = None


class V1Dialect:
    """ACP v1 on the wire, the v2 model in the core (see the module doc)."""

    version = 1
    #: A raw ``session/resume`` is sent as it is: :meth:`send_request` picks the v1
    #: method (``session/load`` replays the history whatever was asked).
    resume_bookkeeping = False
    #: Every v1 line is decoded here: no hot path of v2 chunk lines.
    chunk_lines: ChunkLines | None = None

    def __init__(self, router: SessionRouter, book: RequestBook, reports: Reports) -> None:
        #: What the dialect remembers of each session, by id.
        self.sessions: dict[str, V1Session] = {}
        self._router = router
        self._book = book
        self._reports = reports
        # Request id -> (v1 method sent, detail) for requests whose answer needs it.
        self._sent: dict[int, tuple[str, Any]] = {}

    # ------------------------------------------------------------------ outgoing

    def check_resume(self, session_id: str, *, replay: bool) -> None:
        """Refuse a ``session/resume`` the agent cannot do in v1 (nothing sent)."""
        self._resume_method(session_id, replay)

    def _resume_method(self, session_id: str, replay: bool) -> str:
        caps = _dict(self._reports.initialize_result.get("agentCapabilities"))
        return resume_method(caps, session_id, replay=replay)

    def check_prompt(self, session_id: str) -> None:
        """Refuse a second prompt while a v1 turn of the session is running."""
        sess = self.sessions.get(session_id)
        if sess is not None and sess.turn is not None:
            raise UnsupportedInV1(
                f"ACP v1 allows one prompt at a time per session; request "
                f"{sess.turn.entry.id} is still running: wait until the session is idle "
                "(or cancel it) before prompting again",
                method=_PROMPT,
                session_id=session_id,
            )

    def prompt_sent(self, entry: PendingRequest, blocks: Any) -> None:
        """The turn of ``entry`` begins: the session runs from now (a synthesized
        ``running``); its insertion is synthesized later."""
        sess = self._session(entry.session_id or "")
        turn = sess.turn = Turn(entry, blocks, f"v1-prompt-{entry.id}")
        state = self._router.sessions.get(sess.id)
        # v1 has no queue: a prompt sent is the session's work from this moment
        # (answered only at the turn's end). Not while a load replays the history:
        # its synthesized idle would end this running; the insertion sets it then.
        if state is not None and not state.replaying:
            self._running(state, turn)
            self._router.touch(state)

    def send_request(self, method: str, params: Any, session_id: str | None) -> PendingRequest:
        """Send the v1 form of v2 request ``method``; the entry keeps the v2 name."""
        if method in NO_V1:
            raise UnsupportedInV1(
                f"{method} has no ACP v1 equivalent; this agent speaks protocol v1",
                method=method,
                session_id=session_id,
            )
        p = params if isinstance(params, dict) else unstructure(params)
        p = p if isinstance(p, dict) else {}
        if method == "session/resume":
            sid = session_id or str(p.get("sessionId"))
            state = self._router.sessions.get(sid)
            wire = self._resume_method(sid, state.replaying if state is not None else False)
            keep = pick(p, "sessionId", "cwd", "additionalDirectories", "mcpServers", "_meta")
            if wire == "session/load":
                keep["mcpServers"] = p.get("mcpServers") or []
                if state is not None:
                    state.replaying = True  # v1 session/load always replays the history
            p, detail = keep, None
        else:
            sess = self.sessions.get(session_id or str(p.get("sessionId")))
            wire, p, detail = request_form(method, p, sess)
        entry = self._book.rpc.request(wire, p, session_id=session_id)
        entry.method = method
        if wire != method or detail is not None:
            self._sent[entry.id] = (wire, detail)
        return entry

    # ------------------------------------------------------------------ incoming

    def decode(self, line: bytes) -> Message | list[Message]:
        """``decode_line``, except that v1 permission requests get v2 params (and
        insert a prompt not inserted yet) and a ``session/update`` is not decoded
        as v2 (:meth:`route_update` translates its raw payload)."""
        update = _UPDATE_BYTES in line
        if not update and _PERMISSION_BYTES not in line:
            return decode_line(line)
        try:
            obj = loads_json(line)
        except (ValueError, TypeError, RecursionError):
            return decode_line(line)  # builds the parse error
        if update and type(obj) is dict:
            p = obj.get("params")
            if (
                obj.get("method") == _UPDATE
                and obj.get("jsonrpc") == "2.0"
                and "id" not in obj
                and type(p) is dict
                and type(p.get("sessionId")) is str
                and type(p.get("update")) is dict
            ):
                return Notification(_UPDATE, _V1Update(p["sessionId"]), p)
        if isinstance(obj, list):
            if not obj:
                return decode_line(line)
            return [decode_value(self._v2_call(m)) for m in obj]
        return decode_value(self._v2_call(obj))

    def _v2_call(self, obj: Any) -> Any:
        if not (isinstance(obj, dict) and obj.get("method") == _PERMISSION and "id" in obj):
            return obj
        params = obj.get("params")
        if not isinstance(params, dict) or "toolCall" not in params:
            return obj  # not the v1 shape: decoded (and answered) as it is
        return {**obj, "params": self._permission_params(params)}

    def _permission_params(self, p: dict[str, Any]) -> dict[str, Any]:
        # v1 RequestPermissionRequest {sessionId, toolCall, options} -> v2 (title,
        # subject.toolCall): the title is the tool call's, else the one reported.
        self._permission_arrived(p.get("sessionId"))
        call = _dict(p.get("toolCall"))
        title = call.get("title")
        if not isinstance(title, str) or not title:
            title = self._known_title(p.get("sessionId"), call.get("toolCallId"))
        out = {k: v for k, v in p.items() if k != "toolCall"}
        out["title"] = title
        out["subject"] = {"type": "tool_call", "toolCall": shapes.tool_call(call, create=False)}
        return out

    def _permission_arrived(self, sid: Any) -> None:
        # Asking is turn activity, possibly the first (the request carries the tool
        # call): the prompt is inserted now, before the core applies that tool
        # call, which it does right after this line is decoded.
        if not isinstance(sid, str):
            return
        state, sess = self._router.sessions.get(sid), self.sessions.get(sid)
        turn = sess.turn if sess is not None else None
        if state is None or sess is None or turn is None:
            return
        if not turn.begun and not state.replaying:
            self._begin(state, sess, turn, echo=False)

    def refuse_permission(self, session_id: object, params: object) -> Refusal | None:
        """A v1 permission request no handler can answer rightly.

        v1 asks permission within a prompt turn (schema v1
        ``RequestPermissionRequest``, docs "Tool Calls: Requesting Permission";
        the ``cancelled`` outcome: "The prompt turn was cancelled before the user
        responded"; v1 has no background work). So: a session the client does not
        know is answered -32002 (as for ``fs/*``); no ``options`` is -32602
        (nothing can be selected); a request while no turn of the session is in
        flight (after its response) is answered ``cancelled``: its turn is over.
        """
        state = self._router.sessions.get(session_id) if isinstance(session_id, str) else None
        if state is None:
            return Refusal(
                f"{_PERMISSION} for session {session_id!r}, which this client does not know",
                code=-32002,
            )
        if not getattr(params, "options", None):
            return Refusal(f"{_PERMISSION} offers no options: there is nothing to select", -32602)
        sess = self.sessions.get(state.id)
        if (sess is None or sess.turn is None) and not state.replaying:
            return Refusal(
                f"{_PERMISSION} arrived while no prompt turn of the session runs (v1 asks "
                "within a turn): answered cancelled"
            )
        return None

    def _known_title(self, sid: Any, tool_call_id: Any) -> str:
        state = self._router.sessions.get(sid) if isinstance(sid, str) else None
        if state is not None and isinstance(tool_call_id, str):
            entity = state.model.get_entity("tool_call", tool_call_id)
            title = getattr(entity, "title", None)
            if isinstance(title, str) and title:
                return title
        return f"Permission for tool call {tool_call_id}"

    def route_update(
        self,
        sid: str,
        update: Any,
        line: bytes | None,
        msg: Notification,
        compact: Any = None,
    ) -> None:
        """A v1 ``session/update``: translate and apply it, hold it, or log it."""
        raw = msg.raw_params
        payload = raw.get("update") if isinstance(raw, dict) else None
        if not isinstance(payload, dict):
            payload = unstructure(msg.params.update)
        state = self._router.sessions.get(sid)
        if state is not None:
            self.apply_update(state, payload)
        # Held untranslated: translated once the session/new response names the
        # session (and its modes).
        elif not self._router.hold(sid, None, payload):
            self._reports.log_event("unknown_session_update", data=msg, session_id=sid)

    def apply_held(self, state: SessionState, update: Any, raw: Any) -> None:
        """A v1 update held until its session opened: translated and applied now."""
        self.apply_update(state, raw)

    def apply_update(self, state: SessionState, raw: dict[str, Any]) -> None:
        """Translate one v1 update of ``state``'s session and apply it (never raises)."""
        sess = self._session(state.id)
        turn = sess.turn
        tag = raw.get("sessionUpdate")
        if turn is not None and not turn.begun and not state.replaying and tag in shapes.TURN_TAGS:
            echo = tag == "user_message_chunk" and raw.get("messageId") is None
            self._begin(state, sess, turn, echo=echo)
        update: Any
        if isinstance(tag, str) and tag not in shapes.V1_UPDATE_TAGS:
            # Not a v1 update (custom, future, or a v2 tag such as state_update,
            # which must not drive the v2 model here): kept, as unrecognised.
            update = UnrecognizedSessionUpdate(session_update=tag, raw=raw)
        else:
            try:
                v2 = translate_update(sess, raw, state.replaying)
                # The common text chunk takes the wire layer's fast path.
                update = text_chunk_update(v2)
                if update is None:
                    update = structure_update(v2)
            except Exception:  # a malformed update: applied as received (unrecognised)
                update = structure_update(raw)
        keep = raw if self._router.keep_raw else None
        self._router.apply(state, update, keep, SOURCE_TRANSLATED)

    # ------------------------------------------------------------------ the turn

    def _synthesize(self, state: SessionState, update: dict[str, Any]) -> None:
        self._router.apply(state, structure_update(update), None, SOURCE_SYNTHESIZED)

    def _begin(self, state: SessionState, sess: V1Session, turn: Turn, *, echo: bool) -> None:
        # The prompt was inserted and the session runs (v2: user_message, running,
        # and the prompt response with the messageId).
        turn.begun = True
        turn.echoing = echo
        sess.last_kind = None
        self._running(state, turn)
        if not echo:
            user = {"sessionUpdate": "user_message", "messageId": turn.message_id}
            self._synthesize(state, {**user, "content": turn.blocks})
        entry = turn.entry
        state.model.prompt_accepted(entry.id, turn.message_id)
        if not entry.done:
            inserted = Outcome(result=PromptResponse(message_id=turn.message_id))
            self._book.complete(entry, inserted, effects=False)
        self._router.touch(state)

    def _running(self, state: SessionState, turn: Turn) -> None:
        if turn.running:
            return
        turn.running = True
        # background: [] on every synthesized state (v1 reports no background work):
        # after an idle listed it, a state without the list breaks a v2 MUST.
        running = {"sessionUpdate": "state_update", "state": "running", "background": []}
        self._synthesize(state, running)

    def on_response(self, ev: ResponseReceived) -> bool:
        """Handle a prompt's response the v1 way (the turn's end); ``False``: the
        core handles it (after :meth:`translate_result`)."""
        entry = ev.pending
        if ev.error is not None:
            self._sent.pop(entry.id, None)
        if entry.method != _PROMPT:
            return False
        state = self._router.sessions.get(entry.session_id or "")
        sess = self.sessions.get(entry.session_id or "")
        turn = sess.turn if sess is not None and sess.turn and sess.turn.entry is entry else None
        if sess is not None and turn is not None:
            sess.turn_ended()
        if state is None or sess is None or turn is None:
            return False  # not a turn this dialect knows: the generic path
        if ev.error is not None:
            err = ev.error
            if not turn.begun:
                # Nothing was reported for it: not inserted (PromptRejected). The
                # running synthesized when it was sent ends: cancelled if it was
                # withdrawn (-32800), else in this error.
                if turn.running:
                    self._synthesize(state, _rejected_idle(err))
                self._book.complete(entry, Outcome(error=self._book.error_of(entry, err), wire=ev))
                self._router.touch(state)
                return True
            # After updates: the turn ended in an error (the entry was completed at
            # insertion).
            data = None if err.data is UNSET else err.data
            wire_error: dict[str, Any] = {"code": err.code, "message": err.message}
            if data is not None:
                wire_error["data"] = data
            self._synthesize(state, shapes.idle("error", error=wire_error))
        else:
            result = ev.result if isinstance(ev.result, dict) else {}
            if not turn.begun:
                self._begin(state, sess, turn, echo=False)  # completes the entry
            stop = result.get("stopReason")
            if not isinstance(stop, str):
                self._reports.log_event(
                    "protocol_error", data=ev.result, method=_PROMPT, session_id=state.id
                )
            self._synthesize(
                state, shapes.idle(stop if isinstance(stop, str) else None, meta=result)
            )
            extra = {k: v for k, v in result.items() if k != "messageId"}
            final = converter.structure({**extra, "messageId": turn.message_id}, PromptResponse)
            # Already reported at insertion: the final result, not a second report.
            self._book.complete(entry, Outcome(result=final, wire=ev), effects=False)
        self._router.touch(state)
        return True

    def translate_result(self, entry: PendingRequest, result: Any) -> Any:
        """A v1 success result -> the v2 result of ``entry.method``."""
        wire, detail = self._sent.pop(entry.id, (entry.method, None))
        if not isinstance(result, dict):
            return result
        method = entry.method
        if method == "session/new":
            sid = result.get("sessionId")
            if isinstance(sid, str):
                sess = self.sessions[sid] = V1Session(sid)
                sess.set_setup(result)
                return setup(result, sess)
        elif method == "session/resume" and entry.session_id is not None:
            sess = self._session(entry.session_id)
            sess.set_setup(result)
            state = self._router.sessions.get(entry.session_id)
            if state is not None:
                # The resume snapshot v2 sends and v1 has not: nothing runs after a load.
                self._synthesize(state, shapes.idle(None))
            return setup(result, sess)
        elif method == "session/set_config_option":
            sess = self._session(entry.session_id or "")
            if wire == "session/set_mode":
                if sess.modes is not None:
                    sess.modes["currentModeId"] = detail
                return {**result, "configOptions": sess.config_options()}
            options = result.get("configOptions")
            if isinstance(options, list):
                sess.set_setup({"configOptions": options})
                return {**result, "configOptions": sess.config_options()}
        return result

    def _session(self, sid: str) -> V1Session:
        sess = self.sessions.get(sid)
        if sess is None:
            sess = self.sessions[sid] = V1Session(sid)
        return sess


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _rejected_idle(err: Any) -> dict[str, Any]:
    if err.code == _REQUEST_CANCELLED:
        return shapes.idle("cancelled")
    wire_error: dict[str, Any] = {"code": err.code, "message": err.message}
    if err.data is not UNSET and err.data is not None:
        wire_error["data"] = err.data
    return shapes.idle("error", error=wire_error)
