"""Redaction of volatile values in an update payload (timestamps, durations, usage,
cost, temporary paths), in place: the part of :func:`pytest_acp.normalize.normalize`
that runs on every update, with a fast path for the commonest one, a text chunk."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pytest_acp._views import CHUNK_ID_KEYS

__all__ = ["redact_payload", "redact_walk"]

_TIMESTAMP_KEY = re.compile(r"(?:^timestamp$|^time$|[a-z]At$|_at$|Timestamp$|Time$)")
_DURATION_WORD = re.compile(r"duration|elapsed|latency", re.I)
_DURATION_SUFFIX = re.compile(r"(?:[a-z]Ms|_ms|Millis|Seconds|Secs)$")

_KEY_KINDS: dict[str, str | None] = {}


def _key_kind(key: str) -> str | None:
    """``"timestamps"``, ``"durations"`` or None for a wire key (cached: keys repeat)."""
    try:
        return _KEY_KINDS[key]
    except KeyError:
        pass
    kind: str | None = None
    if _TIMESTAMP_KEY.search(key):
        kind = "timestamps"
    elif _DURATION_WORD.search(key) or _DURATION_SUFFIX.search(key):
        kind = "durations"
    if len(_KEY_KINDS) < 10_000:  # bounded: keys come from the agent
        _KEY_KINDS[key] = kind
    return kind


def _is_scalar(value: Any) -> bool:
    return value is not None and isinstance(value, str | int | float)


def redact_walk(value: Any, cats: frozenset[str], tmp: Sequence[str]) -> Any:
    if isinstance(value, dict):
        for key, item in value.items():
            kind = _key_kind(key)
            if kind is not None and kind in cats and _is_scalar(item):
                value[key] = "<timestamp>" if kind == "timestamps" else "<duration>"
            elif isinstance(item, dict | list) or (tmp and isinstance(item, str)):
                value[key] = redact_walk(item, cats, tmp)
        return value
    if isinstance(value, list):
        for i, item in enumerate(value):
            value[i] = redact_walk(item, cats, tmp)
        return value
    if isinstance(value, str) and tmp:
        for prefix in tmp:
            if prefix in value:
                value = value.replace(prefix, "<tmp>")
    return value


#: The keys of the commonest update, a text chunk of a message: none names a
#: timestamp or a duration (``_key_kind``), so only ``tmp`` paths change in it.
_CHUNK_KEYS = {"sessionUpdate": None, "messageId": None, "content": None}.keys()
_TEXT_KEYS = {"type": None, "text": None}.keys()


def _untmp(value: str, tmp: Sequence[str]) -> str:
    for prefix in tmp:
        if prefix in value:
            value = value.replace(prefix, "<tmp>")
    return value


def is_plain_text_chunk(p: dict[str, Any]) -> bool:
    """A chunk whose only values are its tag, messageId and one text block, all
    strings: redaction changes only tmp paths in it (``_redact_text_chunk``)."""
    if p.keys() != _CHUNK_KEYS:
        return False
    content = p["content"]
    if content.__class__ is not dict or content.keys() != _TEXT_KEYS:
        return False
    return (
        p["sessionUpdate"].__class__ is str
        and p["messageId"].__class__ is str
        and content["type"].__class__ is str
        and content["text"].__class__ is str
    )


#: The chunk kinds whose id key is ``messageId`` (``_views.CHUNK_ID_KEYS``).
_MESSAGE_CHUNKS = frozenset(
    {"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "session_message_chunk"}
)


def plain_message_text(p: dict[str, Any], tmp: Sequence[str]) -> tuple[str, str, str] | None:
    """``(tag, messageId, text)`` of a plain text chunk of a message (a ``text``
    block), redacted as :func:`redact_payload` redacts it (tmp paths); else None.
    The merged view joins such chunks without looking at them again."""
    if p.keys() != _CHUNK_KEYS:
        return None
    tag, mid, content = p["sessionUpdate"], p["messageId"], p["content"]
    if content.__class__ is not dict or content.keys() != _TEXT_KEYS:
        return None
    text = content["text"]
    if (
        tag.__class__ is not str
        or tag not in _MESSAGE_CHUNKS
        or content["type"] != "text"
        or mid.__class__ is not str
        or text.__class__ is not str
    ):
        return None
    if tmp:
        # A tag or "text" holds no path: only the id and the text can change.
        return tag, _untmp(mid, tmp), _untmp(text, tmp)
    return tag, mid, text


def untmp_texts(texts: list[str], tmp: Sequence[str]) -> list[str]:
    """``texts`` with tmp paths replaced in each, as in a plain text chunk's text (one
    search of the joined texts: a text holds a path only if the join does)."""
    if not tmp:
        return texts
    joined = "".join(texts)
    if not any(prefix in joined for prefix in tmp):
        return texts
    return [_untmp(t, tmp) for t in texts]


def _redact_text_chunk(p: dict[str, Any], tmp: Sequence[str]) -> bool:
    """What ``redact_walk`` does to a plain text chunk, without the walk; False if
    ``p`` is not one (then the walk runs)."""
    if not is_plain_text_chunk(p):
        return False
    if tmp:
        content = p["content"]
        p["sessionUpdate"] = _untmp(p["sessionUpdate"], tmp)
        p["messageId"] = _untmp(p["messageId"], tmp)
        content["type"] = _untmp(content["type"], tmp)
        content["text"] = _untmp(content["text"], tmp)
    return True


def redact_payload(p: dict[str, Any], cats: frozenset[str], tmp: Sequence[str]) -> None:
    tag = p.get("sessionUpdate")
    if tag.__class__ is str and tag in CHUNK_ID_KEYS and _redact_text_chunk(p, tmp):
        return
    if "usage" in cats:
        if tag == "usage_update":
            for key in ("used", "size"):
                if _is_scalar(p.get(key)):
                    p[key] = "<tokens>"
        usage = p.get("usage")
        if tag == "state_update" and isinstance(usage, dict):
            for key, item in usage.items():
                if isinstance(item, int | float) and not isinstance(item, bool):
                    usage[key] = "<tokens>"
    if "cost" in cats:
        cost = p.get("cost")
        if isinstance(cost, dict) and _is_scalar(cost.get("amount")):
            cost["amount"] = "<cost>"
    redact_walk(p, cats, tmp)
