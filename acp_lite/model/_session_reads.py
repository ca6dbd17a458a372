"""What a :class:`~acp_lite.model.session.SessionModel` answers: its read-only views.

A mixin of ``SessionModel`` (split out for size): every property and query here
reads the state the model's update handlers keep; none changes it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast, overload

from acp_lite.jsontypes import JsonObject
from acp_lite.model.entities import (
    ENTITY_KINDS,
    CompactionEntity,
    Entity,
    MessageEntity,
    PlanEntity,
    SessionMessageEntity,
    SubagentEntity,
    TerminalEntity,
    ToolCallEntity,
)
from acp_lite.model.events import Event, EventLog
from acp_lite.model.requests import RequestLog
from acp_lite.model.rules import Violation
from acp_lite.model.state import IDLE, ContextUsage, SessionInfo
from acp_lite.model.submissions import RequestId, Submission, SubmissionTracker
from acp_lite.protocol import AvailableCommand, BackgroundWork, Error, SessionConfigOption, Usage

if TYPE_CHECKING:
    from acp_lite.model.foreground import Foreground
    from acp_lite.model.store import EntityStore

__all__ = ["MessageKind", "SessionReads"]

MessageKind = Literal["user_message", "agent_message", "agent_thought"]
"""The entity kinds whose entities are plain :class:`MessageEntity` records."""


class SessionReads:
    """The read side of the session model (see the module doc)."""

    if TYPE_CHECKING:
        _log: EventLog
        _violations: list[Violation]
        _notices: list[int]
        _requests: RequestLog
        _subs: SubmissionTracker
        _dropped_submissions: int
        _store: EntityStore
        _timeline: list[Entity]
        _kinds: dict[str, dict[str, Any]]
        _fg: Foreground
        _usage: ContextUsage | None
        _config_options: list[SessionConfigOption | JsonObject]
        _available_commands: list[AvailableCommand | JsonObject]
        _info: SessionInfo

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

    # The kind names the entity's class (ENTITY_KINDS); an unknown kind is a KeyError.
    @overload
    def entity(self, kind: MessageKind, entity_id: str) -> MessageEntity: ...
    @overload
    def entity(self, kind: Literal["session_message"], entity_id: str) -> SessionMessageEntity: ...
    @overload
    def entity(self, kind: Literal["tool_call"], entity_id: str) -> ToolCallEntity: ...
    @overload
    def entity(self, kind: Literal["terminal"], entity_id: str) -> TerminalEntity: ...
    @overload
    def entity(self, kind: Literal["plan"], entity_id: str) -> PlanEntity: ...
    @overload
    def entity(self, kind: Literal["compaction"], entity_id: str) -> CompactionEntity: ...
    @overload
    def entity(self, kind: Literal["subagent"], entity_id: str) -> SubagentEntity: ...
    @overload
    def entity(self, kind: str, entity_id: str) -> Entity: ...
    def entity(self, kind: str, entity_id: str) -> Entity:
        """The entity of ``kind`` with ``entity_id``; ``KeyError`` when never reported."""
        try:
            found: Entity = self._kinds[kind][entity_id]
        except KeyError:
            if kind not in self._kinds:
                raise KeyError(f"unknown entity kind {kind!r}; kinds: {ENTITY_KINDS}") from None
            others = [k for k, ents in self._kinds.items() if entity_id in ents]
            hint = f" (but there is a {', '.join(others)} with that id)" if others else ""
            raise KeyError(f"no {kind} {entity_id!r} was reported{hint}") from None
        return found

    @overload
    def get_entity(self, kind: MessageKind, entity_id: str) -> MessageEntity | None: ...
    @overload
    def get_entity(
        self, kind: Literal["session_message"], entity_id: str
    ) -> SessionMessageEntity | None: ...
    @overload
    def get_entity(self, kind: Literal["tool_call"], entity_id: str) -> ToolCallEntity | None: ...
    @overload
    def get_entity(self, kind: Literal["terminal"], entity_id: str) -> TerminalEntity | None: ...
    @overload
    def get_entity(self, kind: Literal["plan"], entity_id: str) -> PlanEntity | None: ...
    @overload
    def get_entity(
        self, kind: Literal["compaction"], entity_id: str
    ) -> CompactionEntity | None: ...
    @overload
    def get_entity(self, kind: Literal["subagent"], entity_id: str) -> SubagentEntity | None: ...
    @overload
    def get_entity(self, kind: str, entity_id: str) -> Entity | None: ...
    def get_entity(self, kind: str, entity_id: str) -> Entity | None:
        """Like :meth:`entity` but ``None`` when the entity was never reported."""
        found: Entity | None = self._kinds.get(kind, {}).get(entity_id)
        return found

    @overload
    def entities(self, kind: MessageKind) -> list[MessageEntity]: ...
    @overload
    def entities(self, kind: Literal["session_message"]) -> list[SessionMessageEntity]: ...
    @overload
    def entities(self, kind: Literal["tool_call"]) -> list[ToolCallEntity]: ...
    @overload
    def entities(self, kind: Literal["terminal"]) -> list[TerminalEntity]: ...
    @overload
    def entities(self, kind: Literal["plan"]) -> list[PlanEntity]: ...
    @overload
    def entities(self, kind: Literal["compaction"]) -> list[CompactionEntity]: ...
    @overload
    def entities(self, kind: Literal["subagent"]) -> list[SubagentEntity]: ...
    @overload
    def entities(self, kind: str) -> list[Entity]: ...
    def entities(self, kind: str) -> Sequence[Entity]:
        """All entities of one kind, in timeline order (a new list)."""
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
    def last_idle_index(self) -> int:
        """The event index of the latest ``idle`` state report (-1: none yet)."""
        return self._fg.last_idle_index

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
    def error(self) -> Error | None:
        """The ``error`` beside an ``error`` stop reason, else ``None``."""
        return self._fg.error

    @property
    def token_usage(self) -> Usage | None:
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
    def background(self) -> list[BackgroundWork] | None:
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
    def config_options(self) -> list[SessionConfigOption | JsonObject]:
        """Current session config options (latest ``config_option_update`` or setup;
        wire dicts when the setup response was given as JSON)."""
        return list(self._config_options)

    @property
    def available_commands(self) -> list[AvailableCommand | JsonObject]:
        """Current available commands (latest ``available_commands_update`` or setup;
        wire dicts when the setup response was given as JSON)."""
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

    def _agent_messages(self, submission: Submission | RequestId | None) -> Iterator[MessageEntity]:
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
            yield cast(MessageEntity, ent)  # the store makes agent messages MessageEntity


def _position(entity: Entity) -> int:
    return entity.position
