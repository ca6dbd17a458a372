"""Probes of v2 session history: session/list, session/delete, session/resume
(see :mod:`acp_lite.probes.v2_session`)."""

from __future__ import annotations

import os

from acp_lite.probes._context import ProbeContext
from acp_lite.probes._registry import probe
from acp_lite.probes._v2_session_helpers import (
    _DELETE,
    _HISTORY,
    _LIST,
    _SETUP,
    _UNKNOWN_SESSION,
    INVALID_PARAMS,
    _closed_session_with_history,
    _error,
    _expect_error,
    _ids,
    _list_pages,
    _listed_session,
    _req,
    _result,
    _resume,
    _same_path,
    _subdir,
    _updates_between,
)

__all__: list[str] = []

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
