"""The agent's requests to the client, in the core: their lifecycle and side effects.

A mixin of :class:`~acp_lite.core.connection.ClientConnection` (one object per
connection, h11 style; split out for size): a request is recorded on its session's
model and announced as :class:`~acp_lite.core.events.AgentRequestReceived`; the IO
layer decides it and answers through :meth:`AgentRequests.respond` /
:meth:`AgentRequests.respond_error`; ``session/cancel`` answers the cancelled
work's permission requests itself.
"""

from __future__ import annotations

from time import monotonic
from typing import TYPE_CHECKING, Any

from acp_lite.core.events import AgentRequestReceived, CoreEvent
from acp_lite.core.records import AgentRequest, RequestId, SessionState
from acp_lite.core.rpc import (
    CANCELLED_RESULTS,
    CLIENT_HANDLED_METHODS,
    RequestReceived,
    RpcEngine,
)
from acp_lite.model.state import background_key
from acp_lite.protocol import converter, structure_update

__all__ = ["AgentRequests"]

_PERMISSION = "session/request_permission"


class AgentRequests:
    """Agent -> client requests (see the module doc)."""

    if TYPE_CHECKING:
        rpc: RpcEngine
        sessions: dict[str, SessionState]
        agent_requests: dict[RequestId, AgentRequest]
        _events: list[CoreEvent]

        def _session(self, session_id: str, method: str) -> SessionState: ...
        def check(self, *, method: str | None = None, session_id: str | None = None) -> None: ...
        def _touch(self, state: SessionState) -> None: ...
        def _apply(
            self, state: SessionState, update: Any, raw: Any, source: str | None = None
        ) -> None: ...

    def cancel(self, session_id: str) -> list[AgentRequest]:
        """Send ``session/cancel``, set the model's cancel hint, and answer the
        session's permission requests for foreground work ``cancelled``.

        Spec (prompt lifecycle, "Cancellation"): the client MAY answer a request it
        knows belongs to the cancelled work with the ``cancelled`` outcome;
        requests for work in the latest background list are not affected. Returns
        the agent requests answered (the IO layer stops deciding them).
        """
        state = self._session(session_id, "session/cancel")
        state.model.cancel_sent()
        self.check(method="session/cancel")
        self.rpc.notify("session/cancel", {"sessionId": session_id})
        listed = {background_key(item) for item in state.model.background or ()}
        answered: list[AgentRequest] = []
        for rid, req in list(self.agent_requests.items()):
            if req.method != _PERMISSION or req.session_id != session_id:
                continue
            if req.tool_call_id is not None and ("tool_call", req.tool_call_id) in listed:
                continue
            self.respond(rid, CANCELLED_RESULTS[_PERMISSION])
            answered.append(req)
        self._touch(state)
        return answered

    def respond(self, request_id: RequestId, result: Any) -> bool:
        """Answer an agent request; ``False`` if it is no longer open."""
        req = self.agent_requests.pop(request_id, None)
        sent = self.rpc.respond(request_id, result)
        if sent and req is not None and req.record is not None:
            req.record._answer(
                result if isinstance(result, dict) else converter.unstructure(result)
            )
        return sent

    def respond_error(
        self, request_id: RequestId, code: int, message: str, data: Any = None
    ) -> bool:
        """Answer an agent request with an error; ``False`` if it is no longer open."""
        req = self.agent_requests.pop(request_id, None)
        sent = self.rpc.respond_error(request_id, code, message, data)
        if sent and req is not None and req.record is not None:
            req.record._fail(code, message)
        return sent

    def _on_request(self, ev: RequestReceived) -> None:
        params = ev.params
        sid = getattr(params, "session_id", None)
        if not isinstance(sid, str):
            # A request-scoped elicitation names one of our requests instead.
            rid = getattr(params, "request_id", None)
            pending = self.rpc.pending.get(rid) if isinstance(rid, int) else None
            sid = pending.session_id if pending is not None else None
        state = self.sessions.get(sid) if sid is not None else None
        record = None
        if state is not None and ev.method in CLIENT_HANDLED_METHODS:
            # Placed in the stream before the tool call it carries (applied below).
            raw_params = ev.message.raw_params
            record = state.model.requests.add(
                ev.id,
                ev.method,
                params,
                raw_params if isinstance(raw_params, dict) else converter.unstructure(params),
                len(state.model.events),
                monotonic(),
            )
        tool_call_id: Any = None
        if ev.method == _PERMISSION:
            tool_call = getattr(getattr(params, "subject", None), "tool_call", None)
            tool_call_id = getattr(tool_call, "tool_call_id", None)
            if state is not None and tool_call is not None:
                # Spec (ToolCallPermissionSubject.toolCall): "Clients apply this to
                # their stored tool call exactly like a tool_call_update
                # notification, in the order it was received".
                raw = converter.unstructure(tool_call)
                raw["sessionUpdate"] = "tool_call_update"
                self._apply(state, structure_update(raw), raw, _PERMISSION)
        else:
            tool_call_id = getattr(params, "tool_call_id", None)
        req = AgentRequest(
            ev.id,
            ev.method,
            params,
            sid,
            tool_call_id if isinstance(tool_call_id, str) else None,
            record=record,
        )
        self.agent_requests[ev.id] = req
        self._events.append(AgentRequestReceived(req))
