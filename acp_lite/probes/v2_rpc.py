"""Probes of JSON-RPC 2.0 and extensibility, for v2 agents.

Written from JSON-RPC 2.0 (sections 4-6) and ``docs-v2-draft/extensibility.mdx``.
"""

from __future__ import annotations

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._peer import Line, ProbeTimeout
from acp_lite.probes._registry import probe, probe_requirement

__all__: list[str] = []

_EXT = "docs-v2-draft/extensibility.mdx"
_RPC = "JSON-RPC 2.0"


_req = probe_requirement


@probe(
    _req(
        "ACP-RPC-001",
        "mandatory",
        "A request for an unknown `_`-prefixed method is answered with error -32601 "
        "(method not found).",
        f"{_EXT} (Custom requests); {_RPC} section 5.1",
    )
)
def unknown_extension_method(ctx: ProbeContext) -> None:
    line = ctx.call("_acp_lite_probe/no_such_method", {"x": 1})
    error = line.obj.get("error")
    ctx.check(isinstance(error, dict), "the unknown method was not answered with an error", line)
    assert isinstance(error, dict)
    ctx.check(
        error.get("code") == -32601,
        f"the unknown method got error code {error.get('code')!r}, not -32601",
        line,
    )


@probe(
    _req(
        "ACP-RPC-002",
        "mandatory",
        "An unknown `_`-prefixed notification is ignored: no response, and the "
        "connection keeps working.",
        f"{_EXT} (Custom notifications: SHOULD ignore unrecognized notifications); "
        f"{_RPC} section 4.1",
    )
)
def unknown_extension_notification(ctx: ProbeContext) -> None:
    sent = ctx.peer.notify("_acp_lite_probe/no_such_notification", {"x": 1})
    after = ctx.call("_acp_lite_probe/no_such_method", {})
    for line in ctx.peer.received(sent.index):
        if line.is_response and line.obj.get("id") is None:
            ctx.fail("the agent answered a notification", sent, line)
    ctx.check(after.is_response, "the connection stopped answering after the notification", sent)


# -- helpers ---------------------------------------------------------------------------

_TRANSPORTS = "docs-v2-draft/transports.mdx"
_UNKNOWN = "_acp_lite_probe/no_such_method"


def _code(line: Line) -> object:
    error = line.obj.get("error")
    return error.get("code") if isinstance(error, dict) else None


def _members(line: Line) -> list[JsonObject]:
    """The response objects of a line: itself, or the members of a batch."""
    if isinstance(line.message, list):
        return [m for m in line.message if isinstance(m, dict)]
    return [line.obj] if line.is_response else []


def _first_response(ctx: ProbeContext, sent: Line, what: str) -> Line:
    """The first response (or batch) received after ``sent``."""
    return ctx.peer.wait(
        lambda line: line.is_response or isinstance(line.message, list),
        timeout=ctx.timeout,
        since=sent.index,
        what=what,
    )


def _expect_error(ctx: ProbeContext, line: Line, code: int, what: str) -> None:
    ctx.check(not isinstance(line.message, list), f"{what} was answered with a batch array", line)
    got = _code(line)
    ctx.check(
        got == code,
        f"{what} got error code {got!r}, not {code}"
        if got is not None
        else f"{what} got no error response",
        line,
    )


def _no_answer_until_next_call(ctx: ProbeContext, sent: Line, what: str) -> None:
    """Fails if anything answered what was sent (notifications): up to the answer to a
    later request, and for a moment after it (an agent may answer concurrently)."""
    after = ctx.call(_UNKNOWN, {})
    for line in ctx.peer.settle(0.1, sent.index):
        if isinstance(line.message, list) or (
            line.is_response and line.obj.get("id") != after.obj.get("id")
        ):
            ctx.fail(f"the agent answered {what}", sent, line)


@probe(
    _req(
        "ACP-RPC-003",
        "advisory",
        "A batch of requests is answered with one array holding a response for each request id.",
        f"{_TRANSPORTS} (JSON-RPC Batch Messages: SHOULD respond with an array); {_RPC} section 6",
    )
)
def batch_answered_as_array(ctx: ProbeContext) -> None:
    n = ctx.peer.new_id()
    ids = [f"batch-{n}-a", f"batch-{n}-b"]
    batch: list[JsonValue] = [
        {"jsonrpc": "2.0", "id": ids[0], "method": _UNKNOWN, "params": {}},
        {"jsonrpc": "2.0", "id": ids[1], "method": "_acp_lite_probe/other_method"},
    ]
    sent = ctx.peer.send(batch)
    seen: dict[object, Line] = {}

    def answers(line: Line) -> bool:
        for member in _members(line):
            if member.get("id") in ids:
                seen.setdefault(member.get("id"), line)
        return len(seen) == len(ids)

    ctx.peer.wait(answers, timeout=ctx.timeout, since=sent.index, what="answers to the batch")
    for line in seen.values():
        ctx.check(
            isinstance(line.message, list),
            "a request of the batch was answered outside a batch array",
            sent,
            line,
        )


