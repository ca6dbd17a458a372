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
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pytest_acp._lines import (
    REQUEST_METHODS,
    RESPONSE,
    Wire,
    from_idle,
    from_wire,
    is_record,
    record_line,
)
from pytest_acp._redact_values import redact_payload
from pytest_acp._safejson import NOT_JSON, loads
from pytest_acp._safejson import key as json_key
from pytest_acp._views import CHUNK_ID_KEYS, final_view, merged_view

if TYPE_CHECKING:
    from acp_lite.jsontypes import JsonObject

__all__ = [
    "CHUNK_ID_KEYS",
    "ID_KINDS",
    "REDACTIONS",
    "REQUEST_METHODS",
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


# --- extracting update payloads ----------------------------------------------------


#: Event sources that are updates the agent sent: a v2 ``session/update``, or a v1
#: one (``acp_lite.core.v1.SOURCE_TRANSLATED``: its payload kept as received).
_STREAMED = frozenset({"session/update", "v1:session/update"})
#: acp_lite.core.v1.SOURCE_SYNTHESIZED (not imported: pure Python here).
_SYNTHESIZED = "v1:synthesized"


def _payloads_of(item: Any, wire: Wire | None = None) -> list[dict[str, Any]]:
    """The update payloads (``{"sessionUpdate": ...}``) carried by ``item``; with
    ``wire``, request lines too."""
    if isinstance(item, Mapping):
        if "sessionUpdate" in item:
            return [dict(item)]
        if "request" in item and "params" in item and wire is not None and wire.requests:
            return [dict(item)]  # a request line (already normalised once)
        if RESPONSE in item and wire is not None:
            return [dict(item)]  # a v1 turn's end (already normalised once)
        update = item.get("update")
        if isinstance(update, Mapping) and "sessionUpdate" in update:
            return [dict(update)]  # session/update params
        if "dir" in item and ("msg" in item or "raw" in item):  # an NDJSON transcript record
            if item.get("dir") == "recv":
                return (
                    wire.recv(item.get("msg")) if wire is not None else from_wire(item.get("msg"))
                )
            if item.get("dir") == "send" and wire is not None:
                wire.send(item.get("msg"))
            return []
        if "method" in item or "result" in item or "error" in item:
            return from_wire(item)  # a whole JSON-RPC message
        raise TypeError(f"not an ACP update: a mapping without 'sessionUpdate' ({item!r:.200})")
    if is_record(item):
        return [record_line(item)] if wire is not None and wire.requests else []
    source = getattr(item, "source", "session/update")
    if source == _SYNTHESIZED and wire is not None:
        # The idle the v1 translator made from the session/prompt response: the
        # turn's end, shown as that response (what the agent sent).
        raw = getattr(item, "raw", None)
        found = from_idle(raw) if isinstance(raw, Mapping) else None
        return [] if found is None else [found]
    if source not in _STREAMED:
        # Derived by the client (the tool call a permission request carries, what
        # the v1 translator synthesizes): snapshots show what the agent streamed,
        # as the transcript view does.
        return []
    raw = getattr(item, "raw", None)  # model Event, Unrecognized* updates
    if isinstance(raw, Mapping):
        # The update payload as received, kept even without a usable tag (the
        # model keeps such updates too; they are what the agent sent).
        return [dict(raw)]
    raw_params = getattr(item, "raw_params", None)  # decoded Notification
    if isinstance(raw_params, Mapping):
        return _payloads_of(raw_params)
    line = getattr(item, "line", None)  # TranscriptEntry
    if isinstance(line, bytes | str) and hasattr(item, "direction"):
        if item.direction == "send":
            if wire is not None:
                value = loads(line)
                if value is not NOT_JSON:
                    wire.send(value)
            return []
        if item.direction != "recv":
            return []
        value = loads(line)
        if value is NOT_JSON:
            return []
        return wire.recv(value) if wire is not None else from_wire(value)
    if hasattr(item, "session_update"):  # a typed wire object
        import importlib

        protocol: Any = importlib.import_module("acp_lite.protocol")
        return _payloads_of(protocol.converter.unstructure(item))
    raise TypeError(f"cannot read an ACP update from {type(item).__name__}: {item!r:.200}")


def _in_stream_order(events: Iterable[Any], requests: Any) -> list[Any]:
    """Model events with the request records placed where they arrived (a record
    with ``event_index`` k came after events ``0..k-1``)."""
    records = [r for r in requests or () if is_record(r)]
    if not records:
        return list(events)
    out: list[Any] = []
    j = 0
    for event in events:
        index = getattr(event, "index", None)
        while j < len(records) and isinstance(index, int) and records[j].event_index <= index:
            out.append(records[j])
            j += 1
        out.append(event)
    out.extend(records[j:])
    return out


def _items_of(data: Any) -> Iterable[Any]:
    if isinstance(data, Mapping):
        return [data]
    if isinstance(data, str | bytes):
        raise TypeError("expected a sequence of updates, got a string")
    # Order matters: a Session has both `model` and `updates`; the model's event log
    # is the complete record (Turn.updates is the slice of one turn). The agent's
    # requests are `requests` next to the events (SessionModel, Turn.updates).
    events = getattr(data, "events", None)
    if events is not None and not callable(events):
        return _in_stream_order(events, getattr(data, "requests", None))
    model = getattr(data, "model", None)
    if model is not None and getattr(model, "events", None) is not None:
        return _in_stream_order(model.events, getattr(model, "requests", None))
    updates = getattr(data, "updates", None)
    if updates is not None and not callable(updates):
        return _in_stream_order(updates, getattr(updates, "requests", None))
    entries = getattr(data, "entries", None)  # acp_lite.transcript.Transcript
    if callable(entries):
        return list(entries())
    if isinstance(data, Iterable):
        return _in_stream_order(data, getattr(data, "requests", None))
    raise TypeError(f"cannot read ACP updates from {type(data).__name__}")


def extract_updates(data: object) -> list[JsonObject]:
    """Update payload dicts (deep copies) from ``data``.

    Accepts a sequence of: update payloads, ``session/update`` params or whole
    notifications, the model's events (anything with a dict ``.raw``), decoded
    notifications (``.raw_params``), transcript entries or NDJSON records (only
    received ``session/update`` lines are kept) or typed wire updates; or an
    object carrying them: a ``Turn`` (``.updates``), a ``Session`` (``.model``), a
    ``SessionModel`` (``.events``) or a ``Transcript``.
    """
    return _extract(data, requests=False)


def _extract(data: Any, *, requests: bool) -> list[dict[str, Any]]:
    return _extract_turns(data, requests=requests, turn_ends=requests)[0]


def _extract_turns(
    data: Any, *, requests: bool, turn_ends: bool = True
) -> tuple[list[dict[str, Any]], list[int]]:
    """The payloads, and for each the number of the prompt turn it came in: v1
    messages have no messageId, so only the turn tells one turn's message from the
    next (the views keep them apart). ``turn_ends``: the lines ending v1 turns too;
    ``requests``: request lines too."""
    wire = Wire(requests) if turn_ends else None
    found: list[dict[str, Any]] = []
    turns: list[int] = []
    turn = 0
    for item in _items_of(data):
        if _starts_turn(item):
            turn += 1
        payloads = _payloads_of(item, wire)
        found.extend(payloads)
        turns.extend([turn] * len(payloads))
    if wire is not None:
        wire.finish()  # a transcript's answers come later than its requests
    # Copies, clipped: the helpers below recurse, and agent values may nest deeply.
    return [clip_depth(p) for p in found], turns


def _starts_turn(item: Any) -> bool:
    """A v1 turn's start: the user message the v1 translator made up (a model
    event), or a ``session/prompt`` the client sent (a transcript line)."""
    if isinstance(item, Mapping):
        if item.get("dir") != "send":
            return False
        msg = item.get("msg")
        return isinstance(msg, Mapping) and msg.get("method") == "session/prompt"
    if getattr(item, "direction", None) == "send":
        line = getattr(item, "line", None)
        if not isinstance(line, bytes | str) or b"session/prompt" not in _as_bytes(line):
            return False
        msg = loads(line)
        return isinstance(msg, Mapping) and msg.get("method") == "session/prompt"
    if getattr(item, "synthesized", False) is True:
        raw = getattr(item, "raw", None)
        return isinstance(raw, Mapping) and raw.get("sessionUpdate") == "user_message"
    return False


def _as_bytes(line: bytes | str) -> bytes:
    return line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")


MAX_DEPTH = 64
"""Deeper JSON values are replaced by :data:`TOO_DEEP` in normalised updates."""

TOO_DEEP = f"<nested deeper than {MAX_DEPTH} levels>"


_SCALARS = (str, int, float, bool, type(None))


def _shallow_copy(value: Any, levels: int) -> Any:
    """A copy of ``value`` if it nests at most ``levels`` containers deep (dicts and
    lists of scalars), else ``_DEEPER``: the common update, copied without the
    general walk below."""
    if value.__class__ in _SCALARS:
        return value
    if levels == 0:
        return _DEEPER
    if value.__class__ is dict:
        out = {}
        for k, v in value.items():
            c = _shallow_copy(v, levels - 1)
            if c is _DEEPER:
                return _DEEPER
            out[k] = c
        return out
    if value.__class__ is list:
        items = []
        for v in value:
            c = _shallow_copy(v, levels - 1)
            if c is _DEEPER:
                return _DEEPER
            items.append(c)
        return items
    return _DEEPER  # a tuple, a subclass ...: the general walk


_DEEPER = object()
_SHALLOW = 4  # levels copied by _shallow_copy (a text chunk's payload is 2 deep)


def clip_depth(value: Any, limit: int = MAX_DEPTH) -> Any:
    """A copy of a JSON value whose containers nested deeper than ``limit`` are
    replaced by :data:`TOO_DEEP` (without recursion: any depth the agent sends)."""
    if limit >= _SHALLOW:
        copied = _shallow_copy(value, _SHALLOW)
        if copied is not _DEEPER:
            return copied
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 1)]
    while stack:
        src, dst, key, depth = stack.pop()
        if isinstance(src, dict | list | tuple) and depth > limit:
            dst[key] = TOO_DEEP
        elif isinstance(src, dict):
            new: Any = dict.fromkeys(src)  # keeps the key order
            dst[key] = new
            stack.extend((v, new, k, depth + 1) for k, v in src.items())
        elif isinstance(src, list | tuple):
            new = [None] * len(src)
            dst[key] = new
            stack.extend((v, new, i, depth + 1) for i, v in enumerate(src))
        else:
            dst[key] = src
    return root[0]


def _tmp_prefixes(tmp_path: str | os.PathLike[str] | None) -> list[str]:
    if tmp_path is None:
        return []
    raw = os.fspath(tmp_path)
    found = {raw, str(Path(raw).resolve())}
    # Longest first, so /private/tmp/x wins over /tmp/x (macOS symlinks).
    return sorted((p.rstrip("/") for p in found if p.rstrip("/")), key=len, reverse=True)


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

    payloads: list[dict[str, Any]] = []
    turns: list[int] = []
    hooks = list(normalizers)
    found, found_turns = _extract_turns(updates, requests=requests)
    for p, turn in zip(found, found_turns, strict=True):
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
    if placeholders:
        id_map = ids if ids is not None else IdMap()
        payloads = [_placeholders(p, id_map) for p in payloads]
    return [order_keys(p) for p in payloads]
