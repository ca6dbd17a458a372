"""Timeline entities: messages, tool calls, terminals, plans, compactions, subagents.

An entity is keyed by its kind together with its id (spec: "Entity IDs"): the
same id string under two kinds is two entities. Entities are mutable records that
only :class:`~acp_lite.model.session.SessionModel` writes; treat them as read-only.

Streamed content is kept as the list of received items, so appending a chunk is
O(1); ``text`` joins the text parts lazily and caches the result, extending the
cache with only the parts received since the last read.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from acp_lite.jsontypes import JsonValue
from acp_lite.model.blocks import Blocks, merge_text, text_parts
from acp_lite.protocol import (
    UNSET,
    Content,
    ContentBlock,
    PlanEntry,
    PlanItems,
    PlanUpdateContent,
    StateUpdate,
    SubagentSessionCapabilities,
    TerminalCapabilities,
    TerminalExitStatus,
    TerminalSize,
    TextContent,
    ToolCallCapabilities,
    ToolCallContent,
    ToolCallLocation,
)
from acp_lite.protocol import Terminal as TerminalRef

MESSAGE_KINDS = ("user_message", "agent_message", "agent_thought", "session_message")
"""Kinds of message entities. They share ``messageId`` but are distinct entity types."""

ENTITY_KINDS = (*MESSAGE_KINDS, "tool_call", "terminal", "plan", "compaction", "subagent")
"""Every entity kind the model tracks."""

FINAL_TOOL_STATUSES = frozenset({"completed", "failed", "cancelled"})
"""Tool call statuses that end a call; any other (even unknown) status is still live."""


def patch_meta(current: dict[str, Any] | None, patch: object) -> dict[str, Any] | None:
    """Apply a ``_meta`` patch (spec: extensibility, "Metadata Patches").

    ``UNSET`` leaves ``current`` unchanged, ``None`` clears it, and an object patches
    by top-level key: a key set to ``null`` is removed, any other value replaces the
    stored value for that key without merging nested objects.
    """
    if patch is UNSET:
        return current
    if not isinstance(patch, Mapping):
        return None
    new = dict(current) if current else {}
    for key, value in patch.items():
        if value is None:
            new.pop(key, None)
        else:
            new[key] = value
    return new


@attrs.define(eq=False)
class Entity:
    """Common fields of every timeline entity.

    ``position`` is the index in ``SessionModel.timeline``, fixed by the first update
    or chunk received for this (kind, id); once a ``Limits.max_session_entities``
    bound let older entities go, it still counts them (the order is kept).
    ``first_event_index`` / ``last_event_index`` index ``SessionModel.events``.
    ``replayed`` is true when the entity was first seen during a history replay.
    ``meta`` is the stored ``_meta`` after patches.
    """

    kind: str
    id: str
    position: int
    first_event_index: int
    last_event_index: int
    replayed: bool = False
    meta: dict[str, Any] | None = None


class _Bound:
    """Where the next merge of a bounded content starts, and when it is due."""

    __slots__ = ("at", "start")

    def __init__(self, start: int, at: int) -> None:
        self.start = start
        self.at = at


def _limit(
    items: list[Any], limit: int, bound: _Bound | None, cache: _TextCache, merged: int
) -> tuple[_Bound | None, int]:
    # Limits.max_message_blocks: past the limit, join adjacent plain text blocks. The
    # joined text is the same, so a text cache that read the items stays valid once
    # it has read them all.
    if len(items) <= (limit if bound is None else bound.at):
        return bound, merged
    if cache.n:
        cache.read(items, text_parts)
    before = len(items)
    merge_text(items, 0 if bound is None else bound.start)  # type: ignore[arg-type]
    n = len(items)
    if cache.n:
        cache.n = n
    # Many blocks that are not text: wait until there are twice as many before the
    # next pass (amortised O(1) per chunk).
    return _Bound(n, max(limit, 2 * n)), merged + before - n


class _TextCache:
    """Incremental join of the text parts of a growing list of items.

    Only the items appended since the last read are joined, and apply never touches
    it. Reading ``text`` after every chunk costs amortised O(new text) while the
    caller does not keep the previously returned string (CPython then grows it in
    place); a kept one forces a copy, as any new ``str`` would.
    """

    __slots__ = ("n", "text")

    def __init__(self) -> None:
        self.n = 0
        self.text = ""

    def read(self, items: list[Any], texts_of: Callable[[list[Any], int], list[str]]) -> str:
        n = len(items)
        if n != self.n:
            if n < self.n:  # content was replaced by a shorter list
                self.n, self.text = 0, ""
            parts = texts_of(items, self.n)
            if parts:
                # Detach the cached string first: when no caller still holds it, `+=`
                # on a sole reference grows it in place (amortised O(new text)).
                text, self.text = self.text, ""
                text += "".join(parts)
                self.text = text
            self.n = n
        return self.text


@attrs.define(eq=False)
class MessageEntity(Entity):
    """A user message, agent message or agent thought.

    ``content`` is the current list of content blocks: chunks append one block, a
    message update with ``content`` replaces the list, ``null`` or ``[]`` clears it.
    It is a :class:`~acp_lite.model.blocks.Blocks` (a ``list`` holding plain text
    blocks compactly; it reads as the blocks received).
    """

    content: list[ContentBlock] = attrs.Factory(Blocks)
    #: How many received blocks were joined into others by ``Limits.max_message_blocks``
    #: (0: ``content`` holds every chunk as received).
    merged: int = attrs.field(default=0, init=False)
    _cache: _TextCache = attrs.field(factory=_TextCache, init=False, repr=False)
    _bound: _Bound | None = attrs.field(default=None, init=False, repr=False)

    @property
    def text(self) -> str:
        """The text blocks of ``content`` joined (no separator)."""
        return self._cache.read(self.content, text_parts)

    def _replace(self, blocks: list[ContentBlock] | None) -> None:
        self.content = Blocks(blocks) if blocks else Blocks()
        self._cache = _TextCache()
        self._bound = None
        self.merged = 0

    def _limit_blocks(self, limit: int) -> None:
        self._bound, self.merged = _limit(
            self.content, limit, self._bound, self._cache, self.merged
        )

    def _append_texts(self, texts: list[str], limit: int) -> None:
        """Append plain text blocks (held as their texts), ``limit`` bounding the blocks,
        as appending each and then limiting the blocks does: only the appends that
        make the blocks outgrow their bound do anything more, so the run is cut there."""
        content = self.content
        done, n = 0, len(texts)
        while done < n:
            due = limit if self._bound is None else self._bound.at
            take = min(n - done, max(1, due + 1 - len(content)))
            # The texts themselves: what a Blocks holds for a plain text block.
            list.extend(content, texts[done : done + take])  # type: ignore[misc]
            done += take
            if len(content) > limit:
                self._limit_blocks(limit)


@attrs.define(eq=False)
class SessionMessageEntity(MessageEntity):
    """A session-directed message (spec: "Session-directed messages").

    Participant ids follow the patch rule: omitted = unchanged, ``null`` = cleared.
    """

    sender_session_id: str | None = None
    recipient_session_id: str | None = None
    sender_message_id: str | None = None
    recipient_message_id: str | None = None


def _tool_texts(items: list[Any], start: int) -> list[str]:
    return [
        c.content.text
        for c in items[start:]
        if c.__class__ is Content and c.content.__class__ is TextContent
    ]


@attrs.define(eq=False)
class ToolCallEntity(Entity):
    """A tool call (schema ``ToolCallUpdate``).

    ``tool_kind`` is the wire ``kind`` (``other`` by default; renamed because
    ``kind`` is the entity kind). ``status`` is what the agent reported (``pending``
    by default); ``cancel_hint`` is the client's local mark after ``session/cancel``
    (spec: "Cancellation") and ``display_status`` combines the two.
    """

    name: str | None = None
    title: str | None = None
    tool_kind: str = "other"
    status: str = "pending"
    content: list[ToolCallContent] = attrs.Factory(list)
    locations: list[ToolCallLocation] = attrs.Factory(list)
    raw_input: JsonValue = None
    raw_output: JsonValue = None
    capabilities: ToolCallCapabilities | None = None
    cancel_hint: bool = False
    #: Fields the schema does not know, as last reported (each key replaced by
    #: the latest update that carried it), so nothing the agent sent is lost.
    extra: dict[str, Any] = attrs.Factory(dict)
    _cache: _TextCache = attrs.field(factory=_TextCache, init=False, repr=False)

    @property
    def is_final(self) -> bool:
        """True for ``completed``, ``failed`` and ``cancelled``; unknown statuses are live."""
        return self.status in FINAL_TOOL_STATUSES

    @property
    def display_status(self) -> str:
        """``cancelled`` while the local cancel hint stands, else ``status``."""
        return "cancelled" if self.cancel_hint else self.status

    @property
    def text(self) -> str:
        """Text of the ``content`` items that wrap text blocks, joined."""
        return self._cache.read(self.content, _tool_texts)

    @property
    def terminal_ids(self) -> list[str]:
        """Ids of the terminals this tool call's content references."""
        return [c.terminal_id for c in self.content if isinstance(c, TerminalRef)]

    def _replace(self, items: list[ToolCallContent] | None) -> None:
        self.content = list(items) if items else []
        self._cache = _TextCache()


