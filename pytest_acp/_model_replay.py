"""Replay a saved transcript through acp_lite's core and collect its session
models' conformance findings (``acp_lite.model.rules``).

Used for saved transcripts (``check_transcript``, ``python -m pytest_acp check``):
a running client's session rules come from its live models
(``Client.violations()``). A replay is the same thing run on a transcript: a fresh
``acp_lite.core.ClientConnection`` (``locate_findings=True``) is told what the
client sent the way a client tells it (``send_request``, ``send_notification``,
``respond`` ...: that registers the pending requests and their sessions) and is
fed what the agent wrote (``receive_data``), so the core does the routing and the
models the judging; ``tests/core/test_findings.py`` holds the two equal on every
built-in scenario.

Two things differ from a live connection, and are mapped here: the core numbers
its own requests (a response's id is rewritten to the core's id of the request it
answers), and its transcript is not the saved one (each of its lines is mapped
back to the saved entry it came from, to locate the findings).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

import attrs

from acp_lite.core import ClientConnection, RequestId
from acp_lite.limits import Limits
from acp_lite.model.rules import Violation
from pytest_acp._safejson import NOT_JSON, key, loads

__all__ = ["SAME_FINDING", "Replay", "drop_duplicates", "feed_replay"]

#: Model rules that report the same finding as a connection rule at the same line:
#: the connection rule's violation is kept (its position covers both directions).
SAME_FINDING: dict[str, str] = {"user-message-unmatched": "rejected-prompt-echoed"}

#: A saved transcript is judged whole: no bound of a live connection applies (its
#: lines were read already; its requests were answered, or never will be).
_UNBOUNDED = Limits(max_line_bytes=sys.maxsize, max_pending_requests=sys.maxsize)


class Replay:
    """One connection's saved traffic, fed entry by entry through a fresh core."""

    def __init__(self) -> None:
        #: The core the traffic is replayed through (its models judge it).
        self.conn = ClientConnection(_UNBOUNDED, locate_findings=True)
        # Saved entry index of each line of the core's transcript.
        self._entry_of: list[int] = []
        # Key of a saved request id -> the core's id of that request.
        self._ids: dict[str, RequestId] = {}
        # Agent lines not yet read by the core, and their saved entry indices.
        self._received: list[bytes] = []
        self._received_at: list[int] = []

    def feed(self, direction: str, line: bytes | str | None, value: Any, index: int) -> None:
        """Saved entry ``index``: a wire ``line`` (``None`` when only its decoded
        JSON ``value`` is known) going ``direction`` ("send": client -> agent).
        ``value`` is :data:`NOT_JSON` for a line that is not JSON."""
        if direction != "send":
            # Consecutive agent lines are read in one go, as a client reads them;
            # each is one line of the core's transcript (it skips empty ones).
            for data in self._wire(line, value).split(b"\n"):
                if data and data != b"\r":
                    self._received.append(data)
                    self._received_at.append(index)
            return
        self._flush()
        if value is not NOT_JSON:
            for msg in value if isinstance(value, list) else [value]:
                if isinstance(msg, Mapping):
                    self._sent(msg)
        self._taken(index)

    def _flush(self) -> None:
        """Let the core read the agent lines fed since the last client line."""
        if not self._received:
            return
        self.conn.receive_data(b"\n".join(self._received) + b"\n")
        # One core transcript line per agent line (none is oversize), then what the
        # core answered itself.
        self._entry_of.extend(self._received_at)
        last = self._received_at[-1]
        self._received.clear()
        self._received_at.clear()
        self._taken(last)

    def _taken(self, index: int) -> None:
        # What the core wrote now (the client's line, or the core's own answers to
        # what it read) belongs to entry ``index``; nothing else reads events here.
        self.conn.data_to_send()
        self.conn.next_events()
        self.conn.changed_sessions()
        entry_of = self._entry_of
        entry_of.extend([index] * (len(self.conn.transcript) - len(entry_of)))

    def _sent(self, msg: Mapping[str, Any]) -> None:
        conn = self.conn
        method, params = msg.get("method"), msg.get("params")
        sid = params.get("sessionId") if isinstance(params, Mapping) else None
        sid = sid if isinstance(sid, str) else None
        try:
            if isinstance(method, str) and "id" in msg:
                entry = conn.send_request(method, params, session_id=sid)
                self._ids[key(msg["id"])] = entry.id
            elif method == "$/cancel_request" and isinstance(params, Mapping):
                ours = self._ids.get(key(params.get("requestId")))
                if isinstance(ours, int):
                    conn.withdraw(ours)
            elif isinstance(method, str):
                conn.send_notification(method, params)
            elif "id" in msg and "error" in msg:
                error = msg["error"]
                error = error if isinstance(error, Mapping) else {}
                code, message = error.get("code"), error.get("message")
                conn.respond_error(
                    msg["id"],
                    code if isinstance(code, int) else 0,
                    message if isinstance(message, str) else "",
                    error.get("data"),
                )
            elif "id" in msg:
                conn.respond(msg["id"], msg.get("result"))
        except Exception:
            # A shape the core refuses (an unhashable id, a prompt the v1 translator
            # cannot send ...): the connection checker reports the message; the
            # replay goes on with the next one.
            return

    def _wire(self, line: bytes | str | None, value: Any) -> bytes:
        """The agent's line as the core must read it: as written, unless it answers
        requests the core numbered differently (their ids are then rewritten)."""
        if value is not NOT_JSON:
            messages = value if isinstance(value, list) else [value]
            renamed = [self._renamed(m) for m in messages]
            if line is None or any(
                new is not old for new, old in zip(renamed, messages, strict=True)
            ):
                out = renamed if isinstance(value, list) else renamed[0]
                try:
                    return json.dumps(out, separators=(",", ":")).encode()
                except (ValueError, TypeError, RecursionError):
                    return b""
        if isinstance(line, str):
            return line.encode("utf-8", "replace")
        return line or b""

    def _renamed(self, msg: Any) -> Any:
        if not isinstance(msg, Mapping) or "method" in msg or "id" not in msg:
            return msg
        ours = self._ids.get(key(msg["id"]))
        if ours is None or ours == msg["id"]:
            return msg
        return {**msg, "id": ours}

    def finish(self) -> list[Violation]:
        """Every session model's violations, the end-of-traffic ones included, each
        located at the saved entry of its line."""
        self._flush()
        found = self.conn.violations()
        entry_of = self._entry_of
        return [
            attrs.evolve(v, entry_index=_at(entry_of, v.entry_index))
            if v.entry_index is not None
            else v
            for v in found
        ]


def _at(entry_of: list[int], line: int) -> int | None:
    return entry_of[line] if 0 <= line < len(entry_of) else None


def feed_replay(replay: Replay, direction: str, line: Any, is_json: bool, index: int) -> None:
    """Feed one transcript entry (a wire line, or with ``is_json`` its decoded JSON
    value) to ``replay``."""
    if is_json:
        replay.feed(direction, None, line, index)
    else:
        replay.feed(direction, line, loads(line), index)


def drop_duplicates(violations: list[Violation]) -> list[Violation]:
    """Drop model findings that a connection rule reports at the same line."""
    at = {(v.rule, v.entry_index) for v in violations if v.source == "connection"}
    return [
        v
        for v in violations
        if not (v.source == "model" and (SAME_FINDING.get(v.rule), v.entry_index) in at)
    ]
