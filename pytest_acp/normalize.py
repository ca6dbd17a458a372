"""Normalise ACP ``session/update`` streams so that tests can compare them.

Real agents are nondeterministic: ids are random, chunk boundaries depend on the
model's tokenizer and timing, and timestamps, durations, usage and cost change on
every run. :func:`normalize` turns an update stream into a list of plain wire
dicts (camelCase wire field names) that only change when the agent's *behaviour*
changes:

* opaque ids become placeholders numbered by order of first appearance, per id
  kind (``<message:1>``, ``<tool_call:2>``, ``<session:1>`` ...), consistently
  within one call (or across calls sharing an :class:`IdMap`);
* timestamps, durations, usage numbers and cost are redacted (``redact=True``);
* paths under ``tmp_path`` become ``<tmp>``;
* ``view="merged"`` (default) merges consecutive chunks of one entity, so chunk
  boundaries don't matter; ``"raw"`` keeps every update; ``"final"`` folds the
  stream into the final state of each entity, in timeline order, followed by the
  session-level values and the final foreground state;
* ``text=False`` redacts text so that only the *shape* of a turn is compared;
* the agent's requests to the client (``session/request_permission``,
  ``elicitation/create``) and the answers given are kept in stream order as
  request lines, ``{"request": method, "params": {...}, "result": {...}}`` (or
  ``"error"``, or ``"status": "withdrawn"`` / ``"pending"`` when none was sent;
  ``sessionId`` left out, as in updates), normalised like updates;
  ``requests=False`` leaves them out;
* a v1 turn's end (v1 streams no states) is its ``session/prompt`` answer, a line
  ``{"response": "session/prompt", "stopReason": ...}`` (``pytest_acp._lines``).

Pure Python over dicts: no pytest, syrupy or acp_lite import is needed to use it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pytest_acp._extract import MAX_DEPTH, TOO_DEEP, extract_turns
from pytest_acp._lines import REQUEST_METHODS, RESPONSE
from pytest_acp._redact_values import plain_message_text, redact_payload, untmp_texts
from pytest_acp._safejson import key as json_key
from pytest_acp._views import CHUNK_ID_KEYS, MoreTexts, final_view, merged_view

if TYPE_CHECKING:
    from acp_lite.jsontypes import JsonObject

__all__ = [
    "CHUNK_ID_KEYS",
    "ID_KINDS",
    "MAX_DEPTH",
    "REDACTIONS",
    "REQUEST_METHODS",
    "TOO_DEEP",
    "IdMap",
    "Normalizer",
    "View",
    "extract_updates",
    "normalize",
    "order_keys",
]

View = Literal["raw", "merged", "final"]
VIEWS: tuple[str, ...] = ("raw", "merged", "final")

Normalizer = Callable[["JsonObject"], "JsonObject | bool | None"]
"""A project normaliser: receives one update payload or request line (a fresh copy,
raw ids, built-in redaction already applied) and may mutate it in place or return a
replacement dict; ``False`` drops it. Request lines have ``request`` instead of
``sessionUpdate``, a v1 turn's end line ``response``: use
``update.get("sessionUpdate")``."""

#: Wire keys whose values are opaque ids, and the placeholder kind for each. Message
#: ids share one kind because the prompt response, the user message and session
#: messages all name the same message ids (spec "Message IDs").
ID_KINDS: dict[str, str] = {
    "sessionId": "session",
    "senderSessionId": "session",
    "recipientSessionId": "session",
    "messageId": "message",
    "senderMessageId": "message",
    "recipientMessageId": "message",
    "toolCallId": "tool_call",
    "terminalId": "terminal",
    "planId": "plan",
    "compactionId": "compaction",
    "elicitationId": "elicitation",
    "requestId": "request",
}


#: Categories of volatile values redacted by default (``redact=True``).
REDACTIONS: frozenset[str] = frozenset({"timestamps", "durations", "usage", "cost"})


class IdMap:
    """Maps opaque ids to stable placeholders (``<kind:n>``) by order of first appearance.

    Share one instance between :func:`normalize` calls to keep placeholders
    consistent across several snapshots of the same test.
    """

    def __init__(self) -> None:
        self._map: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}

    def placeholder(self, kind: str, value: object) -> str:
        """The placeholder for ``value`` (a str or int id) of id kind ``kind``."""
        key = (kind, json_key(value))
        found = self._map.get(key)
        if found is None:
            n = self._counts.get(kind, 0) + 1
            self._counts[kind] = n
            found = self._map[key] = f"<{kind}:{n}>"
        return found

    def __len__(self) -> int:
        return len(self._map)

    def __repr__(self) -> str:
        return f"<IdMap {len(self._map)} ids>"


def _tmp_prefixes(tmp_path: str | os.PathLike[str] | None) -> list[str]:
    if tmp_path is None:
        return []
    raw = os.fspath(tmp_path)
    found = {raw, str(Path(raw).resolve())}
    # Longest first, so /private/tmp/x wins over /tmp/x (macOS symlinks).
    return sorted((p.rstrip("/") for p in found if p.rstrip("/")), key=len, reverse=True)


def extract_updates(data: object) -> list[JsonObject]:
    """Update payload dicts (deep copies) from ``data``.

    Accepts a sequence of: update payloads, ``session/update`` params or whole
    notifications, the model's events (anything with a dict ``.raw``), decoded
    notifications (``.raw_params``), transcript entries or NDJSON records (only
    received ``session/update`` lines are kept) or typed wire updates; or an
    object carrying them: a ``Turn`` (``.updates``), a ``Session`` (``.model``), a
    ``SessionModel`` (``.events``) or a ``Transcript``.
    """
    return extract_turns(data, requests=False, turn_ends=False)[0]


# --- text redaction and placeholders -----------------------------------------------


def _redact_text(value: Any, in_plan: bool = False) -> Any:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and (key == "text" or (in_plan and key == "content")):
                value[key] = "<text>"
            elif key in ("data", "blob") and isinstance(item, str):
                value[key] = "<data>"
            else:
                value[key] = _redact_text(item, in_plan or key == "plan")
        return value
    if isinstance(value, list):
        return [_redact_text(v, in_plan) for v in value]
    return value


def _placeholders(value: Any, ids: IdMap, kind: str | None = None) -> Any:
    if isinstance(value, dict):
        # Sorted keys: numbering must not depend on the agent's key order.
        for key in sorted(value):
            item = value[key]
            k = ID_KINDS.get(key)
            if k is not None and isinstance(item, str | int) and not isinstance(item, bool):
                value[key] = ids.placeholder(k, item)
            elif k is not None and isinstance(item, list):
                value[key] = [_placeholders(v, ids, k) for v in item]
            else:
                value[key] = _placeholders(item, ids)
        return value
    if isinstance(value, list):
        return [_placeholders(v, ids) for v in value]
    if kind is not None and isinstance(value, str | int) and not isinstance(value, bool):
        return ids.placeholder(kind, value)
    return value


def _placed(value: Any, ids: IdMap, kind: str | None = None) -> Any:
    """``_sorted(_placeholders(value, ids, kind))`` in one walk, into new containers
    (keys visited in the same sorted order, so ids are numbered alike)."""
    cls = value.__class__
    if cls is dict:
        out: dict[str, Any] = {}
        for key in sorted(value):
            item = value[key]
            k = ID_KINDS.get(key)
            if k is not None:
                if isinstance(item, str | int) and item.__class__ is not bool:
                    out[key] = ids.placeholder(k, item)
                    continue
                if isinstance(item, list):
                    out[key] = [_placed(v, ids, k) for v in item]
                    continue
            out[key] = _placed(item, ids) if isinstance(item, dict | list) else item
        return out
    if cls is list:
        return [_placed(v, ids) for v in value]
    if isinstance(value, dict | list):  # a subclass: the two steps
        return _sorted(_placeholders(value, ids, kind))
    if kind is not None and isinstance(value, str | int) and cls is not bool:
        return ids.placeholder(kind, value)
    return value


def _placed_update(update: dict[str, Any], ids: IdMap) -> JsonObject:
    """``order_keys(_placeholders(update, ids))`` in one walk."""
    first = next((k for k in ("sessionUpdate", "request", RESPONSE) if k in update), "")
    if isinstance(update.get(first), dict | list):  # order_keys leaves it unsorted
        return order_keys(_placeholders(update, ids))
    placed: JsonObject = _placed(update, ids)
    if not first:
        return placed
    out: JsonObject = {first: placed.pop(first)}
    out.update(placed)
    return out


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def order_keys(update: JsonObject) -> JsonObject:
    """``sessionUpdate`` (or a request line's ``request``) first, then the other keys
    sorted (recursively): a stable, readable order that does not depend on the
    agent's key order."""
    out: JsonObject = {}
    first = next((k for k in ("sessionUpdate", "request", RESPONSE) if k in update), "")
    if first in update:
        out[first] = update[first]
    for key in sorted(update):
        if key != first:
            out[key] = _sorted(update[key])
    return out


# --- entry point -------------------------------------------------------------------


def normalize(
    updates: object,
    view: View | str = "merged",
    *,
    text: bool = True,
    tmp_path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    redact: bool | Iterable[str] = True,
    ids: IdMap | None = None,
    placeholders: bool = True,
    normalizers: Iterable[Normalizer] = (),
    requests: bool = True,
) -> list[JsonObject]:
    """Normalise an update stream into comparable wire dicts (see the module docstring).

    Args:
        updates: what :func:`extract_updates` accepts (a list of updates, a ``Turn``,
            a ``Session``, a transcript ...).
        view: ``"merged"`` (default), ``"raw"`` or ``"final"``.
        text: ``False`` replaces text with ``<text>`` (and binary data with ``<data>``).
        tmp_path: a directory (or several) whose paths are replaced by ``<tmp>``.
        redact: ``True`` redacts every category in :data:`REDACTIONS`; ``False``
            none; or an iterable of category names.
        ids: an :class:`IdMap` to share placeholders between calls.
        placeholders: ``False`` keeps the raw ids.
        normalizers: project normalisers applied to each update and request line
            (see :data:`Normalizer`).
        requests: ``False`` leaves out the agent's requests (request lines).
    """
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; expected one of {', '.join(VIEWS)}")
    cats = REDACTIONS if redact is True else frozenset() if redact is False else frozenset(redact)
    unknown = cats - REDACTIONS
    if unknown:
        raise ValueError(f"unknown redaction {sorted(unknown)}; known: {sorted(REDACTIONS)}")
    paths: list[str] = []
    if isinstance(tmp_path, str | os.PathLike):
        paths = _tmp_prefixes(tmp_path)
    elif tmp_path is not None:
        for one in tmp_path:
            paths.extend(_tmp_prefixes(one))
        paths.sort(key=len, reverse=True)

    payloads: list[Any] = []  # dicts; for the merged view also MoreTexts and plain (tag, id, text)
    turns: list[int] = []
    hooks = list(normalizers)
    compact = view == "merged" and not hooks
    found, found_turns = extract_turns(updates, requests=requests, compact=compact)
    for p, turn in zip(found, found_turns, strict=True):
        if p.__class__ is MoreTexts:
            # The rest of a plain text chunk run: what redact_payload does to each
            # chunk (tmp paths in its text), without a payload per chunk.
            p.texts = untmp_texts(p.texts, paths)
            payloads.append(p)
            turns.append(turn)
            continue
        if compact:
            plain = plain_message_text(p, paths)
            if plain is not None:  # redacted (tmp paths) and ready to merge
                payloads.append(plain)
                turns.append(turn)
                continue
        redact_payload(p, cats, paths)
        keep = True
        for hook in hooks:
            result = hook(p)
            if result is False:
                keep = False
                break
            if isinstance(result, dict):
                p = result
        if keep:
            payloads.append(p)
            turns.append(turn)

    if view == "merged":
        payloads = merged_view(payloads, turns)
    elif view == "final":
        payloads = final_view(payloads, turns)
    if not text:
        payloads = [_redact_text(p) for p in payloads]
    id_map = (ids if ids is not None else IdMap()) if placeholders else None
    out: list[JsonObject] = []
    for p in payloads:
        ready = _plain_chunk_out(p, id_map)
        if ready is None:
            out.append(_placed_update(p, id_map) if id_map is not None else order_keys(p))
        else:
            out.append(ready)
    return out


def _plain_chunk_out(p: dict[str, Any], ids: IdMap | None) -> JsonObject | None:
    """What placeholders and :func:`order_keys` make of a plain text chunk (its tag,
    messageId and a text block, all strings), built at once; else None."""
    if p.keys() != _PLAIN_KEYS:
        return None
    content = p["content"]
    if content.__class__ is not dict or content.keys() != _TEXT_KEYS:
        return None
    tag, mid, kind, text = p["sessionUpdate"], p["messageId"], content["type"], content["text"]
    if not (
        tag.__class__ is str
        and mid.__class__ is str
        and kind.__class__ is str
        and text.__class__ is str
    ):
        return None
    if ids is not None:
        mid = ids.placeholder("message", mid)
    return {"sessionUpdate": tag, "content": {"text": text, "type": kind}, "messageId": mid}


_PLAIN_KEYS = {"sessionUpdate": None, "messageId": None, "content": None}.keys()
_TEXT_KEYS = {"type": None, "text": None}.keys()
