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

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._peer import Line, ProbeTimeout
from acp_lite.probes._registry import probe, probe_requirement

__all__: list[str] = []

_LC = "seeds/000 Prompt Lifecycle"
_DOC = "docs-v2-draft/prompt-lifecycle.mdx"
_CONTENT = "docs-v2-draft/content.mdx"

INVALID_PARAMS = -32602
MESSAGE_UPDATES = frozenset(
    {
        "user_message",
        "user_message_chunk",
        "agent_message",
        "agent_message_chunk",
        "agent_thought",
        "agent_thought_chunk",
    }
)
ACTIVE = frozenset({"running", "requires_action"})


_req = probe_requirement


# -- helpers ---------------------------------------------------------------------------


def _update(line: Line) -> JsonObject:
    params = line.obj.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    return update if isinstance(update, dict) else {}


def _session_updates(ctx: ProbeContext, sid: str, since: int) -> list[Line]:
    out = []
    for line in ctx.peer.received(since):
        params = line.obj.get("params")
        if (
            line.method == "session/update"
            and isinstance(params, dict)
            and params.get("sessionId") == sid
        ):
            out.append(line)
    return out


def _kind(line: Line) -> JsonValue | None:
    return _update(line).get("sessionUpdate")


def _is_state(update: JsonObject, *states: str) -> bool:
    return update.get("sessionUpdate") == "state_update" and update.get("state") in states


def _send_prompt(ctx: ProbeContext, sid: str, text: str = "hello") -> tuple[int, Line]:
    """Send a text prompt without waiting: its request id and sent line."""
    request_id = ctx.peer.new_id()
    params = ctx.prompt_params(sid, text)
    line = ctx.peer.send(
        {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}
    )
    return request_id, line


def _response(ctx: ProbeContext, request_id: int, what: str = "session/prompt") -> Line:
    return ctx.peer.response(request_id, timeout=ctx.timeout, what=f"the response to {what}")


def _message_id(ctx: ProbeContext, line: Line) -> str:
    result = line.obj.get("result")
    message_id = result.get("messageId") if isinstance(result, dict) else None
    if not isinstance(message_id, str) or not message_id:
        ctx.fail("the session/prompt result has no non-empty messageId string", line)
    return message_id


def _wait_end(ctx: ProbeContext, sid: str, since: int) -> tuple[Line, Line]:
    """The first active state (running / requires_action) from ``since`` on, and
    the idle that follows it (so an optional initial idle is not taken as the end)."""
    try:
        active = ctx.wait_update(
            sid,
            lambda u: _is_state(u, *ACTIVE),
            since=since,
            what=f"state_update running (or requires_action) for {sid}",
        )
    except ProbeTimeout:
        ctx.fail("the prompt's work was never reported running (or requires_action)")
    idle = ctx.wait_idle(sid, since=active.index)
    return active, idle


def _turn(ctx: ProbeContext, sid: str, text: str = "hello") -> tuple[Line, Line, Line, int]:
    """A whole prompt turn: the prompt response, the active state, the idle, and
    the log index where it began."""
    since = ctx.peer.mark
    request_id, _ = _send_prompt(ctx, sid, text)
    response = _response(ctx, request_id)
    if not isinstance(response.obj.get("result"), dict):
        ctx.fail("a plain text prompt was not accepted", response)
    active, idle = _wait_end(ctx, sid, since)
    return response, active, idle, since


def _user_message_ids(ctx: ProbeContext, sid: str, since: int) -> list[Line]:
    return [
        line
        for line in _session_updates(ctx, sid, since)
        if _kind(line) in ("user_message", "user_message_chunk")
    ]


def _rejected_without_insertion(
    ctx: ProbeContext, sid: str, prompt: list[JsonValue], what: str
) -> None:
    """``prompt`` is answered with -32602 and no user message is reported for it."""
    since = ctx.peer.mark
    line = ctx.call("session/prompt", {"sessionId": sid, "prompt": prompt})
    error = line.obj.get("error")
    if not isinstance(error, dict):
        ctx.fail(f"{what} was accepted, not rejected with -32602", line)
    ctx.check(
        error.get("code") == INVALID_PARAMS,
        f"{what} was rejected with code {error.get('code')!r}, not -32602",
        line,
    )
    echoed = ctx.peer.settle(0.2, since)
    for got in echoed:
        params = got.obj.get("params")
        if (
            got.method == "session/update"
            and isinstance(params, dict)
            and params.get("sessionId") == sid
            and _kind(got) in ("user_message", "user_message_chunk")
        ):
            ctx.fail(f"{what} was rejected but still reported as a user message", line, got)


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
