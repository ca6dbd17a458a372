"""The requirements ``acp-lite grade-client`` checks of a client (``ACP-CLIENT-*``).

Written from the spec text (``../shared/spec``; the seeds win over the draft docs,
as its README says). Each names the scenario whose run shows it (``None``: every
run). Kind ``client``; version ``both`` unless the rule is v2's or v1's alone.
"""

from __future__ import annotations

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.conformance.requirements import Requirement, Tier, Version, register

__all__ = ["CLIENT_REQUIREMENTS", "ClientRequirement", "by_id"]

_INIT = "docs-v2-draft/initialization.mdx"
_LC = "seeds/000 Prompt Lifecycle"
_DOC = "docs-v2-draft/prompt-lifecycle.mdx"
_TOOLS = "docs-v2-draft/tool-calls.mdx"
_EXT = "docs-v2-draft/extensibility.mdx"
_TRANSPORTS = "docs-v2-draft/transports.mdx"
_ELICIT = "docs-v2-draft/elicitation.mdx"
_V1 = "schema/v1/schema.json"


@lazy_attrs.frozen
class ClientRequirement:
    """A requirement and the grading scenario that shows it (``None``: all of them)."""

    requirement: Requirement
    scenario: str | None


def _req(
    rid: str,
    tier: Tier,
    summary: str,
    spec: str,
    scenario: str | None,
    *,
    capability: str | None = None,
    version: Version = "both",
) -> ClientRequirement:
    return ClientRequirement(
        Requirement(rid, tier, summary, spec, "client", version, capability), scenario
    )


