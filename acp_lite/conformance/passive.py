"""The requirements the passive rules check: one per rule id, judged on every test's traffic.

The rules themselves live above this layer (``acp_lite.model.rules`` RULES, the
session model's; ``pytest_acp.conformance`` RULES, the connection rules;
``pytest_acp._conformance_v1`` V1_RULES); here each rule id gets its requirement id,
tier and spec section (``tests/conformance/test_passive_catalogue.py`` checks that
every rule has exactly one). Tiers follow the rule's level: a MUST of the spec is
``mandatory``, a SHOULD ``advisory``; no passive rule depends on an advertised
capability (``session/resume`` is a baseline method of v2 ``SessionCapabilities``).

Ids: a passive requirement is numbered from 101 in its area (``ACP-PROMPT-101``);
001-099 are left to the active probes of the same area. Sections: ``prompt-lifecycle``
is the v2 *Prompt Lifecycle* page (``seeds/000_*.txt``, the primary spec), the
anchors its headings; ``transports`` / ``session-setup`` / ``extensibility`` are
``docs-v2-draft/*.mdx``; ``schema/v1`` / ``schema/v2`` name a schema definition.
"""

from __future__ import annotations

from acp_lite.conformance.requirements import Requirement, Tier, Version, register

__all__ = ["PASSIVE", "for_rule"]

_PL = "prompt-lifecycle"


def _req(
    rid: str, rule: str, tier: Tier, summary: str, spec: str, version: Version = "v2"
) -> Requirement:
    return Requirement(rid, tier, summary, spec, kind="passive", version=version, rule=rule)


_M: Tier = "mandatory"
_A: Tier = "advisory"

