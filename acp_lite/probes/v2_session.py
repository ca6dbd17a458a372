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

import os
import tempfile

from acp_lite.conformance.requirements import Requirement, Tier
from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._peer import Line
from acp_lite.probes._registry import probe

__all__: list[str] = []

_SETUP = "docs-v2-draft/session-setup.mdx"
_LIST = "docs-v2-draft/session-list.mdx"
_DELETE = "docs-v2-draft/session-delete.mdx"
_CONFIG = "docs-v2-draft/session-config-options.mdx"

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002

#: Message updates that are conversation history (replayed on resume).
_HISTORY = frozenset(
    {
        "user_message",
        "user_message_chunk",
        "agent_message",
        "agent_message_chunk",
        "agent_thought",
        "agent_thought_chunk",
    }
)

#: At most this many session/list pages are followed (a cursor loop fails the probe).
_MAX_PAGES = 20

_UNKNOWN_SESSION = "acp-lite-probe-no-such-session"


def _req(
    rid: str, tier: Tier, summary: str, spec: str, capability: str | None = None
) -> Requirement:
    return Requirement(rid, tier, summary, spec, kind="probe", version="v2", capability=capability)


# -- helpers ----------------------------------------------------------------------------


def _error(line: Line) -> JsonObject | None:
    error = line.obj.get("error")
    return error if isinstance(error, dict) else None


def _result(line: Line) -> JsonObject | None:
    result = line.obj.get("result")
    return result if isinstance(result, dict) else None


def _new_params(ctx: ProbeContext, cwd: str | None = None, **extra: JsonValue) -> JsonObject:
    params: JsonObject = {"cwd": cwd or ctx.cwd}
    params.update(extra)
    return params


def _subdir(ctx: ProbeContext) -> str:
    """A new directory of the probe's own (a cwd no other session has)."""
    return tempfile.mkdtemp(prefix="session-", dir=ctx.cwd)


def _same_path(a: JsonValue | None, b: str) -> bool:
    return isinstance(a, str) and os.path.normpath(a) == os.path.normpath(b)


def _expect_error(ctx: ProbeContext, line: Line, what: str, code: int | None = None) -> JsonObject:
    """The error of ``line``; the probe fails on a result (or another ``code``)."""
    error = _error(line)
    if error is None:
        ctx.fail(f"{what} was answered with a result, not an error", line)
    if code is not None and error.get("code") != code:
        ctx.fail(f"{what} got error code {error.get('code')!r}, not {code}", line)
    return error


def _list_pages(ctx: ProbeContext, params: JsonObject) -> tuple[list[JsonObject], list[Line]]:
    """Every ``SessionInfo`` of ``session/list`` with ``params``, following
    ``nextCursor``; and the response lines. Fails on an error or a cursor loop."""
    sessions: list[JsonObject] = []
    lines: list[Line] = []
    cursor: JsonValue | None = None
    for _ in range(_MAX_PAGES):
        page_params = dict(params) if cursor is None else {**params, "cursor": cursor}
        line = ctx.call("session/list", page_params)
        lines.append(line)
        result = _result(line)
        if result is None:
            ctx.fail("session/list was not answered with a result object", line)
        page = result.get("sessions")
        if not isinstance(page, list):
            ctx.fail("the session/list result has no `sessions` array", line)
        for item in page:
            if not isinstance(item, dict):
                ctx.fail("session/list returned a session that is not an object", line)
            sessions.append(item)
        cursor = result.get("nextCursor")
        if cursor is None:
            return sessions, lines
    ctx.fail(f"session/list still had a nextCursor after {_MAX_PAGES} pages", *lines[-3:])


def _ids(sessions: list[JsonObject]) -> list[JsonValue | None]:
    return [s.get("sessionId") for s in sessions]


