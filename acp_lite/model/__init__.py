"""The session model: a sans-IO picture of one ACP session (docs/architecture.md).

Names are imported lazily (PEP 562): ``from acp_lite.model.rules import Violation``
(what pytest_acp does when it loads) stays cheap; the model itself, and the wire
types it needs, load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp_lite.model.entities import (
        ENTITY_KINDS,
        FINAL_TOOL_STATUSES,
        MESSAGE_KINDS,
        CompactionEntity,
        Entity,
        MessageEntity,
        PlanEntity,
        SessionMessageEntity,
        SubagentEntity,
        TerminalEntity,
        ToolCallEntity,
    )
    from acp_lite.model.events import Event, EventLog
    from acp_lite.model.requests import (
        AgentRequestRecord,
        ElicitationRecord,
        PermissionRequestRecord,
        RequestLog,
    )
    from acp_lite.model.rules import RULES, Rule, Violation
    from acp_lite.model.session import SessionModel
    from acp_lite.model.state import KNOWN_STATES, STOP_REASONS, ContextUsage, SessionInfo
    from acp_lite.model.submissions import Submission

_SUBMODULES = frozenset(
    {
        "entities",
        "events",
        "foreground",
        "requests",
        "rules",
        "session",
        "state",
        "store",
        "submissions",
    }
)

_LAZY: dict[str, str] = {
    **dict.fromkeys(
        [
            "ENTITY_KINDS",
            "FINAL_TOOL_STATUSES",
            "MESSAGE_KINDS",
            "CompactionEntity",
            "Entity",
            "MessageEntity",
            "PlanEntity",
            "SessionMessageEntity",
            "SubagentEntity",
            "TerminalEntity",
            "ToolCallEntity",
        ],
        "entities",
    ),
    "Event": "events",
    "EventLog": "events",
    "AgentRequestRecord": "requests",
    "ElicitationRecord": "requests",
    "PermissionRequestRecord": "requests",
    "RequestLog": "requests",
    "RULES": "rules",
    "Rule": "rules",
    "Violation": "rules",
    "SessionModel": "session",
    "KNOWN_STATES": "state",
    "STOP_REASONS": "state",
    "ContextUsage": "state",
    "SessionInfo": "state",
    "Submission": "submissions",
}

__all__ = [
    "ENTITY_KINDS",
    "FINAL_TOOL_STATUSES",
    "KNOWN_STATES",
    "MESSAGE_KINDS",
    "RULES",
    "STOP_REASONS",
    "AgentRequestRecord",
    "CompactionEntity",
    "ContextUsage",
    "ElicitationRecord",
    "Entity",
    "Event",
    "EventLog",
    "MessageEntity",
    "PermissionRequestRecord",
    "PlanEntity",
    "RequestLog",
    "Rule",
    "SessionInfo",
    "SessionMessageEntity",
    "SessionModel",
    "SubagentEntity",
    "Submission",
    "TerminalEntity",
    "ToolCallEntity",
    "Violation",
]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:  # as when this package imported them eagerly
        return importlib.import_module(f"acp_lite.model.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'acp_lite.model' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"acp_lite.model.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