@probe(
    _req(
        "ACP-RPC-004",
        "mandatory",
        "The receiver MUST NOT reply to a notification inside a batch; an "
        "all-notification batch gets no answer at all (not an empty array).",
        f"{_TRANSPORTS} (JSON-RPC Batch Messages); {_RPC} section 6",
    )
)
def notification_batch_not_answered(ctx: ProbeContext) -> None:
    sent = ctx.peer.send(
        [
            {"jsonrpc": "2.0", "method": "_acp_lite_probe/note_a", "params": {}},
            {"jsonrpc": "2.0", "method": "_acp_lite_probe/note_b", "params": {"x": 1}},
        ]
    )
    _no_answer_until_next_call(ctx, sent, "an all-notification batch")


@probe(
    _req(
        "ACP-RPC-005",
        "mandatory",
        "An empty batch array receives a single Invalid Request response (-32600) with "
        "id null, not a response array.",
        f"{_TRANSPORTS} (JSON-RPC Batch Messages); {_RPC} section 6",
    )
)
def empty_batch_invalid_request(ctx: ProbeContext) -> None:
    sent = ctx.peer.send(b"[]")
    line = _first_response(ctx, sent, "an answer to the empty batch")
    _expect_error(ctx, line, -32600, "the empty batch")
    ctx.check(
        "id" in line.obj and line.obj["id"] is None,
        f"the empty batch's error has id {line.obj.get('id')!r}, not null",
        sent,
        line,
    )


@probe(
    _req(
        "ACP-RPC-006",
        "mandatory",
        "Invalid JSON gets a single Parse error response (-32700) with id null.",
        f"{_TRANSPORTS} (JSON-RPC Batch Messages); {_RPC} sections 4.2, 5.1",
    )
)
def parse_error(ctx: ProbeContext) -> None:
    sent = ctx.peer.send(b'{"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {')
    line = _first_response(ctx, sent, "an answer to the invalid JSON")
    _expect_error(ctx, line, -32700, "invalid JSON")
    ctx.check(
        "id" in line.obj and line.obj["id"] is None,
        f"the parse error has id {line.obj.get('id')!r}, not null",
        sent,
        line,
    )


def _invalid_request(ctx: ProbeContext, message: JsonObject, what: str) -> None:
    request_id = message.get("id")
    sent = ctx.peer.send(message)
    line = ctx.peer.wait(
        lambda line: line.is_response and line.obj.get("id") in (request_id, None),
        timeout=ctx.timeout,
        since=sent.index,
        what=f"an answer to {what}",
    )
    _expect_error(ctx, line, -32600, what)


@probe(
    _req(
        "ACP-RPC-007",
        "mandatory",
        "A request whose method is not a string is not a valid Request object: error "
        "-32600 (Invalid Request).",
        f"{_RPC} sections 4, 5.1",
    )
)
def method_not_string(ctx: ProbeContext) -> None:
    rid = f"bad-method-{ctx.peer.new_id()}"
    _invalid_request(ctx, {"jsonrpc": "2.0", "id": rid, "method": 42}, "a non-string method")


@probe(
    _req(
        "ACP-RPC-008",
        "mandatory",
        'A request without `"jsonrpc": "2.0"` is not a valid Request object: error '
        "-32600 (Invalid Request).",
        f'{_RPC} sections 4 (jsonrpc MUST be exactly "2.0"), 5.1',
    )
)
def missing_jsonrpc_version(ctx: ProbeContext) -> None:
    rid = f"no-version-{ctx.peer.new_id()}"
    _invalid_request(
        ctx, {"id": rid, "method": _UNKNOWN, "params": {}}, "a request without jsonrpc"
    )


@probe(
    _req(
        "ACP-RPC-009",
        "mandatory",
        "An invalid entry in a non-empty batch gets its own Invalid Request response "
        "(-32600, id null) and does not make the rest of the batch fail.",
        f"{_TRANSPORTS} (JSON-RPC Batch Messages); {_RPC} section 6",
    )
)
def invalid_batch_entry(ctx: ProbeContext) -> None:
    rid = f"batch-ok-{ctx.peer.new_id()}"
    sent = ctx.peer.send([{"jsonrpc": "2.0", "id": rid, "method": _UNKNOWN, "params": {}}, 42])
    found: dict[str, Line] = {}

    def answers(line: Line) -> bool:
        for member in _members(line):
            error = member.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            if member.get("id") == rid:
                found.setdefault("valid", line)
            elif "id" in member and member["id"] is None and code == -32600:
                found.setdefault("invalid", line)
        return len(found) == 2

    try:
        ctx.peer.wait(answers, timeout=ctx.timeout, since=sent.index, what="both answers")
    except ProbeTimeout:
        missing = "the valid request" if "valid" not in found else "the invalid entry (-32600)"
        ctx.fail(f"no answer to {missing} of the batch", sent, *found.values())