def _listed_session(
    ctx: ProbeContext, cwd: str, params: JsonObject
) -> tuple[str, list[JsonObject], list[Line]]:
    """A new session in ``cwd`` and the sessions ``session/list`` (``params``) returns
    then. An agent may list only sessions with a conversation: when the new one is
    not listed, it gets a finished turn and the list is asked again."""
    session_id = ctx.new_session(cwd)
    sessions, lines = _list_pages(ctx, params)
    if session_id not in _ids(sessions):
        _finish_turn(ctx, session_id)
        sessions, more = _list_pages(ctx, params)
        lines += more
    return session_id, sessions, lines


def _finish_turn(ctx: ProbeContext, session_id: str, text: str = "hello") -> None:
    """Prompt ``session_id`` and wait until its work is idle again."""
    mark = ctx.peer.mark
    line = ctx.prompt(session_id, text)
    if _result(line) is None:
        ctx.fail("session/prompt was not answered with a result", line)
    ctx.wait_idle(session_id, since=mark)


def _close(ctx: ProbeContext, session_id: str) -> Line:
    line = ctx.call("session/close", {"sessionId": session_id})
    if _result(line) is None:
        ctx.fail("session/close of an active session was not answered with a result", line)
    return line


def _updates_between(
    ctx: ProbeContext, session_id: str, start: int, end: int
) -> list[tuple[Line, JsonObject]]:
    """The ``session/update`` lines of ``session_id`` received between two log indexes."""
    out: list[tuple[Line, JsonObject]] = []
    for line in ctx.peer.received(start):
        if line.index >= end:
            break
        params = line.obj.get("params")
        if line.method != "session/update" or not isinstance(params, dict):
            continue
        update = params.get("update")
        if params.get("sessionId") == session_id and isinstance(update, dict):
            out.append((line, update))
    return out


def _send(ctx: ProbeContext, method: str, params: JsonObject) -> tuple[int, Line]:
    """Send a request without waiting: its id and its log line (found by id, since
    the reader may log a received line right after it)."""
    request_id = ctx.peer.request(method, params)
    for line in reversed(ctx.peer.log):
        if line.direction == "sent" and line.obj.get("id") == request_id:
            return request_id, line
    raise AssertionError(f"request {request_id} is not in the log")


def _resume(ctx: ProbeContext, session_id: str, **extra: JsonValue) -> tuple[Line, Line]:
    """Send ``session/resume`` (the probe's cwd); its request and response lines."""
    params: JsonObject = {"sessionId": session_id, "cwd": ctx.cwd}
    params.update(extra)
    request_id, sent = _send(ctx, "session/resume", params)
    response = ctx.peer.response(
        request_id, timeout=ctx.timeout, what="the session/resume response"
    )
    return sent, response


def _closed_session_with_history(ctx: ProbeContext) -> str:
    """A session with one finished turn, closed (ready to be resumed)."""
    session_id = ctx.new_session()
    _finish_turn(ctx, session_id, "remember this")
    _close(ctx, session_id)
    return session_id


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


# -- session/list -----------------------------------------------------------------------


@probe(
    _req(
        "ACP-SESSION-014",
        "capability",
        "session/list returns a `sessions` array of SessionInfo, each with a sessionId and "
        "an absolute cwd, that includes a session of this connection (created, and "
        "prompted if need be).",
        f"{_LIST} (Listing Sessions); schema SessionInfo",
        capability="session",
    )
)
def list_sessions_info(ctx: ProbeContext) -> None:
    session_id, sessions, lines = _listed_session(ctx, ctx.cwd, {})
    for info in sessions:
        cwd = info.get("cwd")
        if not isinstance(info.get("sessionId"), str):
            ctx.fail(f"a listed session has no sessionId string: {info}", *lines)
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            ctx.fail(f"listed session {info.get('sessionId')!r} has cwd {cwd!r}", *lines)
    ctx.check(session_id in _ids(sessions), f"{session_id!r} is not listed", *lines)


