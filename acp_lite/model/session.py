"""``SessionModel``: a faithful, sans-IO picture of what the agent reported for one session.

The connection feeds it, in receive order, every decoded ``session/update`` of the
session (:meth:`SessionModel.apply`) and the client's own prompt traffic
(:meth:`~SessionModel.submit`, :meth:`~SessionModel.prompt_accepted`,
:meth:`~SessionModel.prompt_rejected`, :meth:`~SessionModel.cancel_sent`). The rules
are those of the v2 *Prompt Lifecycle* page (``tests/data/spec/seeds/000_*.txt``);
comments cite its sections. Nothing here raises on bad agent behaviour: it is
recorded as a :class:`~acp_lite.model.rules.Violation`.

Hot path: an ``*_chunk`` update costs a few dict lookups and list appends and
retains no new object of its own; nothing depends on how much was received before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from time import monotonic
from typing import Any

from acp_lite.model.entities import (
    ENTITY_KINDS,
    Entity,
    MessageEntity,
    PlanEntity,
    SessionMessageEntity,
    ToolCallEntity,
    patch_meta,
)
from acp_lite.model.events import Event, EventLog
from acp_lite.model.foreground import Foreground
from acp_lite.model.requests import RequestLog
from acp_lite.model.rules import Violation, violation
from acp_lite.model.state import (
    IDLE,
    REQUIRES_ACTION,
    RUNNING,
    UNKNOWN,
    ContextUsage,
    SessionInfo,
)
from acp_lite.model.store import EntityStore, finished, patch_field
from acp_lite.model.submissions import RequestId, Submission, SubmissionTracker
from acp_lite.protocol import (
    UNSET,
    AgentMessage,
    AgentMessageChunk,
    AgentThought,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    CompactionSummaryChunk,
    CompactionUpdate,
    ConfigOptionUpdate,
    IdleStateUpdate,
    Notice,
    PlanRemoved,
    PlanUpdate,
    RequiresActionStateUpdate,
    RunningStateUpdate,
    SessionConfigOption,
    SessionInfoUpdate,
    SessionMessage,
    SessionMessageChunk,
    SubagentUpdate,
    TerminalOutputChunk,
    TerminalUpdate,
    ToolCallContentChunk,
    ToolCallUpdate,
    UnknownStateUpdate,
    UnrecognizedSessionUpdate,
    UnrecognizedStateUpdate,
    UsageUpdate,
    UserMessage,
    UserMessageChunk,
)
from acp_lite.protocol._chunk_lines import Template

_CHUNK_TAGS = {
    "user_message_chunk": "user_message",
    "agent_message_chunk": "agent_message",
    "agent_thought_chunk": "agent_thought",
    "session_message_chunk": "session_message",
    "user_message": "user_message",
    "agent_message": "agent_message",
    "agent_thought": "agent_thought",
    "session_message": "session_message",
}


class SessionModel:
    """What a spec-conforming client must show for one session.

    Feed it with :meth:`apply` (one decoded ``SessionUpdate`` at a time, in receive
    order); read ``timeline``, :meth:`entity`, ``state``, ``stop_reason``, ``error``,
    ``background``, ``is_quiet``, ``usage``, ``events``, ``violations`` and
    :meth:`text`. Pure Python: no IO, no threads, no trio.
    """

    def __init__(
        self,
        session_id: str | None = None,
        *,
        max_events: int | None = None,
        max_blocks: int | None = None,
        max_entities: int | None = None,
    ) -> None:
        self.session_id = session_id
        # max_events bounds the event log only; the picture (timeline, state ...) is
        # whole whatever it is (events.py). max_blocks and max_entities (the bounded
        # mode, limits.py) do change the picture, as documented there.
        self._log = EventLog(max_events)
        self._violations: list[Violation] = []
        #: Called with each violation as it is recorded (the connection uses it to
        #: locate findings in its transcript); ``None``: no call.
        self.on_violation: Callable[[Violation], None] | None = None
        self._notices: list[int] = []
        self._requests = RequestLog()
        self._subs = SubmissionTracker()
        self._max_entities = max_entities
        self._dropped_submissions = 0
        self._store = store = EntityStore(
            self._violate,
            self._subs.on_user_message,
            max_blocks=max_blocks,
            max_entities=max_entities,
            droppable=lambda ent: finished(ent, self._subs.last_ending_idle(), self._fg.listed),
        )
        self._timeline = store.timeline
        self._kinds = store.kinds
        self._fg = Foreground(self._kinds, self._subs, self._violate)
        # Current values.
        self._usage: ContextUsage | None = None
        self._config_options: list[Any] = []
        self._available_commands: list[Any] = []
        self._config_reported = False
        self._commands_reported = False
        self._info = SessionInfo()
        # Resume.
        self._resume_state_mark: int | None = None
        self._finished = False
        self._handlers: dict[type, Callable[[Any, int], None]] = {
            UserMessageChunk: store.chunk_handler("user_message", MessageEntity),
            AgentMessageChunk: store.chunk_handler("agent_message", MessageEntity),
            AgentThoughtChunk: store.chunk_handler("agent_thought", MessageEntity),
            SessionMessageChunk: store.chunk_handler("session_message", SessionMessageEntity),
            UserMessage: store.message_handler("user_message", MessageEntity),
            AgentMessage: store.message_handler("agent_message", MessageEntity),
            AgentThought: store.message_handler("agent_thought", MessageEntity),
            SessionMessage: store.on_session_message,
            ToolCallUpdate: store.on_tool_call,
            ToolCallContentChunk: store.on_tool_call_chunk,
            TerminalUpdate: store.on_terminal,
            TerminalOutputChunk: store.on_terminal_chunk,
            PlanUpdate: store.on_plan,
            PlanRemoved: store.on_plan_removed,
            CompactionUpdate: store.on_compaction,
            CompactionSummaryChunk: store.on_compaction_chunk,
            SubagentUpdate: store.on_subagent,
            AvailableCommandsUpdate: self._on_commands,
            ConfigOptionUpdate: self._on_config,
            SessionInfoUpdate: self._on_info,
            UsageUpdate: self._on_usage,
            Notice: self._on_notice,
            RunningStateUpdate: self._state_handler(RUNNING),
            IdleStateUpdate: self._state_handler(IDLE),
            RequiresActionStateUpdate: self._state_handler(REQUIRES_ACTION),
            UnknownStateUpdate: self._state_handler(UNKNOWN),
            UnrecognizedStateUpdate: self._on_unrecognized_state,
            UnrecognizedSessionUpdate: self._on_unrecognized,
        }

    # ------------------------------------------------------------------ feeding

    def apply(
        self,
        update: Any,
        *,
        raw: dict[str, Any] | bytes | Template | None = None,
        session_id: str | None = None,
        replayed: bool = False,
        source: str | None = None,
    ) -> Event:
        """Apply one decoded ``SessionUpdate`` and log it; return its :class:`Event`.

        ``raw`` is the ``update`` dict as received (kept in the event log), or the
        whole received ``session/update`` line (``bytes``: kept as is, decoded on read),
        or the chunk template that decoded ``update`` from its line (kept with the
        chunk's text, rebuilt on read), ``session_id`` the notification's
        ``sessionId`` (checked against this session's), ``replayed`` marks updates
        received during a history replay, ``source`` names the method when the update
        did not arrive as a ``session/update`` (``Event.source``).
        """
        index = self.feed(update, raw, session_id, replayed, source)
        log = self._log
        # Built from the update at hand: the log may keep only its line (events.py).
        return Event(index, update, replayed, log.time(index), log)

    def feed(
        self,
        update: Any,
        raw: dict[str, Any] | bytes | Template | None = None,
        session_id: str | None = None,
        replayed: bool = False,
        source: str | None = None,
    ) -> int:
        """Like :meth:`apply` but return the event's index instead of an :class:`Event`.

        The connection's hot path: it builds no object that nobody reads.
        """
        # Hot path: the log keeps columns, not an object per update (events.py).
        index = self._log.append(update, raw, monotonic(), replayed, source)
        self._store.replaying = replayed
        if session_id is not None and session_id != self.session_id:
            if self.session_id is None:
                self.session_id = session_id
            else:
                self._violate(
                    "update-for-other-session",
                    f"update for session {session_id!r} routed to {self.session_id!r}; "
                    "logged, not applied",
                    index,
                )
                return index
        handler = self._handlers.get(update.__class__)
        if handler is None:
            handler = self._find_handler(update)
        handler(update, index)
        return index

    def _find_handler(self, update: Any) -> Callable[[Any, int], None]:
        for cls, handler in self._handlers.items():
            if isinstance(update, cls):
                return handler
        return self._on_foreign

    def submit(self, request_id: RequestId, content: Any = None) -> Submission:
        """Record that ``session/prompt`` request ``request_id`` was sent."""
        self._fg.resyncing = False  # prompting means any resume is over
        keep = self._max_entities
        if keep is not None and len(self._subs.by_request) >= 2 * keep:
            users = self._kinds["user_message"]
            self._dropped_submissions += self._subs.drop_finished(
                keep, lambda m: users.get(m.id) is m
            )
        return self._subs.submit(request_id, content, len(self._log))

    def prompt_accepted(self, request_id: RequestId, message_id: object) -> Submission:
        """The prompt's successful response arrived, carrying the inserted ``messageId``."""
        sub, found = self._subs.accepted(
            request_id, message_id, len(self._log), self._kinds["user_message"]
        )
        self._record(found)
        return sub

    def prompt_rejected(self, request_id: RequestId, error: Any) -> Submission:
        """The prompt was answered with a JSON-RPC error: it was not inserted."""
        return self._subs.rejected(request_id, error, len(self._log))

    def cancel_sent(self) -> list[ToolCallEntity]:
        """The client sent ``session/cancel``: set the local cancel hint.

        Marks every non-final tool call of the foreground work (spec:
        "Cancellation"), skipping tool calls in the latest background list and
        tool calls that reference a listed terminal. Nothing is marked while idle,
        since no foreground work is active then. A later agent update that reports
        the tool call's status replaces the mark. Returns the marked tool calls.
        """
        return self._fg.cancel_hint()

    def resume_requested(self) -> None:
        """``session/resume`` was sent: until its response, state updates are the resume
        snapshot (no transition, no completion), and one must arrive before it."""
        self._resume_state_mark = self._fg.updates
        self._fg.resyncing = True

    def resume_failed(self) -> None:
        """``session/resume`` was answered with an error: state updates are live again."""
        self._fg.resyncing = False
        self._resume_state_mark = None

    def setup_response(self, result: Any = None, *, resumed: bool = False) -> None:
        """The ``session/new`` (or, with ``resumed``, ``session/resume``) response arrived.

        Never touches the foreground state: a state reported before the response
        is kept (spec: "Initial state and synchronization"). Initial
        ``configOptions`` / ``availableCommands`` from ``result`` (decoded or a dict)
        are used only when no update reported them already.
        """
        config = _field(result, "config_options", "configOptions")
        commands = _field(result, "available_commands", "availableCommands")
        if isinstance(config, list) and not self._config_reported:
            self._config_options = list(config)
        if isinstance(commands, list) and not self._commands_reported:
            self._available_commands = list(commands)
        if resumed:
            self._fg.resyncing = False
        if resumed and self._resume_state_mark is not None:
            if self._fg.updates == self._resume_state_mark:
                self._violate(
                    "resume-without-state-snapshot",
                    "session/resume answered before any state_update snapshot",
                    None,
                )
            self._resume_state_mark = None

    def config_options_replaced(self, options: list[SessionConfigOption]) -> None:
        """The agent answered ``session/set_config_option`` with the complete list of
        options (schema ``SetSessionConfigOptionResponse``): it replaces the model's."""
        self._config_options = list(options)
        self._config_reported = True

    def finish(self) -> list[Violation]:
        """Record the violations only the end of a session can show; return them.

        Idempotent. Submissions whose user message never came are reported
        (``user-message-not-echoed``); live user messages whose ``messageId`` no
        prompt response returned are reported, unless a submission is still pending (it might own
        them).
        """
        if self._finished:
            return []
        found = self.end_findings()
        self._finished = True
        self._record(found)
        return found

    def end_findings(self) -> list[Violation]:
        """The violations :meth:`finish` would record if the session ended now, without
        recording them (empty once finished): for a report while traffic goes on."""
        if self._finished:
            return []
        found: list[Violation] = self._subs.never_echoed()
        if self._subs.pending_count():
            return found
        message: MessageEntity
        for message in self._kinds["user_message"].values():
            if message.replayed or message.id in self._subs.by_message:
                continue
            found.append(
                violation(
                    "user-message-unmatched",
                    f"user message {message.id!r} was never returned by a session/prompt response",
                    message.first_event_index,
                )
            )
        return found

    # ------------------------------------------------------------------ reading

    @property
    def dropped_entities(self) -> int:
        """Finished entities let go by ``Limits.max_session_entities`` (0 without it)."""
        return self._store.dropped

    @property
    def dropped_submissions(self) -> int:
        """Done submissions let go by ``Limits.max_session_entities`` (0 without it)."""
        return self._dropped_submissions

    @property
    def events(self) -> Sequence[Event]:
        """Every update received, in order (read-only; do not mutate)."""
        return self._log

    @property
    def requests(self) -> RequestLog:
        """The agent's permission and elicitation requests about this session, with
        the answers sent, in receive order (not updates: not in :attr:`events`)."""
        return self._requests

    @property
    def violations(self) -> Sequence[Violation]:
        """Conformance observations, in the order they were made."""
        return self._violations

    @property
    def timeline(self) -> list[Entity]:
        """Entities in timeline order (each placed by its first update or chunk)."""
        return list(self._timeline)

    def entity(self, kind: str, entity_id: str) -> Any:
        """The entity of ``kind`` with ``entity_id``; ``KeyError`` when never reported."""
        try:
            return self._kinds[kind][entity_id]
        except KeyError:
            if kind not in self._kinds:
                raise KeyError(f"unknown entity kind {kind!r}; kinds: {ENTITY_KINDS}") from None
            others = [k for k, ents in self._kinds.items() if entity_id in ents]
            hint = f" (but there is a {', '.join(others)} with that id)" if others else ""
            raise KeyError(f"no {kind} {entity_id!r} was reported{hint}") from None

    def get_entity(self, kind: str, entity_id: str) -> Any:
        """Like :meth:`entity` but ``None`` when the entity was never reported."""
        return self._kinds.get(kind, {}).get(entity_id)

    def entities(self, kind: str) -> list[Any]:
        """All entities of one kind, in timeline order."""
        return sorted(self._kinds[kind].values(), key=_position)

    @property
    def tool_calls(self) -> list[ToolCallEntity]:
        """Tool calls in timeline order (each with ``status`` / ``display_status``)."""
        return self.entities("tool_call")

    @property
    def plans(self) -> list[PlanEntity]:
        """Plans in timeline order, removed ones included (``removed`` is set)."""
        return self.entities("plan")

    @property
    def latest_plan(self) -> PlanEntity | None:
        """The most recently updated plan that was not removed."""
        best: PlanEntity | None = None
        plan: PlanEntity
        for plan in self._kinds["plan"].values():
            if not plan.removed and (best is None or plan.last_event_index > best.last_event_index):
                best = plan
        return best

    @property
    def state(self) -> str:
        """``idle`` (initially), ``running``, ``requires_action``, ``unknown`` or a
        custom/future state string as given (which counts as busy)."""
        return self._fg.state

    @property
    def last_known_state(self) -> str:
        """The last standard state other than ``unknown`` (context while unobservable)."""
        return self._fg.last_known_state

    @property
    def is_idle(self) -> bool:
        """True when the foreground state is ``idle``; unrecognised states are busy."""
        return self._fg.state == IDLE

    @property
    def stop_reason(self) -> str | None:
        """Stop reason of the idle that ended the last foreground work; ``None`` while
        busy or when the agent reported none (``None`` does not mean still running)."""
        return self._fg.stop_reason

    @property
    def error(self) -> Any:
        """The ``error`` beside an ``error`` stop reason, else ``None``."""
        return self._fg.error

    @property
    def token_usage(self) -> Any:
        """Token ``usage`` of the idle that ended the last foreground work, if reported."""
        return self._fg.token_usage

    @property
    def completions(self) -> int:
        """How many times foreground work ended (repeated idle snapshots do not count)."""
        return self._fg.completions

    @property
    def state_reported(self) -> bool:
        """True once any state_update was received."""
        return self._fg.updates > 0

    @property
    def background(self) -> list[Any] | None:
        """The latest background list; ``None`` when unknown (omitted, null, malformed)."""
        items = self._fg.background
        return None if items is None else list(items)

    @property
    def is_quiet(self) -> bool:
        """Nothing is running: idle and the background list is known to be empty."""
        return self._fg.is_quiet

    def live_entities(self) -> list[Entity]:
        """Entities the latest background list keeps live, plus tool calls that
        reference a listed terminal. Empty when background is unknown."""
        return self._fg.live_entities()

    def abandoned(self) -> list[Entity]:
        """Unfinished tool calls and terminals a client MAY treat as abandoned.

        Only when idle and background is reported (spec: "Background work"): a
        non-final tool call or a terminal without ``exitStatus`` that is not in the
        latest list and, for a tool call, references no listed terminal.
        """
        return self._fg.abandoned()

    @property
    def usage(self) -> ContextUsage | None:
        """Current context usage from ``usage_update``, ``None`` until reported."""
        return self._usage

    @property
    def config_options(self) -> list[Any]:
        """Current session config options (latest ``config_option_update`` or setup)."""
        return list(self._config_options)

    @property
    def available_commands(self) -> list[Any]:
        """Current available commands (latest ``available_commands_update`` or setup)."""
        return list(self._available_commands)

    @property
    def session_info(self) -> SessionInfo:
        """Session title / updatedAt / _meta after ``session_info_update`` patches."""
        return self._info

    @property
    def title(self) -> str | None:
        """The session title, if reported."""
        return self._info.title

    @property
    def notices(self) -> list[Event]:
        """Notice events (live-only; kept in the event log, never timeline entities)."""
        return [self._log[i] for i in self._notices]

    @property
    def submissions(self) -> list[Submission]:
        """Every submission, in the order they were sent."""
        return list(self._subs.by_request.values())

    def outstanding(self) -> list[Submission]:
        """Submissions whose work is not over: the prompt is not answered yet, or it
        was inserted and the foreground work that followed has not ended (spec
        000, "Prompt accepted": the response may come before or after the work's
        updates). Waits for idle or quiet also wait for these."""
        return [s for s in self._subs.by_request.values() if s.status != "rejected" and not s.done]

    def submission(self, request_id: RequestId) -> Submission:
        """The submission of ``session/prompt`` request ``request_id`` (``KeyError``)."""
        try:
            return self._subs.by_request[request_id]
        except KeyError:
            raise KeyError(f"no session/prompt request {request_id!r} was submitted") from None

    def text(self, submission: Submission | RequestId | None = None, *, sep: str = "\n") -> str:
        """All agent message text in timeline order, messages joined with ``sep``.

        With ``submission`` (a :class:`Submission` or its request id), only the
        messages first reported after its user message and, once done, before the
        idle that ended its work.
        """
        return sep.join(m.text for m in self._agent_messages(submission))

    def _agent_messages(self, submission: Submission | RequestId | None) -> Iterator[Any]:
        if submission is None:
            lo, hi = 0, None
        else:
            sub = submission if isinstance(submission, Submission) else self.submission(submission)
            if sub.first_event_index is None:
                return
            lo, hi = sub.first_event_index, sub.end_event_index
        for ent in self._timeline:
            if ent.kind != "agent_message" or ent.first_event_index < lo:
                continue
            if hi is not None and ent.first_event_index > hi:
                break
            yield ent

    def __repr__(self) -> str:
        return (
            f"<SessionModel {self.session_id!r} state={self._fg.state!r} "
            f"stop_reason={self._fg.stop_reason!r} entities={len(self._timeline)} "
            f"events={len(self._log)} violations={len(self._violations)}>"
        )

    # ------------------------------------------------------------------ helpers

    def _violate(self, rule: str, message: str, event_index: int | None) -> None:
        found = violation(rule, message, event_index)
        self._violations.append(found)
        if self.on_violation is not None:
            self.on_violation(found)

    def _record(self, found: list[Violation]) -> None:
        self._violations.extend(found)
        if self.on_violation is not None:
            for v in found:
                self.on_violation(v)

    # ------------------------------------------------------------------ current values

    def _on_commands(self, update: Any, index: int) -> None:
        self._available_commands = list(update.available_commands)
        self._commands_reported = True

    def _on_config(self, update: Any, index: int) -> None:
        self._config_options = list(update.config_options)
        self._config_reported = True

    def _on_info(self, update: Any, index: int) -> None:
        patch_field(self._info, "title", update.title)
        patch_field(self._info, "updated_at", update.updated_at)
        self._info.meta = patch_meta(self._info.meta, update.meta)

    def _on_usage(self, update: Any, index: int) -> None:
        cost = self._usage.cost if self._usage is not None else None
        if update.cost is not UNSET:
            cost = update.cost  # cost is a patch field; used/size are replaced
        self._usage = ContextUsage(update.used, update.size, cost)

    def _on_notice(self, update: Any, index: int) -> None:
        self._notices.append(index)
        if self._store.replaying:
            self._violate("notice-replayed", "a live-only notice was replayed", index)

    def _on_unrecognized(self, update: Any, index: int) -> None:
        if self._log.kept_raw(index) is None:
            self._log.set_raw(index, update.raw)  # the whole payload, kept unchanged
        if update.error is None:
            return  # a custom or future update: logged, otherwise ignored
        tag = update.session_update
        if tag in _CHUNK_TAGS and "messageId" not in (update.raw or {}):
            self._violate("chunk-without-message-id", f"{tag} without a messageId", index)
        else:
            self._violate("malformed-update", f"{tag}: {update.error}", index)

    def _state_handler(self, state: str) -> Callable[[Any, int], None]:
        fg, log = self._fg, self._log

        def on_state(update: Any, index: int) -> None:
            fg.apply(state, update, index, lambda: log.kept_raw(index))

        return on_state

    def _on_unrecognized_state(self, update: Any, index: int) -> None:
        # Kept as given and treated as busy, never idle (spec: "Session states").
        log = self._log
        self._fg.apply(str(update.state), update, index, lambda: log.kept_raw(index))

    def _on_foreign(self, update: Any, index: int) -> None:
        self._violate("malformed-update", f"not a SessionUpdate: {type(update).__name__}", index)


def _position(entity: Entity) -> int:
    return entity.position


def _field(result: Any, attr: str, key: str) -> Any:
    if result is None:
        return None
    if isinstance(result, Mapping):
        return result.get(key)
    value = getattr(result, attr, None)
    return None if value is UNSET else value


__all__ = ["Event", "SessionModel"]
