"""The timeline's items: one typed record per thing that happened in a conversation.

Every item has its time (seconds since the connection started), the gap since the
item before it, the session it belongs to (if any), the wire lines behind it
(:class:`Wire`: their indexes, and a sample of the lines themselves) and the
conformance findings that name one of those lines.
"""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from acp_lite.jsontypes import JsonValue
    from acp_lite.view.wire import WireLine

__all__ = [
    "AgentRequest",
    "Call",
    "Diff",
    "ErrorItem",
    "Item",
    "Message",
    "Permission",
    "PermissionOption",
    "Plan",
    "PlanEntry",
    "PromptAnswered",
    "PromptSent",
    "RawItem",
    "StateChange",
    "StatusChange",
    "Thought",
    "ToolCall",
    "Update",
    "ViewFinding",
    "Wire",
]

#: How many of an item's first and last wire lines are kept to be shown.
HEAD_LINES = 5
TAIL_LINES = 3


@dataclass(frozen=True, slots=True)
class ViewFinding:
    """A conformance finding to show at the wire line it names: the 0-based
    ``index`` of the line in its connection, the requirement id and the message."""

    index: int
    requirement: str
    message: str
    #: Which connection of a cassette (0-based; a plain transcript has one).
    connection: int = 0


@dataclass(slots=True)
class Wire:
    """The wire lines behind an item: every index, the first :data:`HEAD_LINES` and
    the last :data:`TAIL_LINES` lines themselves (a long stream keeps no more)."""

    indexes: array[int] = field(default_factory=lambda: array("q"))
    head: list[WireLine] = field(default_factory=list)
    tail: deque[WireLine] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))

    def add(self, line: WireLine) -> None:
        """Count ``line`` behind the item (once, however many messages it holds)."""
        if (self.head and self.head[-1] is line) or (self.tail and self.tail[-1] is line):
            return
        self.indexes.append(line.index)
        if len(self.head) < HEAD_LINES:
            self.head.append(line)
        else:
            self.tail.append(line)

    @property
    def count(self) -> int:
        """How many wire lines are behind the item."""
        return len(self.indexes)

    @property
    def omitted(self) -> int:
        """How many lines neither :attr:`head` nor :attr:`tail` keeps."""
        return self.count - len(self.head) - len(self.tail)


@dataclass(slots=True, kw_only=True)
class Item:
    """What every timeline item has (see the module docstring)."""

    kind: ClassVar[str] = "item"
    time: float
    gap: float = 0.0
    session_id: str | None = None
    wire: Wire = field(default_factory=Wire)
    findings: list[ViewFinding] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class PromptSent(Item):
    """The client sent ``session/prompt``: its request id and the prompt's text."""

    kind: ClassVar[str] = "prompt"
    request_id: JsonValue = None
    text: str = ""


@dataclass(slots=True, kw_only=True)
class PromptAnswered(Item):
    """The agent answered ``session/prompt``: v2 names the inserted user message
    (``message_id``, the insertion); v1 ends the turn (``stop_reason``)."""

    kind: ClassVar[str] = "prompt_response"
    request_id: JsonValue = None
    message_id: str | None = None
    stop_reason: str | None = None


@dataclass(slots=True, kw_only=True)
class Message(Item):
    """A message: the text of its chunks (or of its whole-message update) joined.
    ``role`` is ``agent``, ``user``, ``thought``, ``session`` or ``summary`` (a
    compaction's summary)."""

    kind: ClassVar[str] = "message"
    role: str = "agent"
    message_id: str | None = None
    parts: list[str] = field(default_factory=list)
    chunks: int = 0

    @property
    def text(self) -> str:
        """The message's text, joined."""
        return "".join(self.parts)


@dataclass(slots=True, kw_only=True)
class Thought(Message):
    """The agent's thinking (``agent_thought_chunk``), joined like a message."""

    kind: ClassVar[str] = "thought"
    role: str = "thought"


