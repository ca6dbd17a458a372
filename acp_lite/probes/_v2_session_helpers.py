"""Helpers of the v2 session probes (v2_session, v2_session_history, v2_config)."""

from __future__ import annotations

import os
import tempfile

from acp_lite.jsontypes import JsonObject, JsonValue
from acp_lite.probes._context import ProbeContext
from acp_lite.probes._peer import Line
from acp_lite.probes._registry import probe_requirement
from acp_lite.probes._v2_prompt_helpers import MESSAGE_UPDATES

_SETUP = "docs-v2-draft/session-setup.mdx"
_LIST = "docs-v2-draft/session-list.mdx"
_DELETE = "docs-v2-draft/session-delete.mdx"
_CONFIG = "docs-v2-draft/session-config-options.mdx"

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002

#: Message updates that are conversation history (replayed on resume).
_HISTORY = MESSAGE_UPDATES

#: At most this many session/list pages are followed (a cursor loop fails the probe).
_MAX_PAGES = 20

_UNKNOWN_SESSION = "acp-lite-probe-no-such-session"


_req = probe_requirement


# -- helpers ----------------------------------------------------------------------------


def _error(line: Line) -> JsonObject | None:
    return line.error


def _result(line: Line) -> JsonObject | None:
    return line.result


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