@probe(
    _req(
        "ACP-SESSION-015",
        "capability",
        "session/list with a cwd filter returns only sessions with a matching cwd.",
        f"{_LIST} (Listing Sessions: cwd); schema ListSessionsRequest.cwd",
        capability="session",
    )
)
def list_cwd_filter(ctx: ProbeContext) -> None:
    ctx.new_session()  # one in the probe's directory, which the filter excludes
    cwd = _subdir(ctx)
    inside, sessions, lines = _listed_session(ctx, cwd, {"cwd": cwd})
    for info in sessions:
        if not _same_path(info.get("cwd"), cwd):
            ctx.fail(
                f"session/list filtered on {cwd!r} returned a session in {info.get('cwd')!r}",
                *lines,
            )
    ctx.check(inside in _ids(sessions), f"{inside!r} (cwd {cwd!r}) is not listed", *lines)


@probe(
    _req(
        "ACP-SESSION-016",
        "capability",
        "Following session/list's nextCursor pages visits every matching session exactly "
        "once, and a missing nextCursor ends the results.",
        f"{_LIST} (Pagination)",
        capability="session",
    )
)
def list_pagination(ctx: ProbeContext) -> None:
    cwd = _subdir(ctx)
    created = [ctx.new_session(cwd) for _ in range(7)]
    sessions, lines = _list_pages(ctx, {"cwd": cwd})
    ids = _ids(sessions)
    if not set(created) & set(ids):
        ctx.skip("the agent lists no session without a conversation (see ACP-SESSION-014)")
    repeated = sorted({str(i) for i in ids if ids.count(i) > 1})
    ctx.check(not repeated, f"session/list pages repeat sessions {repeated}", *lines[-3:])
    missing = [i for i in created if i not in ids]
    ctx.check(not missing, f"session/list pages never listed {missing}", *lines[-3:])


@probe(
    _req(
        "ACP-SESSION-017",
        "advisory",
        "Agents SHOULD return an error if the session/list cursor is invalid.",
        f"{_LIST} (Pagination)",
    )
)
def list_invalid_cursor(ctx: ProbeContext) -> None:
    if not ctx.advertised("session"):
        ctx.skip("the agent does not advertise session")
    line = ctx.call("session/list", {"cursor": "acp-lite-probe-not-a-cursor"})
    _expect_error(ctx, line, "session/list with an invalid cursor")


@probe(
    _req(
        "ACP-SESSION-018",
        "capability",
        "When no sessions match the criteria, session/list returns an empty `sessions` array.",
        f"{_LIST} (Listing Sessions)",
        capability="session",
    )
)
def list_no_match(ctx: ProbeContext) -> None:
    line = ctx.call("session/list", {"cwd": _subdir(ctx)})
    result = _result(line)
    ctx.check(result is not None, "session/list was not answered with a result object", line)
    assert result is not None
    sessions = result.get("sessions")
    ctx.check(sessions == [], f"no session matches, yet `sessions` is {sessions!r}", line)


# -- session/delete ---------------------------------------------------------------------


@probe(
    _req(
        "ACP-SESSION-019",
        "capability",
        "After session/delete succeeds, the deleted session no longer appears in "
        "session/list results.",
        f"{_DELETE} (Semantics)",
        capability="session.delete",
    )
)
def delete_removes_from_list(ctx: ProbeContext) -> None:
    cwd = _subdir(ctx)
    session_id, before, _ = _listed_session(ctx, cwd, {"cwd": cwd})
    if session_id not in _ids(before):
        ctx.skip(f"{session_id!r} is not listed even before session/delete (ACP-SESSION-014)")
    line = ctx.call("session/delete", {"sessionId": session_id})
    ctx.check(_result(line) is not None, "session/delete was not answered with a result", line)
    sessions, lines = _list_pages(ctx, {"cwd": cwd})
    ctx.check(
        session_id not in _ids(sessions),
        f"deleted session {session_id!r} is still listed",
        line,
        *lines,
    )


@probe(
    _req(
        "ACP-SESSION-020",
        "advisory",
        "Deleting a session that never existed SHOULD succeed silently.",
        f"{_DELETE} (Semantics)",
    )
)
def delete_unknown_session(ctx: ProbeContext) -> None:
    if not ctx.advertised("session.delete"):
        ctx.skip("the agent does not advertise session.delete")
    line = ctx.call("session/delete", {"sessionId": _UNKNOWN_SESSION})
    error = _error(line)
    if error is not None:
        ctx.fail(f"deleting an unknown session failed with {error.get('code')!r}", line)


