"""The entity store: timeline order and the upsert / chunk rules of every entity kind.

An entity is keyed by (kind, id) (spec 000 "Entity IDs"). Its first update or
chunk creates it with its defaults and fixes its timeline position; later updates
patch it in place: omitted = unchanged, ``null`` = cleared, value = replaced,
chunks append, ``_meta`` patches by top-level key and a chunk's ``_meta`` is
chunk-scoped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

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
    decode_base64,
    patch_meta,
)
from acp_lite.protocol import UNSET

E = TypeVar("E", bound=Entity)
Violate = Callable[[str, str, "int | None"], None]


def patch_field(entity: object, name: str, value: object) -> None:
    # Patch rule shared by every entity field: omitted = unchanged, null = cleared,
    # value = replaced (spec: "Entity IDs"; schema descriptions of each upsert).
    if value is not UNSET:
        setattr(entity, name, value)


def finished(ent: Entity, last_ending_idle: int, listed: set[tuple[str, str]]) -> bool:
    """Whether ``Limits.max_session_entities`` may let ``ent`` go: nothing touched it
    since the last end of foreground work (event ``last_ending_idle``) and nothing
    can still be running in it: a tool call is final, a terminal exited, a plan
    removed, a compaction over; none is in the latest background list (``listed``).
    Subagents are kept."""
    if ent.last_event_index >= last_ending_idle:
        return False
    if isinstance(ent, ToolCallEntity | TerminalEntity):
        if (ent.kind, ent.id) in listed:
            return False
        return ent.is_final if isinstance(ent, ToolCallEntity) else ent.exited
    if isinstance(ent, PlanEntity):
        return ent.removed
    if isinstance(ent, CompactionEntity):
        return ent.status != "in_progress"
    return isinstance(ent, MessageEntity)


def _as_list(value: object) -> list[Any] | None:
    return list(value) if isinstance(value, list | tuple) else None


class EntityStore:
    """Entities by kind and id, in timeline order; one ``on_*`` handler per update type.

    Handlers take ``(update, event_index)``. ``replaying`` is set by the model for
    each update, so entities first seen during a replay are marked ``replayed``.
    """

    def __init__(
        self,
        violate: Violate,
        on_user_message: Callable[[MessageEntity], None],
        *,
        max_blocks: int | None = None,
        max_entities: int | None = None,
        droppable: Callable[[Entity], bool] | None = None,
    ) -> None:
        if max_blocks is not None and max_blocks < 1:
            raise ValueError("max_message_blocks must be at least 1 (or None)")
        if max_entities is not None and max_entities < 1:
            raise ValueError("max_session_entities must be at least 1 (or None)")
        self._violate = violate
        self._on_user_message = on_user_message
        self.timeline: list[Entity] = []
        self.kinds: dict[str, dict[str, Any]] = {kind: {} for kind in ENTITY_KINDS}
        self.replaying = False
        self.max_blocks = max_blocks
        self.max_entities = max_entities
        self._droppable = droppable
        self._created = 0  # entities ever created: the next one's position
        #: Entities let go by ``max_entities`` (``SessionModel.dropped_entities``).
        self.dropped = 0

    def create(self, kind: str, entity_id: str, cls: type[E], index: int) -> E:
        # The first update or chunk fixes the position (spec: "Entity IDs").
        ent = cls(kind, entity_id, self._created, index, index, self.replaying)
        self._created += 1
        self.timeline.append(ent)
        self.kinds[kind][entity_id] = ent
        if kind == "user_message":
            self._on_user_message(ent)  # type: ignore[arg-type]
        if self.max_entities is not None and len(self.timeline) >= 2 * self.max_entities:
            self._drop_finished(self.max_entities)
        return ent

    def _drop_finished(self, keep: int) -> None:
        # Limits.max_session_entities: of the entities before the newest `keep`, let
        # go those the model says are finished; in blocks, so creating stays O(1)
        # amortised. The timeline list is changed in place (the model aliases it).
        droppable = self._droppable
        old = len(self.timeline) - keep
        kept: list[Entity] = []
        for i, ent in enumerate(self.timeline):
            if i < old and droppable is not None and droppable(ent):
                del self.kinds[ent.kind][ent.id]
                self.dropped += 1
            else:
                kept.append(ent)
        self.timeline[:] = kept

    def upsert(self, kind: str, entity_id: object, cls: type[E], index: int) -> E | None:
        ent = self.kinds[kind].get(entity_id)  # type: ignore[call-overload]
        if ent is None:
            if not isinstance(entity_id, str):
                return None
            ent = self.create(kind, entity_id, cls, index)
        else:
            ent.last_event_index = index
        return ent  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ messages

    def chunk_handler(self, kind: str, cls: type[MessageEntity]) -> Callable[[Any, int], None]:
        entities: dict[str, MessageEntity] = self.kinds[kind]
        create = self.create
        violate = self._violate
        limit = self.max_blocks
        if limit is not None:
            return self._bounded_chunk_handler(kind, cls, limit)

        def on_chunk(update: Any, index: int) -> None:
            # Hot path. A chunk appends one block to whatever content is current,
            # and a chunk for an unseen id creates the message first (spec: "Message
            # IDs"). Chunk _meta is chunk-scoped: it never patches the message.
            ent = entities.get(update.message_id)
            if ent is None:
                if not isinstance(update.message_id, str):
                    violate("chunk-without-message-id", f"{kind} chunk without a messageId", index)
                    return
                ent = create(kind, update.message_id, cls, index)
            else:
                ent.last_event_index = index
            ent.content.append(update.content)

        return on_chunk

    def chunk_texts_handler(
        self, kind: str, cls: type[MessageEntity]
    ) -> Callable[[str, list[str], int], None]:
        """What :meth:`chunk_handler`'s handler does for a run of chunks of one message,
        each one plain text block, given as their texts (the message id, the texts,
        the first one's event index)."""
        entities: dict[str, MessageEntity] = self.kinds[kind]
        create = self.create
        extend = list.extend
        limit = self.max_blocks

        def on_texts(message_id: str, texts: list[str], index: int) -> None:
            ent = entities.get(message_id)
            if ent is None:
                ent = create(kind, message_id, cls, index)
            ent.last_event_index = index + len(texts) - 1
            if limit is None:
                # What Blocks.append holds for each plain text block: its text.
                extend(ent.content, texts)  # type: ignore[misc]
            else:
                ent._append_texts(texts, limit)

        return on_texts

    def _bounded_chunk_handler(
        self, kind: str, cls: type[MessageEntity], limit: int
    ) -> Callable[[Any, int], None]:
        entities: dict[str, MessageEntity] = self.kinds[kind]
        create = self.create
        violate = self._violate

        def on_chunk(update: Any, index: int) -> None:
            # As above; past Limits.max_message_blocks adjacent plain text blocks are
            # joined (entities.py, _limit).
            ent = entities.get(update.message_id)
            if ent is None:
                if not isinstance(update.message_id, str):
                    violate("chunk-without-message-id", f"{kind} chunk without a messageId", index)
                    return
                ent = create(kind, update.message_id, cls, index)
            else:
                ent.last_event_index = index
            content = ent.content
            content.append(update.content)
            if len(content) > limit:
                ent._limit_blocks(limit)

        return on_chunk

    def message_handler(self, kind: str, cls: type[MessageEntity]) -> Callable[[Any, int], None]:
        def on_message(update: Any, index: int) -> None:
            self._upsert_message(kind, cls, update, index)

        return on_message

    def _upsert_message(
        self, kind: str, cls: type[MessageEntity], update: Any, index: int
    ) -> MessageEntity | None:
        ent = self.upsert(kind, update.message_id, cls, index)
        if ent is None:
            self._violate("chunk-without-message-id", f"{kind} update without a messageId", index)
            return None
        # Omitted content = unchanged; null or [] clears; an array replaces everything
        # accumulated so far, chunks included (spec: "Message IDs").
        if update.content is not UNSET:
            ent._replace(update.content)
        ent.meta = patch_meta(ent.meta, update.meta)
        return ent

    def on_session_message(self, update: Any, index: int) -> None:
        ent = self._upsert_message("session_message", SessionMessageEntity, update, index)
        if isinstance(ent, SessionMessageEntity):
            # Participant ids follow the content patch rule (spec: "Session-directed
            # messages").
            patch_field(ent, "sender_session_id", update.sender_session_id)
            patch_field(ent, "recipient_session_id", update.recipient_session_id)
            patch_field(ent, "sender_message_id", update.sender_message_id)
            patch_field(ent, "recipient_message_id", update.recipient_message_id)

    # ------------------------------------------------------------------ tools, terminals

    def on_tool_call(self, update: Any, index: int) -> None:
        ent = self.upsert("tool_call", update.tool_call_id, ToolCallEntity, index)
        if ent is None:
            self._violate("malformed-update", "tool_call_update without a toolCallId", index)
            return
        patch_field(ent, "name", update.name)
        patch_field(ent, "title", update.title)
        if update.kind is not UNSET:
            ent.tool_kind = "other" if update.kind is None else update.kind  # null resets
        status = update.status
        if status is not UNSET:
            new_status = "pending" if status is None else status  # null resets to pending
            if ent.is_final and new_status not in ("completed", "failed", "cancelled"):
                self._violate(
                    "tool-call-reopened",
                    f"tool call {ent.id!r} went from final {ent.status!r} to {new_status!r}",
                    index,
                )
            ent.status = new_status
            ent.cancel_hint = False  # the agent's status replaces the local mark
        if update.content is not UNSET:
            ent._replace(update.content)  # replaces accumulated chunks; null/[] clear
        if update.locations is not UNSET:
            ent.locations = list(update.locations) if update.locations else []
        patch_field(ent, "raw_input", update.raw_input)
        patch_field(ent, "raw_output", update.raw_output)
        patch_field(ent, "capabilities", update.capabilities)
        ent.meta = patch_meta(ent.meta, update.meta)
        if update.extra:
            ent.extra.update(update.extra)

    def on_tool_call_chunk(self, update: Any, index: int) -> None:
        ent = self.upsert("tool_call", update.tool_call_id, ToolCallEntity, index)
        if ent is not None:
            ent.content.append(update.content)

    def on_terminal(self, update: Any, index: int) -> None:
        ent = self.upsert("terminal", update.terminal_id, TerminalEntity, index)
        if ent is None:
            return
        patch_field(ent, "command", update.command)
        patch_field(ent, "cwd", update.cwd)
        patch_field(ent, "exit_status", update.exit_status)
        patch_field(ent, "size", update.size)
        patch_field(ent, "capabilities", update.capabilities)
        output = update.output
        if output is None:
            ent._set_output(None)
        elif output is not UNSET:
            data = self._decode(output.data, ent, index)
            if data is not None:
                ent._set_output(data)  # an authoritative replacement snapshot
        ent.meta = patch_meta(ent.meta, update.meta)

    def on_terminal_chunk(self, update: Any, index: int) -> None:
        ent = self.upsert("terminal", update.terminal_id, TerminalEntity, index)
        if ent is None:
            return
        data = self._decode(update.data, ent, index)
        if data is not None:
            ent._append_output(data)

    def _decode(self, data: object, ent: Entity, index: int) -> bytes | None:
        decoded = decode_base64(data) if isinstance(data, str) else None
        if decoded is None:
            self._violate(
                "terminal-output-not-base64",
                f"output of terminal {ent.id!r} is not base64; kept only in the event log",
                index,
            )
        return decoded

    # ------------------------------------------------------------------ plans, compactions

    def on_plan(self, update: Any, index: int) -> None:
        plan = update.plan
        plan_id = getattr(plan, "plan_id", UNSET)
        if plan_id is UNSET:  # unrecognised plan content: the id is in its raw payload
            plan_id = (getattr(plan, "raw", None) or {}).get("planId")
        ent = self.upsert("plan", plan_id, PlanEntity, index)
        if ent is None:
            self._violate("malformed-update", "plan_update without a planId", index)
            return
        ent.plan = plan  # a plan update replaces the whole plan (agent-plan.mdx)
        ent.removed = False

    def on_plan_removed(self, update: Any, index: int) -> None:
        ent = self.kinds["plan"].get(update.plan_id)
        if ent is not None:
            ent.removed = True
            ent.last_event_index = index

    def on_compaction(self, update: Any, index: int) -> None:
        ent = self.upsert("compaction", update.compaction_id, CompactionEntity, index)
        if ent is None:
            return
        if isinstance(update.status, str):
            ent.status = update.status
        if update.summary is not UNSET:
            ent._replace(update.summary)  # null or [] clears (spec: "Session compaction")
        patch_field(ent, "error", update.error)
        ent.meta = patch_meta(ent.meta, update.meta)

    def on_compaction_chunk(self, update: Any, index: int) -> None:
        ent = self.upsert("compaction", update.compaction_id, CompactionEntity, index)
        if ent is not None:
            ent.summary.append(update.content)
            if self.max_blocks is not None and len(ent.summary) > self.max_blocks:
                ent._limit_blocks(self.max_blocks)

    def on_subagent(self, update: Any, index: int) -> None:
        ent = self.upsert("subagent", update.session_id, SubagentEntity, index)
        if ent is None:
            return
        patch_field(ent, "title", update.title)
        patch_field(ent, "description", update.description)
        patch_field(ent, "capabilities", update.capabilities)
        patch_field(ent, "state", update.state)  # null: activity unconfirmed, not idle
        patch_field(ent, "cwd", update.cwd)
        if update.additional_directories is not UNSET:
            ent.additional_directories = _as_list(update.additional_directories)
        ent.meta = patch_meta(ent.meta, update.meta)


__all__ = ["EntityStore", "finished", "patch_field"]