CLIENT_REQUIREMENTS: tuple[ClientRequirement, ...] = (
    _req(
        "ACP-CLIENT-001",
        "mandatory",
        "The client's first message is `initialize`, with an integer `protocolVersion`.",
        f"{_INIT} (Initialization); schema InitializeRequest",
        None,
    ),
    _req(
        "ACP-CLIENT-002",
        "mandatory",
        "The client writes only valid ACP messages to the agent's stdin: JSON-RPC 2.0 "
        "objects (or non-empty batch arrays of them), one per line.",
        f"{_TRANSPORTS} (stdio)",
        None,
    ),
    _req(
        "ACP-CLIENT-003",
        "mandatory",
        "The client sends `session/prompt` only after session setup, and only for the "
        "session id the agent returned.",
        f"{_DOC} (Prompt Lifecycle)",
        None,
    ),
    _req(
        "ACP-CLIENT-004",
        "mandatory",
        "Prompt content stays within the agent's prompt capabilities: with none "
        "advertised, only `text` and `resource_link` blocks.",
        f"{_DOC} (1. User Message)",
        None,
    ),
    _req(
        "ACP-CLIENT-005",
        "mandatory",
        "The client never replies to a notification (a response always carries the id "
        "of one of the agent's requests).",
        f"{_TRANSPORTS} (JSON-RPC Batch Messages); JSON-RPC 2.0 section 4.1",
        None,
    ),
    _req(
        "ACP-CLIENT-006",
        "mandatory",
        "Every request of the agent gets exactly one response, with its id.",
        "JSON-RPC 2.0 section 5",
        None,
    ),
    _req(
        "ACP-CLIENT-010",
        "mandatory",
        "A turn completes even when the idle that ends it arrives before the "
        "`session/prompt` response (v1: a turn completes with the prompt's response).",
        f"{_LC} (Prompt Accepted: no fixed order relative to session updates)",
        "basics",
    ),
    _req(
        "ACP-CLIENT-011",
        "mandatory",
        "`agent_message` updates are upserts: concrete content replaces what chunks "
        "built, omitted content is unchanged, `null` clears it; later chunks append.",
        f"{_DOC} (3. Agent Reports Output); schema AgentMessage",
        "patches",
        version="v2",
    ),
    _req(
        "ACP-CLIENT-012",
        "mandatory",
        "An unrecognised `_`-prefixed request is answered with Method not found (-32601).",
        f"{_EXT} (Custom Requests)",
        "unknown",
    ),
    _req(
        "ACP-CLIENT-013",
        "mandatory",
        "An unknown non-underscore request is answered with Method not found (-32601).",
        "JSON-RPC 2.0 section 5.1",
        "unknown",
    ),
    _req(
        "ACP-CLIENT-014",
        "advisory",
        "Unrecognised notifications are ignored: the client goes on serving the agent.",
        f"{_EXT} (Custom Notifications)",
        "unknown",
    ),
    _req(
        "ACP-CLIENT-015",
        "mandatory",
        "Unknown `session/update` variants (custom `_` and future ones) and unknown "
        "fields are tolerated: the turn's reply is unaffected.",
        f"{_EXT} (Enum and Tagged-Union Variants); schema SessionUpdate",
        "unknown",
    ),
    _req(
        "ACP-CLIENT-016",
        "mandatory",
        "Session updates that arrive before the `session/new` response are tolerated: "
        "the client prompts the new session and completes the turn.",
        "seeds/000 Session States (updates may arrive before or after the session/new response)",
        "early",
    ),
    _req(
        "ACP-CLIENT-020",
        "mandatory",
        "`session/request_permission` is answered with `selected` and one of the "
        "offered `optionId`s, or with `cancelled`.",
        f"{_TOOLS} (Requesting Permission); schema RequestPermissionOutcome",
        "requests",
    ),
    _req(
        "ACP-CLIENT-021",
        "capability",
        "A form elicitation is answered with `accept` (content matching the requested "
        "schema), `decline` or `cancel`.",
        f"{_ELICIT} (Responses); schema CreateElicitationResponse",
        "requests",
        capability="elicitation.form",
        version="v2",
    ),
    _req(
        "ACP-CLIENT-022",
        "capability",
        "`fs/read_text_file` is answered with the file's content.",
        f"{_V1} ReadTextFileRequest",
        "requests",
        capability="fs.readTextFile",
        version="v1",
    ),
    _req(
        "ACP-CLIENT-023",
        "capability",
        "`fs/write_text_file` writes the given content to the file and answers.",
        f"{_V1} WriteTextFileRequest",
        "requests",
        capability="fs.writeTextFile",
        version="v1",
    ),
    _req(
        "ACP-CLIENT-024",
        "capability",
        "Terminals work: `terminal/create` gives a `terminalId`; `terminal/wait_for_exit` "
        "gives the exit code; `terminal/output` holds what the command printed; "
        "`terminal/release` answers.",
        f"{_V1} CreateTerminalRequest, WaitForTerminalExitResponse, TerminalOutputResponse",
        "requests",
        capability="terminal",
        version="v1",
    ),
    _req(
        "ACP-CLIENT-030",
        "advisory",
        "Every request in a batch array gets its response.",
        f"{_TRANSPORTS} (JSON-RPC Batch Messages)",
        "batch",
    ),
    _req(
        "ACP-CLIENT-031",
        "advisory",
        "A batch is answered with one array holding the responses to its requests.",
        f"{_TRANSPORTS} (JSON-RPC Batch Messages)",
        "batch",
    ),
    _req(
        "ACP-CLIENT-032",
        "mandatory",
        "An empty batch array receives a single Invalid Request response (-32600) with id null.",
        f"{_TRANSPORTS} (JSON-RPC Batch Messages); JSON-RPC 2.0 section 6",
        "batch",
    ),
    _req(
        "ACP-CLIENT-040",
        "advisory",
        "A 2 MiB message line is read whole (stdio lines have no length limit).",
        f"{_TRANSPORTS} (stdio)",
        "long_line",
    ),
    _req(
        "ACP-CLIENT-050",
        "mandatory",
        "After `session/cancel`, a permission request of the cancelled work is answered "
        "with the `cancelled` outcome.",
        f"{_TOOLS} (Requesting Permission); {_DOC} (Cancellation)",
        "cancel",
    ),
    _req(
        "ACP-CLIENT-051",
        "advisory",
        "After `session/cancel`, the client still accepts the turn's updates and stays "
        "until the turn ends (idle `cancelled`; v1: the prompt's response).",
        f"{_DOC} (Cancellation)",
        "cancel",
    ),
    _req(
        "ACP-CLIENT-052",
        "informational",
        "Interrupted (SIGINT) mid-turn, the client cancels the turn with `session/cancel`.",
        f"{_DOC} (Cancellation)",
        "cancel",
    ),
)
"""Every client requirement, in id order."""

register(*(c.requirement for c in CLIENT_REQUIREMENTS))

_BY_ID = {c.requirement.id: c for c in CLIENT_REQUIREMENTS}


def by_id(requirement_id: str) -> ClientRequirement:
    """The client requirement with this id (``KeyError`` if none)."""
    return _BY_ID[requirement_id]
