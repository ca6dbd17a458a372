"""Conformance checks over the wire traffic of a connection.

Two sources of findings, each a :class:`Violation` with a rule id, a one-line
message and the spec section it comes from:

* connection-level rules (:data:`RULES`), checked here over a transcript: they
  need both directions (requests, responses, notifications), which the session
  model does not see;
* the session model's own observations (``acp_lite.model.rules``): a running
  client's come from its live models (``Client.violations()``); a saved
  transcript's by replaying its session traffic into fresh ``SessionModel``\\ s.
  Where both see the same thing (e.g. ``unknown-stop-reason``) the rule has one
  id and is reported once, by the connection checker.

Everything is sans-IO: :class:`ConnectionChecker` is fed lines in wire order, so it
works on a live client's transcript and on a saved NDJSON file alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias, TypeGuard

import attrs

from acp_lite.core import is_v1_initialize
from acp_lite.jsontypes import JsonValue
from acp_lite.model import rules as model_rules

# One record type for the whole project, defined in the lower layer and
# re-exported here: pytest_acp.Rule / pytest_acp.Violation are these classes.
from acp_lite.model.rules import Rule, Violation
from acp_lite.protocol.constants import BUSY_STATES, CANCELLED, IDLE, STATES, STOP_REASONS
from acp_lite.transcript import Transcript, TranscriptEntry
from pytest_acp._conformance_v1 import V1_RULES, ReadProof, V1Turns
from pytest_acp._model_replay import Replay, drop_duplicates
from pytest_acp._safejson import NOT_JSON, key, loads, short

__all__ = [
    "KNOWN_STATES",
    "KNOWN_STOP_REASONS",
    "NOT_JSON",
    "RULES",
    "ConnectionChecker",
    "Rule",
    "SavedTranscript",
    "Violation",
    "check_transcript",
    "format_violations",
    "rule_info",
]


_PL = "prompt-lifecycle"
RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule(
            "prompt-response-without-message-id",
            "a successful session/prompt response carries a non-empty string messageId",
            f"{_PL}#2-prompt-accepted",
        ),
        Rule(
            "user-message-not-echoed",
            "each inserted prompt is reported by a user_message update with its messageId",
            f"{_PL}#2-prompt-accepted",
        ),
        Rule(
            "rejected-prompt-echoed",
            "a prompt answered with an error was not inserted: no user message is reported for it",
            f"{_PL}#prompts-that-are-never-inserted",
        ),
        Rule(
            "idle-without-running",
            "foreground work started by a prompt is reported running before the idle ending it",
            f"{_PL}#3-agent-reports-output",
        ),
        Rule(
            "output-while-idle",
            "agent messages and thoughts are foreground work: running is reported before them",
            f"{_PL}#foreground-and-background-work",
        ),
        Rule(
            "work-not-ended",
            "foreground work reported running ends with an idle state_update",
            f"{_PL}#foreground-and-background-work",
        ),
        Rule(
            "cancel-not-cancelled",
            "after session/cancel during foreground work, the ending idle has stopReason "
            "cancelled (judged only once the agent has provably read the cancel: it answered "
            "a request sent after it before that idle)",
            f"{_PL}#cancellation",
        ),
        Rule(
            "unknown-stop-reason",
            "stop reasons outside the spec's list start with '_' (others are reserved)",
            f"{_PL}#stop-reasons",
        ),
        Rule(
            "reserved-state",
            "session states outside the spec's list start with '_' (others are reserved)",
            "extensibility#enum-and-tagged-union-variants",
        ),
        Rule(
            "update-unknown-session",
            "session/update names a session opened on this connection or announced as a subagent",
            "session-setup#session-id",
        ),
        Rule(
            "stdout-not-jsonrpc",
            "the agent writes nothing to stdout but JSON-RPC 2.0 messages, one per line",
            "transports#stdio",
        ),
        Rule(
            "message-not-checkable",
            "every message has the shape the schema gives it (this one could not be read)",
            "transports#stdio",
        ),
        Rule(
            "response-without-request",
            "every response answers a request the client sent (matched by id)",
            "transports#stdio",
        ),
    )
}

KNOWN_STOP_REASONS = STOP_REASONS
KNOWN_STATES = STATES
_BUSY = BUSY_STATES
_OUTPUT = frozenset(
    {"agent_message", "agent_message_chunk", "agent_thought", "agent_thought_chunk"}
)
_OPENING = frozenset({"session/new", "session/load", "session/resume", "session/fork"})
_REPLAYING = frozenset({"session/load", "session/resume"})


def rule_info(rule_id: str) -> Rule | None:
    """The :class:`Rule` for ``rule_id``: a connection rule, or one of the session
    model's rules (``acp_lite.model.rules``)."""
    return RULES.get(rule_id) or V1_RULES.get(rule_id) or model_rules.RULES.get(rule_id)