@attrs.define(eq=False)
class TerminalEntity(Entity):
    """An agent-owned terminal (schema ``TerminalUpdate``).

    Fields start unknown (``None``). ``output`` is the byte output: a
    ``terminal_update`` with ``output`` replaces it, each ``terminal_output_chunk``
    appends its bytes. A terminal is live until ``exit_status`` is reported.
    """

    command: str | None = None
    cwd: str | None = None
    exit_status: TerminalExitStatus | None = None
    size: TerminalSize | None = None
    capabilities: TerminalCapabilities | None = None
    _parts: list[bytes] | None = attrs.field(default=None, init=False, repr=False)

    @property
    def exited(self) -> bool:
        """True once an ``exitStatus`` object was reported."""
        return self.exit_status is not None

    @property
    def output(self) -> bytes | None:
        """All output bytes received so far, or ``None`` when none was ever reported."""
        parts = self._parts
        if parts is None:
            return None
        if len(parts) != 1:
            joined = b"".join(parts)
            parts[:] = [joined]
        return parts[0]

    def _set_output(self, data: bytes | None) -> None:
        self._parts = None if data is None else [data]

    def _append_output(self, data: bytes) -> None:
        if self._parts is None:
            self._parts = [data]
        else:
            self._parts.append(data)


def decode_base64(data: str) -> bytes | None:
    """Decode standard base64, or return ``None`` when it is not valid base64."""
    try:
        return binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError, TypeError):
        return None


