"""Probes of the v2 prompt lifecycle: insertion, state, stop reasons, cancellation,
message updates and permissions.

Written from the newest Prompt Lifecycle text (``seeds/000``, which wins over the
draft docs), ``docs-v2-draft/prompt-lifecycle.mdx``, ``cancellation.mdx``,
``content.mdx``, ``tool-calls.mdx`` and the v2 schema descriptions. The probes
work with any agent: where a behaviour needs a long turn (cancellation) the probe
asks for one and accepts that the work may end first; where it needs a
permission request, it is skipped when the agent asks for none.
"""

from __future__ import annotations

from acp_lite.jsontypes import JsonObject
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._registry import probe, probe_requirement
from acp_lite.probes._v2_prompt_helpers import (
    MESSAGE_UPDATES,
    _kind,
    _message_id,
    _rejected_without_insertion,
    _response,
    _send_prompt,
    _session_updates,
    _turn,
    _update,
    _user_message_ids,
    _wait_end,
)

__all__: list[str] = []

_LC = "seeds/000 Prompt Lifecycle"
_DOC = "docs-v2-draft/prompt-lifecycle.mdx"
_CONTENT = "docs-v2-draft/content.mdx"

_req = probe_requirement


# -- insertion -------------------------------------------------------------------------


@probe(
    _req(
        "ACP-PROMPT-001",
        "mandatory",
        "A successful session/prompt response contains the inserted user message's "
        "messageId, a required non-null string.",
        f"{_LC} (2. Prompt accepted); schema PromptResponse.messageId",
    )
)
def prompt_returns_message_id(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    line = ctx.prompt(sid)
    ctx.check("result" in line.obj, "a plain text prompt was not accepted", line)
    _message_id(ctx, line)
    ctx.wait_idle(sid)


@probe(
    _req(
        "ACP-PROMPT-002",
        "mandatory",
        "Agents MUST assign distinct message IDs to distinct inserted submissions, even "
        "if their content is identical.",
        f"{_LC} (2. Prompt accepted)",
    )
)
def distinct_message_ids(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    first, _, _, _ = _turn(ctx, sid, "same text")
    second, _, _, _ = _turn(ctx, sid, "same text")
    a, b = _message_id(ctx, first), _message_id(ctx, second)
    ctx.check(a != b, f"two identical prompts were both given messageId {a!r}", first, second)


@probe(
    _req(
        "ACP-PROMPT-003",
        "mandatory",
        "The Agent MUST report the inserted user message through a user_message update "
        "or user_message_chunk updates that use the returned messageId.",
        f"{_LC} (2. Prompt accepted)",
    )
)
def user_message_echo(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    response, _, idle, since = _turn(ctx, sid, "echo me please")
    message_id = _message_id(ctx, response)
    echoes = _user_message_ids(ctx, sid, since)
    ctx.check(echoes, "no user_message update was reported for the inserted prompt", response, idle)
    for echo in echoes:
        ctx.check(
            _update(echo).get("messageId") == message_id,
            f"the user message was reported with messageId {_update(echo).get('messageId')!r}, "
            f"not the {message_id!r} the prompt response returned",
            response,
            echo,
        )


@probe(
    _req(
        "ACP-PROMPT-005",
        "advisory",
        "An empty prompt array is rejected with -32602 without being inserted (Clients "
        "MUST NOT send one; Agents MAY reject it).",
        f"{_LC} (1. User message: prompt)",
    )
)
def empty_prompt_rejected(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    _rejected_without_insertion(ctx, sid, [], "an empty prompt array")


@probe(
    _req(
        "ACP-PROMPT-006",
        "mandatory",
        "Agents MUST reject a prompt containing a content type they don't understand "
        "with -32602, without inserting it.",
        f"{_LC} (1. User message: prompt); {_CONTENT}",
    )
)
def unknown_content_rejected(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    block: JsonObject = {"type": "acp_lite_probe_unknown_block", "text": "x"}
    _rejected_without_insertion(
        ctx, sid, [{"type": "text", "text": "hi"}, block], "a prompt with an unknown block type"
    )


# -- state -----------------------------------------------------------------------------


@probe(
    _req(
        "ACP-STATE-001",
        "mandatory",
        "A prompt's foreground work is reported running (or requires_action) and then "
        "idle with a state_update.",
        f"{_LC} (Foreground and background work; 3. Agent reports output; 4. Report completion)",
    )
)
def turn_running_then_idle(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    since = ctx.peer.mark
    request_id, _ = _send_prompt(ctx, sid)
    _response(ctx, request_id)
    _wait_end(ctx, sid, since)


@probe(
    _req(
        "ACP-STATE-002",
        "advisory",
        "When foreground work ends, the idle state_update SHOULD include the "
        "corresponding stopReason.",
        f"{_LC} (4. Report completion; Stop reasons)",
    )
)
def idle_has_stop_reason(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    _, _, idle, _ = _turn(ctx, sid)
    reason = _update(idle).get("stopReason")
    ctx.check(
        isinstance(reason, str) and reason,
        f"the idle that ended the prompt's work has stopReason {reason!r}",
        idle,
    )


# -- cancellation ----------------------------------------------------------------------


# -- permissions -----------------------------------------------------------------------


# -- message updates -------------------------------------------------------------------


@probe(
    _req(
        "ACP-UPDATE-001",
        "mandatory",
        "The Agent MUST include an opaque messageId on message updates and message "
        "chunks (user, agent and thought).",
        f"{_LC} (Message IDs); {_DOC} (3. Agent reports output)",
    )
)
def message_updates_carry_message_id(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    _, _, idle, since = _turn(ctx, sid, "Please answer in a sentence or two.")
    messages = [
        line for line in _session_updates(ctx, sid, since) if _kind(line) in MESSAGE_UPDATES
    ]
    ctx.check(messages, "the turn reported no message update at all", idle)
    for line in messages:
        message_id = _update(line).get("messageId")
        ctx.check(
            isinstance(message_id, str) and message_id,
            f"a {_kind(line)} update has messageId {message_id!r}",
            line,
        )