@attrs.define
class _Session:
    state: str = IDLE
    needs_running: bool = False
    # The send position of the first session/cancel during the current work.
    cancel_sent: int | None = None
    idle_since: int = -1  # entry index of the latest idle
    accepted: dict[str, int] = attrs.Factory(dict)  # messageId -> response entry index
    user_messages: dict[str, int] = attrs.Factory(dict)  # live user messages
    rejected: int = 0
    replaying: int = 0  # session/load or session/resume requests in flight
    output_flagged: bool = False
    busy_since: int = -1


@attrs.define
class _Pending:
    method: str
    params: Any
    index: int
    sent: int  # its position among the messages the client sent


class ConnectionChecker:
    """Checks the connection-level :data:`RULES`; feed lines in wire order, then
    call :meth:`finish` once."""

    def __init__(self) -> None:
        self.violations: list[Violation] = []
        self._sessions: dict[str, _Session] = {}
        self._known: set[str] = set()
        self._pending: dict[str, _Pending] = {}  # our requests by JSON id
        # Lines the client sent so far: a batch is one line, whose members the agent
        # MAY process "in any order" (spec "Transports", batches), so it is one step
        # of the order a proof relies on.
        self._sent_lines = 0
        self._read = ReadProof()
        self._unknown_updates: dict[str, int] = {}
        self._finished = False
        #: The protocol the agent answered ``initialize`` in (1: the v1 rules apply,
        #: and none of the v2 ones about insertion, states and echoes).
        self.version = 2
        self._v1: V1Turns | None = None
        #: When the line being checked was recorded (``None``: not known). No rule
        #: judges by it: times do not prove what the agent had read (the order does).
        self.time: float | None = None

    # -- helpers ------------------------------------------------------------------

    def _add(self, rule: str, message: str, index: int | None, session: str | None) -> None:
        found = RULES.get(rule) or V1_RULES[rule]
        self.violations.append(
            Violation(
                rule,
                message,
                spec=found.spec,
                level=found.level,
                entry_index=index,
                session_id=session,
                source="connection",
            )
        )

    def _session(self, sid: str) -> _Session:
        found = self._sessions.get(sid)
        if found is None:
            found = self._sessions[sid] = _Session()
        return found

    # -- feeding ------------------------------------------------------------------

    def feed(
        self, direction: str, line: bytes | str, index: int, time: float | None = None
    ) -> object:
        """One wire line (``direction`` "send" = client -> agent) at transcript ``index``,
        recorded at ``time`` (seconds; ``None``: not known).

        Returns the decoded JSON value (:data:`NOT_JSON` for a line that is not JSON),
        so that the session-model replay fed the same line need not parse it again."""
        self.time = time
        value = loads(line)
        if value is NOT_JSON:
            if direction == "recv":
                text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
                self._add("stdout-not-jsonrpc", f"line is not JSON: {text[:80]!r}", index, None)
            return NOT_JSON
        self.feed_json(direction, value, index)
        return value

    def feed_chunk(
        self, direction: str, session_id: str, tag: str, index: int, time: float | None = None
    ) -> None:
        """A streamed chunk's line at transcript ``index``: a ``session/update``
        notification of ``session_id`` whose update is tagged ``tag`` (an agent message
        or thought chunk), checked as when fed whole (the client kept it compactly:
        ``Transcript.stored``); what it carries besides, its text, no rule reads."""
        if time is not None:
            self.time = time
        if direction != "recv":  # not a chunk the agent streamed: the whole way
            update: JsonValue = {"sessionUpdate": tag}
            params: JsonValue = {"sessionId": session_id, "update": update}
            msg: JsonValue = {"jsonrpc": "2.0", "method": "session/update", "params": params}
            self.feed_json(direction, msg, index)
            return
        # As _received -> _update take a chunk's notification.
        if session_id not in self._known:
            self._unknown_updates.setdefault(session_id, index)
        if self._v1 is None:
            self._output(session_id, self._session(session_id), tag, index)

    def feed_json(
        self, direction: str, value: JsonValue, index: int, time: float | None = None
    ) -> None:
        """One decoded wire value (a message or a batch), recorded at ``time``."""
        if time is not None:
            self.time = time
        messages = value if isinstance(value, list) and value else [value]
        sent = self._sent_lines
        if direction == "send":
            self._sent_lines += 1
        for msg in messages:
            if not _is_jsonrpc(msg):
                if direction == "recv":
                    self._add(
                        "stdout-not-jsonrpc",
                        f"not a JSON-RPC 2.0 message: {short(msg)}",
                        index,
                        None,
                    )
                continue
            try:
                if direction == "send":
                    self._sent(msg, index, sent)
                else:
                    self._received(msg, index)
            except Exception as exc:  # a shape no rule foresaw: a finding, never a crash
                self._add(
                    "message-not-checkable",
                    f"{type(exc).__name__} while checking {short(msg)}",
                    index,
                    None,
                )

    def _sent(self, msg: Mapping[str, Any], index: int, sent: int) -> None:
        # ``sent``: the position of its line among the lines the client sent.
        method = msg.get("method")
        params = msg.get("params")
        sid = params.get("sessionId") if isinstance(params, Mapping) else None
        if isinstance(method, str) and "id" in msg:
            self._pending[key(msg["id"])] = _Pending(method, params, index, sent)
        if self._v1 is not None:
            self._v1.sent(method, sid, "id" in msg, sent)
            return
        if isinstance(method, str) and "id" in msg:
            if method in _REPLAYING and isinstance(sid, str):
                self._session(sid).replaying += 1
        elif method == "session/cancel" and isinstance(sid, str):
            session = self._session(sid)
            if session.state in _BUSY and session.cancel_sent is None:
                session.cancel_sent = sent

    def _received(self, msg: Mapping[str, Any], index: int) -> None:
        if "method" in msg:
            if msg.get("method") == "session/update":
                self._update(msg.get("params"), index)
            return
        pending = self._pending.pop(key(msg.get("id")), None)
        if pending is None:
            self._add(
                "response-without-request",
                f"response to id {msg.get('id')!r}, which the client never sent (or already got)",
                index,
                None,
            )
            return
        if pending.sent > self._read.sent:  # answered (result or error): it was read
            self._read = ReadProof(pending.sent, pending.method, msg.get("id"))
        params = pending.params if isinstance(pending.params, Mapping) else {}
        sid = params.get("sessionId")
        result = msg.get("result")
        if pending.method == "initialize" and is_v1_initialize(result):
            self.version = 1
            self._v1 = V1Turns(self._add)
        if pending.method in _REPLAYING and isinstance(sid, str):
            self._session(sid).replaying = max(0, self._session(sid).replaying - 1)
        if pending.method in _OPENING and "result" in msg:
            opened = result.get("sessionId") if isinstance(result, Mapping) else None
            for s in (opened, sid if pending.method in _REPLAYING else None):
                if isinstance(s, str):
                    self._known.add(s)
        if pending.method == "session/prompt" and isinstance(sid, str):
            if self._v1 is not None:
                self._v1.prompt_answered(sid, msg, index, self._read)
            else:
                self._prompt_answered(sid, msg, index)

    def _prompt_answered(self, sid: str, msg: Mapping[str, Any], index: int) -> None:
        session = self._session(sid)
        if "error" in msg:
            session.rejected += 1
            return
        result = msg.get("result")
        mid = result.get("messageId") if isinstance(result, Mapping) else None
        if not isinstance(mid, str) or not mid:
            self._add(
                "prompt-response-without-message-id",
                f"session/prompt result has messageId {mid!r}",
                index,
                sid,
            )
            return
        session.accepted[mid] = index
        if mid not in session.user_messages and session.state == IDLE:
            # The echo has not arrived: the work this prompt starts is still ahead.
            session.needs_running = True

    def _update(self, params: Any, index: int) -> None:
        if not isinstance(params, Mapping):
            return
        sid = params.get("sessionId")
        update = params.get("update")
        if not isinstance(sid, str) or not isinstance(update, Mapping):
            return
        if sid not in self._known:
            self._unknown_updates.setdefault(sid, index)
        if self._v1 is not None:
            self._v1.update(sid, update, index)
            return
        session = self._session(sid)
        tag = update.get("sessionUpdate")
        if tag == "subagent_update" and isinstance(update.get("sessionId"), str):
            self._known.add(update["sessionId"])
        elif tag in ("user_message", "user_message_chunk") and not session.replaying:
            mid = update.get("messageId")
            if isinstance(mid, str) and mid not in session.user_messages:
                session.user_messages[mid] = index
                if session.state == IDLE and mid not in session.accepted:
                    session.needs_running = True
        elif tag == "state_update":
            self._state(sid, session, update, index)
        elif isinstance(tag, str):
            self._output(sid, session, tag, index)

    def _output(self, sid: str, session: _Session, tag: str, index: int) -> None:
        if (
            tag in _OUTPUT
            and session.state == IDLE
            and not session.replaying
            and sid in self._known  # an unknown session is reported as such, once
            and not session.output_flagged  # once per idle period, not once per chunk
        ):
            session.output_flagged = True
            self._add(
                "output-while-idle",
                f"{tag} received while the session is idle (no running reported)",
                index,
                sid,
            )

    def _state(self, sid: str, session: _Session, update: Mapping[str, Any], index: int) -> None:
        state = update.get("state")
        if not isinstance(state, str):
            return
        if state not in KNOWN_STATES and not state.startswith("_"):
            self._add(
                "reserved-state",
                f"state {state!r} is not a spec state and does not start with '_'",
                index,
                sid,
            )
        if state != IDLE:
            if state in _BUSY:
                session.needs_running = False
                if session.state not in _BUSY:
                    session.busy_since = index
            session.state = state
            return
        reason = update.get("stopReason")
        known = isinstance(reason, str) and reason in KNOWN_STOP_REASONS
        if isinstance(reason, str) and not known and not reason.startswith("_"):
            self._add(
                "unknown-stop-reason",
                f"stopReason {reason!r} is not a spec stop reason and does not start with '_'",
                index,
                sid,
            )
        if session.needs_running and not session.replaying:
            self._add(
                "idle-without-running",
                "idle ended a prompt's work but no running/requires_action was reported before it",
                index,
                sid,
            )
        # Only a proven reading of the cancel makes a non-cancelled end a finding:
        # an idle the agent wrote before it read the cancel crossed it on the wire,
        # and its stop reason is then the truth (issue 24 item 12).
        if (
            session.state in _BUSY
            and reason != CANCELLED
            and self._read.covers(session.cancel_sent)
        ):
            self._add(
                "cancel-not-cancelled",
                f"session/cancel was sent while {session.state} and the agent had read it "
                f"({self._read.because()}); the ending idle has stopReason {reason!r}, "
                "not 'cancelled'",
                index,
                sid,
            )
        session.needs_running = False
        session.cancel_sent = None
        session.output_flagged = False
        session.state = IDLE
        session.idle_since = index

    # -- end of traffic -----------------------------------------------------------

    def finish(self, *, ended: bool = False, agent_exited: bool = False) -> list[Violation]:
        """Checks that need the whole transcript; returns all violations, in order.

        ``ended=True`` says the traffic is over (the connection closed, or the test
        gave up waiting): a session still running is then reported as
        ``work-not-ended``. A live test may simply not have waited, so by default
        it is not. ``agent_exited=True`` says the traffic ended because the agent
        process exited on its own: work it left running is not reported then,
        since no update can report an exit (spec "Prompt Lifecycle", Failures:
        "Clients detect a lost connection or an exited Agent process themselves").
        """
        if self._finished:
            return self.violations
        self._finished = True
        for sid, session in self._sessions.items():
            if ended and not agent_exited and session.state in _BUSY:
                self._add(
                    "work-not-ended",
                    f"the session is still {session.state} at the end of the traffic: "
                    "no idle was reported",
                    session.busy_since if session.busy_since >= 0 else None,
                    sid,
                )
        for sid, index in self._unknown_updates.items():
            if sid not in self._known:
                self._add(
                    "update-unknown-session",
                    f"session/update for session {sid!r}, never opened on this connection",
                    index,
                    sid,
                )
        prompts_open = {
            p.params.get("sessionId")
            for p in self._pending.values()
            if p.method == "session/prompt" and isinstance(p.params, Mapping)
        }
        for sid, session in self._sessions.items():
            for mid, index in session.accepted.items():
                # Only once the agent had its chance: an idle arrived after the
                # response (the echo may come after the response, spec "Prompt accepted").
                if mid not in session.user_messages and session.idle_since > index:
                    self._add(
                        "user-message-not-echoed",
                        f"prompt accepted as message {mid!r}, but no user_message update "
                        "carries that id",
                        index,
                        sid,
                    )
            if session.rejected and sid not in prompts_open:
                for mid, index in session.user_messages.items():
                    if mid not in session.accepted:
                        self._add(
                            "rejected-prompt-echoed",
                            f"user message {mid!r} matches no accepted prompt, and a prompt "
                            "on this session was rejected",
                            index,
                            sid,
                        )
        self.violations.sort(key=lambda v: -1 if v.entry_index is None else v.entry_index)
        return self.violations


