"""Probes of sessions and config options, for v2 agents.

Written from ``docs-v2-draft/session-setup.mdx``, ``session-list.mdx``,
``session-delete.mdx``, ``session-config-options.mdx`` and the schema's
descriptions of ``session/new``, ``session/close``, ``session/resume``,
``session/list``, ``session/delete`` and ``session/set_config_option``. The
baseline session methods (list, resume, close) are capability requirements on
``session`` (schema ``SessionCapabilities``: ``{}`` means the agent supports
them); delete and additional roots have their own capabilities.
"""

from __future__ import annotations

from acp_lite.probes._context import ProbeContext
from acp_lite.probes._registry import probe
from acp_lite.probes._v2_session_helpers import (
    _SETUP,
    _UNKNOWN_SESSION,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    _close,
    _error,
    _expect_error,
    _new_params,
    _req,
    _result,
    _send,
    _subdir,
    _updates_between,
)

__all__: list[str] = []

# -- session/new ------------------------------------------------------------------------


@probe(
    _req(
        "ACP-SESSION-001",
        "mandatory",
        "session/new is answered with a result carrying a sessionId string.",
        f"{_SETUP} (Creating a Session); schema NewSessionResponse",
    )
)
def new_session_id(ctx: ProbeContext) -> None:
    line = ctx.call("session/new", _new_params(ctx))
    result = _result(line)
    ctx.check(result is not None, "session/new was not answered with a result object", line)
    assert result is not None
    session_id = result.get("sessionId")
    ctx.check(
        isinstance(session_id, str) and session_id != "",
        f"session/new returned sessionId {session_id!r}, not a non-empty string",
        line,
    )


@probe(
    _req(
        "ACP-SESSION-002",
        "mandatory",
        "The Agent MUST respond to session/new with a unique Session ID: two sessions "
        "get distinct ids.",
        f"{_SETUP} (Creating a Session)",
    )
)
def distinct_session_ids(ctx: ProbeContext) -> None:
    first = ctx.call("session/new", _new_params(ctx))
    second = ctx.call("session/new", _new_params(ctx))
    ids = [(_result(line) or {}).get("sessionId") for line in (first, second)]
    ctx.check(
        all(isinstance(i, str) for i in ids), "session/new returned no sessionId", first, second
    )
    ctx.check(ids[0] != ids[1], f"two session/new calls both returned {ids[0]!r}", first, second)


@probe(
    _req(
        "ACP-SESSION-003",
        "advisory",
        "A session/new whose cwd is not an absolute path (cwd MUST be absolute) is "
        "rejected with -32602 (invalid params).",
        f"{_SETUP} (Working Directory); schema NewSessionRequest.cwd",
    )
)
def relative_cwd_rejected(ctx: ProbeContext) -> None:
    line = ctx.call("session/new", _new_params(ctx, "relative/acp-lite-probe"))
    _expect_error(ctx, line, "session/new with a relative cwd", INVALID_PARAMS)


@probe(
    _req(
        "ACP-SESSION-004",
        "advisory",
        "A session/new whose additionalDirectories holds a relative path (each entry MUST "
        "be absolute) is rejected with -32602 (invalid params).",
        f"{_SETUP} (Additional Workspace Roots); schema NewSessionRequest",
    )
)
def relative_additional_directory_rejected(ctx: ProbeContext) -> None:
    if not ctx.advertised("session.additionalDirectories"):
        ctx.skip("the agent does not advertise session.additionalDirectories")
    params = _new_params(ctx, additionalDirectories=["relative/acp-lite-probe"])
    line = ctx.call("session/new", params)
    _expect_error(ctx, line, "session/new with a relative additional directory", INVALID_PARAMS)


@probe(
    _req(
        "ACP-SESSION-005",
        "capability",
        "An Agent advertising session.additionalDirectories accepts absolute "
        "additionalDirectories on session/new (answered with a sessionId).",
        f"{_SETUP} (Additional Workspace Roots)",
        capability="session.additionalDirectories",
    )
)
def additional_directories_accepted(ctx: ProbeContext) -> None:
    params = _new_params(ctx, additionalDirectories=[_subdir(ctx)])
    line = ctx.call("session/new", params)
    result = _result(line)
    ctx.check(
        result is not None and isinstance(result.get("sessionId"), str),
        "session/new with absolute additionalDirectories was not answered with a sessionId",
        line,
    )