# -- session/resume ---------------------------------------------------------------------


@probe(
    _req(
        "ACP-SESSION-021",
        "capability",
        "When replayFrom is omitted, the Agent MUST NOT replay the conversation history "
        "via session/update before responding to session/resume.",
        f"{_SETUP} (Resuming Sessions)",
        capability="session",
    )
)
def resume_without_replay(ctx: ProbeContext) -> None:
    session_id = _closed_session_with_history(ctx)
    sent, response = _resume(ctx, session_id)
    if _result(response) is None:
        ctx.fail("session/resume of a closed session was not answered with a result", response)
    for line, update in _updates_between(ctx, session_id, sent.index, response.index):
        if update.get("sessionUpdate") in _HISTORY:
            ctx.fail("session/resume without replayFrom replayed history", sent, line)


@probe(
    _req(
        "ACP-SESSION-022",
        "capability",
        "The Agent MUST send a current state_update after any replay and before the "
        "session/resume response, even without replay.",
        "schema ResumeSessionResponse; schema StateUpdate",
        capability="session",
    )
)
def resume_state_snapshot(ctx: ProbeContext) -> None:
    session_id = _closed_session_with_history(ctx)
    sent, response = _resume(ctx, session_id)
    if _result(response) is None:
        ctx.fail("session/resume of a closed session was not answered with a result", response)
    states = [
        u
        for _, u in _updates_between(ctx, session_id, sent.index, response.index)
        if u.get("sessionUpdate") == "state_update"
    ]
    ctx.check(states, "no state_update for the session before the session/resume response", sent)


@probe(
    _req(
        "ACP-SESSION-023",
        "capability",
        "With replayFrom start, the Agent replays the conversation as session/update "
        "messages, each with a messageId, before responding to session/resume.",
        f"{_SETUP} (Resuming Sessions)",
        capability="session",
    )
)
def resume_with_replay(ctx: ProbeContext) -> None:
    session_id = _closed_session_with_history(ctx)
    sent, response = _resume(ctx, session_id, replayFrom={"type": "start"})
    if _result(response) is None:
        ctx.fail("session/resume with replayFrom start was not answered with a result", response)
    replayed = [
        (line, u)
        for line, u in _updates_between(ctx, session_id, sent.index, response.index)
        if u.get("sessionUpdate") in _HISTORY
    ]
    kinds = {str(u.get("sessionUpdate")) for _, u in replayed}
    ctx.check(
        kinds & {"user_message", "user_message_chunk"},
        "replayFrom start replayed no user message of the earlier prompt",
        sent,
        response,
    )
    for line, update in replayed:
        if not isinstance(update.get("messageId"), str):
            ctx.fail("a replayed message has no messageId", line)


@probe(
    _req(
        "ACP-SESSION-024",
        "capability",
        "session/resume with an unsupported replayFrom cursor type is rejected with "
        "-32602, rather than resuming without replay.",
        "schema ResumeSessionRequest.replayFrom",
        capability="session",
    )
)
def resume_unsupported_cursor(ctx: ProbeContext) -> None:
    session_id = _closed_session_with_history(ctx)
    _, response = _resume(ctx, session_id, replayFrom={"type": "_acp_lite_probe_cursor"})
    _expect_error(ctx, response, "session/resume with an unsupported replayFrom", INVALID_PARAMS)


@probe(
    _req(
        "ACP-SESSION-025",
        "capability",
        "session/resume of a session that does not exist is answered with an error.",
        f"{_SETUP} (Resuming Sessions); schema SessionNotFoundErrorData",
        capability="session",
    )
)
def resume_unknown_session(ctx: ProbeContext) -> None:
    _, response = _resume(ctx, _UNKNOWN_SESSION)
    _expect_error(ctx, response, "session/resume of an unknown session")


