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

from acp_lite.model.rules import Rule

__all__ = ["V1_RULES", "V1_STOP_REASONS", "V1Turns"]

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
            "(a response that arrived within 0.5 s of the cancel may have crossed it)",
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

Add = Callable[[str, str, int | None, str | None], None]

#: A prompt response that arrives this soon (seconds) after ``session/cancel`` was
#: sent may have been sent before the agent read the cancel: the two crossed on the
#: wire, and ``end_turn`` is then the truth. Only a later answer proves that the
#: agent ignored the cancel. Generous, since the client may read late when busy.
CANCEL_CROSSING = 0.5


class V1Turns:
    """The v1 state the rules need: which sessions have a prompt in flight and
    whether ``session/cancel`` was sent during it."""

    def __init__(self, add: Add) -> None:
        self._add = add
        self._running: dict[str, int] = {}  # sid -> prompts in flight
        # sid -> when the first session/cancel during them was sent (None: not known)
        self._cancelled: dict[str, float | None] = {}

    def sent(self, method: Any, sid: Any, has_id: bool, time: float | None = None) -> None:
        if not isinstance(sid, str):
            return
        if method == "session/prompt" and has_id:
            self._running[sid] = self._running.get(sid, 0) + 1
        elif method == "session/cancel" and self._running.get(sid):
            self._cancelled.setdefault(sid, time)

    def prompt_answered(
        self, sid: str, msg: Mapping[str, Any], index: int, time: float | None = None
    ) -> None:
        # The cancel's lead over the answer: proven ignored only when both times are
        # known and the answer came well after (None: no cancel, or not known).
        cancel_time = self._cancelled.get(sid)
        gap = None if cancel_time is None or time is None else time - cancel_time
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
        if gap is not None and gap >= CANCEL_CROSSING and reason != "cancelled":
            self._add(
                "v1-cancel-not-cancelled",
                f"session/cancel was sent during the prompt; it ended with {reason!r} "
                f"{gap:.2f}s after it",
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
