"""Probes of ACP v1 agents: one per requirement of ``V1_PROBES`` (``conformance.v1_probes``).

Written from the v1 schema (``schema/v1/schema.json``; its ``description`` texts
are normative) and JSON-RPC 2.0. v1 prompts block: ``session/prompt`` answers with
the ``stopReason`` at the end of the turn. Probes that need an agent to do
something the client cannot ask for (a plan, a permission request, a turn long
enough to cancel) skip when the agent did not do it.
"""

from __future__ import annotations

from acp_lite.conformance.requirements import Requirement
from acp_lite.conformance.v1_probes import V1_PROBES
from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._peer import Line, Peer, ProbeTimeout, default_answer
from acp_lite.probes._registry import probe

__all__: list[str] = []

_BY_ID = {q.id: q for q in V1_PROBES}
_STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}


def _r(rid: str) -> Requirement:
    return _BY_ID[rid]


def _error(line: Line) -> JsonObject | None:
    error = line.obj.get("error")
    return error if isinstance(error, dict) else None


def _result(line: Line) -> JsonObject | None:
    result = line.obj.get("result")
    return result if isinstance(result, dict) else None


def _stop_reason(line: Line) -> JsonValue | None:
    result = _result(line)
    return result.get("stopReason") if result is not None else None


def _params(line: Line) -> JsonObject:
    params = line.obj.get("params")
    return params if isinstance(params, dict) else {}


def _kind(line: Line) -> JsonValue | None:
    update = _params(line).get("update")
    return update.get("sessionUpdate") if isinstance(update, dict) else None


def _fresh_init(ctx: ProbeContext, version: int, caps: JsonObject | None = None) -> JsonObject:
    line = ctx.initialize(version, caps)
    result = _result(line)
    if result is None:
        ctx.fail(f"initialize (protocolVersion {version}) answered with no result", line)
    return result


def _updates_between(ctx: ProbeContext, start: int, end: int) -> list[Line]:
    return [
        line
        for line in ctx.peer.received(start)
        if line.index < end and line.method == "session/update"
    ]


_RUNNING = 0.1
"""Seconds a turn must still run after its first update to be cancelled by a probe
(a shorter one may end while the cancel is on its way: the probe skips then)."""


def _start_turn(ctx: ProbeContext, sid: str) -> tuple[int, Line | None]:
    """Send a prompt and wait for the turn's first session/update: the request id and
    that update (``None`` when the turn ended first, sent no update, or ended within
    :data:`_RUNNING` s of it)."""
    start = ctx.peer.mark
    rid = ctx.peer.request("session/prompt", ctx.prompt_params(sid, "a long task"))

    def answered(line: Line) -> bool:
        return line.is_response and line.obj.get("id") == rid

    def begun(line: Line) -> bool:
        return answered(line) or (
            line.method == "session/update" and _params(line).get("sessionId") == sid
        )

    first = ctx.peer.wait(begun, timeout=ctx.timeout, since=start, what="the turn's first update")
    if first.is_response:
        return rid, None
    try:
        ctx.peer.wait(answered, timeout=_RUNNING, since=first.index, what="the prompt's answer")
    except ProbeTimeout:
        return rid, first  # still running
    return rid, None


# -- initialization --------------------------------------------------------------------


@probe(_r("ACP-V1-INIT-001"), isolation="fresh")
def initialize_same_version(ctx: ProbeContext) -> None:
    line = ctx.initialize(1)
    result = _result(line)
    ctx.check(result is not None, "initialize (protocolVersion 1) got no result", line)
    assert result is not None
    version = result.get("protocolVersion")
    ctx.check(version == 1, f"a v1 client was answered protocolVersion {version!r}, not 1", line)


@probe(_r("ACP-V1-INIT-002"), isolation="fresh")
def initialize_newer_version(ctx: ProbeContext) -> None:
    line = ctx.initialize(2)
    ctx.check(_error(line) is None, "initialize asking for version 2 was answered an error", line)
    result = _result(line)
    ctx.check(result is not None, "initialize asking for version 2 got no result", line)
    assert result is not None
    version = result.get("protocolVersion")
    ctx.check(version == 1, f"the v1 agent answered protocolVersion {version!r}, not 1", line)


@probe(_r("ACP-V1-INIT-003"), isolation="fresh")
def no_terminal_auth_unasked(ctx: ProbeContext) -> None:
    result = _fresh_init(ctx, 1, {"auth": {"terminal": False}})
    methods = result.get("authMethods")
    for method in methods if isinstance(methods, list) else []:
        if isinstance(method, dict) and method.get("type") == "terminal":
            ctx.fail(
                f"auth method {method.get('id')!r} is a terminal method, but the client "
                "did not enable auth.terminal",
                ctx.peer.log[-1],
            )


@probe(_r("ACP-V1-INIT-004"), isolation="fresh")
def agent_info(ctx: ProbeContext) -> None:
    result = _fresh_init(ctx, 1)
    info = result.get("agentInfo")
    last = ctx.peer.log[-1]
    ctx.check(isinstance(info, dict), "initialize reported no agentInfo", last)
    assert isinstance(info, dict)
    ctx.check(
        isinstance(info.get("name"), str) and isinstance(info.get("version"), str),
        "agentInfo lacks a name or a version string",
        last,
    )