def _is_jsonrpc(msg: object) -> TypeGuard[Mapping[str, Any]]:
    if not isinstance(msg, Mapping) or msg.get("jsonrpc") != "2.0":
        return False
    if isinstance(msg.get("method"), str):
        return True
    return "id" in msg and (("result" in msg) != ("error" in msg))


SavedTranscript: TypeAlias = (
    Transcript | Iterable[TranscriptEntry] | Iterable[Mapping[str, JsonValue]]
)
"""What :func:`check_transcript` reads: a ``Transcript``, its entries, or NDJSON
records (each a JSON object: ``dir`` and ``msg`` or ``raw``)."""


def _entries(transcript: SavedTranscript) -> list[tuple[str, Any, bool, float | None]]:
    """(direction, line bytes or JSON value, is_json, time) for each entry of
    ``transcript``: ``TranscriptEntry`` objects, NDJSON records or a ``Transcript``."""
    entries = getattr(transcript, "entries", None)
    items: Iterable[Any] = entries() if callable(entries) else transcript
    out: list[tuple[str, Any, bool, float | None]] = []
    for item in items:
        if isinstance(item, Mapping):
            t = item.get("t")
            time = float(t) if isinstance(t, int | float) and not isinstance(t, bool) else None
            if "msg" in item:
                out.append((str(item.get("dir")), item["msg"], True, time))
            else:
                out.append((str(item.get("dir")), str(item.get("raw", "")), False, time))
        else:
            out.append((item.direction, item.line, False, item.time))
    return out


