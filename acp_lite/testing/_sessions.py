"""The reference agent's ``session/list``, ``session/delete`` and ``session/resume``.

Handlers of :class:`~acp_lite.testing._agent.Agent` (``agent.handlers``), kept
apart so the agent's module stays readable; each follows its schema description.
They work on the agent's :class:`~acp_lite.testing._link.Link` (its sessions, its
lock, its sending), as the turns do.
"""

from __future__ import annotations

from typing import Any

from acp_lite.testing._link import Link
from acp_lite.testing._wire import (
    DEFERRED,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    RpcError,
    absolute_path,
    list_param,
    notification,
)

__all__ = ["delete_session", "list_sessions", "resume_session"]


def list_sessions(link: Link, _id: Any, params: dict[str, Any]) -> dict[str, Any]:
    """``session/list`` with cursor pagination (``page_size`` per page)."""
    link.require_login()
    cwd = params.get("cwd")
    cursor = params.get("cursor")
    start = 0
    if cursor is not None:
        # Cursors are opaque to clients; ours is "offset:<n>". Invalid -> error
        # (session-list.mdx: "Agents SHOULD return an error if the cursor is invalid").
        try:
            prefix, _, number = str(cursor).partition(":")
            start = int(number)
            if prefix != "offset" or start < 0:
                raise ValueError(cursor)
        except ValueError:
            raise RpcError(INVALID_PARAMS, f"Invalid cursor {cursor!r}") from None
    with link.cond:
        matching = [s for s in link.sessions.values() if cwd is None or s.cwd == cwd]
    size = max(1, link.script.page_size)
    page = matching[start : start + size]
    result: dict[str, Any] = {"sessions": [s.info() for s in page]}
    if start + size < len(matching):
        result["nextCursor"] = f"offset:{start + size}"
    return result


def delete_session(link: Link, request_id: Any, params: dict[str, Any]) -> Any:
    """``session/delete``: unknown ids succeed silently (session-delete.mdx).

    An open session is closed first, on its own thread like ``session/close``.
    """
    session = link.sessions.get(str(params.get("sessionId")))
    if session is None:
        return {}

    def delete() -> None:
        if session.open:
            link.close_now(session)
        with link.cond:
            link.sessions.pop(session.id, None)
        link.reply(request_id, {})

    link.spawn(delete, f"delete-{session.id}")
    return DEFERRED


def resume_session(link: Link, _id: Any, params: dict[str, Any]) -> dict[str, Any]:
    """``session/resume``: optional replay, then a state snapshot, then the answer.

    Schema ``ResumeSessionResponse``: the agent MUST send a current
    ``state_update`` after any requested replay and before this response.
    """
    link.require_login()
    session_id = params.get("sessionId")
    session = link.sessions.get(str(session_id))
    if session is None:
        raise RpcError(RESOURCE_NOT_FOUND, "Session not found", {"sessionId": session_id})
    cwd = absolute_path(params.get("cwd"), "cwd")
    if cwd != session.cwd:
        raise RpcError(INVALID_PARAMS, f"cwd {cwd!r} is not the session's cwd {session.cwd!r}")
    replay_from = params.get("replayFrom")
    replay = isinstance(replay_from, dict) and replay_from.get("type") == "start"
    if replay_from is not None and not replay:
        # Schema: reject unsupported cursors with -32602, never resume without replay.
        raise RpcError(INVALID_PARAMS, f"Unsupported replayFrom {replay_from!r}")
    session.additional_directories = [
        absolute_path(p, "additionalDirectories")
        for p in list_param(params, "additionalDirectories")
    ]
    session.open = True
    if replay:
        for update in list(session.history):
            params_out = {"sessionId": session.id, "update": update}
            link.wire.send(notification("session/update", params_out))
    link.report_state(session)
    return {"configOptions": session.config_options()}
