"""Probes of ACP v1 agents: one per requirement of ``V1_PROBES`` (``conformance.v1_probes``).

Written from the v1 schema (``schema/v1/schema.json``; its ``description`` texts
are normative) and JSON-RPC 2.0. v1 prompts block: ``session/prompt`` answers with
the ``stopReason`` at the end of the turn. Probes that need an agent to do
something the client cannot ask for (a plan, a permission request, a turn long
enough to cancel) skip when the agent did not do it.
"""

from __future__ import annotations

from acp_lite.jsontypes import JsonObject
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._registry import probe
from acp_lite.probes._v1_helpers import (
    _error,
    _fresh_init,
    _kind,
    _r,
    _result,
    _start_turn,
    _stop_reason,
    _updates_between,
)

__all__: list[str] = []

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
