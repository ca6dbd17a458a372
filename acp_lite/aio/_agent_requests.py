"""Agent -> client requests: ``session/request_permission`` and ``elicitation/create``.

Order of deciders (issue 4, "Agent -> client requests"): the per-connection callable
(``on_permission`` / ``on_elicitation``), then the pluggy hook implementations from
``plugins``, then the default policy (:func:`acp_lite.permissions.reject`,
:func:`acp_lite.permissions.decline`). User code may block, so it always runs in a
worker thread, never on the trio thread (it would stall the reader and, through pipe
back-pressure, the agent).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import pluggy
import trio

from acp_lite import permissions
from acp_lite.aio._events import ConnectionEventKind
from acp_lite.model.state import background_key
from acp_lite.protocol import converter
from acp_lite.rpc import CANCELLED_RESULTS, RequestReceived, RpcEngine

if TYPE_CHECKING:
    from acp_lite.aio._session import AsyncSession

__all__ = ["AgentRequest", "AgentRequestsMixin"]

logger = logging.getLogger("acp_lite.connection")

_PERMISSION = "session/request_permission"


@attrs.define(eq=False)
class AgentRequest:
    """An agent request we have not answered yet."""

    method: str
    session_id: str | None
    tool_call_id: str | None
    scope: trio.CancelScope


class AgentRequestsMixin:
    """The part of :class:`~acp_lite.aio._connection.Connection` that answers the agent."""

    engine: RpcEngine
    sessions: dict[str, AsyncSession]
    pm: pluggy.PluginManager
    on_permission: Callable[[Any, Any], Any] | None
    on_elicitation: Callable[[Any, Any], Any] | None
    session_view: Callable[[AsyncSession], Any] | None
    _agent_requests: dict[Any, AgentRequest]
    _nursery: trio.Nursery | None

    def flush(self) -> None:  # pragma: no cover - provided by Connection
        raise NotImplementedError

    def _log(
        self,
        kind: ConnectionEventKind,
        *,
        data: Any = None,
        error: BaseException | None = None,
        session_id: str | None = None,
        method: str | None = None,
    ) -> None:  # pragma: no cover - provided by Connection
        raise NotImplementedError

    def _on_request(self, ev: RequestReceived) -> None:
        params = ev.params
        sid = getattr(params, "session_id", None)
        if not isinstance(sid, str):
            # A request-scoped elicitation names one of our requests instead.
            rid = getattr(params, "request_id", None)
            pending = self.engine.pending.get(rid) if isinstance(rid, int) else None
            sid = pending.session_id if pending is not None else None
        session = self.sessions.get(sid) if sid is not None else None
        tool_call_id: str | None = None
        if ev.method == _PERMISSION:
            tool_call = getattr(getattr(params, "subject", None), "tool_call", None)
            tool_call_id = getattr(tool_call, "tool_call_id", None)
            if session is not None and tool_call is not None:
                session._apply_permission_tool_call(tool_call)
        else:
            tool_call_id = getattr(params, "tool_call_id", None)
        scope = trio.CancelScope()
        self._agent_requests[ev.id] = AgentRequest(
            ev.method, sid, tool_call_id if isinstance(tool_call_id, str) else None, scope
        )
        assert self._nursery is not None
        self._nursery.start_soon(self._answer_request, ev, session, scope)

    async def _answer_request(
        self, ev: RequestReceived, session: AsyncSession | None, scope: trio.CancelScope
    ) -> None:
        view = (
            self.session_view(session)
            if session is not None and self.session_view is not None
            else session
        )
        decide = self._decide_permission if ev.method == _PERMISSION else self._decide_elicitation
        with scope:
            try:
                # User callbacks may block: never on the trio thread. Abandoned on
                # cancel, so a $/cancel_request or session/cancel answers at once.
                result = await trio.to_thread.run_sync(
                    decide, ev.params, view, abandon_on_cancel=True
                )
            except Exception as exc:
                logger.exception("%s callback raised", ev.method)
                self._log("callback_error", error=exc, session_id=session.id if session else None)
                self.engine.respond_error(
                    ev.id, -32603, f"client callback failed: {type(exc).__name__}: {exc}"
                )
            else:
                self.engine.respond(ev.id, result)
            self.flush()
        self._agent_requests.pop(ev.id, None)

    def _decide_permission(self, request: Any, session: Any) -> Any:
        if self.on_permission is not None:
            answer = self.on_permission(request, session)
        else:
            answer = self.pm.hook.acp_permission_request(request=request, session=session)
            if answer is None:
                answer = permissions.reject(request, session)
        return {"outcome": permissions.permission_outcome(answer)}

    def _decide_elicitation(self, request: Any, session: Any) -> Any:
        answer: Any = None
        if self.on_elicitation is not None:
            answer = self.on_elicitation(request, session)
        else:
            answer = self.pm.hook.acp_elicitation_request(request=request, session=session)
        if answer is None:
            answer = permissions.decline(request, session)
        return answer if isinstance(answer, dict) else converter.unstructure(answer)

    def cancel_permission_requests(self, session: AsyncSession) -> int:
        """Answer ``cancelled`` to the session's permission requests for foreground work.

        Spec (prompt lifecycle, "Cancellation"): the client MAY answer a request it
        knows belongs to the cancelled work with the ``cancelled`` outcome;
        requests for work in the latest background list are not affected.
        """
        background = session.model.background or ()
        listed = {background_key(item) for item in background}
        answered = 0
        for rid, req in list(self._agent_requests.items()):
            if req.method != _PERMISSION or req.session_id != session.id:
                continue
            if req.tool_call_id is not None and ("tool_call", req.tool_call_id) in listed:
                continue
            if self.engine.respond(rid, CANCELLED_RESULTS[_PERMISSION]):
                answered += 1
            req.scope.cancel()
            del self._agent_requests[rid]
        if answered:
            self.flush()
        return answered
