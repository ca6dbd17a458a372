"""``Turn``: what one ``Session.run(content)`` produced. Plain data, sans-IO.

Shared by the blocking ``Session.run`` and ``AsyncSession.run`` (both return it).
A post-insertion failure is *not* an exception: the agent reports it as an idle
``state_update`` with ``stopReason: "error"`` (spec: prompt lifecycle, "Failures"),
and it lands here as ``stop_reason`` / ``error``. Call :meth:`Turn.raise_for_stop`
to turn anything but a normal end into :class:`TurnFailed`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.errors import TurnFailed
from acp_lite.protocol.constants import END_TURN

if TYPE_CHECKING:
    from acp_lite.model.entities import ToolCallEntity
    from acp_lite.model.events import Event
    from acp_lite.model.requests import (
        AgentRequestRecord,
        ElicitationRecord,
        PermissionRequestRecord,
    )
    from acp_lite.model.submissions import Submission
    from acp_lite.protocol import Error, ErrorObject

__all__ = ["Turn", "TurnFailed"]


@lazy_attrs.frozen(kw_only=True)
class Turn:
    """The outcome of a prompt and the foreground work that followed its insertion.

    * ``submission``: the model's ``Submission`` (request id, status, message id ...).
    * ``message_id``: the inserted user message's id (from the prompt response).
    * ``updates``: the updates the agent streamed from sending the prompt to the idle
      that ended this work (model ``Event`` objects, in receive order). The tool call
      a permission request carries is applied to ``session.model`` but is not an
      update the agent sent: it is not here (see ``permission_requests``).
      ``assert turn.updates == acp_snapshot`` snapshots them, with the agent's
      requests and the answers given in their place in the stream.
    * ``stop_reason``: the idle's stop reason (``None`` if the agent reported none).
    * ``error``: the idle's ``error`` object when ``stop_reason == "error"``, else ``None``.
    * ``text``: the agent message text of that work.
    * ``requests``: the agent's requests during that work, with the answers sent
      (``acp_lite.model.AgentRequestRecord``), in receive order;
      ``permission_requests`` (``PermissionRequestRecord``: ``title``,
      ``tool_call_id``, ``options``, ``outcome``, ``option_id``, ``option``,
      ``status``) and ``elicitations`` (``ElicitationRecord``: ``message``,
      ``action``, ``content``, ``status``) are those of each kind.
    * ``tool_calls``: the tool calls (``acp_lite.model.ToolCallEntity``, as in
      ``session.model.tool_calls``) this work created or updated, in timeline order.
    """

    submission: Submission
    message_id: str | None
    updates: Sequence[Event] = ()
    stop_reason: str | None = None
    error: Error | ErrorObject | None = None
    text: str = ""
    session_id: str | None = None
    requests: Sequence[AgentRequestRecord] = ()
    permission_requests: Sequence[PermissionRequestRecord] = ()
    elicitations: Sequence[ElicitationRecord] = ()
    tool_calls: Sequence[ToolCallEntity] = ()

    @property
    def ok(self) -> bool:
        """``True`` when the work ended with ``end_turn``."""
        return self.stop_reason == END_TURN

    def raise_for_stop(self, ok: Collection[str] = (END_TURN,)) -> Turn:
        """Raise :class:`TurnFailed` unless ``stop_reason`` is in ``ok``; return ``self``.

        ``turn = session.run("hi").raise_for_stop()``. Pass e.g.
        ``ok=("end_turn", "cancelled")`` to accept a cancellation you asked for.
        """
        if self.stop_reason in ok:
            return self
        detail = ""
        if self.error is not None:
            message = getattr(self.error, "message", None)
            if message is None and isinstance(self.error, dict):
                message = self.error.get("message")
            code = getattr(self.error, "code", None)
            if code is None and isinstance(self.error, dict):
                code = self.error.get("code")
            detail = f": {message} (code {code})" if code is not None else f": {message}"
        raise TurnFailed(
            f"turn for message {self.message_id!r} ended with stop reason "
            f"{self.stop_reason!r}{detail}",
            turn=self,
            session_id=self.session_id,
        )

    def __repr__(self) -> str:
        # Keep reprs short: ``updates`` can hold hundreds of thousands of events.
        text = self.text if len(self.text) <= 60 else self.text[:57] + "..."
        return (
            f"Turn(message_id={self.message_id!r}, stop_reason={self.stop_reason!r}, "
            f"updates={len(self.updates)}, text={text!r})"
        )
