"""Probes of ACP v1 agents: prompt turns, cancellation, gated updates, JSON-RPC (see
:mod:`acp_lite.probes.v1`)."""

from __future__ import annotations

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._peer import Line, Peer, ProbeTimeout, default_answer
from acp_lite.probes._registry import probe
from acp_lite.probes._v1_helpers import (
    _STOP_REASONS,
    _error,
    _params,
    _r,
    _start_turn,
    _stop_reason,
    _updates_between,
)

__all__: list[str] = []

# -- prompt turn -----------------------------------------------------------------------


@probe(_r("ACP-V1-PROMPT-001"))
def prompt_stop_reason(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    line = ctx.prompt(sid)
    reason = _stop_reason(line)
    ctx.check(reason in _STOP_REASONS, f"session/prompt answered stopReason {reason!r}", line)


def _prompt_accepted(ctx: ProbeContext, block: JsonObject, what: str) -> None:
    sid = ctx.new_session()
    line = ctx.call("session/prompt", {"sessionId": sid, "prompt": [block]})
    error = _error(line)
    ctx.check(error is None, f"a prompt with a {what} block was refused", line)
    ctx.check(_stop_reason(line) in _STOP_REASONS, f"the {what} prompt got no stopReason", line)


@probe(_r("ACP-V1-PROMPT-002"))
def prompt_text(ctx: ProbeContext) -> None:
    _prompt_accepted(ctx, {"type": "text", "text": "hello"}, "text")


@probe(_r("ACP-V1-PROMPT-003"))
def prompt_resource_link(ctx: ProbeContext) -> None:
    block: JsonObject = {
        "type": "resource_link",
        "uri": "file:///tmp/probe.txt",
        "name": "probe.txt",
    }
    _prompt_accepted(ctx, block, "resource_link")


# A 1x1 transparent PNG.
_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJ"
    "RU5ErkJggg=="
)


@probe(_r("ACP-V1-PROMPT-004"))
def prompt_image(ctx: ProbeContext) -> None:
    _prompt_accepted(ctx, {"type": "image", "data": _PNG, "mimeType": "image/png"}, "image")


