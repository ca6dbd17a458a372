"""Plain data the reference agent keeps per session and per turn."""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

import attrs

from acp_lite.testing.script import Turn

# Updates that are not conversation history, so resume does not replay them:
# notices are live-only (spec: "Session notices"); state, usage, config, info and
# commands are current-state reports, re-sent as fresh snapshots instead.
NOT_REPLAYED = frozenset(
    {
        "notice",
        "state_update",
        "usage_update",
        "config_option_update",
        "available_commands_update",
        "session_info_update",
    }
)
FINAL_TOOL_STATUSES = frozenset({"completed", "failed", "cancelled"})


def now_rfc3339() -> str:
    """The current time as an RFC 3339 UTC timestamp (``SessionInfo.updatedAt``)."""
    # time, not datetime: one import less at every start of the agent.
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class TurnEnded(Exception):
    """Raised inside a turn to end its foreground work with a stop reason."""

    def __init__(self, stop_reason: str | None, error: dict[str, Any] | None = None) -> None:
        super().__init__(stop_reason)
        self.stop_reason = stop_reason
        self.error = error


@attrs.define(eq=False)
class HeldPrompt:
    """A ``session/prompt`` received but not inserted yet."""

    request_id: Any
    prompt: list[dict[str, Any]]


@attrs.define(eq=False)
class BackgroundItem:
    """Background work listed in the session's ``background`` snapshot."""

    kind: str  # "tool_call" or "terminal"
    id: str
    cancellable: bool
    stop: threading.Event = attrs.field(factory=threading.Event)

    def wire(self) -> dict[str, Any]:
        """The ``BackgroundWork`` item for state snapshots."""
        key = "toolCallId" if self.kind == "tool_call" else "terminalId"
        return {"type": self.kind, key: self.id}


@attrs.define(eq=False)
class Session:
    """Everything the agent knows about one session."""

    id: str
    cwd: str
    additional_directories: list[str] = attrs.field(factory=list)
    title: str | None = None
    updated_at: str = attrs.field(factory=now_rfc3339)
    history: list[dict[str, Any]] = attrs.field(factory=list)
    config: dict[str, Any] = attrs.field(factory=lambda: {"mode": "code", "verbose": False})
    open: bool = True
    prompts_seen: int = 0
    user_messages: int = 0
    # Foreground work: the prompts waiting for insertion, the running turn, and
    # prompts inserted into it while it runs (``while_busy = "insert"``).
    held: collections.deque[HeldPrompt] = attrs.field(factory=collections.deque)
    turn: TurnRun | None = None
    steered: collections.deque[TurnRun] = attrs.field(factory=collections.deque)
    accepts_steering: bool = False
    cancelling: bool = False
    # Link.answered when the current work's first session/cancel was read.
    cancel_mark: int | None = None
    worker: threading.Thread | None = None
    # The state last reported, the background list, and the lock that makes
    # "read state + write the snapshot" atomic across threads.
    state: str = "idle"
    background: dict[str, BackgroundItem] = attrs.field(factory=dict)
    state_lock: threading.Lock = attrs.field(factory=threading.Lock)

    def info(self) -> dict[str, Any]:
        """The ``SessionInfo`` for ``session/list``."""
        out: dict[str, Any] = {"sessionId": self.id, "cwd": self.cwd, "updatedAt": self.updated_at}
        if self.title:
            out["title"] = self.title
        if self.additional_directories:
            out["additionalDirectories"] = list(self.additional_directories)
        return out

    def config_options(self) -> list[dict[str, Any]]:
        """The session's config options with their current values."""
        return [
            {
                "configId": "mode",
                "name": "Mode",
                "category": "mode",
                "type": "select",
                "currentValue": self.config["mode"],
                "options": [
                    {"value": "ask", "name": "Ask", "description": "Answer without tools"},
                    {"value": "code", "name": "Code", "description": "Use tools freely"},
                ],
            },
            {
                "configId": "verbose",
                "name": "Verbose",
                "type": "boolean",
                "currentValue": self.config["verbose"],
            },
        ]


@attrs.define(eq=False)
class TurnRun:
    """One prompt being handled: its insertion status and what it started."""

    session: Session
    request_id: Any
    prompt: list[dict[str, Any]]
    number: int
    spec: Turn | None
    message_id: str | None = None
    answered: bool = False
    withdrawn: bool = False  # $/cancel_request arrived before insertion
    ignoring: bool = False  # an ignore_cancel step is ahead: a cancel ends no step
    tool_calls: dict[str, str] = attrs.field(factory=dict)
    ids_used: int = 0
    expectation: int | None = None  # the script turn it matched (``expect`` scripts)

    @property
    def inserted(self) -> bool:
        """Whether the user message has been inserted (has its messageId)."""
        return self.message_id is not None

    def prompt_text(self) -> str:
        """The prompt's text blocks joined; links shown by name."""
        parts = []
        for block in self.prompt:
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "resource_link":
                parts.append(f"[{block.get('name', block.get('uri', 'link'))}]")
        return " ".join(parts)

    def new_id(self, prefix: str) -> str:
        """A fresh entity id, unique within the session (turn number + counter)."""
        self.ids_used += 1
        return f"{prefix}-{self.number}-{self.ids_used}"

    def fill(self, value: Any) -> Any:
        """Replace ``{{turn}}``-style placeholders in strings, recursively."""
        if isinstance(value, str):
            if "{{" not in value:
                return value
            return (
                value.replace("{{turn}}", str(self.number))
                .replace("{{session_id}}", self.session.id)
                .replace("{{message_id}}", self.message_id or "")
                .replace("{{prompt_text}}", self.prompt_text())
            )
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        return value

    def track(self, update: dict[str, Any]) -> None:
        """Remember tool call statuses so failures/cancels can finalise them."""
        if update.get("sessionUpdate") == "tool_call_update" and "status" in update:
            self.tool_calls[str(update.get("toolCallId"))] = str(update["status"])

    def unfinished_tool_calls(self) -> list[str]:
        """Tool calls this turn left without a final status."""
        return [tid for tid, st in self.tool_calls.items() if st not in FINAL_TOOL_STATUSES]
