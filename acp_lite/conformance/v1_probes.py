"""The v1 probe requirements: what an active probe checks of an ACP v1 agent.

Written from the v1 schema (``schema/v1/schema.json``: its ``description`` texts are
normative) and JSON-RPC 2.0. Every requirement has its probe in
:mod:`acp_lite.probes.v1`, and is registered in the catalogue with it (the probe
registry registers what has a probe: importing that module, or
``acp_lite.probes.suite_for(1)``). :data:`V1_PROBES` is not registered by importing
this module; :func:`register_v1_probes` still registers all of it without the
probes (the very same records, so either order is a no-op the second time).

Ids: ``ACP-V1-<AREA>-NNN`` from 001 (the passive v1 rules take 101 onwards,
``acp_lite.conformance.passive``). Capability requirements name the capability of
the ``initialize`` response (``agentCapabilities``) or of the ``session/new``
response (``modes``) they need.
"""

from __future__ import annotations

from acp_lite.conformance.requirements import Requirement, Tier, register

__all__ = ["V1_PROBES", "register_v1_probes"]

_S = "schema/v1"
_RPC = "JSON-RPC 2.0"


def _p(rid: str, tier: Tier, summary: str, spec: str, capability: str | None = None) -> Requirement:
    return Requirement(rid, tier, summary, spec, kind="probe", version="v1", capability=capability)


