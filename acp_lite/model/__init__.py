"""The session model: a sans-IO picture of one ACP session (docs/architecture.md)."""

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
from acp_lite.model.rules import RULES, Rule, Violation
from acp_lite.model.session import SessionModel
from acp_lite.model.state import KNOWN_STATES, STOP_REASONS, ContextUsage, SessionInfo
from acp_lite.model.submissions import Submission

__all__ = [
    "ENTITY_KINDS",
    "FINAL_TOOL_STATUSES",
    "KNOWN_STATES",
    "MESSAGE_KINDS",
    "RULES",
    "STOP_REASONS",
    "CompactionEntity",
    "ContextUsage",
    "Entity",
    "Event",
    "EventLog",
    "MessageEntity",
    "PlanEntity",
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