@probe(_r("ACP-V1-PROMPT-005"))
def updates_name_session(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    start = ctx.peer.mark
    line = ctx.prompt(sid)
    updates = _updates_between(ctx, start, line.index)
    for update in updates:
        params = _params(update)
        ctx.check(
            params.get("sessionId") == sid,
            f"a session/update of the turn names session {params.get('sessionId')!r}, not {sid!r}",
            update,
        )
        ctx.check(isinstance(params.get("update"), dict), "a session/update has no update", update)


def _turn_updates(ctx: ProbeContext, kind: str) -> list[tuple[Line, JsonObject]]:
    sid = ctx.new_session()
    start = ctx.peer.mark
    line = ctx.prompt(sid)
    out = []
    for got in _updates_between(ctx, start, line.index + 1):
        update = _params(got).get("update")
        if isinstance(update, dict) and update.get("sessionUpdate") == kind:
            out.append((got, update))
    return out


@probe(_r("ACP-V1-PROMPT-006"))
def plan_entries(ctx: ProbeContext) -> None:
    plans = _turn_updates(ctx, "plan")
    if not plans:
        ctx.skip("the agent sent no plan")
    for line, update in plans:
        entries = update.get("entries")
        ctx.check(isinstance(entries, list), "a plan update has no entries list", line)
        assert isinstance(entries, list)
        for entry in entries:
            ok = (
                isinstance(entry, dict)
                and isinstance(entry.get("content"), str)
                and entry.get("priority") in ("high", "medium", "low")
                and entry.get("status") in ("pending", "in_progress", "completed")
            )
            ctx.check(ok, f"a plan entry lacks content, priority or status: {entry!r}", line)


@probe(_r("ACP-V1-PROMPT-007"))
def permission_request_fields(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    start = ctx.peer.mark
    ctx.prompt(sid)
    asked = [
        line for line in ctx.peer.received(start) if line.method == "session/request_permission"
    ]
    if not asked:
        ctx.skip("the agent asked no permission")
    for line in asked:
        params = _params(line)
        ctx.check(
            params.get("sessionId") == sid, "the permission request names another session", line
        )
        tool = params.get("toolCall")
        ctx.check(
            isinstance(tool, dict) and isinstance(tool.get("toolCallId"), str),
            "the permission request has no toolCall with a toolCallId",
            line,
        )
        options = params.get("options")
        ctx.check(isinstance(options, list), "the permission request has no options", line)
        assert isinstance(options, list)
        for option in options:
            ok = isinstance(option, dict) and all(
                isinstance(option.get(k), str) for k in ("optionId", "name", "kind")
            )
            ctx.check(ok, f"a permission option lacks optionId, name or kind: {option!r}", line)


# -- cancellation ----------------------------------------------------------------------


@probe(_r("ACP-V1-CANCEL-001"))
def cancel_returns_cancelled(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    rid, first = _start_turn(ctx, sid)
    if first is None:
        ctx.skip("the turn ended before session/cancel could be sent")
    sent = ctx.peer.notify("session/cancel", {"sessionId": sid})
    answer = ctx.peer.response(rid, timeout=ctx.timeout)
    if answer.index < sent.index:
        ctx.skip("the turn ended before session/cancel was sent")
    reason = _stop_reason(answer)
    ctx.check(reason == "cancelled", f"the cancelled turn ended with {reason!r}", sent, answer)


@probe(_r("ACP-V1-CANCEL-002"))
def cancelled_permission(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    asked: list[Line] = []

    def hold(peer: Peer, line: Line) -> JsonValue | None:
        if line.method == "session/request_permission":
            asked.append(line)
            return None
        return default_answer(peer, line)

    ctx.peer.answer = hold
    try:
        start = ctx.peer.mark
        rid = ctx.peer.request("session/prompt", ctx.prompt_params(sid))
        got = ctx.peer.wait(
            lambda line: (
                line.method == "session/request_permission"
                or (line.is_response and line.obj.get("id") == rid)
            ),
            timeout=ctx.timeout,
            since=start,
            what="a permission request or the end of the turn",
        )
        if got.is_response:
            ctx.skip("the agent asked no permission")
        sent = ctx.peer.notify("session/cancel", {"sessionId": sid})
        outcome: JsonObject = {"outcome": "cancelled"}
        ctx.peer.send({"jsonrpc": "2.0", "id": got.obj.get("id"), "result": {"outcome": outcome}})
        answer = ctx.peer.response(rid, timeout=ctx.timeout)
    finally:
        ctx.peer.answer = default_answer
    reason = _stop_reason(answer)
    ctx.check(
        reason == "cancelled",
        f"the turn whose permission was cancelled ended with {reason!r}",
        got,
        sent,
        answer,
    )


@probe(_r("ACP-V1-CANCEL-003"))
def nothing_after_cancelled(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    rid, first = _start_turn(ctx, sid)
    if first is None:
        ctx.skip("the turn ended before session/cancel could be sent")
    ctx.peer.notify("session/cancel", {"sessionId": sid})
    answer = ctx.peer.response(rid, timeout=ctx.timeout)
    if _stop_reason(answer) != "cancelled":
        ctx.skip("the turn did not end cancelled")
    for line in ctx.peer.settle(0.2, answer.index + 1):
        if line.method == "session/update" and _params(line).get("sessionId") == sid:
            ctx.fail("a session/update of the turn followed its cancelled response", answer, line)


@probe(_r("ACP-V1-CANCEL-004"))
def idle_cancel(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    sent = ctx.peer.notify("session/cancel", {"sessionId": sid})
    after = ctx.prompt(sid)
    for line in ctx.peer.received(sent.index):
        if line.is_response and line.obj.get("id") is None:
            ctx.fail("session/cancel with no turn running was answered", sent, line)
    ctx.check(
        _stop_reason(after) is not None, "the next prompt after the idle cancel failed", after
    )


@probe(_r("ACP-V1-CANCEL-005"))
def cancel_request_prompt(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    rid, first = _start_turn(ctx, sid)
    if first is None:
        ctx.skip("the turn ended before $/cancel_request could be sent")
    sent = ctx.peer.notify("$/cancel_request", {"requestId": rid})
    answer = ctx.peer.response(rid, timeout=ctx.timeout)
    if answer.index < sent.index:
        ctx.skip("the turn ended before $/cancel_request was sent")
    error = _error(answer)
    ok = (error is not None and error.get("code") == -32800) or _stop_reason(answer) == "cancelled"
    if not ok:
        # Still running: end it, so the shared connection is not left busy.
        ctx.peer.notify("session/cancel", {"sessionId": sid})
        ctx.fail("$/cancel_request did not end the running session/prompt", sent, answer)


# -- capability-gated updates ----------------------------------------------------------


def _no_update_kinds(ctx: ProbeContext, kinds: tuple[str, ...], capability: str) -> None:
    sid = ctx.new_session()
    start = ctx.peer.mark
    line = ctx.prompt(sid)
    for got in _updates_between(ctx, start, line.index + 1):
        update = _params(got).get("update")
        if isinstance(update, dict) and update.get("sessionUpdate") in kinds:
            ctx.fail(
                f"the agent sent {update.get('sessionUpdate')} though the client did not "
                f"advertise {capability}",
                got,
            )


@probe(_r("ACP-V1-UPDATE-001"))
def no_unasked_notice(ctx: ProbeContext) -> None:
    _no_update_kinds(ctx, ("notice",), "session.notices")


@probe(_r("ACP-V1-UPDATE-002"))
def no_unasked_compaction(ctx: ProbeContext) -> None:
    kinds = ("compaction_update", "compaction_summary_chunk")
    _no_update_kinds(ctx, kinds, "session.compaction")


# -- JSON-RPC --------------------------------------------------------------------------


def _error_code(ctx: ProbeContext, line: Line, code: int, what: str) -> JsonObject:
    error = _error(line)
    ctx.check(error is not None, f"{what} was not answered with an error", line)
    assert error is not None
    ctx.check(
        error.get("code") == code, f"{what} got error {error.get('code')!r}, not {code}", line
    )
    return error


@probe(_r("ACP-V1-RPC-001"))
def unknown_method(ctx: ProbeContext) -> None:
    line = ctx.call("acp_lite_probe/no_such_method", {"x": 1})
    _error_code(ctx, line, -32601, "an unknown method")


@probe(_r("ACP-V1-RPC-002"))
def unknown_extension_method(ctx: ProbeContext) -> None:
    line = ctx.call("_acp_lite_probe/no_such_method", {"x": 1})
    _error_code(ctx, line, -32601, "an unknown '_' method")


@probe(_r("ACP-V1-RPC-003"))
def unknown_notification(ctx: ProbeContext) -> None:
    sent = ctx.peer.notify("acp_lite_probe/no_such_notification", {"x": 1})
    after = ctx.call("acp_lite_probe/no_such_method", {})
    for line in ctx.peer.received(sent.index):
        if line.is_response and line.obj.get("id") is None:
            ctx.fail("the agent answered a notification", sent, line)
    ctx.check(after.is_response, "the agent stopped answering after the notification", sent)


@probe(_r("ACP-V1-RPC-004"))
def response_ids(ctx: ProbeContext) -> None:
    for request_id in ("acp-lite-probe-id", 424242):
        message: JsonObject = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "session/new",
            "params": {"cwd": ctx.cwd, "mcpServers": []},
        }
        sent = ctx.peer.send(message)
        got = ctx.peer.wait(
            lambda line: line.is_response, timeout=ctx.timeout, since=sent.index, what="a response"
        )
        ctx.check(
            got.obj.get("id") == request_id and type(got.obj.get("id")) is type(request_id),
            f"request id {request_id!r} was answered with id {got.obj.get('id')!r}",
            sent,
            got,
        )


@probe(_r("ACP-V1-RPC-005"))
def parse_error(ctx: ProbeContext) -> None:
    sent = ctx.peer.send(b"{this is not json")
    got = ctx.peer.wait(
        lambda line: line.is_response, timeout=ctx.timeout, since=sent.index, what="a response"
    )
    _error_code(ctx, got, -32700, "a line that is not JSON")
    ctx.check("id" in got.obj and got.obj["id"] is None, "the parse error's id is not null", got)


@probe(_r("ACP-V1-RPC-006"))
def batch(ctx: ProbeContext) -> None:
    ids = [ctx.peer.new_id(), ctx.peer.new_id()]
    members: list[JsonValue] = [
        {"jsonrpc": "2.0", "id": i, "method": "acp_lite_probe/no_such_method"} for i in ids
    ]
    sent = ctx.peer.send(members)
    got = ctx.peer.wait(
        lambda line: isinstance(line.message, list) or line.obj.get("id") in ids,
        timeout=ctx.timeout,
        since=sent.index,
        what="the batch's response",
    )
    ctx.check(isinstance(got.message, list), "a batch was not answered with an array", sent, got)
    assert isinstance(got.message, list)
    answered = {m.get("id") for m in got.message if isinstance(m, dict)}
    ctx.check(answered == set(ids), f"the batch response answers ids {answered}", sent, got)


@probe(_r("ACP-V1-RPC-007"))
def empty_batch(ctx: ProbeContext) -> None:
    sent = ctx.peer.send(b"[]")
    # A request after it: its answer, once in, bounds the wait for the batch's.
    after = ctx.call("acp_lite_probe/no_such_method", {})

    def answers_batch(line: Line) -> bool:
        if isinstance(line.message, list):
            return True
        return line.is_response and line.obj.get("id") is None

    try:
        got = ctx.peer.wait(answers_batch, timeout=0.3, since=sent.index, what="an answer")
    except ProbeTimeout:
        ctx.fail("an empty batch was not answered", sent, after)
    ctx.check(isinstance(got.message, dict), "an empty batch was answered with an array", sent, got)
    _error_code(ctx, got, -32600, "an empty batch")


@probe(_r("ACP-V1-RPC-008"))
def error_shape(ctx: ProbeContext) -> None:
    line = ctx.call("acp_lite_probe/no_such_method", {})
    error = _error(line)
    ctx.check(error is not None, "an unknown method was not answered with an error", line)
    assert error is not None
    code = error.get("code")
    ctx.check(
        isinstance(code, int) and not isinstance(code, bool),
        f"error code {code!r} is not an integer",
        line,
    )
    ctx.check(isinstance(error.get("message"), str), "the error has no message string", line)


@probe(_r("ACP-V1-RPC-009"))
def invalid_params(ctx: ProbeContext) -> None:
    line = ctx.call("session/new", {"mcpServers": []})
    _error_code(ctx, line, -32602, "session/new without cwd")