def check_transcript(
    transcript: SavedTranscript,
    *,
    model: bool = True,
    start: int = 0,
    ended: bool = False,
    agent_exited: bool = False,
) -> list[Violation]:
    """All violations in ``transcript`` (a ``Transcript``, ``TranscriptEntry`` list, or
    NDJSON records). ``model=False`` skips the session model's rules; ``start``
    drops violations located before that entry (traffic of an earlier test on a
    shared connection is still replayed, so state carries over); ``ended`` and
    ``agent_exited``: see :meth:`ConnectionChecker.finish`."""
    checker = ConnectionChecker()
    replay = Replay() if model else None
    # Each line is parsed once: the checker's decoded value also feeds the replay.
    for i, (direction, line, decoded, time) in enumerate(_entries(transcript)):
        if decoded:
            value = line
            checker.feed_json(direction, value, i, time)
        else:
            value = checker.feed(direction, line, i, time)
        if replay is not None:
            replay.feed(direction, None if decoded else line, value, i)
    found = list(checker.finish(ended=ended, agent_exited=agent_exited))
    # The replay's v2 models cannot read v1 lines (a live v1 client's models see
    # them translated, which a saved transcript does not record).
    if replay is not None and checker.version == 2:
        found = drop_duplicates(found + [v for v in replay.finish() if v.rule not in RULES])
    return [v for v in found if v.entry_index is None or v.entry_index >= start]


def format_violations(violations: Iterable[Violation], limit: int = 20) -> str:
    """One line per violation: ``ACP-XXX-NNN rule-id (...): message [spec: ...]``."""
    from acp_lite.conformance.passive import for_rule  # plain data; findings are rare

    lines: list[str] = []
    items = list(violations)
    for v in items[:limit]:
        where = f" (transcript line {v.entry_index})" if v.entry_index is not None else ""
        sid = f" session {v.session_id}" if v.session_id else ""
        should = " (SHOULD)" if v.level == "SHOULD" else ""
        found = for_rule(v.rule)
        rid = f"{found.id} " if found is not None else ""
        lines.append(f"  {rid}{v.rule}{should}{where}{sid}: {v.message} [spec: {v.spec}]")
    if len(items) > limit:
        lines.append(f"  ... and {len(items) - limit} more")
    return "\n".join(lines)
