"""Matching the client's lines to the recorded ones (vcrpy's ``match_on``).

Both sides are normalised before they are compared: request ids, session ids,
message ids, the working directory and timestamps differ between the recording
and the replay without the client behaving differently. What is compared is
chosen by ``match_on`` (default :data:`DEFAULT_MATCH_ON`):

* ``"method"``: the method (and the kind of message: request, notification,
  response; a response must answer the same agent request);
* ``"params"``: the normalised ``params`` of a request or notification, the
  ``result`` / ``error`` of a response (``_meta`` left out);
* ``"meta"``: also the ``_meta`` values;
* ``"id"``: the client's request ids as they are, not normalised.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = ["DEFAULT_MATCH_ON", "MATCHERS", "Normalizer", "PathTable", "diff", "kind_of"]

MATCHERS = ("method", "params", "meta", "id")
"""The names ``match_on`` accepts."""

DEFAULT_MATCH_ON = ("method", "params")

_ID_KEYS = {"sessionId": "session", "messageId": "message", "parentSessionId": "session"}
_TIME_KEY = re.compile(r"^(timestamp|time|date|[a-z]+Timestamp|(created|updated|started|ended)At)$")
_ISO_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")


_NAME_CHAR = re.compile(r"[\w.\-]")


def _find_all(text: str, part: str) -> Iterable[int]:
    i = text.find(part)
    while i >= 0:
        yield i
        i = text.find(part, i + 1)


class PathTable:
    """Directories to replace in strings, each by its own text: an occurrence is the
    directory itself, or followed by ``/`` or a character that cannot continue a
    file name. The root and very short paths are left alone (they would match
    everywhere). A string costs its own length, however many directories there
    are (a replay with thousands of sessions has thousands of them)."""

    def __init__(self) -> None:
        self._by: dict[str, str] = {}
        self._prefixes: set[str] = set()
        self._lengths: list[int] = []  # distinct, longest first

    def add(self, path: str, by: str) -> None:
        """Replace ``path`` by ``by`` (the first replacement of a path stays)."""
        key = path.rstrip("/")
        if len(key) < 4 or key in self._by:
            return
        self._by[key] = by
        self._prefixes.add(key[:4])
        if len(key) not in self._lengths:
            self._lengths = sorted({*self._lengths, len(key)}, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._by)

    def replace(self, text: str) -> str:
        """``text`` with each occurrence of a directory replaced (leftmost, longest)."""
        if not self._by:
            return text
        starts = sorted({i for prefix in self._prefixes for i in _find_all(text, prefix)})
        out: list[str] = []
        pos = 0
        for i in starts:
            if i < pos:
                continue
            for length in self._lengths:
                key = text[i : i + length]
                if (
                    len(key) == length
                    and key in self._by
                    and not _NAME_CHAR.match(text, i + length)
                ):
                    out += (text[pos:i], self._by[key])
                    pos = i + length
                    break
        if not out:
            return text
        out.append(text[pos:])
        return "".join(out)


def check_match_on(match_on: Iterable[str]) -> tuple[str, ...]:
    """``match_on`` as a tuple; ``ValueError`` naming an unknown matcher."""
    chosen = tuple(match_on)
    unknown = [m for m in chosen if m not in MATCHERS]
    if unknown:
        raise ValueError(f"unknown match_on {unknown}: choose from {', '.join(MATCHERS)}")
    return chosen


def kind_of(message: Any) -> str:
    """``"request"``, ``"notification"``, ``"response"`` or ``"other"``."""
    if not isinstance(message, dict):
        return "other"
    if "method" in message:
        return "request" if "id" in message else "notification"
    if "result" in message or "error" in message:
        return "response"
    return "other"


@attrs.define
class Normalizer:
    """Turns one side's messages into comparable values: ids numbered by first
    appearance (``<session:1>``), ``cwds`` (this side's working directories, added
    with ``cwds.add(path, "<cwd>")``) replaced by ``<cwd>``, timestamps by
    ``<timestamp>``."""

    cwds: PathTable = attrs.field(factory=PathTable)
    _ids: dict[tuple[str, str], str] = attrs.field(factory=dict)
    _counts: dict[str, int] = attrs.field(factory=dict)
    # The ids numbered since the last checkpoint, in order: a trial normalisation
    # that does not match is undone by forgetting them (no copy of the table).
    _journal: list[tuple[str, str]] = attrs.field(factory=list)

    def checkpoint(self) -> int:
        """A mark to :meth:`rollback` to: the ids numbered after it are forgotten."""
        return len(self._journal)

    def rollback(self, mark: int) -> None:
        """Forget the ids numbered since ``mark`` (a candidate that did not match)."""
        while len(self._journal) > mark:
            kind, raw = self._journal.pop()
            del self._ids[(kind, raw)]
            self._counts[kind] -= 1

    def commit(self) -> None:
        """Keep the ids numbered so far (the candidate matched)."""
        self._journal.clear()

    def _id(self, kind: str, value: Any) -> str:
        key = (kind, json.dumps(value))
        found = self._ids.get(key)
        if found is None:
            count = self._counts[kind] = self._counts.get(kind, 0) + 1
            found = self._ids[key] = f"<{kind}:{count}>"
            self._journal.append(key)
        return found

    def _string(self, text: str) -> str:
        text = self.cwds.replace(text)
        if _ISO_TIME.match(text):
            return "<timestamp>"
        return text

    def value(self, value: Any, *, meta: bool, key: str = "") -> Any:
        """A normalised copy of a JSON value."""
        if key in _ID_KEYS and isinstance(value, str | int):
            return self._id(_ID_KEYS[key], value)
        if key == "cwd" and isinstance(value, str):
            return "<cwd>"
        if _TIME_KEY.match(key) and isinstance(value, str | int | float):
            return "<timestamp>"
        if isinstance(value, str):
            return self._string(value)
        if isinstance(value, list):
            return [self.value(v, meta=meta) for v in value]
        if isinstance(value, dict):
            return {
                k: self.value(v, meta=meta, key=k) for k, v in value.items() if meta or k != "_meta"
            }
        return value

    def message(
        self, message: Any, match_on: tuple[str, ...], ids: Mapping[str, Any] | None = None
    ) -> Any:
        """What of ``message`` ``match_on`` compares. ``ids``: this side's request
        id -> the id to show (the recorded one), for ``$/cancel_request``."""
        if not isinstance(message, dict):
            return message
        meta = "meta" in match_on
        out: dict[str, Any] = {}
        kind = kind_of(message)
        if "method" in match_on or kind == "response":
            if "method" in message:
                out["method"] = message["method"]
            out["kind"] = kind
        # A response's id is the agent's request id (the replay sends the recorded
        # ones): it says which request it answers.
        if (kind == "response" or "id" in match_on) and "id" in message:
            out["id"] = message["id"]
        if "params" in match_on:
            for field in ("params", "result", "error"):
                if field in message:
                    out[field] = self.value(message[field], meta=meta)
            if message.get("method") == "initialize" and isinstance(out.get("params"), dict):
                # The client's own version is not behaviour: a newer acp_lite
                # replays an older cassette.
                for info in ("info", "clientInfo"):
                    found = out["params"].get(info)
                    if isinstance(found, dict) and "version" in found:
                        out["params"][info] = {**found, "version": "<version>"}
            params = out.get("params")
            if (
                ids is not None
                and message.get("method") == "$/cancel_request"
                and isinstance(params, dict)
                and "requestId" in params
            ):
                raw = json.dumps(message["params"]["requestId"])
                if raw in ids:
                    out["params"] = {**params, "requestId": ids[raw]}
        return out


def render(value: Any) -> list[str]:
    """A stable, readable multi-line JSON text of a normalised message."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def diff(recorded: Any, received: Any, *, title: str) -> str:
    """A unified diff (recorded -> received) of two normalised messages, under
    ``title``."""
    lines = difflib.unified_diff(
        render(recorded), render(received), "recorded", "received", lineterm="", n=3
    )
    return title + "\n" + "\n".join(lines)