@probe(
    _req(
        "ACP-SESSION-026",
        "capability",
        "With replayFrom start, the state_update snapshot of session/resume comes after "
        "the replayed history (after any requested replay, before the response).",
        "schema ResumeSessionResponse; schema StateUpdate",
        capability="session",
    )
)
def resume_state_after_replay(ctx: ProbeContext) -> None:
    session_id = _closed_session_with_history(ctx)
    sent, response = _resume(ctx, session_id, replayFrom={"type": "start"})
    if _result(response) is None:
        ctx.fail("session/resume with replayFrom start was not answered with a result", response)
    updates = _updates_between(ctx, session_id, sent.index, response.index)
    replayed = [line for line, u in updates if u.get("sessionUpdate") in _HISTORY]
    states = [line for line, u in updates if u.get("sessionUpdate") == "state_update"]
    if not replayed:
        ctx.skip("nothing was replayed (ACP-SESSION-023)")
    ctx.check(states, "no state_update before the session/resume response", sent, response)
    ctx.check(
        states[-1].index > replayed[-1].index,
        "the last state_update of session/resume came before the end of the replay",
        states[-1],
        replayed[-1],
    )


# -- config options ---------------------------------------------------------------------


def _configured_session(ctx: ProbeContext) -> tuple[str, list[JsonObject], Line]:
    """A new session and its config options (skipped when it advertises none)."""
    line = ctx.call("session/new", _new_params(ctx))
    result = _result(line) or {}
    session_id = result.get("sessionId")
    if not isinstance(session_id, str):
        ctx.fail("session/new returned no sessionId", line)
    options = result.get("configOptions")
    if not isinstance(options, list) or not options:
        ctx.skip("the new session advertises no config options")
    return session_id, [o for o in options if isinstance(o, dict)], line


def _select(options: list[JsonObject]) -> JsonObject | None:
    for option in options:
        if option.get("type") == "select" and isinstance(option.get("options"), list):
            return option
    return None


def _values(option: JsonObject) -> list[JsonValue | None]:
    """The values of a select option (flat or grouped)."""
    out: list[JsonValue | None] = []
    items = option.get("options")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        group = item.get("options")
        if isinstance(group, list):
            out.extend(g.get("value") for g in group if isinstance(g, dict))
        else:
            out.append(item.get("value"))
    return out


def _set(
    ctx: ProbeContext, session_id: str, config_id: JsonValue, kind: str, value: JsonValue
) -> Line:
    params: JsonObject = {
        "sessionId": session_id,
        "configId": config_id,
        "type": kind,
        "value": value,
    }
    return ctx.call("session/set_config_option", params)


def _set_current(ctx: ProbeContext, session_id: str, option: JsonObject) -> Line:
    """Set ``option`` to its current value (a valid request that changes nothing)."""
    kind = "boolean" if option.get("type") == "boolean" else "id"
    return _set(ctx, session_id, option.get("configId"), kind, option.get("currentValue"))


def _current(options: JsonValue | None, config_id: JsonValue) -> JsonValue | None:
    for option in options if isinstance(options, list) else []:
        if isinstance(option, dict) and option.get("configId") == config_id:
            return option.get("currentValue")
    return None


@probe(
    _req(
        "ACP-CONFIG-001",
        "mandatory",
        "Every config option has a default (currentValue); a select option's currentValue "
        "is one of its values.",
        f"{_CONFIG} (Default Values and Graceful Degradation); schema SessionConfigSelect",
    )
)
def config_defaults(ctx: ProbeContext) -> None:
    _, options, line = _configured_session(ctx)
    for option in options:
        config_id = option.get("configId")
        if "currentValue" not in option:
            ctx.fail(f"config option {config_id!r} has no currentValue", line)
        if option.get("type") == "select" and option.get("currentValue") not in _values(option):
            ctx.fail(
                f"select option {config_id!r} has currentValue {option.get('currentValue')!r}, "
                "not one of its values",
                line,
            )