@probe(
    _req(
        "ACP-SESSION-006",
        "mandatory",
        "session/update notifications sent before the session/new response (updates may "
        "arrive before it) are for that session, not for a session that does not exist.",
        f"{_SETUP}; schema NewSessionResponse (Updates may arrive before or after this response)",
    )
)
def early_updates_for_the_new_session(ctx: ProbeContext) -> None:
    known: set[str] = set()
    for line in ctx.peer.log:
        for part in (line.obj.get("params"), line.obj.get("result")):
            known_id = part.get("sessionId") if isinstance(part, dict) else None
            if isinstance(known_id, str):
                known.add(known_id)
    request_id, sent = _send(ctx, "session/new", _new_params(ctx))
    start = sent.index
    response = ctx.peer.response(request_id, timeout=ctx.timeout, what="the session/new response")
    new_id = (_result(response) or {}).get("sessionId")
    if not isinstance(new_id, str):
        ctx.fail("session/new returned no sessionId", response)
    known.add(new_id)
    for line in ctx.peer.received(start):
        if line.index >= response.index:
            break
        params = line.obj.get("params")
        if (
            line.method == "session/update"
            and isinstance(params, dict)
            and params.get("sessionId") not in known
        ):
            ctx.fail(
                f"before the session/new response, an update for session "
                f"{params.get('sessionId')!r}, which does not exist",
                line,
                response,
            )


# -- unknown sessions -------------------------------------------------------------------


@probe(
    _req(
        "ACP-SESSION-007",
        "mandatory",
        "A session/prompt naming a session that does not exist is answered with an error.",
        "schema SessionNotFoundErrorData; schema ErrorCode (Resource not found)",
    )
)
def prompt_unknown_session(ctx: ProbeContext) -> None:
    line = ctx.call("session/prompt", ctx.prompt_params(_UNKNOWN_SESSION))
    _expect_error(ctx, line, "a prompt to an unknown session")


@probe(
    _req(
        "ACP-SESSION-008",
        "advisory",
        "A session/prompt naming a session that does not exist gets error -32002 "
        "(Resource not found: a given resource, such as a session, was not found).",
        "schema ErrorCode (Resource not found); schema SessionNotFoundErrorData",
    )
)
def prompt_unknown_session_code(ctx: ProbeContext) -> None:
    line = ctx.call("session/prompt", ctx.prompt_params(_UNKNOWN_SESSION))
    _expect_error(ctx, line, "a prompt to an unknown session", RESOURCE_NOT_FOUND)


@probe(
    _req(
        "ACP-SESSION-009",
        "mandatory",
        "A -32002 error for an unknown session carries SessionNotFoundErrorData: "
        "data.sessionId is the session ID from the request.",
        "schema SessionNotFoundErrorData; schema Error.data",
    )
)
def session_not_found_data(ctx: ProbeContext) -> None:
    line = ctx.call("session/prompt", ctx.prompt_params(_UNKNOWN_SESSION))
    error = _expect_error(ctx, line, "a prompt to an unknown session")
    if error.get("code") != RESOURCE_NOT_FOUND:
        ctx.skip(f"the agent answers an unknown session with {error.get('code')!r}, not -32002")
    data = error.get("data")
    session_id = data.get("sessionId") if isinstance(data, dict) else None
    ctx.check(
        session_id == _UNKNOWN_SESSION,
        f"the -32002 error has data.sessionId {session_id!r}, not {_UNKNOWN_SESSION!r}",
        line,
    )


# -- session/close ----------------------------------------------------------------------


@probe(
    _req(
        "ACP-SESSION-010",
        "capability",
        "session/close of an active session succeeds with an empty result object.",
        f"{_SETUP} (Closing Active Sessions); schema CloseSessionResponse",
        capability="session",
    )
)
def close_active_session(ctx: ProbeContext) -> None:
    session_id = ctx.new_session()
    line = ctx.call("session/close", {"sessionId": session_id})
    result = _result(line)
    ctx.check(result is not None, "session/close was not answered with a result object", line)
    assert result is not None
    extra = sorted(k for k in result if k != "_meta")
    ctx.check(not extra, f"the session/close result is not empty: {extra}", line)


