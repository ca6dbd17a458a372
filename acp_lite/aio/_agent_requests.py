"""Deciding agent -> client requests: ``session/request_permission``, ``elicitation/create``.

Order of deciders: the per-connection callable (``on_permission`` /
``on_elicitation``), then the pluggy hook implementations from ``plugins``, then
the default policy (:func:`acp_lite.permissions.reject_once`,
:func:`acp_lite.permissions.decline`). User code may block, so the pump always
calls :meth:`AgentRequestDecider.decide` in a worker thread, never on the trio
thread (it would stall the reader and, through pipe back-pressure, the agent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_lite import permissions
from acp_lite.core import AgentRequest
from acp_lite.protocol import converter

if TYPE_CHECKING:
    import pluggy

__all__ = ["AgentRequestDecider"]

_PERMISSION = "session/request_permission"


class AgentRequestDecider:
    """Turns an agent request into the result to answer it with (runs user code)."""

    def __init__(
        self,
        pm: pluggy.PluginManager | None,
        on_permission: Callable[[Any, Any], Any] | None,
        on_elicitation: Callable[[Any, Any], Any] | None,
    ) -> None:
        self.pm = pm
        self.on_permission = on_permission
        self.on_elicitation = on_elicitation

    def decide(self, req: AgentRequest, session: Any) -> Any:
        """The wire result for ``req`` (called in a worker thread); ``session`` is
        what callbacks receive as the session (``None`` if unknown)."""
        if req.method == _PERMISSION:
            return self._decide_permission(req.params, session)
        return self._decide_elicitation(req.params, session)

    def _decide_permission(self, request: Any, session: Any) -> Any:
        if self.on_permission is not None:
            answer, source = self.on_permission(request, session), "on_permission"
        else:
            answer, source = None, "the acp_permission_request hook"
            if self.pm is not None:
                answer = self.pm.hook.acp_permission_request(request=request, session=session)
            if answer is None:
                answer, source = permissions.reject_once(request, session), "reject_once"
        outcome = permissions.permission_outcome(answer)
        chosen = outcome.get("optionId")
        offered = [getattr(o, "option_id", None) for o in getattr(request, "options", ())]
        if chosen is not None and chosen not in offered:
            # Never sent unchecked: the handler has a bug, and the agent must not
            # act on a choice the user was never offered. Raised here, it is the
            # callback failure path: logged with its traceback, a callback_error
            # in client.events, and the agent answered -32603.
            raise ValueError(
                f"{source} returned option id {chosen!r}, which the permission request "
                f"did not offer (offered: {', '.join(map(repr, offered)) or 'none'})"
            )
        return {"outcome": outcome}

    def _decide_elicitation(self, request: Any, session: Any) -> Any:
        answer: Any = None
        if self.on_elicitation is not None:
            answer = self.on_elicitation(request, session)
        elif self.pm is not None:
            answer = self.pm.hook.acp_elicitation_request(request=request, session=session)
        if answer is None:
            answer = permissions.decline(request, session)
        return answer if isinstance(answer, dict) else converter.unstructure(answer)
