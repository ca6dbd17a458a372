"""The connection rules of ACP v1 traffic (an agent that answered ``initialize`` in v1).

v1 has no insertion, no ``state_update`` and no ``messageId``: a turn is one blocking
``session/prompt`` whose response carries the ``stopReason``. So the v2 rules about
insertion, states and echoes never apply to v1 traffic; these do, each from the v1
schema (``tests/data/schema/v1/schema.json``, its ``description`` text is normative).
The rules every version shares (``stdout-not-jsonrpc``, ``message-not-checkable``,
``response-without-request``, ``update-unknown-session``) stay with the checker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from acp_lite.model.rules import Rule

__all__ = ["V1_RULES", "V1_STOP_REASONS", "ReadProof", "V1Turns"]

_S = "schema v1"
V1_RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule(
            "v1-prompt-response-without-stop-reason",
            "a successful v1 session/prompt response carries its stopReason",
            f"{_S} PromptResponse (stopReason required)",
        ),
        Rule(
            "v1-unknown-stop-reason",
            "a v1 stopReason is one of the schema's (or starts with '_')",
            f"{_S} StopReason",
        ),
        Rule(
            "v1-cancel-not-cancelled",
            "a v1 prompt running when session/cancel was sent ends with stopReason cancelled "
            "(judged only once the agent has provably read the cancel: it answered a request "
            "sent after it before the prompt's response)",
            f"{_S} StopReason.cancelled (MUST be returned when the client sends session/cancel)",
        ),
        Rule(
            "v1-tool-call-incomplete",
            "a v1 tool_call has a toolCallId and a title; a tool_call_update a toolCallId",
            f"{_S} ToolCall / ToolCallUpdate (required fields)",
        ),
    )
}

V1_STOP_REASONS = frozenset({"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"})


@attrs.define
class ReadProof:
    """What the agent has provably read: every line the client sent before line
    ``sent``, since it answered the request ``method`` (id ``request_id``) sent
    there. The agent reads its stdin line by line, in order (spec "Transports",
    stdio), so a line sent before an answered request was read before that answer
    was written; a later one, or another member of the same batch (processed "in
    any order"), may not have been yet."""

    sent: int = -1
    method: str = ""
    request_id: Any = None

    def covers(self, sent: int | None) -> bool:
        """Whether the line sent at position ``sent`` has provably been read."""
        return sent is not None and self.sent > sent

    def because(self) -> str:
        """Why (for a finding's message)."""
        return f"it answered {self.method} request {self.request_id!r}, sent after it"


Add = Callable[[str, str, int | None, str | None], None]


class V1Turns:
    """The v1 state the rules need: which sessions have a prompt in flight and
    whether ``session/cancel`` was sent during it."""

    def __init__(self, add: Add) -> None:
        self._add = add
        self._running: dict[str, int] = {}  # sid -> prompts in flight
        # sid -> the send position of the first session/cancel during them
        self._cancelled: dict[str, int] = {}

    def sent(self, method: Any, sid: Any, has_id: bool, sent: int) -> None:
        """The client sent ``method`` in its ``sent``-th line."""
        if not isinstance(sid, str):
            return
        if method == "session/prompt" and has_id:
            self._running[sid] = self._running.get(sid, 0) + 1
        elif method == "session/cancel" and self._running.get(sid):
            self._cancelled.setdefault(sid, sent)

    def prompt_answered(
        self, sid: str, msg: Mapping[str, Any], index: int, read: ReadProof
    ) -> None:
        """The ``session/prompt`` of ``sid`` was answered; ``read``: what the agent
        had provably read by then."""
        # An answer written before the agent read the cancel crossed it on the wire
        # (an instant end_turn): its stop reason is the truth. Only an answer after
        # the agent provably read the cancel shows that it ignored it.
        cancel = self._cancelled.get(sid)
        proven = read.covers(cancel)
        left = self._running.get(sid, 1) - 1
        if left > 0:
            self._running[sid] = left
        else:
            self._running.pop(sid, None)
            self._cancelled.pop(sid, None)
        if "error" in msg:
            return
        result = msg.get("result")
        reason = result.get("stopReason") if isinstance(result, Mapping) else None
        if not isinstance(reason, str):
            self._add(
                "v1-prompt-response-without-stop-reason",
                f"session/prompt result has stopReason {reason!r}",
                index,
                sid,
            )
            return
        if reason not in V1_STOP_REASONS and not reason.startswith("_"):
            self._add(
                "v1-unknown-stop-reason",
                f"stopReason {reason!r} is not a v1 stop reason and does not start with '_'",
                index,
                sid,
            )
        if proven and reason != "cancelled":
            self._add(
                "v1-cancel-not-cancelled",
                f"session/cancel was sent during the prompt and the agent had read it "
                f"({read.because()}); it ended with {reason!r}",
                index,
                sid,
            )

    def update(self, sid: str, update: Mapping[str, Any], index: int) -> None:
        tag = update.get("sessionUpdate")
        if tag == "tool_call":
            missing = [k for k in ("toolCallId", "title") if not isinstance(update.get(k), str)]
        elif tag == "tool_call_update":
            missing = [] if isinstance(update.get("toolCallId"), str) else ["toolCallId"]
        else:
            return
        if missing:
            self._add(
                "v1-tool-call-incomplete",
                f"{tag} without {' and '.join(missing)}",
                index,
                sid,
            )
