"""The ``merged`` and ``final`` views of :func:`pytest_acp.normalize.normalize`.

Both work on update payload dicts with raw ids (placeholders are assigned later,
over the output, so numbering follows the order of the view).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from typing import Any

from pytest_acp._safejson import key as json_key

__all__ = ["CHUNK_ID_KEYS", "MoreTexts", "final_view", "merged_view"]

#: Chunk updates and the key that names the entity they append to.
CHUNK_ID_KEYS: dict[str, str] = {
    "user_message_chunk": "messageId",
    "agent_message_chunk": "messageId",
    "agent_thought_chunk": "messageId",
    "session_message_chunk": "messageId",
    "tool_call_content_chunk": "toolCallId",
    "compaction_summary_chunk": "compactionId",
    "terminal_output_chunk": "terminalId",
}


# --- merged view -------------------------------------------------------------------


class MoreTexts:
    """The other texts of a run of plain text chunks of one stream, right after the
    run's first payload (``normalize`` passes runs this way to the merged view,
    which joins them: no payload per chunk)."""

    __slots__ = ("texts",)

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts


def _frozen(value: Any) -> Any:
    """A hashable stand-in for a JSON value (scalars as they are: the common case)."""
    if isinstance(value, dict | list):
        return json_key(value)
    return value


_KEY_ORDERS: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _items_key(d: dict[str, Any], skip: str, skip2: str = "") -> tuple[Any, ...]:
    """The merge key of a dict: every key but ``skip``/``skip2``, with its value,
    sorted by key (keys are unique, so the sort never looks at values: the sorted
    key order is cached per shape, as chunks of a stream share one)."""
    shape = (skip, skip2, *d)
    order = _KEY_ORDERS.get(shape)
    if order is None:
        order = tuple(sorted(k for k in d if k != skip and k != skip2))
        if len(_KEY_ORDERS) < 1000:  # bounded: keys come from the agent
            _KEY_ORDERS[shape] = order
    return tuple([(k, _frozen(d[k])) for k in order])


def _text_block_key(block: Any) -> tuple[Any, ...] | None:
    """A merge key for a text content block (all keys but ``text``), or None."""
    if (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ):
        return _items_key(block, "text")
    return None


def _content_key(tag: str, content: Any) -> tuple[Any, ...] | None:
    if tag == "tool_call_content_chunk":
        if isinstance(content, dict) and content.get("type") == "content":
            inner = _text_block_key(content.get("content"))
            if inner is None:
                return None
            return (_items_key(content, "content"), inner)
        return None
    return _text_block_key(content)


def _content_text(tag: str, content: dict[str, Any]) -> str:
    block = content["content"] if tag == "tool_call_content_chunk" else content
    text: str = block["text"]
    return text


def _with_text(tag: str, content: dict[str, Any], text: str) -> dict[str, Any]:
    if tag == "tool_call_content_chunk":
        return {**content, "content": {**content["content"], "text": text}}
    return {**content, "text": text}


def _b64(data: Any) -> bytes | None:
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


class _Run:
    """Consecutive chunks of one entity being merged; parts are joined once, at the
    end, so merging n chunks is O(total size), not O(n^2)."""

    __slots__ = ("base", "binary", "key", "parts", "tag")

    def __init__(self, tag: str, base: dict[str, Any], key: tuple[Any, ...], binary: bool) -> None:
        self.tag, self.base, self.key, self.binary = tag, base, key, binary
        self.parts: list[Any] = []

    def result(self) -> dict[str, Any]:
        if len(self.parts) <= 1:
            return self.base
        if self.binary:
            data = b"".join(self.parts)
            return {**self.base, "data": base64.b64encode(data).decode("ascii")}
        text = "".join(self.parts)
        return {**self.base, "content": _with_text(self.tag, self.base["content"], text)}


def _run_key(p: dict[str, Any]) -> tuple[tuple[Any, ...], Any, bool] | None:
    """(merge key, the part to append, binary?) for a mergeable chunk, else None."""
    tag = p.get("sessionUpdate")
    if not isinstance(tag, str) or tag not in CHUNK_ID_KEYS:
        return None
    id_key = CHUNK_ID_KEYS[tag]
    rest = _items_key(p, "content", "data")
    if tag == "terminal_output_chunk":
        data = _b64(p.get("data"))
        return None if data is None else ((tag, id_key, rest), data, True)
    ckey = _content_key(tag, p.get("content"))
    if ckey is None:
        return None
    return ((tag, id_key, rest, ckey), _content_text(tag, p["content"]), False)


def merged_view(
    payloads: Sequence[dict[str, Any] | MoreTexts | tuple[str, str, str]],
    turns: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """Adjacent chunks of one stream joined; ``turns``: each payload's prompt turn
    (a run never crosses into the next turn: v1 chunks have no messageId). A
    payload may also be a plain text chunk of a message as ``(tag, messageId,
    text)``, or a :class:`MoreTexts` continuing the run before it."""
    out: list[dict[str, Any]] = []
    run: _Run | None = None
    run_turn = 0
    for i, p in enumerate(payloads):
        if isinstance(p, MoreTexts):
            # Follows its run's first chunk, a plain text chunk, so the run is open.
            assert run is not None and not run.binary
            run.parts.extend(p.texts)
            continue
        turn = turns[i] if turns is not None else 0
        if isinstance(p, tuple):
            # (tag, messageId, text) of a plain text chunk (normalize checked it):
            # its run key is the tag and id alone, as no other key is in it.
            tag, mid, text = p
            key = ("plain", tag, mid)
            if run is not None and run.key == key and run_turn == turn:
                run.parts.append(text)
                continue
            if run is not None:
                out.append(run.result())
            content = {"type": "text", "text": text}
            run = _Run(
                tag, {"sessionUpdate": tag, "messageId": mid, "content": content}, key, False
            )
            run_turn = turn
            run.parts.append(text)
            continue
        k = _run_key(p)
        if k is not None and run is not None and run.key == k[0] and run_turn == turn:
            run.parts.append(k[1])
            continue
        if run is not None:
            out.append(run.result())
            run = None
        if k is None:
            out.append(p)
        else:
            run = _Run(p["sessionUpdate"], p, k[0], k[2])
            run_turn = turn
            run.parts.append(k[1])
    if run is not None:
        out.append(run.result())
    return out


# --- final view --------------------------------------------------------------------

_MESSAGE_KINDS = {
    "user_message": "user_message",
    "user_message_chunk": "user_message",
    "agent_message": "agent_message",
    "agent_message_chunk": "agent_message",
    "agent_thought": "agent_thought",
    "agent_thought_chunk": "agent_thought",
    "session_message": "session_message",
    "session_message_chunk": "session_message",
}
_SINGLETONS = (
    "available_commands_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
    # v1 only: a plan is replaced whole by each update (v1 schema Plan: "complete
    # list of all entries"), the mode by each current_mode_update.
    "plan",
    "current_mode_update",
)
#: The key of a v1 turn's end line (``pytest_acp._lines``; not imported: the
#: views are plain dict work).
_RESPONSE = "response"


def _patch(entity: dict[str, Any], update: dict[str, Any], skip: Iterable[str] = ()) -> None:
    """Patch semantics (spec "Entity IDs"): omitted = unchanged, a value (or ``null``)
    replaces; ``_meta`` patches by top-level key (``null`` clears it, a key set to
    ``null`` is removed)."""
    skipped = set(skip)
    for key, value in update.items():
        if key in skipped:
            continue
        if key == "_meta" and isinstance(value, dict):
            # The model's rule, so the snapshot folds _meta exactly as the model does
            # (imported here: a run that never snapshots loads no client code).
            from acp_lite.model.entities import patch_meta

            current = entity.get("_meta")
            entity["_meta"] = patch_meta(current if isinstance(current, dict) else None, value)
        else:
            entity[key] = value


def _append(entity: dict[str, Any], key: str, item: Any) -> None:
    current = entity.get(key)
    if isinstance(current, list):
        current.append(item)
    else:
        entity[key] = [item]


def _merge_text_items(items: Any, tool_content: bool = False) -> Any:
    """Join adjacent text items so the final content does not depend on chunking."""
    if not isinstance(items, list):
        return items
    tag = "tool_call_content_chunk" if tool_content else "agent_message_chunk"
    chunks = [{"sessionUpdate": tag, "content": item} for item in items]
    return [c["content"] for c in merged_view(chunks)]


def final_view(
    payloads: list[dict[str, Any]], turns: Sequence[int] | None = None
) -> list[dict[str, Any]]:
    """Each entity's final state as one update, in order of first appearance; then
    the session-wide singletons and the last ``state_update`` (v1: the last turn's
    end line). ``turns``: each payload's prompt turn; a message without a
    messageId (v1) is one per turn. A v1 ``tool_call`` is the same entity as its
    ``tool_call_update`` updates, folded into one ``tool_call_update`` as in v2.

    Why a fold over JSON here and not ``SessionModel``'s: it runs *after*
    redaction and the user's normalisers, which may drop, rewrite or replace
    payloads (the documented order of ``normalize``), so its input is no longer
    wire the typed model takes, and its output is the snapshot's JSON. The spec's
    patch rules it shares with the model come from the model (``patch_meta``).
    """
    order: list[dict[str, Any]] = []
    entities: dict[tuple[str, str, int], dict[str, Any]] = {}
    binary: dict[int, bytearray] = {}
    singletons: dict[str, dict[str, Any]] = {}
    state: dict[str, Any] | None = None
    ended: dict[str, Any] | None = None

    def entity(kind: str, tag: str, id_key: str, ident: Any, turn: int = 0) -> dict[str, Any]:
        key = (kind, json_key(ident), turn)
        found = entities.get(key)
        if found is None:
            found = entities[key] = {"sessionUpdate": tag, id_key: ident}
            order.append(found)
        return found

    for i, p in enumerate(payloads):
        tag = p.get("sessionUpdate")
        if _RESPONSE in p and tag is None:
            ended = p  # like the last state_update: how the (last) turn ended
            continue
        if not isinstance(tag, str):
            order.append(p)  # no usable tag: kept where it came, as given
            continue
        if tag in _MESSAGE_KINDS:
            kind = _MESSAGE_KINDS[tag]
            mid = p.get("messageId")
            # No messageId (v1): the turn tells the messages apart, as in the model.
            turn = turns[i] if turns is not None and mid is None else 0
            e = entity(kind, kind, "messageId", mid, turn)
            if tag.endswith("_chunk"):
                _append(e, "content", p.get("content"))  # chunk _meta is chunk-scoped
            else:
                _patch(e, p, skip=("sessionUpdate", "messageId"))
        elif tag in ("tool_call", "tool_call_update", "tool_call_content_chunk"):
            e = entity("tool_call", "tool_call_update", "toolCallId", p.get("toolCallId"))
            if tag == "tool_call_content_chunk":
                _append(e, "content", p.get("content"))
            else:
                _patch(e, p, skip=("sessionUpdate", "toolCallId"))
        elif tag in ("terminal_update", "terminal_output_chunk"):
            e = entity("terminal", "terminal_update", "terminalId", p.get("terminalId"))
            if tag == "terminal_output_chunk":
                buf = binary.setdefault(id(e), bytearray())
                if not buf and isinstance(e.get("output"), dict):
                    buf += _b64(e["output"].get("data")) or b""
                buf += _b64(p.get("data")) or b""
                e["output"] = {**(e.get("output") or {}), "data": ""}
            else:
                _patch(e, p, skip=("sessionUpdate", "terminalId"))
                if "output" in p:  # an authoritative replacement snapshot
                    binary.pop(id(e), None)
        elif tag == "plan_update":
            plan = p.get("plan")
            ident = plan.get("planId") if isinstance(plan, dict) else None
            e = entity("plan", "plan_update", "planId", ident)
            e.clear()
            e.update(p)
        elif tag == "plan_removed":
            e = entity("plan", "plan_removed", "planId", p.get("planId"))
            e.clear()
            e.update(p)
        elif tag in ("compaction_update", "compaction_summary_chunk"):
            e = entity("compaction", "compaction_update", "compactionId", p.get("compactionId"))
            if tag == "compaction_summary_chunk":
                _append(e, "summary", p.get("content"))
            else:
                _patch(e, p, skip=("sessionUpdate", "compactionId"))
        elif tag == "subagent_update":
            e = entity("subagent", "subagent_update", "sessionId", p.get("sessionId"))
            _patch(e, p, skip=("sessionUpdate", "sessionId"))
        elif tag in _SINGLETONS:
            current = singletons.setdefault(tag, {"sessionUpdate": tag})
            _patch(current, p, skip=("sessionUpdate",))
        elif tag == "state_update":
            state = p
        elif tag == "notice":
            continue  # live-only events, not session state (spec "Session notices")
        else:
            order.append(p)  # unknown / custom updates keep their position

    for e in order:
        tag = e.get("sessionUpdate")
        if not isinstance(tag, str):
            continue
        if id(e) in binary:
            e["output"]["data"] = base64.b64encode(bytes(binary[id(e)])).decode("ascii")
        if tag in _MESSAGE_KINDS and "content" in e:
            e["content"] = _merge_text_items(e["content"])
        elif tag == "tool_call_update" and "content" in e:
            e["content"] = _merge_text_items(e["content"], tool_content=True)
        elif tag == "compaction_update" and "summary" in e:
            e["summary"] = _merge_text_items(e["summary"])
    out = list(order)
    out.extend(singletons[t] for t in _SINGLETONS if t in singletons)
    if state is not None:
        out.append(state)
    if ended is not None:
        out.append(ended)
    return out