@probe(_r("ACP-V1-INIT-005"))
def baseline_methods(ctx: ProbeContext) -> None:
    line = ctx.call("session/new", {"cwd": ctx.cwd, "mcpServers": []})
    error = _error(line)
    ctx.check(not error or error.get("code") != -32601, "session/new: method not found", line)
    result = _result(line)
    sid = result.get("sessionId") if result else None
    ctx.check(isinstance(sid, str), "session/new returned no sessionId", line)
    assert isinstance(sid, str)
    line = ctx.prompt(sid)
    error = _error(line)
    ctx.check(not error or error.get("code") != -32601, "session/prompt: method not found", line)
    sent = ctx.peer.notify("session/cancel", {"sessionId": sid})
    after = ctx.call("session/prompt", ctx.prompt_params(sid))
    for got in ctx.peer.received(sent.index):
        if got.is_response and got.obj.get("id") is None:
            ctx.fail("session/cancel (a notification) was answered", sent, got)
    ctx.check(after.is_response, "the agent stopped answering after session/cancel", sent)


# -- session setup ---------------------------------------------------------------------


@probe(_r("ACP-V1-SESSION-001"))
def new_session_id(ctx: ProbeContext) -> None:
    line = ctx.call("session/new", {"cwd": ctx.cwd, "mcpServers": []})
    result = _result(line)
    ctx.check(result is not None, "session/new answered with no result", line)
    assert result is not None
    sid = result.get("sessionId")
    ctx.check(isinstance(sid, str) and sid != "", "session/new returned no sessionId", line)


@probe(_r("ACP-V1-SESSION-002"))
def new_session_unique(ctx: ProbeContext) -> None:
    first = ctx.new_session()
    second = ctx.new_session()
    ctx.check(first != second, f"two session/new calls both returned {first!r}")


@probe(_r("ACP-V1-SESSION-003"), isolation="connection")
def load_replays_history(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    text = "remember the probe word zebra"
    line = ctx.prompt(sid, text)
    ctx.check(_result(line) is not None, "the prompt before session/load failed", line)
    start = ctx.peer.mark
    params: JsonObject = {"sessionId": sid, "cwd": ctx.cwd, "mcpServers": []}
    line = ctx.call("session/load", params)
    ctx.check(_result(line) is not None, "session/load answered with no result", line)
    replayed = _updates_between(ctx, start, line.index)
    users = [u for u in replayed if _kind(u) == "user_message_chunk" and "zebra" in u.text]
    ctx.check(
        users,
        "session/load answered without first replaying the session's user message",
        *ctx.peer.log[start : line.index + 1][-8:],
    )


@probe(_r("ACP-V1-SESSION-004"))
def list_sessions(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    line = ctx.call("session/list", {})
    result = _result(line)
    ctx.check(result is not None, "session/list answered with no result", line)
    assert result is not None
    sessions = result.get("sessions")
    ctx.check(isinstance(sessions, list), "session/list returned no sessions array", line)
    assert isinstance(sessions, list)
    for info in sessions:
        ok = isinstance(info, dict) and all(
            isinstance(info.get(key), str) for key in ("sessionId", "cwd")
        )
        ctx.check(ok, f"a session/list entry lacks sessionId or cwd: {info!r}", line)
    ids = [s.get("sessionId") for s in sessions if isinstance(s, dict)]
    if "nextCursor" not in result or result.get("nextCursor") is None:
        ctx.check(sid in ids, f"session/list does not list the new session {sid!r}", line)


@probe(_r("ACP-V1-SESSION-005"))
def resume_without_replay(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    line = ctx.prompt(sid, "a message to not replay")
    ctx.check(_result(line) is not None, "the prompt before session/resume failed", line)
    start = ctx.peer.mark
    line = ctx.call("session/resume", {"sessionId": sid, "cwd": ctx.cwd, "mcpServers": []})
    ctx.check(_result(line) is not None, "session/resume answered with no result", line)
    settled = ctx.peer.settle(0.2, start)
    replayed = [u for u in settled if u.method == "session/update" and "not replay" in u.text]
    if replayed:
        ctx.fail("session/resume replayed the message history", line, *replayed[:3])


@probe(_r("ACP-V1-SESSION-006"))
def close_cancels(ctx: ProbeContext) -> None:
    sid = ctx.new_session()
    rid, first = _start_turn(ctx, sid)
    if first is None:
        ctx.skip("the turn ended before session/close could be sent")
    line = ctx.call("session/close", {"sessionId": sid})
    ctx.check(_result(line) is not None, "session/close answered with no result", line)
    answer = ctx.peer.response(rid, timeout=ctx.timeout)
    reason = _stop_reason(answer)
    ctx.check(
        reason == "cancelled",
        f"the prompt running at session/close ended with stopReason {reason!r}, not cancelled",
        line,
        answer,
    )


# ``modes`` is a capability of the session/new answer, not of initialize: the probe
# checks it itself.
@probe(_r("ACP-V1-SESSION-007"), check_capability=False)
def set_mode(ctx: ProbeContext) -> None:
    result = ctx.result("session/new", {"cwd": ctx.cwd, "mcpServers": []})
    modes = result.get("modes")
    sid = result.get("sessionId")
    if not isinstance(modes, dict):
        ctx.skip("session/new reported no modes")
    available = modes.get("availableModes")
    ids = (
        [m.get("id") for m in available if isinstance(m, dict)]
        if isinstance(available, list)
        else []
    )
    ctx.check(modes.get("currentModeId") in ids, "currentModeId is not an available mode")
    others = [m for m in ids if m != modes.get("currentModeId")] or ids
    line = ctx.call("session/set_mode", {"sessionId": sid, "modeId": others[0]})
    ctx.check(_result(line) is not None, f"session/set_mode to {others[0]!r} failed", line)


@probe(_r("ACP-V1-SESSION-008"))
def unknown_session(ctx: ProbeContext) -> None:
    params = ctx.prompt_params("acp-lite-probe-no-such-session")
    line = ctx.call("session/prompt", params)
    ctx.check(_error(line) is not None, "a prompt to an unknown session was not an error", line)


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
