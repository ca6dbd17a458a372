"""The agent's requests to the client, in the core: their lifecycle and side effects.

:class:`AgentRequests` owns the agent's requests the client has not answered yet
(``ClientConnection.agent_requests``): a request is recorded on its session's
model and announced as :class:`~acp_lite.core.events.AgentRequestReceived`; the IO
layer decides it and answers through :meth:`AgentRequests.respond` /
:meth:`AgentRequests.respond_error`; ``session/cancel`` answers the cancelled
work's permission requests itself, and the agent's ``$/cancel_request`` or the
connection's end withdraws them (:class:`~acp_lite.core.events.AgentRequestWithdrawn`).
"""

from __future__ import annotations

from collections.abc import Callable
from time import monotonic
from typing import Any

from acp_lite.core._reports import Reports
from acp_lite.core._router import SessionRouter
from acp_lite.core.events import AgentRequestReceived, AgentRequestWithdrawn, CoreEvent
from acp_lite.core.records import AgentRequest, Refusal, RequestId
from acp_lite.core.rpc import (
    CANCELLED_RESULTS,
    CLIENT_HANDLED_METHODS,
    PeerCancelled,
    RequestReceived,
    RpcEngine,
)
from acp_lite.model.state import background_key
from acp_lite.protocol import converter, structure_update

__all__ = ["AgentRequests"]

_PERMISSION = "session/request_permission"


class AgentRequests:
    """Agent -> client requests (see the module doc)."""

    def __init__(
        self,
        rpc: RpcEngine,
        router: SessionRouter,
        reports: Reports,
        emit: Callable[[CoreEvent], None],
        refuse: Callable[[object, object], Refusal | None] | None = None,
    ) -> None:
        #: The agent's requests not answered yet, by id.
        self.open: dict[RequestId, AgentRequest] = {}
        self._rpc = rpc
        self._router = router
        self._reports = reports
        self._emit = emit
        # The dialect's say on permission requests no handler can answer rightly.
        self._refuse = refuse
        # Sessions whose foreground work we cancelled -> the latest idle then: until
        # the next idle, their new permission requests belong to the cancelled work.
        self._cancelled_work: dict[str, int] = {}

    def cancel(self, session_id: str) -> list[AgentRequest]:
        """Send ``session/cancel``, set the model's cancel hint, and answer the
        session's permission requests for foreground work ``cancelled``.

        Spec (prompt lifecycle, "Cancellation"): the client MAY answer a request it
        knows belongs to the cancelled work with the ``cancelled`` outcome;
        requests for work in the latest background list are not affected. Returns
        the agent requests answered (the IO layer stops deciding them).
        """
        state = self._router.session(session_id, "session/cancel")
        state.model.cancel_sent()
        self._reports.check(method="session/cancel")
        self._rpc.notify("session/cancel", {"sessionId": session_id})
        if not state.model.is_idle:
            self._cancelled_work[session_id] = state.model.last_idle_index
        listed = {background_key(item) for item in state.model.background or ()}
        answered: list[AgentRequest] = []
        for rid, req in list(self.open.items()):
            if req.method != _PERMISSION or req.session_id != session_id:
                continue
            if req.tool_call_id is not None and ("tool_call", req.tool_call_id) in listed:
                continue
            self.respond(rid, CANCELLED_RESULTS[_PERMISSION])
            answered.append(req)
        self._router.touch(state)
        return answered

    def prompt_sent(self, session_id: str) -> None:
        """A new prompt: work from now on is not the cancelled work."""
        self._cancelled_work.pop(session_id, None)

    def _for_cancelled_work(self, state: Any, sid: str | None, tool_call_id: Any) -> bool:
        """Whether a permission request arriving now belongs to work we cancelled.

        Spec (tool calls, "Requesting permission"): "If the current active work
        gets cancelled, the Client MUST respond with the cancelled outcome"; that
        holds for a request the agent sent before it saw our ``session/cancel``.
        Requests for work in the latest background list are not affected.
        """
        if sid is None or sid not in self._cancelled_work or state is None:
            return False
        if state.model.last_idle_index != self._cancelled_work[sid]:
            del self._cancelled_work[sid]  # idle since: the cancelled work has ended
            return False
        listed = {background_key(item) for item in state.model.background or ()}
        return not (isinstance(tool_call_id, str) and ("tool_call", tool_call_id) in listed)

    def respond(self, request_id: RequestId, result: Any) -> bool:
        """Answer an agent request; ``False`` if it is no longer open."""
        req = self.open.pop(request_id, None)
        sent = self._rpc.respond(request_id, result)
        if sent and req is not None and req.record is not None:
            req.record.mark_answered(
                result if isinstance(result, dict) else converter.unstructure(result)
            )
        return sent

    def respond_error(
        self, request_id: RequestId, code: int, message: str, data: Any = None
    ) -> bool:
        """Answer an agent request with an error; ``False`` if it is no longer open."""
        req = self.open.pop(request_id, None)
        sent = self._rpc.respond_error(request_id, code, message, data)
        if sent and req is not None and req.record is not None:
            req.record.mark_failed(code, message)
        return sent

    def withdrawn(self, ev: PeerCancelled) -> None:
        """The agent withdrew its request (the RPC engine answered it already)."""
        req = self.open.pop(ev.id, None)
        if req is not None:
            if req.record is not None:
                req.record.mark_withdrawn()
            self._emit(AgentRequestWithdrawn(req))
        self._reports.log_event("agent_cancelled_request", data=ev)

    def withdraw_all(self) -> None:
        """The connection ended: no open request will be answered."""
        for req in self.open.values():
            self._emit(AgentRequestWithdrawn(req))
        self.open.clear()

    def received(self, ev: RequestReceived) -> None:
        """A request from the agent: record it, apply what it carries, announce it."""
        params = ev.params
        sid = getattr(params, "session_id", None)
        if not isinstance(sid, str):
            # A request-scoped elicitation names one of our requests instead.
            rid = getattr(params, "request_id", None)
            pending = self._rpc.pending.get(rid) if isinstance(rid, int) else None
            sid = pending.session_id if pending is not None else None
        state = self._router.sessions.get(sid) if sid is not None else None
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
                self._router.apply(state, structure_update(raw), raw, _PERMISSION)
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
        self.open[ev.id] = req
        if ev.method == _PERMISSION and self._for_cancelled_work(state, sid, tool_call_id):
            self._reports.log_event(
                "agent_request_refused",
                data={"id": ev.id, "message": "the work was cancelled", "code": None},
                method=ev.method,
                session_id=sid,
            )
            self.respond(ev.id, CANCELLED_RESULTS[_PERMISSION])
            return
        refusal = (
            self._refuse(sid, params)
            if ev.method == _PERMISSION and self._refuse is not None
            else None
        )
        if refusal is None:
            self._emit(AgentRequestReceived(req))
            return
        # Answered here; the handlers never see it.
        self._reports.log_event(
            "agent_request_refused",
            data={"id": ev.id, "message": refusal.message, "code": refusal.code},
            method=ev.method,
            session_id=sid,
        )
        if refusal.code is None:
            self.respond(ev.id, CANCELLED_RESULTS[_PERMISSION])
        else:
            self.respond_error(ev.id, refusal.code, refusal.message)
