"""Helpers of the v2 prompt-lifecycle probes (:mod:`.v2_prompt`, :mod:`.v2_cancel`)."""

from __future__ import annotations

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._peer import Line, ProbeTimeout

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