V1_PROBES: tuple[Requirement, ...] = (
    # -- initialization ----------------------------------------------------------------
    _p(
        "ACP-V1-INIT-001",
        "mandatory",
        "initialize answers with protocolVersion: the client's version if the agent "
        "supports it, else the latest version the agent supports.",
        f"{_S} InitializeResponse.protocolVersion",
    ),
    _p(
        "ACP-V1-INIT-002",
        "mandatory",
        "A client asking for a newer version (2) than a v1 agent speaks is answered with "
        "protocolVersion 1, not an error.",
        f"{_S} InitializeResponse.protocolVersion; {_S} ProtocolVersion",
    ),
    _p(
        "ACP-V1-INIT-003",
        "mandatory",
        "Agents MUST advertise a terminal authentication method only when the client "
        "enabled its terminal authentication capability.",
        f"{_S} AuthMethodTerminal; {_S} AuthCapabilities.terminal",
    ),
    _p(
        "ACP-V1-INIT-004",
        "informational",
        "The agent reports agentInfo (its name and version); optional in v1, to become required.",
        f"{_S} InitializeResponse.agentInfo",
    ),
    _p(
        "ACP-V1-INIT-005",
        "mandatory",
        "All Agents MUST support session/new, session/prompt, session/cancel and "
        "session/update: the requests are not answered -32601, the notification not at all.",
        f"{_S} SessionCapabilities",
    ),
    # -- session setup -----------------------------------------------------------------
    _p(
        "ACP-V1-SESSION-001",
        "mandatory",
        "session/new returns the sessionId of the new session (required).",
        f"{_S} NewSessionResponse",
    ),
    _p(
        "ACP-V1-SESSION-002",
        "mandatory",
        "session/new returns a unique session ID: two sessions get distinct ids.",
        f"{_S} ClientRequest session/new (the agent should return a unique session ID)",
    ),
    _p(
        "ACP-V1-SESSION-003",
        "capability",
        "session/load restores the session and streams its entire conversation history "
        "back via session/update before answering.",
        f"{_S} ClientRequest session/load; {_S} LoadSessionRequest",
        "loadSession",
    ),
    _p(
        "ACP-V1-SESSION-004",
        "capability",
        "session/list returns sessions, each with its sessionId and cwd (required).",
        f"{_S} ListSessionsResponse; {_S} SessionInfo",
        "sessionCapabilities.list",
    ),
    _p(
        "ACP-V1-SESSION-005",
        "capability",
        "session/resume resumes the session without replaying the message history.",
        f"{_S} ClientRequest session/resume",
        "sessionCapabilities.resume",
    ),
    _p(
        "ACP-V1-SESSION-006",
        "capability",
        "session/close must cancel ongoing work (as if session/cancel was called): a "
        "running prompt ends with stopReason cancelled.",
        f"{_S} CloseSessionRequest",
        "sessionCapabilities.close",
    ),
    _p(
        "ACP-V1-SESSION-007",
        "capability",
        "session/set_mode with a mode advertised in availableModes succeeds; the mode "
        "must be one of the advertised ones.",
        f"{_S} SetSessionModeRequest; {_S} SessionModeState",
        "modes",
    ),
    _p(
        "ACP-V1-SESSION-008",
        "advisory",
        "A request naming a session the agent does not know gets an error response "
        "(-32002 Resource not found names a session as such a resource).",
        f"{_S} ErrorCode (-32002); {_S} PromptRequest.sessionId",
    ),
    # -- prompt turn -------------------------------------------------------------------
    _p(
        "ACP-V1-PROMPT-001",
        "mandatory",
        "A session/prompt response carries stopReason, why the agent stopped the turn (required).",
        f"{_S} PromptResponse",
    ),
    _p(
        "ACP-V1-PROMPT-002",
        "mandatory",
        "All agents MUST support text content blocks in prompts.",
        f"{_S} ContentBlock (text); {_S} PromptRequest.prompt",
    ),
    _p(
        "ACP-V1-PROMPT-003",
        "mandatory",
        "All agents MUST support resource_link content blocks in prompts.",
        f"{_S} ContentBlock (resource_link); {_S} PromptRequest.prompt",
    ),
    _p(
        "ACP-V1-PROMPT-004",
        "capability",
        "An agent advertising promptCapabilities.image accepts image content blocks.",
        f"{_S} PromptCapabilities.image",
        "promptCapabilities.image",
    ),
    _p(
        "ACP-V1-PROMPT-005",
        "mandatory",
        "The session/update notifications of a turn carry the sessionId of the prompt's "
        "session and an update (both required).",
        f"{_S} SessionNotification",
    ),
    _p(
        "ACP-V1-PROMPT-006",
        "mandatory",
        "A plan update sends its list of entries (the complete plan: the client replaces "
        "it), each with content, priority and status (all required).",
        f"{_S} Plan.entries; {_S} PlanEntry",
    ),
    _p(
        "ACP-V1-PROMPT-007",
        "mandatory",
        "A session/request_permission names the session, the tool call (toolCallId) and "
        "the options, each with optionId, name and kind (all required).",
        f"{_S} RequestPermissionRequest; {_S} PermissionOption; {_S} ToolCallUpdate",
    ),
    # -- cancellation ------------------------------------------------------------------
    _p(
        "ACP-V1-CANCEL-001",
        "mandatory",
        "cancelled MUST be returned when the client sends session/cancel during the turn.",
        f"{_S} StopReason.cancelled",
    ),
    _p(
        "ACP-V1-CANCEL-002",
        "mandatory",
        "A turn whose permission request the client answered with the cancelled outcome "
        "(after session/cancel) ends with stopReason cancelled.",
        f"{_S} RequestPermissionOutcome.cancelled; {_S} StopReason.cancelled",
    ),
    _p(
        "ACP-V1-CANCEL-003",
        "advisory",
        "On session/cancel the agent SHOULD send its pending session/update notifications "
        "before the cancelled response: none of that turn follows it.",
        f"{_S} ClientNotification session/cancel",
    ),
    _p(
        "ACP-V1-CANCEL-004",
        "advisory",
        "session/cancel with no turn running is a notification like any other: no "
        "response, and the connection keeps working.",
        f"{_S} CancelNotification; {_RPC} §4.1",
    ),
    _p(
        "ACP-V1-CANCEL-005",
        "advisory",
        "$/cancel_request of a running session/prompt ends it: an error -32800 (Request "
        "cancelled) or stopReason cancelled.",
        f"{_S} CancelRequestNotification; {_S} ErrorCode (-32800)",
    ),
    # -- capability-gated updates ------------------------------------------------------
    _p(
        "ACP-V1-UPDATE-001",
        "mandatory",
        "Agents MUST only send notice updates when the Client advertised the "
        "session.notices Client capability.",
        f"{_S} SessionUpdate (notice); {_S} Notice",
    ),
    _p(
        "ACP-V1-UPDATE-002",
        "mandatory",
        "Agents MUST only send compaction updates and summary chunks when the Client "
        "advertised the session.compaction Client capability.",
        f"{_S} CompactionUpdate; {_S} CompactionSummaryChunk",
    ),
    # -- JSON-RPC ----------------------------------------------------------------------
    _p(
        "ACP-V1-RPC-001",
        "mandatory",
        "A request for a method that does not exist is answered with -32601 Method not found.",
        f"{_RPC} §5.1; {_S} ErrorCode (-32601)",
    ),
    _p(
        "ACP-V1-RPC-002",
        "mandatory",
        "An unknown '_' extension request is answered with -32601, like any unknown method.",
        f"{_RPC} §5.1; {_S} ExtRequest",
    ),
    _p(
        "ACP-V1-RPC-003",
        "mandatory",
        "An unknown notification gets no response and the connection keeps working.",
        f"{_RPC} §4.1",
    ),
    _p(
        "ACP-V1-RPC-004",
        "mandatory",
        "The response carries the same id as the request, a string or a number alike.",
        f"{_S} RequestId; {_RPC} §5",
    ),
    _p(
        "ACP-V1-RPC-005",
        "mandatory",
        "A line that is not JSON is answered with -32700 Parse error and id null.",
        f"{_RPC} §5.1; {_S} ErrorCode (-32700)",
    ),
    _p(
        "ACP-V1-RPC-006",
        "mandatory",
        "A batch of requests is answered with an array of their responses.",
        f"{_RPC} §6",
    ),
    _p(
        "ACP-V1-RPC-007",
        "mandatory",
        "An empty batch is answered with a single -32600 Invalid Request response, not an array.",
        f"{_RPC} §6; {_S} ErrorCode (-32600)",
    ),
    _p(
        "ACP-V1-RPC-008",
        "mandatory",
        "An error response's error has an integer code and a string message.",
        f"{_S} Error; {_RPC} §5.1",
    ),
    _p(
        "ACP-V1-RPC-009",
        "advisory",
        "A request with invalid params (session/new without cwd) is answered with -32602 "
        "Invalid params.",
        f"{_RPC} §5.1; {_S} ErrorCode (-32602); {_S} NewSessionRequest",
    ),
)


def register_v1_probes() -> None:
    """Register :data:`V1_PROBES` in the catalogue (idempotent; not needed where the
    v1 probes are imported, which register their requirements)."""
    register(*V1_PROBES)
