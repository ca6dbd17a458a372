"""The session model: a sans-IO picture of one ACP session (docs/architecture.md).

Names are imported lazily (PEP 562): ``from acp_lite.model.rules import Violation``
(what pytest_acp does when it loads) stays cheap; the model itself, and the wire
types it needs, load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_lite._lazy_names import lazy_names

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


__getattr__, __dir__ = lazy_names(globals(), _LAZY, submodules=_SUBMODULES)
