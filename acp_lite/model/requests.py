"""Agent -> client requests about a session, and the answers the client gave.

The agent asks the client (``session/request_permission``, ``elicitation/create``);
these are not updates the agent streamed, so they are not in the event log. The
model keeps one record per request, placed in the stream by ``event_index`` (the
request arrived after ``events[:event_index]``), and the connection fills in the
answer when it sends it. Records are mutable (the answer comes later); treat them
as read-only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import attrs

from acp_lite.protocol import (
    CreateElicitationRequest,
    CreateElicitationResponse,
    PermissionOption,
    RequestPermissionRequest,
    RequestPermissionResponse,
    converter,
)

__all__ = [
    "AgentRequestRecord",
    "ElicitationRecord",
    "PermissionRequestRecord",
    "RequestLog",
    "RequestStatus",
]

PERMISSION = "session/request_permission"
ELICITATION = "elicitation/create"

RequestStatus = str
"""``"pending"`` (not answered yet, or never: the connection ended first),
``"answered"``, ``"failed"`` (answered with a JSON-RPC error: a callback raised) or
``"withdrawn"`` (the agent sent ``$/cancel_request`` first)."""


@attrs.define(eq=False)
class AgentRequestRecord:
    """One request the agent sent about this session, and how it was answered.

    ``params`` is the typed request (``RequestPermissionRequest`` /
    ``CreateElicitationRequest``), ``raw`` its params as received. ``event_index``
    places it in the stream: it arrived after ``SessionModel.events[:event_index]``.
    ``result`` is the wire result the client sent (a dict), ``error`` the JSON-RPC
    error object (``{"code", "message"}``) when it answered with an error.
    """

    id: int | str
    method: str
    params: RequestPermissionRequest | CreateElicitationRequest
    raw: dict[str, Any] = attrs.field(repr=False)
    event_index: int
    time: float = attrs.field(repr=False)
    status: RequestStatus = "pending"
    result: dict[str, object] | None = None
    error: dict[str, object] | None = None

    @property
    def answered(self) -> bool:
        """``True`` once the client sent a result (``status == "answered"``)."""
        return self.status == "answered"

    # The connection settles a record when it answers (or the agent withdraws) the
    # request; each is a no-op once the record is settled, so a late second outcome
    # (an answer racing a withdrawal) cannot overwrite the first.

    def mark_answered(self, result: dict[str, object]) -> None:
        """Record that the client sent ``result`` (called by the connection)."""
        if self.status == "pending":
            self.status, self.result = "answered", result

    def mark_failed(self, code: int, message: str) -> None:
        """Record that the client answered with an error (called by the connection)."""
        if self.status == "pending":
            self.status, self.error = "failed", {"code": code, "message": message}

    def mark_withdrawn(self) -> None:
        """Record that the agent withdrew the request (called by the connection)."""
        if self.status == "pending":
            self.status = "withdrawn"


@attrs.define(eq=False)
class PermissionRequestRecord(AgentRequestRecord):
    """A ``session/request_permission`` and the outcome sent.

    ``tool_call_id`` names the tool call it asks about (its ``toolCall`` is applied
    to the model's tool call, spec ``ToolCallPermissionSubject``); ``outcome`` is
    ``"selected"`` or ``"cancelled"`` (``None`` until answered), ``option_id`` /
    ``option`` the selected ``PermissionOption``.
    """

    @property
    def title(self) -> str:
        """The permission prompt's title."""
        return str(getattr(self.params, "title", "") or "")

    @property
    def tool_call_id(self) -> str | None:
        """The id of the tool call the request is about, if any."""
        call = getattr(getattr(self.params, "subject", None), "tool_call", None)
        value = getattr(call, "tool_call_id", None)
        return value if isinstance(value, str) else None

    @property
    def options(self) -> list[PermissionOption]:
        """The offered ``PermissionOption`` s (``option_id``, ``name``, ``kind``)."""
        return list(getattr(self.params, "options", None) or ())

    @property
    def response(self) -> RequestPermissionResponse | None:
        """The typed answer (``None`` until answered)."""
        if self.result is None:
            return None
        response: RequestPermissionResponse = converter.structure(
            self.result, RequestPermissionResponse
        )
        return response

    @property
    def outcome(self) -> str | None:
        """``"selected"`` / ``"cancelled"``, or ``None`` until answered."""
        outcome = (self.result or {}).get("outcome")
        value = outcome.get("outcome") if isinstance(outcome, dict) else None
        return value if isinstance(value, str) else None

    @property
    def option_id(self) -> str | None:
        """The selected option's id (``None`` unless the outcome is ``selected``)."""
        outcome = (self.result or {}).get("outcome")
        value = outcome.get("optionId") if isinstance(outcome, dict) else None
        return value if isinstance(value, str) else None

    @property
    def option(self) -> PermissionOption | None:
        """The selected ``PermissionOption`` (``None`` unless one was selected)."""
        chosen = self.option_id
        return next((o for o in self.options if o.option_id == chosen), None)


@attrs.define(eq=False)
class ElicitationRecord(AgentRequestRecord):
    """An ``elicitation/create`` and the action sent (``accept`` with ``content``,
    ``decline`` or ``cancel``)."""

    @property
    def message(self) -> str:
        """What the agent asks for."""
        return str(getattr(self.params, "message", "") or "")

    @property
    def response(self) -> CreateElicitationResponse | None:
        """The typed answer (``None`` until answered)."""
        if self.result is None:
            return None
        response: CreateElicitationResponse = converter.structure(
            self.result, CreateElicitationResponse
        )
        return response

    @property
    def action(self) -> str | None:
        """``"accept"`` / ``"decline"`` / ``"cancel"``, or ``None`` until answered."""
        value = (self.result or {}).get("action")
        return value if isinstance(value, str) else None

    @property
    def content(self) -> dict[str, object] | None:
        """The content sent with ``accept`` (``None`` otherwise)."""
        value = (self.result or {}).get("content")
        return value if isinstance(value, dict) else None


class RequestLog(Sequence[AgentRequestRecord]):
    """The session's agent requests, in receive order (``SessionModel.requests``)."""

    __slots__ = ("_records",)

    def __init__(self) -> None:
        self._records: list[AgentRequestRecord] = []

    def add(
        self,
        request_id: int | str,
        method: str,
        params: RequestPermissionRequest | CreateElicitationRequest,
        raw: dict[str, Any],
        event_index: int,
        time: float,
    ) -> AgentRequestRecord:
        """Record a request just received (the connection calls this)."""
        cls: type[AgentRequestRecord] = AgentRequestRecord
        if method == PERMISSION:
            cls = PermissionRequestRecord
        elif method == ELICITATION:
            cls = ElicitationRecord
        record = cls(request_id, method, params, raw, event_index, time)
        self._records.append(record)
        return record

    def between(self, start: int, stop: int) -> list[AgentRequestRecord]:
        """The requests received after event ``start - 1`` and before event ``stop``."""
        return [r for r in self._records if start <= r.event_index < stop]

    @property
    def permissions(self) -> list[PermissionRequestRecord]:
        """The permission requests, in order."""
        return [r for r in self._records if isinstance(r, PermissionRequestRecord)]

    @property
    def elicitations(self) -> list[ElicitationRecord]:
        """The elicitation requests, in order."""
        return [r for r in self._records if isinstance(r, ElicitationRecord)]

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, index: int) -> AgentRequestRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[AgentRequestRecord]: ...
    def __getitem__(self, index: int | slice) -> AgentRequestRecord | list[AgentRequestRecord]:
        return self._records[index]

    def __iter__(self) -> Iterator[AgentRequestRecord]:
        return iter(self._records)

    def __repr__(self) -> str:
        return f"<RequestLog {len(self._records)} requests>"