_ALL = (
    # -- prompt acceptance (insertion) -------------------------------------------------
    _req(
        "ACP-PROMPT-101",
        "prompt-response-without-message-id",
        _M,
        "A successful session/prompt response returns the inserted user message's "
        "messageId, a required non-null string.",
        f"{_PL}#2-prompt-accepted; schema/v2 PromptResponse",
    ),
    _req(
        "ACP-PROMPT-102",
        "user-message-not-echoed",
        _M,
        "The Agent MUST also report the inserted user message through a user_message "
        "update (or user_message_chunk updates) using the returned messageId.",
        f"{_PL}#2-prompt-accepted",
    ),
    _req(
        "ACP-PROMPT-103",
        "rejected-prompt-echoed",
        _M,
        "A request rejected before insertion gets a JSON-RPC error response and MUST NOT "
        "emit user-message updates for that submission.",
        f"{_PL}#prompts-that-are-never-inserted",
    ),
    _req(
        "ACP-PROMPT-104",
        "duplicate-submission-message-id",
        _M,
        "Agents MUST assign distinct message IDs to distinct inserted submissions, even "
        "if their content is identical.",
        f"{_PL}#2-prompt-accepted",
    ),
    _req(
        "ACP-PROMPT-105",
        "user-message-unmatched",
        _M,
        "Every inserted input is reported live with the messageId its session/prompt "
        "response returns: a live user message no response returned matches no submission.",
        f"{_PL}#2-prompt-accepted",
    ),
    # -- foreground state --------------------------------------------------------------
    _req(
        "ACP-STATE-101",
        "idle-without-running",
        _M,
        "When foreground work starts, the Agent MUST report running (or requires_action) "
        "before the idle that ends it; handling an accepted prompt MUST use the "
        "foreground lifecycle.",
        f"{_PL}#3-agent-reports-output; {_PL}#work-boundaries-and-local-commands",
    ),
    _req(
        "ACP-STATE-102",
        "output-while-idle",
        _M,
        "Agent messages and thoughts are foreground work, which the Agent MUST report "
        "running for before they are sent.",
        f"{_PL}#foreground-and-background-work",
    ),
    _req(
        "ACP-STATE-103",
        "work-not-ended",
        _M,
        "When foreground work ends, the Agent MUST report idle with a state_update.",
        f"{_PL}#foreground-and-background-work; {_PL}#4-report-completion",
    ),
    _req(
        "ACP-STATE-104",
        "reserved-state",
        _M,
        "A state outside the standard ones is custom and starts with '_': other unknown "
        "values are reserved for future ACP variants.",
        f"{_PL}#session-states; extensibility#enum-and-tagged-union-variants",
    ),
    _req(
        "ACP-STATE-105",
        "resume-without-state-snapshot",
        _M,
        "The Agent MUST send a snapshot of foreground state after resuming, before the "
        "successful session/resume response, even when no replay was requested.",
        f"{_PL}#initial-state-and-synchronization",
    ),
    # -- stop reasons and failures -----------------------------------------------------
    _req(
        "ACP-STOP-101",
        "unknown-stop-reason",
        _M,
        "Custom stop reasons MUST begin with '_'; unknown non-underscore stop reasons are "
        "reserved for future ACP variants.",
        f"{_PL}#stop-reasons",
    ),
    _req(
        "ACP-STOP-102",
        "idle-without-stop-reason",
        _A,
        "When an Agent stops foreground work, it SHOULD specify the corresponding "
        "StopReason on the idle state_update.",
        f"{_PL}#stop-reasons",
    ),
    _req(
        "ACP-STOP-103",
        "error-stop-reason-without-error",
        _A,
        "The error stop reason carries the failure in an error field beside stopReason, "
        "which the Agent SHOULD include.",
        f"{_PL}#failures",
    ),
    _req(
        "ACP-STOP-104",
        "tool-call-unfinished-at-failure",
        _A,
        "Before reporting a failure, the Agent SHOULD give each tool call the failed "
        "work left unfinished a terminal status.",
        f"{_PL}#failures",
    ),
    # -- cancellation ------------------------------------------------------------------
    _req(
        "ACP-CANCEL-101",
        "cancel-not-cancelled",
        _M,
        "After session/cancel during foreground work, the Agent MUST send an idle "
        "state_update with the cancelled stop reason (judged once the Agent has provably "
        "read the cancel).",
        f"{_PL}#cancellation",
    ),
    # -- background work ---------------------------------------------------------------
    _req(
        "ACP-BG-101",
        "background-omitted",
        _M,
        "An Agent that reports background work MUST include background on every "
        "state_update for the session.",
        f"{_PL}#background-work",
    ),
    _req(
        "ACP-BG-102",
        "background-malformed",
        _M,
        "background is a list of the work items currently running; a malformed one "
        "leaves the Client treating background work as unknown.",
        f"{_PL}#background-work; schema/v2 RunningStateUpdate.background",
    ),
    _req(
        "ACP-BG-103",
        "background-item-not-announced",
        _M,
        "The Agent MUST send a terminal_update, tool_call_update or subagent_update for "
        "an item before the first snapshot that lists it.",
        f"{_PL}#background-work",
    ),
    _req(
        "ACP-BG-104",
        "background-removed-before-final",
        _M,
        "The Agent MUST send a terminal's exitStatus or a tool call's final status "
        "before the snapshot that removes it.",
        f"{_PL}#background-work",
    ),
    _req(
        "ACP-BG-105",
        "background-duplicate-item",
        _M,
        "Only background work is listed, and only once; the Agent MUST NOT also list a "
        "tool call whose only live work is a listed terminal.",
        f"{_PL}#background-work",
    ),
    _req(
        "ACP-BG-106",
        "tool-call-reopened",
        _M,
        "The Agent does not reopen a tool call that has a final status; it starts a new "
        "one instead.",
        f"{_PL}#background-work",
    ),
    # -- session updates ---------------------------------------------------------------
    _req(
        "ACP-UPDATE-101",
        "chunk-without-message-id",
        _M,
        "The Agent MUST include an opaque messageId on message updates and message "
        "chunks; every session_message or session_message_chunk requires one.",
        f"{_PL}#message-ids; {_PL}#session-directed-messages",
    ),
    _req(
        "ACP-UPDATE-102",
        "malformed-update",
        _M,
        "A session/update whose sessionUpdate names a standard variant has the payload "
        "the SessionUpdate schema describes.",
        f"{_PL}#session-updates; schema/v2 SessionUpdate",
    ),
    _req(
        "ACP-UPDATE-103",
        "update-for-other-session",
        _M,
        "A session/update's sessionId identifies the session (transcript) being updated.",
        "schema/v2 UpdateSessionNotification",
    ),
    _req(
        "ACP-UPDATE-104",
        "update-unknown-session",
        _M,
        "A session/update names a session opened on this connection (the ID session/new "
        "returned) or one announced as a subagent.",
        "session-setup#session-id",
        "both",
    ),
    _req(
        "ACP-UPDATE-105",
        "terminal-output-not-base64",
        _M,
        "terminal_output_chunk data is independently base64-encoded terminal output bytes.",
        "schema/v2 TerminalOutputChunk.data",
    ),
    _req(
        "ACP-UPDATE-106",
        "notice-replayed",
        _A,
        "Live-only notices SHOULD NOT be replayed: each notice is a live event, not "
        "conversation history.",
        f"{_PL}#session-notices; {_PL}#session-updates",
    ),
    # -- transport and JSON-RPC (every version) ----------------------------------------
    _req(
        "ACP-RPC-101",
        "stdout-not-jsonrpc",
        _M,
        "The agent MUST NOT write anything to its stdout that is not a valid ACP message "
        "(JSON-RPC 2.0, one per line).",
        "transports#stdio",
        "both",
    ),
    _req(
        "ACP-RPC-102",
        "message-not-checkable",
        _M,
        "Every message has the shape its schema gives it (one that no check could read "
        "is reported).",
        "transports#stdio",
        "both",
    ),
    _req(
        "ACP-RPC-103",
        "response-without-request",
        _M,
        "A response answers a request the client sent, with the same id, and only once.",
        "JSON-RPC 2.0 §5; transports#stdio",
        "both",
    ),
    # -- v1 ------------------------------------------------------------------------------
    _req(
        "ACP-V1-PROMPT-101",
        "v1-prompt-response-without-stop-reason",
        _M,
        "A v1 session/prompt response carries stopReason, the reason the agent stopped "
        "processing the turn (required).",
        "schema/v1 PromptResponse",
        "v1",
    ),
    _req(
        "ACP-V1-PROMPT-102",
        "v1-unknown-stop-reason",
        _M,
        "A v1 stopReason is one of end_turn, max_tokens, max_turn_requests, refusal, "
        "cancelled (a '_'-prefixed value is taken as an extension).",
        "schema/v1 StopReason",
        "v1",
    ),
    _req(
        "ACP-V1-CANCEL-101",
        "v1-cancel-not-cancelled",
        _M,
        "cancelled MUST be returned when the client sends session/cancel during the "
        "turn (judged once the agent has provably read the cancel).",
        "schema/v1 StopReason.cancelled; schema/v1 CancelNotification",
        "v1",
    ),
    _req(
        "ACP-V1-TOOL-101",
        "v1-tool-call-incomplete",
        _M,
        "A v1 tool_call has its required toolCallId and title; a tool_call_update its toolCallId.",
        "schema/v1 ToolCall; schema/v1 ToolCallUpdate",
        "v1",
    ),
)

register(*_ALL)

PASSIVE: dict[str, Requirement] = {q.rule: q for q in _ALL if q.rule is not None}
"""Every passive requirement, by the rule id it links to (rule ids are unique across
versions)."""


def for_rule(rule_id: str) -> Requirement | None:
    """The requirement of a passive rule id (``None`` for an unknown one): a dict lookup."""
    return PASSIVE.get(rule_id)
