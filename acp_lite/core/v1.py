"""An ACP v1 agent behind the v2 API: the translator inside :class:`ClientConnection`.

Once ``initialize`` is answered in v1 (or the connection was made with
``protocol_version=1``), the connection hands every outgoing request and every
incoming ``session/update``, ``session/request_permission`` and response to a
:class:`V1Translator`. The client keeps calling v2 methods and reading the v2
model; the wire carries v1 (``tests/data/schema/v1/schema.json``), and the
transcript holds the wire lines untouched.

What v1 does not say, the translator makes up, and marks: every event it
synthesizes is applied with ``source="v1:synthesized"``, every translated wire
update with ``source="v1:session/update"``:

* v1 ``session/prompt`` answers only when the turn ends. When the first turn
  content of the session (a chunk, a tool call, a plan, a compaction; not a
  session-level update such as ``available_commands_update``) arrives after the
  prompt was sent (or the response, whichever comes first), the translator
  applies a ``running`` state and the inserted
  ``user_message`` (id ``v1-prompt-<request id>``, the prompt's blocks) and
  accepts the submission; the prompt's :class:`PendingRequest` completes then
  with that ``messageId`` (as a v2 prompt response would at insertion). The v1
  response makes the ``idle`` (its ``stopReason``, ``background: []``); an error
  response before any update is a rejection, after updates an ``idle`` with
  ``stopReason: "error"``.
* v1 chunks may lack ``messageId``: one synthetic id per kind per turn
  (``v1-<request id>-agent``), per history segment outside turns.
* v1 ``modes`` become a select config option ``mode`` (``_meta`` marks it);
  setting it sends ``session/set_mode``.

v1 allows one prompt at a time and has no method for some v2 requests: those are
refused with :class:`~acp_lite.errors.UnsupportedInV1` before anything is sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from acp_lite.core import v1_shapes as shapes
from acp_lite.core.events import ResponseArrived
from acp_lite.errors import UnsupportedInV1, request_error_from
from acp_lite.protocol import (
    UNSET,
    Notification,
    PromptResponse,
    UnrecognizedSessionUpdate,
    converter,
    decode_line,
    decode_value,
    structure_update,
    unstructure,
)
from acp_lite.protocol.jsonrpc import _fast_chunk, loads_json

if TYPE_CHECKING:
    from acp_lite.core.connection import ClientConnection
    from acp_lite.core.records import PendingRequest, SessionState
    from acp_lite.core.rpc import ResponseReceived
    from acp_lite.protocol import Message

__all__ = ["SOURCE_SYNTHESIZED", "SOURCE_TRANSLATED", "V1Translator"]

#: ``Event.source`` of what the translator made up (no wire update carried it).
SOURCE_SYNTHESIZED = "v1:synthesized"
#: ``Event.source`` of a v1 ``session/update`` translated to v2.
SOURCE_TRANSLATED = "v1:session/update"

_PROMPT = "session/prompt"
_UPDATE = "session/update"
_UPDATE_BYTES = b'"session/update"'
_PERMISSION = "session/request_permission"
_PERMISSION_BYTES = b'"session/request_permission"'

#: v2 client requests with no v1 method: refused before sending.
_NO_V1 = frozenset(
    {
        "tool_call/cancel",
        "terminal/cancel",
        "session/fork",
        "session/archive",
        "session/unarchive",
        "session/set_title",
        "session/status",
        "auth/status",
        "providers/list",
        "providers/set",
        "providers/disable",
        "proxy/initialize",
        "mcp/message",
    }
)
#: v2 method -> v1 method where only the name differs.
_RENAMED = {"auth/login": "authenticate", "auth/logout": "logout"}
#: Chunk tag -> the kind used in synthetic message ids.
_CHUNK_KIND = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}


@attrs.define(slots=True, eq=False)
class _V1Update:
    """The params of a v1 ``session/update`` as decoded: its session only (the
    payload is read raw from ``Notification.raw_params``)."""

    session_id: str
    update: Any = None


@attrs.define(slots=True, eq=False)
class _Turn:
    """A v1 ``session/prompt`` in flight (v1: at most one per session)."""

    entry: PendingRequest
    blocks: list[Any]
    message_id: str
    #: The running state and the user message were synthesized.
    begun: bool = False
    #: The agent echoes the prompt (user_message_chunk without messageId first):
    #: those chunks are the user message, none is synthesized.
    echoing: bool = False


@attrs.define(slots=True, eq=False)
class _Session:
    """What the translator remembers of one session."""

    id: str
    #: The v1 ``SessionModeState`` (``None``: the agent has no modes, or a real
    #: ``mode`` config option replaces them).
    modes: dict[str, Any] | None = None
    #: The agent's config options, translated to v2 (without the mode option).
    options: list[Any] = attrs.Factory(list)
    turn: _Turn | None = None
    #: History segment outside turns (for chunks without ``messageId``).
    segment: int = 0
    last_kind: str | None = None

    def config_options(self) -> list[Any]:
        """The v2 option list: the agent's own and the one standing for modes."""
        if self.modes is None:
            return list(self.options)
        return [*self.options, shapes.mode_option(self.modes)]

    def set_setup(self, result: dict[str, Any]) -> None:
        options = result.get("configOptions")
        if isinstance(options, list):
            self.options = [shapes.config_option(o) for o in options]
        modes = result.get("modes")
        if isinstance(modes, dict) and not self._has_real_mode_option():
            self.modes = dict(modes)
        elif modes is not None or self._has_real_mode_option():
            self.modes = None

    def _has_real_mode_option(self) -> bool:
        return any(isinstance(o, dict) and o.get("configId") == "mode" for o in self.options)