@dataclass(frozen=True, slots=True)
class StatusChange:
    """A tool call's status as of ``time``."""

    time: float
    status: str


@dataclass(frozen=True, slots=True)
class Diff:
    """A file change a tool call reported (content type ``diff``)."""

    path: str
    old_text: str | None
    new_text: str


@dataclass(slots=True, kw_only=True)
class ToolCall(Item):
    """A tool call, from its first update on: its title, kind, each status it went
    through, the text of its content, its diffs and its raw input and output."""

    kind: ClassVar[str] = "tool_call"
    tool_call_id: str = ""
    title: str = ""
    tool_kind: str = ""
    changes: list[StatusChange] = field(default_factory=list)
    content: list[str] = field(default_factory=list)
    diffs: list[Diff] = field(default_factory=list)
    #: The last ``rawInput`` / ``rawOutput`` reported, as short JSON text.
    raw_input: str | None = None
    raw_output: str | None = None
    updates: int = 0

    @property
    def status(self) -> str:
        """The last status reported (``""`` when none was)."""
        return self.changes[-1].status if self.changes else ""


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One entry of a plan."""

    content: str
    status: str
    priority: str


@dataclass(slots=True, kw_only=True)
class Plan(Item):
    """A plan as last reported (``revisions`` updates), or removed."""

    kind: ClassVar[str] = "plan"
    plan_id: str | None = None
    entries: list[PlanEntry] = field(default_factory=list)
    revisions: int = 0
    removed: bool = False


@dataclass(frozen=True, slots=True)
class PermissionOption:
    """An option of a permission request."""

    option_id: str
    name: str
    option_kind: str


@dataclass(slots=True, kw_only=True)
class Permission(Item):
    """The agent asked permission (``session/request_permission``); ``answer`` is the
    client's: the option chosen, ``cancelled``, an error, or ``None`` (no answer)."""

    kind: ClassVar[str] = "permission"
    request_id: JsonValue = None
    title: str = ""
    tool_call_id: str | None = None
    options: list[PermissionOption] = field(default_factory=list)
    answer: str | None = None
    answer_time: float | None = None


@dataclass(slots=True, kw_only=True)
class AgentRequest(Item):
    """Another request of the agent's (``elicitation/create``, ``fs/*``,
    ``terminal/*`` ...) and a summary of the client's answer."""

    kind: ClassVar[str] = "agent_request"
    method: str = ""
    request_id: JsonValue = None
    summary: str = ""
    answer: str | None = None


@dataclass(slots=True, kw_only=True)
class Call(Item):
    """Any other request (with its answer) or notification, either way."""

    kind: ClassVar[str] = "call"
    method: str = ""
    direction: str = "send"
    request_id: JsonValue = None
    notification: bool = False
    summary: str = ""
    answer: str | None = None


@dataclass(slots=True, kw_only=True)
class StateChange(Item):
    """A ``state_update``: ``running``, ``requires_action``, ``idle`` (with its stop
    reason) or another state; ``background`` counts the background work listed."""

    kind: ClassVar[str] = "state"
    state: str = ""
    stop_reason: str | None = None
    background: int = 0


@dataclass(slots=True, kw_only=True)
class ErrorItem(Item):
    """Something failed: a JSON-RPC error response (``code``), or a turn that ended
    with stop reason ``error`` or ``refusal`` (``source`` says which)."""

    kind: ClassVar[str] = "error"
    source: str = ""
    code: int | None = None
    message: str = ""


@dataclass(slots=True, kw_only=True)
class Update(Item):
    """Any other ``session/update`` (usage, notices, commands, unknown kinds ...),
    kept whole: ``update_kind`` and the update's JSON value."""

    kind: ClassVar[str] = "update"
    update_kind: str = ""
    summary: str = ""
    payload: JsonValue = None


@dataclass(slots=True, kw_only=True)
class RawItem(Item):
    """A line that is no JSON-RPC message (not JSON, another JSON value), or the
    agent's exit."""

    kind: ClassVar[str] = "raw"
    text: str = ""
