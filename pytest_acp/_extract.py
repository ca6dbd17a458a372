"""Reading update payloads out of what a test compares: the model's events (by runs
where the log offers them), transcripts, NDJSON records, wire messages, typed
updates; and :func:`clip_depth`, the copy every payload gets before the helpers
of :mod:`pytest_acp.normalize` change it in place.

Pure Python over dicts: no acp_lite import (its objects are read by duck typing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_acp._lines import RESPONSE, Wire, from_idle, from_wire, is_record, record_line
from pytest_acp._redact_values import plain_message_text
from pytest_acp._safejson import NOT_JSON, loads
from pytest_acp._views import MoreTexts

__all__ = ["MAX_DEPTH", "STREAMED", "SYNTHESIZED", "TOO_DEEP", "clip_depth", "extract_turns"]

#: Event sources that are updates the agent sent: a v2 ``session/update``, or a v1
#: one (``acp_lite.core.v1.SOURCE_TRANSLATED``: its payload kept as received).
STREAMED = frozenset({"session/update", "v1:session/update"})
#: acp_lite.core.v1.SOURCESYNTHESIZED (not imported: pure Python here).
SYNTHESIZED = "v1:synthesized"


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
    if source == SYNTHESIZED and wire is not None:
        # The idle the v1 translator made from the session/prompt response: the
        # turn's end, shown as that response (what the agent sent).
        raw = getattr(item, "raw", None)
        found = from_idle(raw) if isinstance(raw, Mapping) else None
        return [] if found is None else [found]
    if source not in STREAMED:
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


def _is_text_run(item: Any) -> bool:
    """An ``acp_lite.model.events.TextRun`` (duck-typed: no acp_lite import here)."""
    return isinstance(getattr(item, "texts", None), list) and callable(
        getattr(item, "payload", None)
    )


def _is_line_run(item: Any) -> bool:
    """An ``acp_lite.model.events.LineRun`` (duck-typed)."""
    return isinstance(getattr(item, "lines", None), list) and callable(
        getattr(item, "deeper_than", None)
    )


def _run_length(item: Any) -> int | None:
    """How many events a text or line run stands for (None: not a run)."""
    if _is_text_run(item):
        return len(item.texts)
    if _is_line_run(item):
        return len(item.lines)
    return None


def _events_of(events: Any) -> Iterable[Any]:
    """The events of a log or a turn's slice, with their text chunk runs as one
    ``TextRun`` each where the log offers them (``runs()``)."""
    runs = getattr(events, "runs", None)
    return runs() if callable(runs) else events  # type: ignore[no-any-return]


def _in_stream_order(events: Iterable[Any], requests: Any) -> list[Any]:
    """Model events with the request records placed where they arrived (a record
    with ``event_index`` k came after events ``0..k-1``; a text run is cut there)."""
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
        length = _run_length(event) if j < len(records) else None
        if length is not None and isinstance(index, int):
            while j < len(records) and records[j].event_index < index + length:
                head, event = event.split(records[j].event_index - index)
                out.append(head)
                length -= records[j].event_index - index
                index = event.index
                while j < len(records) and records[j].event_index <= index:
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
        return _in_stream_order(_events_of(events), getattr(data, "requests", None))
    model = getattr(data, "model", None)
    if model is not None and getattr(model, "events", None) is not None:
        return _in_stream_order(_events_of(model.events), getattr(model, "requests", None))
    updates = getattr(data, "updates", None)
    if updates is not None and not callable(updates):
        return _in_stream_order(_events_of(updates), getattr(updates, "requests", None))
    entries = getattr(data, "entries", None)  # acp_lite.transcript.Transcript
    if callable(entries):
        return list(entries())
    if isinstance(data, Iterable):
        return _in_stream_order(_events_of(data), getattr(data, "requests", None))
    raise TypeError(f"cannot read ACP updates from {type(data).__name__}")


def extract_turns(
    data: Any, *, requests: bool, turn_ends: bool = True, compact: bool = False
) -> tuple[list[Any], list[int]]:
    """The payloads, and for each the number of the prompt turn it came in: v1
    messages have no messageId, so only the turn tells one turn's message from the
    next (the views keep them apart). ``turn_ends``: the lines ending v1 turns too;
    ``requests``: request lines too. ``compact``: a run of plain text chunks of one
    stream gives its first payload and a :class:`MoreTexts` with the other texts
    (what the merged view joins), not a payload per chunk."""
    wire = Wire(requests) if turn_ends else None
    found: list[Any] = []
    turns: list[int] = []
    # The payloads to copy and clip at the end (the wire fills in a transcript's
    # answers after its requests): the helpers below change payloads in place and
    # recurse, and agent values may nest deeply. Payloads decoded again for this
    # call are new dicts already, clipped only if they may nest too deeply.
    clip: list[int] = []
    turn = 0
    for item in _items_of(data):
        if _is_line_run(item):
            # Streamed updates kept as their lines (no turn starts in them), decoded
            # again: new dicts, clipped only if they may nest too deeply.
            decoded = item.payloads()
            clip.extend(len(found) + i for i in item.deeper_than(MAX_DEPTH))
            found.extend(decoded)
            turns.extend([turn] * len(decoded))
            continue
        if _starts_turn(item):
            turn += 1
        if _is_text_run(item):
            first = item.payload(0)
            clip.append(len(found))  # a compact line's template may nest anything
            if compact and plain_message_text(first, ()) is not None:
                found.append(first)
                found.append(MoreTexts(item.texts[1:]))
                turns.extend((turn, turn))
            else:
                clip.extend(range(len(found) + 1, len(found) + len(item.texts)))
                found.extend(item.payload(i) for i in range(len(item.texts)))
                turns.extend([turn] * len(item.texts))
            continue
        payloads = _payloads_of(item, wire)
        clip.extend(range(len(found), len(found) + len(payloads)))
        found.extend(payloads)
        turns.extend([turn] * len(payloads))
    if wire is not None:
        wire.finish()  # a transcript's answers come later than its requests
    for i in clip:
        found[i] = clip_depth(found[i])
    return found, turns


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
