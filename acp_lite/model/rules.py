"""The conformance rules the session model can observe, and the violation record.

Every rule the model checks while applying updates has an id here, a one-line
explanation and the spec section it comes from. The model never raises on a
violation: it appends a :class:`Violation` to ``SessionModel.violations`` and
keeps going. The pytest plugin reuses :data:`RULES` to explain and select rules.

Sections refer to ``tests/data/spec/seeds/000_e65e185e0c91af25.txt`` (the v2
*Prompt Lifecycle* page, the primary spec) unless they name a schema definition.
"""

from __future__ import annotations

from typing import Literal

from acp_lite import _lazy_attrs as lazy_attrs

Level = Literal["MUST", "SHOULD"]


@lazy_attrs.frozen
class Rule:
    """One conformance rule: its id, a one-line explanation, the spec section, its level.

    The one rule record of the project: the model's rules below, and the connection
    rules of ``pytest_acp.conformance`` (which re-exports this class).
    """

    id: str
    summary: str
    spec: str
    level: Level = "MUST"


@lazy_attrs.frozen
class Violation:
    """An observed breach of a :class:`Rule` (the one violation record of the project).

    * ``rule``, ``message``, ``spec`` (the rule's section), ``level`` (``"MUST"`` /
      ``"SHOULD"``);
    * ``event_index``: the index in ``SessionModel.events`` of the offending
      update, or ``None`` when no update is to blame (e.g. a prompt response);
    * ``entry_index``: the position of the offending line in a transcript, when the
      finding was located there (``pytest_acp``; ``None`` from the model itself, or
      for something missing at the end);
    * ``session_id``: the session concerned, where known;
    * ``source``: ``"model"`` (the session model) or ``"connection"``
      (``pytest_acp.conformance.ConnectionChecker``).

    ``event_index`` onwards have defaults; pass them by keyword beyond ``level``.
    """

    rule: str
    message: str
    event_index: int | None = None
    spec: str = ""
    level: Level = "MUST"
    entry_index: int | None = None
    session_id: str | None = None
    source: str = "model"

    def __str__(self) -> str:
        where = f" [{self.spec}]" if self.spec else ""
        return f"{self.rule}: {self.message}{where}"


_RULE_LIST = [
    Rule(
        "chunk-without-message-id",
        "A message, thought or session-message update or chunk lacks its messageId.",
        "Message IDs; Session-directed messages",
    ),
    Rule(
        "malformed-update",
        "A session/update with a known sessionUpdate tag does not match its schema.",
        "Session updates; schema SessionUpdate",
    ),
    Rule(
        "update-for-other-session",
        "A session/update names a different sessionId than the session it was routed to.",
        "schema UpdateSessionNotification",
    ),
    Rule(
        "unknown-stop-reason",
        "An idle stop reason is neither standard nor custom: custom ones must start with '_'.",
        "Stop reasons",
    ),
    Rule(
        "reserved-state",
        "A state is neither standard nor custom ('_'-prefixed); other values are reserved.",
        "Session states; schema StateUpdate",
    ),
    Rule(
        "idle-without-stop-reason",
        "An idle that ends foreground work carries no stop reason.",
        "Stop reasons; Session states",
        "SHOULD",
    ),
    Rule(
        "error-stop-reason-without-error",
        "An idle with stop reason 'error' carries no error object.",
        "Failures",
        "SHOULD",
    ),
    Rule(
        "background-omitted",
        "A state update omits background although the agent reported background before.",
        "Background work",
    ),
    Rule(
        "background-malformed",
        "A state update's background is not a list of work items (treated as not reported).",
        "Background work; schema RunningStateUpdate.background",
    ),
    Rule(
        "background-item-not-announced",
        "A background item was listed before its terminal/tool call/subagent was announced.",
        "Background work",
    ),
    Rule(
        "background-removed-before-final",
        "A background item was removed before its final status or exitStatus was reported.",
        "Background work",
    ),
    Rule(
        "background-duplicate-item",
        "The same background work is listed more than once in one snapshot.",
        "Background work",
    ),
    Rule(
        "tool-call-reopened",
        "A tool call with a final status was given a non-final status again.",
        "Background work",
    ),
    Rule(
        "tool-call-unfinished-at-failure",
        "An idle with stop reason 'error' left tool calls of the failed work unfinished.",
        "Failures",
        "SHOULD",
    ),
    Rule(
        "terminal-output-not-base64",
        "Terminal output bytes are not valid base64.",
        "schema TerminalOutputChunk.data",
    ),
    Rule(
        "notice-replayed",
        "A live-only notice was sent during history replay.",
        "Session notices",
        "SHOULD",
    ),
    Rule(
        "prompt-response-without-message-id",
        "A successful session/prompt response lacks the inserted user message's messageId.",
        "Prompt accepted; schema PromptResponse",
    ),
    Rule(
        "duplicate-submission-message-id",
        "Two inserted submissions were given the same messageId.",
        "Prompt accepted",
    ),
    Rule(
        "user-message-not-echoed",
        "An inserted prompt's user message was not reported before the idle ending its work.",
        "Prompt accepted",
    ),
    Rule(
        "user-message-unmatched",
        "A live user message's messageId was never returned by a session/prompt response.",
        "Prompt accepted",
    ),
    Rule(
        "resume-without-state-snapshot",
        "session/resume answered without a state_update snapshot before the response.",
        "Initial state and synchronization",
    ),
]

RULES: dict[str, Rule] = {rule.id: rule for rule in _RULE_LIST}
"""Every rule id the model can report, mapped to its :class:`Rule`."""


def violation(rule_id: str, message: str, event_index: int | None) -> Violation:
    """Build a :class:`Violation` for a registered rule (``KeyError`` for an unknown id)."""
    rule = RULES[rule_id]
    return Violation(rule_id, message, event_index, rule.spec, rule.level)


__all__ = ["RULES", "Level", "Rule", "Violation", "violation"]