@probe(
    _req(
        "ACP-RPC-010",
        "mandatory",
        "The response carries exactly the request's id: a string id stays the same "
        "string (a numeric string is not turned into a number).",
        f"schema/v2 RequestId (The receiver MUST reply with the same value); {_RPC} section 5",
    )
)
def string_ids_echoed(ctx: ProbeContext) -> None:
    for rid in (str(1000 + ctx.peer.new_id()), f"probe-\u00fc-\U0001f642-{ctx.peer.new_id()}"):
        sent = ctx.peer.send({"jsonrpc": "2.0", "id": rid, "method": _UNKNOWN, "params": {}})
        line = _first_response(ctx, sent, f"the response to request id {rid!r}")
        got = line.obj.get("id")
        ctx.check(
            isinstance(got, str) and got == rid,
            f"request id {rid!r} was answered with id {got!r}",
            sent,
            line,
        )


@probe(
    _req(
        "ACP-RPC-011",
        "mandatory",
        "A request for an unknown method (no `_` prefix) is answered with error -32601 "
        "(method not found).",
        f"{_RPC} section 5.1; {_EXT}",
    )
)
def unknown_method(ctx: ProbeContext) -> None:
    line = ctx.call("session/acp_lite_probe_no_such_method", {"sessionId": "x"})
    _expect_error(ctx, line, -32601, "the unknown method")


@probe(
    _req(
        "ACP-RPC-012",
        "mandatory",
        "A request with invalid params (session/new without its required cwd) is "
        "answered with error -32602 (invalid params).",
        f"schema/v2 NewSessionRequest (required: cwd); {_RPC} section 5.1",
    )
)
def invalid_params(ctx: ProbeContext) -> None:
    line = ctx.call("session/new", {})
    _expect_error(ctx, line, -32602, "session/new without cwd")


@probe(
    _req(
        "ACP-RPC-013",
        "mandatory",
        "`$/cancel_request` is a notification: for an id that names no request in flight "
        "it is ignored (no response), and the connection keeps working.",
        f"docs-v2-draft/cancellation.mdx; {_RPC} section 4.1",
    )
)
def cancel_unknown_request(ctx: ProbeContext) -> None:
    sent = ctx.peer.notify("$/cancel_request", {"requestId": f"never-sent-{ctx.peer.new_id()}"})
    _no_answer_until_next_call(ctx, sent, "$/cancel_request of an unknown id")


@probe(
    _req(
        "ACP-RPC-014",
        "mandatory",
        "A notification is never answered, not even an invalid one (an unknown method, "
        "session/cancel of an unknown session).",
        f"{_RPC} section 4.1 (The Server MUST NOT reply to a Notification); {_TRANSPORTS}",
    )
)
def notifications_never_answered(ctx: ProbeContext) -> None:
    sent = ctx.peer.notify("acp_lite_probe/no_such_notification", {"x": 1})
    ctx.peer.notify("session/cancel", {"sessionId": "acp-lite-probe-no-such-session"})
    _no_answer_until_next_call(ctx, sent, "a notification")


def _ids_echoed(ctx: ProbeContext, ids: tuple[int, ...]) -> None:
    for rid in ids:
        sent = ctx.peer.send({"jsonrpc": "2.0", "id": rid, "method": _UNKNOWN, "params": {}})
        line = _first_response(ctx, sent, f"the response to request id {rid}")
        got = line.obj.get("id")
        ctx.check(
            isinstance(got, int) and not isinstance(got, bool) and got == rid,
            f"request id {rid} was answered with id {got!r}",
            sent,
            line,
        )


@probe(
    _req(
        "ACP-RPC-015",
        "mandatory",
        "Integer request ids are echoed exactly, including 0 and negative ids.",
        "schema/v2 RequestId (an int64; The receiver MUST reply with the same value); "
        f"{_RPC} section 5",
    )
)
def small_integer_ids_echoed(ctx: ProbeContext) -> None:
    _ids_echoed(ctx, (0, -(1000 + ctx.peer.new_id())))


@probe(
    _req(
        "ACP-RPC-016",
        "advisory",
        "Integer request ids beyond 2^53 (RequestId is an int64) are echoed exactly, not "
        "rounded through a floating-point number (advisory: RFC 8259 section 6 lets a JSON "
        "implementation keep numbers as IEEE doubles, as JavaScript agents do).",
        "schema/v2 RequestId (format int64; The receiver MUST reply with the same value); "
        "RFC 8259 section 6",
    )
)
def large_integer_ids_echoed(ctx: ProbeContext) -> None:
    _ids_echoed(ctx, (2**53 + 1, 2**63 - 1 - ctx.peer.new_id()))
