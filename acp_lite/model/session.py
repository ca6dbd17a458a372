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

from collections.abc import Callable, Mapping
from time import monotonic
from typing import Any

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.model._session_reads import SessionReads
from acp_lite.model.entities import (
    MessageEntity,
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
from acp_lite.model.submissions import (
    RequestId,
    Submission,
    SubmissionTracker,
    SubmittedContent,
)
from acp_lite.protocol import (
    UNSET,
    AgentMessage,
    AgentMessageChunk,
    AgentThought,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandsUpdate,
    CompactionSummaryChunk,
    CompactionUpdate,
    ConfigOptionUpdate,
    ErrorObject,
    ForkSessionResponse,
    IdleStateUpdate,
    NewSessionResponse,
    Notice,
    PlanRemoved,
    PlanUpdate,
    RequiresActionStateUpdate,
    ResumeSessionResponse,
    RunningStateUpdate,
    SessionConfigOption,
    SessionInfoUpdate,
    SessionMessage,
    SessionMessageChunk,
    SessionUpdate,
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
from acp_lite.protocol.chunk_lines import CompactLine

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


class SessionModel(SessionReads):
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
        self._config_options: list[SessionConfigOption | JsonObject] = []
        self._available_commands: list[AvailableCommand | JsonObject] = []
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
        # feed_chunks: the chunk classes a compact line stands for (CompactLine.update_class).
        self._texts_handlers: dict[type, Callable[[str, list[str], int], None]] = {
            AgentMessageChunk: store.chunk_texts_handler("agent_message", MessageEntity),
            AgentThoughtChunk: store.chunk_texts_handler("agent_thought", MessageEntity),
        }

    # ------------------------------------------------------------------ feeding

    def apply(
        self,
        update: SessionUpdate,
        *,
        raw: dict[str, Any] | bytes | CompactLine | None = None,
        session_id: str | None = None,
        replayed: bool = False,
        source: str | None = None,
    ) -> Event:
        """Apply one decoded ``SessionUpdate`` and log it; return its :class:`Event`.

        ``raw`` is the ``update`` dict as received (kept in the event log), or the
        whole received ``session/update`` line (``bytes``: kept as is, decoded on read),
        or the compact line that decoded ``update`` (a chunk) from its line (kept
        with the chunk's text, rebuilt on read), ``session_id`` the notification's
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
        update: SessionUpdate,
        raw: dict[str, Any] | bytes | CompactLine | None = None,
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

    def feed_chunks(self, line: CompactLine, texts: list[str], replayed: bool = False) -> bool:
        """Apply ``len(texts)`` chunk updates of ``line``'s stream, each carrying one
        plain text block (``texts``), as :meth:`feed` applies each with the compact
        line as ``raw``, all stamped with one time. ``False`` (nothing applied): feed
        them one by one (a stream of another session, or of a chunk class no handler
        takes in runs).

        The connection's hot path for a run of streamed chunk lines."""
        on_texts = self._texts_handlers.get(line.update_class)
        if on_texts is None or line.session_id != self.session_id or not texts:
            return False
        index = self._log.extend_chunks(line, texts, monotonic(), replayed)
        self._store.replaying = replayed
        on_texts(line.message_id, texts, index)
        return True

    def _find_handler(self, update: Any) -> Callable[[Any, int], None]:
        for cls, handler in self._handlers.items():
            if isinstance(update, cls):
                return handler
        return self._on_foreign

    def submit(self, request_id: RequestId, content: SubmittedContent = None) -> Submission:
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

    def prompt_rejected(self, request_id: RequestId, error: ErrorObject) -> Submission:
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

    def setup_response(
        self,
        result: NewSessionResponse
        | ForkSessionResponse
        | ResumeSessionResponse
        | Mapping[str, JsonValue]
        | None = None,
        *,
        resumed: bool = False,
    ) -> None:
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


def _field(result: Any, attr: str, key: str) -> Any:
    if result is None:
        return None
    if isinstance(result, Mapping):
        return result.get(key)
    value = getattr(result, attr, None)
    return None if value is UNSET else value


__all__ = ["Event", "SessionModel"]
