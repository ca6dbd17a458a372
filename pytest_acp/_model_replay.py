"""Replay a transcript's session traffic into fresh ``SessionModel``\\ s and collect
their conformance observations (``acp_lite.model.rules``).

Used for saved transcripts (``check_transcript``, ``python -m pytest_acp check``):
a running client's session rules come from its live models instead
(``Client.violations()``), which ``tests/core/test_findings.py`` holds equal to
this replay on every built-in scenario.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from pytest_acp._safejson import NOT_JSON, key, loads
from pytest_acp.conformance import RULES, Violation

__all__ = [
    "SAME_FINDING",
    "Replay",
    "drop_duplicates",
    "feed_replay",
    "new_replay",
    "replay_violations",
]

#: Model rules that report the same finding as a connection rule at the same line:
#: the connection rule's violation is kept (its position covers both directions).
SAME_FINDING: dict[str, str] = {"user-message-unmatched": "rejected-prompt-echoed"}


class Replay:
    """Session models fed with one connection's traffic, line by line."""

    def __init__(self) -> None:
        from acp_lite.model import SessionModel
        from acp_lite.protocol import structure_update

        self._model_cls = SessionModel
        self._structure = structure_update
        self.models: dict[str, Any] = {}
        self.event_entries: dict[str, list[int]] = {}
        self.seen: dict[str, int] = {}
        self.found: list[Violation] = []
        self.pending: dict[str, tuple[str, Any]] = {}
        self.replaying: dict[str, int] = {}

    def model(self, sid: str) -> Any:
        found = self.models.get(sid)
        if found is None:
            found = self.models[sid] = self._model_cls(sid)
            self.event_entries[sid] = []
            self.seen[sid] = 0
        return found

    def collect(self, sid: str, index: int | None) -> None:
        """Turn the model's new violations into ours, located in the transcript."""
        model = self.models[sid]
        new = list(model.violations)[self.seen[sid] :]
        self.seen[sid] += len(new)
        self.found.extend(self._located(sid, new, index))

    def _located(self, sid: str, new: list[Any], index: int | None) -> list[Violation]:
        entries = self.event_entries[sid]
        out: list[Violation] = []
        for v in new:
            at = index
            if v.event_index is not None and 0 <= v.event_index < len(entries):
                at = entries[v.event_index]
            out.append(attrs.evolve(v, entry_index=at, session_id=sid, source="model"))
        return out

    def sent(self, msg: Mapping[str, Any], index: int) -> None:
        method = msg.get("method")
        params = msg.get("params")
        sid = params.get("sessionId") if isinstance(params, Mapping) else None
        if "id" in msg and isinstance(method, str):
            self.pending[key(msg["id"])] = (method, params)
        if not isinstance(sid, str):
            return
        model = self.model(sid)
        if method == "session/prompt" and "id" in msg:
            prompt = params.get("prompt") if isinstance(params, Mapping) else None
            model.submit(msg["id"], prompt)
        elif method in ("session/resume", "session/load") and "id" in msg:
            model.resume_requested()
            self.replaying[sid] = self.replaying.get(sid, 0) + 1
        elif method == "session/cancel":
            model.cancel_sent()
        self.collect(sid, index)

    def received(self, msg: Mapping[str, Any], index: int) -> None:
        if msg.get("method") == "session/update":
            params = msg.get("params")
            if not isinstance(params, Mapping):
                return
            sid, update = params.get("sessionId"), params.get("update")
            if not isinstance(sid, str) or not isinstance(update, Mapping):
                return
            model = self.model(sid)
            raw = dict(update)
            model.apply(
                self._structure(raw),
                raw=raw,
                session_id=sid,
                replayed=self.replaying.get(sid, 0) > 0,
            )
            self.event_entries[sid].append(index)
            self.collect(sid, index)
            return
        if "method" in msg:
            return
        method, params = self.pending.pop(key(msg.get("id")), ("", None))
        result = msg.get("result")
        sid = params.get("sessionId") if isinstance(params, Mapping) else None
        if method == "session/new" and isinstance(result, Mapping):
            sid = result.get("sessionId")
            if isinstance(sid, str):
                self.model(sid).setup_response(result)
        elif method in ("session/resume", "session/load") and isinstance(sid, str):
            self.replaying[sid] = max(0, self.replaying.get(sid, 0) - 1)
            if "result" in msg:
                self.model(sid).setup_response(result, resumed=True)
        elif method == "session/prompt" and isinstance(sid, str):
            model = self.model(sid)
            if "error" in msg:
                model.prompt_rejected(msg["id"], msg.get("error"))
            else:
                mid = result.get("messageId") if isinstance(result, Mapping) else None
                model.prompt_accepted(msg["id"], mid)
        if isinstance(sid, str) and sid in self.models:
            self.collect(sid, index)

    def finish(self) -> list[Violation]:
        for sid, model in self.models.items():
            model.finish()
            self.collect(sid, None)
        return self.found


def new_replay() -> Replay | None:
    """A fresh :class:`Replay`, or ``None`` when ``acp_lite.model`` is unavailable."""
    try:
        return Replay()
    except ImportError:
        return None


def replay_violations(entries: list[tuple[str, Any, bool]]) -> list[Violation]:
    """The session model's violations for transcript ``entries`` ((direction, line or
    JSON value, is_json) triples). Empty when ``acp_lite.model`` is unavailable.

    Model rules that a connection rule also reports (same id, or
    :data:`SAME_FINDING`) are left out here so each finding is reported once.
    """
    replay = new_replay()
    if replay is None:
        return []
    for index, (direction, line, is_json) in enumerate(entries):
        feed_replay(replay, direction, line, is_json, index)
    return [v for v in replay.finish() if v.rule not in RULES]


def feed_replay(replay: Replay, direction: str, line: Any, is_json: bool, index: int) -> None:
    """Feed one transcript entry (a wire line, or its decoded JSON value) to ``replay``."""
    if is_json:
        value = line
    else:
        value = loads(line)
        if value is NOT_JSON:
            return
    for msg in value if isinstance(value, list) else [value]:
        if not isinstance(msg, Mapping):
            continue
        try:
            if direction == "send":
                replay.sent(msg, index)
            else:
                replay.received(msg, index)
        except Exception:
            # A shape the model cannot take (an unhashable id ...): the connection
            # checker reports the message; the replay goes on with the next one.
            continue


def drop_duplicates(violations: list[Violation]) -> list[Violation]:
    """Drop model findings that a connection rule reports at the same line."""
    at = {(v.rule, v.entry_index) for v in violations if v.source == "connection"}
    return [
        v
        for v in violations
        if not (v.source == "model" and (SAME_FINDING.get(v.rule), v.entry_index) in at)
    ]