class V1Translator:
    """The v1 side of one :class:`ClientConnection` (see the module doc)."""

    def __init__(self, conn: ClientConnection) -> None:
        self.conn = conn
        self.sessions: dict[str, _Session] = {}
        # Request id -> (v1 method sent, detail) for requests whose answer needs it.
        self._sent: dict[int, tuple[str, Any]] = {}

    # ------------------------------------------------------------------ outgoing

    def check_resume(self, session_id: str, *, replay: bool) -> None:
        """Refuse a ``session/resume`` the agent cannot do in v1 (nothing sent)."""
        self._resume_method(session_id, replay)

    def _resume_method(self, session_id: str, replay: bool) -> str:
        caps = self._agent_caps()
        load = caps.get("loadSession") is True
        resume = isinstance(_dict(caps.get("sessionCapabilities")).get("resume"), dict)
        if load and (replay or not resume):
            return "session/load"
        if resume and not replay:
            return "session/resume"
        what = "with history replay " if replay and resume else ""
        raise UnsupportedInV1(
            f"this v1 agent cannot resume a session {what}(it advertised "
            f"loadSession={load}, sessionCapabilities.resume={resume})",
            method="session/resume",
            session_id=session_id,
        )

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

    def prompt_sent(self, entry: PendingRequest, blocks: list[Any]) -> None:
        sess = self._session(entry.session_id or "")
        sess.turn = _Turn(entry, blocks, f"v1-prompt-{entry.id}")

    def send_request(self, method: str, params: Any, session_id: str | None) -> PendingRequest:
        """Send the v1 form of v2 request ``method``; the entry keeps the v2 name."""
        if method in _NO_V1:
            raise UnsupportedInV1(
                f"{method} has no ACP v1 equivalent; this agent speaks protocol v1",
                method=method,
                session_id=session_id,
            )
        p = params if isinstance(params, dict) else unstructure(params)
        p = p if isinstance(p, dict) else {}
        wire, detail = method, None
        if method == "initialize":
            p = shapes.initialize_params(p)
        elif method in _RENAMED:
            wire = _RENAMED[method]
        elif method == "session/new":
            p = _pick(p, "cwd", "additionalDirectories", "_meta") | {
                "mcpServers": p.get("mcpServers") or []
            }
        elif method == "session/resume":
            sid = session_id or str(p.get("sessionId"))
            state = self.conn.sessions.get(sid)
            wire = self._resume_method(sid, state.replaying if state is not None else False)
            keep = _pick(p, "sessionId", "cwd", "additionalDirectories", "mcpServers", "_meta")
            if wire == "session/load":
                keep["mcpServers"] = p.get("mcpServers") or []
                if state is not None:
                    state.replaying = True  # v1 session/load always replays the history
            p = keep
        elif method == "session/set_config_option":
            wire, p, detail = self._config_request(p, session_id)
        entry = self.conn.rpc.request(wire, p, session_id=session_id)
        entry.method = method
        if wire != method or detail is not None:
            self._sent[entry.id] = (wire, detail)
        return entry

    def _config_request(
        self, p: dict[str, Any], session_id: str | None
    ) -> tuple[str, dict[str, Any], Any]:
        sess = self.sessions.get(session_id or str(p.get("sessionId")))
        if p.get("configId") == "mode" and sess is not None and sess.modes is not None:
            wire = {"sessionId": p.get("sessionId"), "modeId": p.get("value")}
            if "_meta" in p:
                wire["_meta"] = p["_meta"]
            return "session/set_mode", wire, p.get("value")
        if p.get("type") == "id":
            # v1 SetSessionConfigOptionRequest: a value id is sent without "type".
            p = {k: v for k, v in p.items() if k != "type"}
        return "session/set_config_option", p, None

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
        # call): the prompt is inserted now, before the connection applies that
        # tool call, which it does right after this line is decoded.
        if not isinstance(sid, str):
            return
        state, sess = self.conn.sessions.get(sid), self.sessions.get(sid)
        turn = sess.turn if sess is not None else None
        if state is None or sess is None or turn is None:
            return
        if not turn.begun and not state.replaying:
            self._begin(state, sess, turn, echo=False)

    def _known_title(self, sid: Any, tool_call_id: Any) -> str:
        state = self.conn.sessions.get(sid) if isinstance(sid, str) else None
        if state is not None and isinstance(tool_call_id, str):
            entity = state.model.get_entity("tool_call", tool_call_id)
            title = getattr(entity, "title", None)
            if isinstance(title, str) and title:
                return title
        return f"Permission for tool call {tool_call_id}"

    def route_update(self, sid: str, msg: Notification) -> None:
        """A v1 ``session/update``: translate and apply it, keep it, or log it."""
        raw = msg.raw_params
        update = raw.get("update") if isinstance(raw, dict) else None
        if not isinstance(update, dict):
            update = unstructure(msg.params.update)
        conn = self.conn
        state = conn.sessions.get(sid)
        if state is not None:
            self.apply_update(state, update)
        elif conn._creating:
            # Translated once the session/new response names the session (and its modes).
            at = conn.findings.at if conn.findings is not None else None
            conn._early.setdefault(sid, []).append((None, update, at))
        else:
            conn.log_event("unknown_session_update", data=msg, session_id=sid)

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
                v2 = self._translate(sess, raw, state.replaying)
                # The common text chunk takes the wire layer's fast path.
                update = _fast_chunk({"sessionId": state.id, "update": v2})
                if update is None:
                    update = structure_update(v2)
            except Exception:  # a malformed update: applied as received (unrecognised)
                update = structure_update(raw)
        keep = raw if self.conn._keep_raw else None
        self.conn._apply(state, update, keep, SOURCE_TRANSLATED)

    def _translate(self, sess: _Session, raw: dict[str, Any], replaying: bool) -> dict[str, Any]:
        tag = raw.get("sessionUpdate")
        kind = _CHUNK_KIND.get(tag) if isinstance(tag, str) else None
        last, sess.last_kind = sess.last_kind, (kind or "other")
        if kind is not None:
            if "messageId" in raw and raw["messageId"] is not None:
                return raw
            return {**raw, "messageId": self._message_id(sess, kind, last, replaying)}
        if tag == "tool_call" or tag == "tool_call_update":
            out = shapes.tool_call(raw, create=tag == "tool_call")
            out["sessionUpdate"] = "tool_call_update"
            return out
        if tag == "plan":
            plan = {"type": "items", "planId": "v1-plan", "entries": raw.get("entries")}
            out = {k: v for k, v in raw.items() if k not in ("entries", "sessionUpdate")}
            return {**out, "sessionUpdate": "plan_update", "plan": plan}
        if tag == "available_commands_update":
            commands = raw.get("availableCommands")
            if isinstance(commands, list):
                commands = [shapes.command(c) for c in commands]
            return {**raw, "availableCommands": commands}
        if tag == "config_option_update":
            options = raw.get("configOptions")
            if not isinstance(options, list):
                return raw
            sess.set_setup({"configOptions": options})
            return {**raw, "configOptions": sess.config_options()}
        if tag == "current_mode_update" and sess.modes is not None:
            sess.modes["currentModeId"] = raw.get("currentModeId")
            out = {k: v for k, v in raw.items() if k not in ("currentModeId", "sessionUpdate")}
            out["sessionUpdate"] = "config_option_update"
            out["configOptions"] = sess.config_options()
            return out
        # session_info_update, usage_update, notice, compaction_update and
        # compaction_summary_chunk have the v2 shape; anything else is kept as
        # received (an UnrecognizedSessionUpdate).
        return raw

    @staticmethod
    def _message_id(sess: _Session, kind: str, last: str | None, replaying: bool) -> str:
        turn = sess.turn
        if turn is not None and not replaying:
            if turn.echoing:
                if kind == "user":
                    return turn.message_id  # the agent's echo of the prompt
                turn.echoing = False
            return f"v1-{turn.entry.id}-{kind}"
        # Outside a turn (a history replay): a user message after anything else
        # starts a new segment, so each replayed exchange gets its own messages.
        if kind == "user" and last != "user":
            sess.segment += 1
        return f"v1-h{sess.segment}-{kind}"

    # ------------------------------------------------------------------ the turn

    def _synthesize(self, state: SessionState, update: dict[str, Any]) -> None:
        self.conn._apply(state, structure_update(update), None, SOURCE_SYNTHESIZED)

    def _begin(self, state: SessionState, sess: _Session, turn: _Turn, *, echo: bool) -> None:
        # The prompt was inserted and the session runs (v2: user_message, running,
        # and the prompt response with the messageId).
        turn.begun = True
        turn.echoing = echo
        sess.last_kind = None
        # background: [] on every synthesized state (v1 reports no background work):
        # after an idle listed it, a state without the list breaks a v2 MUST.
        running = {"sessionUpdate": "state_update", "state": "running", "background": []}
        self._synthesize(state, running)
        if not echo:
            user = {"sessionUpdate": "user_message", "messageId": turn.message_id}
            self._synthesize(state, {**user, "content": turn.blocks})
        entry = turn.entry
        state.model.prompt_accepted(entry.id, turn.message_id)
        if not entry.done:
            entry.done = True
            entry.result = PromptResponse(message_id=turn.message_id)
            self.conn._events.append(ResponseArrived(entry))
        self.conn._touch(state)

    def on_response(self, ev: ResponseReceived) -> bool:
        """Handle a response the v1 way; ``False``: the connection handles it (after
        :meth:`translate_result`)."""
        entry = ev.pending
        if ev.error is not None:
            self._sent.pop(entry.id, None)
        if entry.method != _PROMPT:
            return False
        conn = self.conn
        state = conn.sessions.get(entry.session_id or "")
        sess = self.sessions.get(entry.session_id or "")
        turn = sess.turn if sess is not None and sess.turn and sess.turn.entry is entry else None
        if sess is not None and turn is not None:
            sess.turn = None
            # Late chunks without messageId start new messages, never extend the
            # turn's or a replayed one.
            sess.segment += 1
            sess.last_kind = None
        if state is None or sess is None or turn is None:
            return False  # not a turn this translator knows: the generic path
        reported = entry.done
        if ev.error is not None:
            err = ev.error
            data = None if err.data is UNSET else err.data
            error = request_error_from(
                err.code,
                err.message,
                data,
                method=_PROMPT,
                session_id=state.id,
                stderr_tail=conn.stderr_tail(),
            )
            conn.name_auth_methods(error)
            if not turn.begun:
                # Nothing was reported for it: not inserted (PromptRejected).
                entry.done, entry.error = True, error
                state.model.prompt_rejected(entry.id, err)
            else:
                wire_error: dict[str, Any] = {"code": err.code, "message": err.message}
                if data is not None:
                    wire_error["data"] = data
                self._synthesize(state, shapes.idle("error", error=wire_error))
        else:
            result = ev.result if isinstance(ev.result, dict) else {}
            if not turn.begun:
                self._begin(state, sess, turn, echo=False)  # reports the entry
                reported = True
            stop = result.get("stopReason")
            if not isinstance(stop, str):
                conn.log_event(
                    "protocol_error",
                    data=ev.result,
                    method=_PROMPT,
                    session_id=state.id,
                )
            self._synthesize(
                state, shapes.idle(stop if isinstance(stop, str) else None, meta=result)
            )
            extra = {k: v for k, v in result.items() if k != "messageId"}
            entry.result = converter.structure(
                {**extra, "messageId": turn.message_id}, PromptResponse
            )
            entry.done = True
        conn._touch(state)
        if not reported:
            conn._events.append(ResponseArrived(entry))
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
                sess = self.sessions[sid] = _Session(sid)
                sess.set_setup(result)
                return _setup(result, sess)
        elif method == "session/resume" and entry.session_id is not None:
            sess = self._session(entry.session_id)
            sess.set_setup(result)
            state = self.conn.sessions.get(entry.session_id)
            if state is not None:
                # The resume snapshot v2 sends and v1 has not: nothing runs after a load.
                self._synthesize(state, shapes.idle(None))
            return _setup(result, sess)
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

    # ------------------------------------------------------------------ helpers

    def _session(self, sid: str) -> _Session:
        sess = self.sessions.get(sid)
        if sess is None:
            sess = self.sessions[sid] = _Session(sid)
        return sess

    def _agent_caps(self) -> dict[str, Any]:
        return _dict(self.conn.initialize_result.get("agentCapabilities"))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pick(p: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: p[k] for k in keys if k in p}


def _setup(result: dict[str, Any], sess: _Session) -> dict[str, Any]:
    # v1 session/new or session/load result -> v2 (modes and models stay as extra fields).
    if "configOptions" not in result and sess.modes is None:
        return result
    return {**result, "configOptions": sess.config_options()}