@probe(
    _req(
        "ACP-CONFIG-002",
        "mandatory",
        "session/set_config_option with an unknown configId is rejected with -32602.",
        "schema SetSessionConfigOptionRequest",
    )
)
def config_unknown_id(ctx: ProbeContext) -> None:
    session_id, _, _ = _configured_session(ctx)
    line = _set(ctx, session_id, "acp_lite_probe_no_such_option", "id", "x")
    _expect_error(ctx, line, "an unknown configId", INVALID_PARAMS)


@probe(
    _req(
        "ACP-CONFIG-003",
        "mandatory",
        "session/set_config_option with a value that is not one of a select option's values "
        "is rejected with -32602.",
        f"schema SetSessionConfigOptionRequest; {_CONFIG} (From the Client)",
    )
)
def config_invalid_value(ctx: ProbeContext) -> None:
    session_id, options, _ = _configured_session(ctx)
    option = _select(options)
    if option is None:
        ctx.skip("the session has no select config option")
    line = _set(ctx, session_id, option.get("configId"), "id", "acp_lite_probe_no_such_value")
    _expect_error(ctx, line, "an invalid select value", INVALID_PARAMS)


@probe(
    _req(
        "ACP-CONFIG-004",
        "mandatory",
        "A rejected session/set_config_option leaves the configuration unchanged.",
        "schema SetSessionConfigOptionRequest",
    )
)
def config_rejected_unchanged(ctx: ProbeContext) -> None:
    session_id, options, _ = _configured_session(ctx)
    option = _select(options)
    if option is None:
        ctx.skip("the session has no select config option")
    others = [o for o in options if o is not option and o.get("type") in ("select", "boolean")]
    if not others:
        ctx.skip("the session has a single config option (no way to read the state back)")
    config_id, before = option.get("configId"), option.get("currentValue")
    rejected = _set(ctx, session_id, config_id, "id", "acp_lite_probe_no_such_value")
    if _error(rejected) is None:
        ctx.skip("the invalid value was accepted (ACP-CONFIG-003)")
    line = _set_current(ctx, session_id, others[0])
    result = _result(line)
    if result is None:
        ctx.fail("setting an option to its current value was rejected", line)
    after = _current(result.get("configOptions"), config_id)
    ctx.check(
        after == before,
        f"after a rejected change, {config_id!r} is {after!r}, not {before!r}",
        rejected,
        line,
    )


@probe(
    _req(
        "ACP-CONFIG-005",
        "mandatory",
        "A successful session/set_config_option responds with the complete list of "
        "configuration options and their current values, showing the new value.",
        f"{_CONFIG} (From the Client)",
    )
)
def config_set_full_state(ctx: ProbeContext) -> None:
    session_id, options, _ = _configured_session(ctx)
    option = _select(options)
    if option is None:
        ctx.skip("the session has no select config option")
    config_id = option.get("configId")
    values = [v for v in _values(option) if v != option.get("currentValue")]
    value = values[0] if values else option.get("currentValue")
    line = _set(ctx, session_id, config_id, "id", value)
    result = _result(line)
    if result is None:
        ctx.fail(f"setting {config_id!r} to {value!r} was rejected", line)
    got = result.get("configOptions")
    if not isinstance(got, list):
        ctx.fail("the set_config_option result has no configOptions array", line)
    wanted = {o.get("configId") for o in options}
    seen = {o.get("configId") for o in got if isinstance(o, dict)}
    missing = sorted(str(i) for i in wanted - seen)
    ctx.check(not missing, f"the set_config_option result lacks options {missing}", line)
    now = _current(got, config_id)
    ctx.check(now == value, f"after setting {config_id!r} to {value!r} it is {now!r}", line)


@probe(
    _req(
        "ACP-CONFIG-006",
        "mandatory",
        "session/set_config_option with a value type the Agent does not support is "
        "rejected with -32602.",
        "schema SetSessionConfigOptionRequest (other)",
    )
)
def config_unsupported_type(ctx: ProbeContext) -> None:
    session_id, options, _ = _configured_session(ctx)
    option = _select(options) or options[0]
    line = _set(
        ctx, session_id, option.get("configId"), "_acp_lite_probe_type", option.get("currentValue")
    )
    _expect_error(ctx, line, "an unsupported value type", INVALID_PARAMS)