@attrs.define(eq=False)
class PlanEntity(Entity):
    """A plan (schema ``PlanUpdate``): every ``plan_update`` replaces ``plan`` as a whole.

    ``removed`` is set by ``plan_removed``; the entity keeps its timeline position.
    """

    plan: PlanUpdateContent | None = None
    removed: bool = False

    @property
    def plan_type(self) -> str | None:
        """The plan content's ``type`` (``items``, ``markdown``, ``file`` or custom)."""
        return None if self.plan is None else str(getattr(self.plan, "type", None))

    @property
    def entries(self) -> list[PlanEntry]:
        """The entries of an item-based plan (empty for other plan types)."""
        if isinstance(self.plan, PlanItems):
            return list(self.plan.entries)
        return []


@attrs.define(eq=False)
class CompactionEntity(Entity):
    """A context compaction (schema ``CompactionUpdate``).

    A first-seen id starts ``in_progress``. ``summary`` follows the message content
    rules: chunks append, a concrete ``summary`` replaces, ``null``/``[]`` clears.
    """

    status: str = "in_progress"
    summary: list[ContentBlock] = attrs.Factory(Blocks)
    error: str | None = None
    #: How many received blocks were joined into others by ``Limits.max_message_blocks``.
    merged: int = attrs.field(default=0, init=False)
    _cache: _TextCache = attrs.field(factory=_TextCache, init=False, repr=False)
    _bound: _Bound | None = attrs.field(default=None, init=False, repr=False)

    def _limit_blocks(self, limit: int) -> None:
        self._bound, self.merged = _limit(
            self.summary, limit, self._bound, self._cache, self.merged
        )

    @property
    def content(self) -> list[ContentBlock]:
        """Alias of ``summary``, so every entity with content has ``content``."""
        return self.summary

    @property
    def text(self) -> str:
        """The text blocks of ``summary`` joined."""
        return self._cache.read(self.summary, text_parts)

    def _replace(self, blocks: list[ContentBlock] | None) -> None:
        self.summary = Blocks(blocks) if blocks else Blocks()
        self._cache = _TextCache()
        self._bound = None
        self.merged = 0


@attrs.define(eq=False)
class SubagentEntity(Entity):
    """A child session associated through ``subagent_update``; ``id`` is its session id.

    ``state`` is the mirrored ``StateUpdate`` snapshot, ``None`` when not reported.
    """

    title: str | None = None
    description: str | None = None
    capabilities: SubagentSessionCapabilities | None = None
    state: StateUpdate | None = None
    cwd: str | None = None
    additional_directories: list[str] | None = None


__all__ = [
    "ENTITY_KINDS",
    "FINAL_TOOL_STATUSES",
    "MESSAGE_KINDS",
    "CompactionEntity",
    "Entity",
    "MessageEntity",
    "PlanEntity",
    "SessionMessageEntity",
    "SubagentEntity",
    "TerminalEntity",
    "ToolCallEntity",
    "decode_base64",
    "patch_meta",
]
