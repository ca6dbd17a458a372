"""Helpers of the v1 probes (:mod:`acp_lite.probes.v1`, :mod:`acp_lite.probes.v1_turns`)."""

from __future__ import annotations

from acp_lite.conformance.requirements import Requirement
from acp_lite.conformance.v1_probes import V1_PROBES
from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._peer import Line, ProbeTimeout

_BY_ID = {q.id: q for q in V1_PROBES}
_STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}


def _r(rid: str) -> Requirement:
    return _BY_ID[rid]


def _error(line: Line) -> JsonObject | None:
    return line.error


def _result(line: Line) -> JsonObject | None:
    return line.result


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