@probe(
    _req(
        "ACP-SESSION-011",
        "capability",
        "After the session/close response the Agent sends no other messages for the "
        "session: a later prompt to it is rejected and starts no work.",
        f"schema CloseSessionRequest; {_SETUP} (Closing Active Sessions)",
        capability="session",
    )
)
def closed_session_unusable(ctx: ProbeContext) -> None:
    session_id = ctx.new_session()
    closed = _close(ctx, session_id)
    line = ctx.prompt(session_id, "after close")
    if _error(line) is None:
        ctx.fail("a prompt to a closed session was accepted", closed, line)
    for later in ctx.peer.settle(0.2, closed.index + 1):
        params = later.obj.get("params")
        if isinstance(params, dict) and params.get("sessionId") == session_id and later.method:
            ctx.fail("the agent sent a message for the session after closing it", closed, later)


@probe(
    _req(
        "ACP-SESSION-012",
        "capability",
        "When session/close cancels active foreground work, the Agent sends the idle "
        "state_update of that work before responding to session/close.",
        "schema CloseSessionRequest",
        capability="session",
    )
)
def close_running_session(ctx: ProbeContext) -> None:
    session_id = ctx.new_session()
    mark = ctx.peer.mark
    prompt_id = ctx.peer.request(
        "session/prompt", ctx.prompt_params(session_id, "please work for a while")
    )
    ctx.wait_update(
        session_id,
        lambda u: u.get("sessionUpdate") == "state_update" and u.get("state") != "idle",
        since=mark,
        what="a state_update running for the prompt",
    )
    close_id, close_line = _send(ctx, "session/close", {"sessionId": session_id})
    close_index = close_line.index
    for _, update in _updates_between(ctx, session_id, mark, close_index):
        if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
            ctx.skip("the work ended before session/close was sent (nothing to cancel)")
    response = ctx.peer.response(close_id, timeout=ctx.timeout, what="the session/close response")
    if _result(response) is None:
        ctx.fail("session/close was not answered with a result", response)
    idle = [
        line
        for line, update in _updates_between(ctx, session_id, close_index, response.index)
        if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"
    ]
    ctx.check(
        idle,
        "session/close was answered before the idle state_update of the work it cancelled",
        close_line,
        response,
    )
    # The prompt is answered too (its messageId, or -32800 if never inserted).
    ctx.peer.response(prompt_id, timeout=ctx.timeout, what="the response to the cancelled prompt")


@probe(
    _req(
        "ACP-SESSION-027",
        "capability",
        "session/close answers the session's pending prompts: one not yet inserted with "
        "-32800 (Request Cancelled), an inserted one successfully with its messageId.",
        "schema CloseSessionRequest",
        capability="session",
    )
)
def close_answers_pending_prompts(ctx: ProbeContext) -> None:
    session_id = ctx.new_session()
    mark = ctx.peer.mark
    first = ctx.peer.request("session/prompt", ctx.prompt_params(session_id, "work a while"))
    ctx.wait_update(
        session_id,
        lambda u: u.get("sessionUpdate") == "state_update" and u.get("state") != "idle",
        since=mark,
        what="a state_update running for the prompt",
    )
    second = ctx.peer.request("session/prompt", ctx.prompt_params(session_id, "and then this"))
    close = ctx.peer.request("session/close", {"sessionId": session_id})
    ctx.peer.response(close, timeout=ctx.timeout, what="the session/close response")
    for request_id in (first, second):
        line = ctx.peer.response(request_id, timeout=ctx.timeout, what="the prompt's response")
        error, result = _error(line), _result(line)
        if error is not None and error.get("code") != -32800:
            ctx.fail(f"a prompt pending at session/close got error {error.get('code')!r}", line)
        if result is not None and not isinstance(result.get("messageId"), str):
            ctx.fail("an inserted prompt's response has no messageId", line)


@probe(
    _req(
        "ACP-SESSION-013",
        "advisory",
        "Closing a session that does not exist SHOULD succeed (a -32002 answer is "
        "treated as a successful close).",
        "schema CloseSessionRequest",
    )
)
def close_unknown_session(ctx: ProbeContext) -> None:
    if not ctx.advertised("session"):
        ctx.skip("the agent does not advertise session")
    line = ctx.call("session/close", {"sessionId": _UNKNOWN_SESSION})
    error = _error(line)
    if error is not None and error.get("code") != RESOURCE_NOT_FOUND:
        ctx.fail(f"closing an unknown session failed with {error.get('code')!r}", line)
    ctx.check(error is not None or _result(line) is not None, "no result nor error", line)
