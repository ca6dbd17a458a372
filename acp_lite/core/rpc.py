"""Sans-IO JSON-RPC 2.0 engine for the client side of ACP.

The JSON-RPC layer of :class:`acp_lite.core.ClientConnection`: feed it decoded
messages, get events out; the lines it wants sent accumulate in an outbox
(:meth:`RpcEngine.data_to_send`), one line per message. No IO, no trio.

What it implements (JSON-RPC 2.0 sections 4-6):

* monotonic integer request ids, many requests in flight, responses matched by id;
* a response whose id matches nothing pending is an :class:`UnmatchedResponse`
  event, not an error that kills the connection;
* batches from the agent: every member is handled; the answers to the requests in a
  batch go back as one array once all of them are answered (JSON-RPC 2.0 section 6);
* ``$/cancel_request`` both ways: :meth:`RpcEngine.cancel_request` withdraws one of
  our requests; when the agent cancels one of its requests to us, the engine answers
  it at once and reports :class:`PeerCancelled`. The answer is -32800, except for
  ``session/request_permission``, answered with the ``cancelled`` outcome: the
  schema (RequestPermissionRequest, RequestPermissionOutcome) says "the client
  answers a cancelled request with the ``cancelled`` outcome", and the generic rule
  (docs-v2-draft/cancellation.mdx) allows "a valid response with ... a cancellation
  marker" instead of -32800;
* agent -> client requests for methods we do not handle are answered -32601.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.core.records import PendingRequest, RequestId
from acp_lite.errors import ProtocolError, TooManyPendingRequests
from acp_lite.protocol import (
    ErrorCode,
    ErrorObject,
    ErrorResponse,
    InvalidMessage,
    Notification,
    Request,
    Response,
    encode_message,
)

__all__ = [
    "CANCELLED_RESULTS",
    "CANCEL_REQUEST",
    "CLIENT_HANDLED_METHODS",
    "InvalidReceived",
    "NotificationReceived",
    "PeerCancelled",
    "PendingRequest",
    "RequestReceived",
    "ResponseReceived",
    "RpcEngine",
    "RpcEvent",
    "TooManyPendingRequests",
    "UnhandledRequest",
    "UnmatchedResponse",
]

CANCEL_REQUEST = "$/cancel_request"

#: Agent -> client requests a client implements; anything else gets -32601.
CLIENT_HANDLED_METHODS = frozenset({"session/request_permission", "elicitation/create"})

#: Results that answer a request the agent withdrew (others get -32800).
CANCELLED_RESULTS: dict[str, Any] = {
    "session/request_permission": {"outcome": {"outcome": "cancelled"}},
}

_METHOD_NOT_FOUND = ErrorCode.METHOD_NOT_FOUND
_INVALID_REQUEST = ErrorCode.INVALID_REQUEST
_PARSE_ERROR = ErrorCode.PARSE_ERROR
_REQUEST_CANCELLED = ErrorCode.REQUEST_CANCELLED


@lazy_attrs.frozen
class ResponseReceived:
    """The response to one of our requests: ``result`` or ``error`` (never both)."""

    pending: PendingRequest
    result: Any
    error: ErrorObject | None


@lazy_attrs.frozen
class UnmatchedResponse:
    """A response whose id matches no pending request (recorded, not fatal)."""

    message: Response | ErrorResponse


@lazy_attrs.frozen
class RequestReceived:
    """An agent -> client request to answer with :meth:`RpcEngine.respond`."""

    id: RequestId
    method: str
    params: Any
    message: Request


@lazy_attrs.frozen
class UnhandledRequest:
    """An agent request for a method we do not implement; already answered -32601."""

    id: RequestId
    method: str


@lazy_attrs.frozen
class PeerCancelled:
    """The agent withdrew its request ``id``; the engine already answered it."""

    id: RequestId
    method: str


@lazy_attrs.frozen
class NotificationReceived:
    """A notification (other than ``$/cancel_request``)."""

    message: Notification


@lazy_attrs.frozen
class InvalidReceived:
    """A line or batch member that is not a valid message (``error`` explains)."""

    message: InvalidMessage
    error: ProtocolError


RpcEvent = (
    ResponseReceived
    | UnmatchedResponse
    | RequestReceived
    | PeerCancelled
    | UnhandledRequest
    | NotificationReceived
    | InvalidReceived
)


@lazy_attrs.define(eq=False)
class _Batch:
    """Answers to the requests of one incoming batch, sent together."""

    open: int = 0
    closed: bool = False  # all members were processed
    answers: list[Response | ErrorResponse] = attrs.Factory(list)


@lazy_attrs.define(eq=False)
class _Incoming:
    method: str
    batch: _Batch | None


class RpcEngine:
    """JSON-RPC bookkeeping for one connection (client side)."""

    def __init__(
        self,
        *,
        max_pending: int = 1024,
        handled_methods: Iterable[str] = CLIENT_HANDLED_METHODS,
    ) -> None:
        self.max_pending = max_pending
        self.handled_methods = frozenset(handled_methods)
        self._last_id = 0
        self.pending: dict[int, PendingRequest] = {}
        self._incoming: dict[Any, _Incoming] = {}
        self._outbox: list[bytes] = []

    # -- sending -----------------------------------------------------------------

    def request(self, method: str, params: Any, *, session_id: str | None = None) -> PendingRequest:
        """Queue a request; the returned entry stays pending until its response."""
        if len(self.pending) >= self.max_pending:
            raise TooManyPendingRequests(
                f"{len(self.pending)} requests already await a response "
                f"(Limits.max_pending_requests={self.max_pending})",
                method=method,
                session_id=session_id,
            )
        self._last_id += 1
        entry = PendingRequest(self._last_id, method, session_id)
        self._outbox.append(encode_message(Request(entry.id, method, params)))
        self.pending[entry.id] = entry
        return entry

    def notify(self, method: str, params: Any) -> None:
        """Queue a notification."""
        self._outbox.append(encode_message(Notification(method, params)))

    def cancel_request(self, request_id: int) -> bool:
        """Queue ``$/cancel_request`` for one of our pending requests.

        The entry stays pending: the agent still answers it (-32800, or a result
        when it was too late to withdraw, e.g. a prompt already inserted).
        """
        entry = self.pending.get(request_id)
        if entry is None or entry.cancel_sent:
            return False
        entry.cancel_sent = True
        self.notify(CANCEL_REQUEST, {"requestId": request_id})
        return True

    def fail_all(self) -> list[PendingRequest]:
        """Remove and return every pending request (the connection is gone)."""
        entries = list(self.pending.values())
        self.pending.clear()
        return entries

    def respond(self, request_id: RequestId, result: Any) -> bool:
        """Answer an agent request; ``False`` if it is no longer open (e.g. cancelled)."""
        return self._answer(request_id, Response(request_id, result))

    def respond_error(
        self, request_id: RequestId, code: int, message: str, data: Any = None
    ) -> bool:
        """Answer an agent request with an error; ``False`` if it is no longer open."""
        return self._answer(request_id, ErrorResponse(request_id, _error(code, message, data)))

    def data_to_send(self) -> list[bytes]:
        """Take the queued lines (each ends with ``\\n``)."""
        out = self._outbox
        self._outbox = []
        return out

    # -- receiving ---------------------------------------------------------------

    def receive(self, message: Any) -> list[RpcEvent]:
        """Handle one decoded line: a message or a batch (list of messages)."""
        events: list[RpcEvent] = []
        if isinstance(message, list):
            batch = _Batch()
            for member in message:
                self._receive_one(member, events, batch)
            batch.closed = True
            self._flush_batch(batch)
        else:
            self._receive_one(message, events, None)
        return events

    def _receive_one(self, msg: Any, events: list[RpcEvent], batch: _Batch | None) -> None:
        cls = msg.__class__
        if cls is Notification:
            if msg.method == CANCEL_REQUEST:
                self._peer_cancel(msg, events)
            else:
                events.append(NotificationReceived(msg))
        elif cls is Response or cls is ErrorResponse:
            entry = self.pending.pop(msg.id, None) if _hashable(msg.id) else None
            if entry is None:
                events.append(UnmatchedResponse(msg))
            elif cls is Response:
                events.append(ResponseReceived(entry, msg.result, None))
            else:
                events.append(ResponseReceived(entry, None, msg.error))
        elif cls is Request:
            self._receive_request(msg, events, batch)
        elif cls is InvalidMessage:
            self._receive_invalid(msg, events, batch)
        else:  # pragma: no cover - decode_line returns only the classes above
            raise TypeError(f"not a decoded JSON-RPC message: {msg!r}")

    def _receive_request(self, msg: Request, events: list[RpcEvent], batch: _Batch | None) -> None:
        rid = msg.id
        if not _hashable(rid) or rid in self._incoming:
            why = "duplicate request id" if _hashable(rid) else "invalid request id"
            self._send_or_batch(
                ErrorResponse(None, _error(_INVALID_REQUEST, why, {"id": rid})), batch
            )
            return
        if msg.method not in self.handled_methods:
            self._send_or_batch(
                ErrorResponse(
                    rid,
                    _error(_METHOD_NOT_FOUND, "Method not found", {"method": msg.method}),
                ),
                batch,
            )
            events.append(UnhandledRequest(rid, msg.method))
            return
        self._incoming[rid] = _Incoming(msg.method, batch)
        if batch is not None:
            batch.open += 1
        events.append(RequestReceived(rid, msg.method, msg.params, msg))

    def _receive_invalid(
        self, msg: InvalidMessage, events: list[RpcEvent], batch: _Batch | None
    ) -> None:
        error = msg.error
        events.append(
            InvalidReceived(
                msg,
                ProtocolError(
                    f"invalid message from agent: {error.message} (code {error.code})",
                    method=_method_of(msg.raw),
                ),
            )
        )
        # Answer what looks like a request (JSON-RPC 2.0 section 5). A line that is
        # not JSON at all is usually a stray log line: recorded, not answered.
        raw = msg.raw
        if error.code == _PARSE_ERROR or (
            isinstance(raw, dict) and ("result" in raw or "error" in raw) and "method" not in raw
        ):
            return
        if isinstance(raw, dict) and "id" not in raw and "method" in raw:
            return  # an invalid notification: never answered
        rid: RequestId | None = msg.id
        if not _hashable(rid) or rid in self._incoming:
            rid = None
        self._send_or_batch(ErrorResponse(rid, error), batch)

    def _peer_cancel(self, msg: Notification, events: list[RpcEvent]) -> None:
        params = msg.params
        rid = getattr(params, "request_id", None)
        if rid is None and isinstance(params, dict):
            rid = params.get("requestId")
        if not isinstance(rid, int | str):
            return
        incoming = self._incoming.get(rid)
        if incoming is None:
            return  # already answered or never seen: nothing to do (spec: cancellation)
        if incoming.method in CANCELLED_RESULTS:
            self._answer(rid, Response(rid, CANCELLED_RESULTS[incoming.method]))
        else:
            self._answer(
                rid, ErrorResponse(rid, _error(_REQUEST_CANCELLED, "Request cancelled", None))
            )
        events.append(PeerCancelled(rid, incoming.method))

    # -- answers -----------------------------------------------------------------

    def _answer(self, rid: RequestId, answer: Response | ErrorResponse) -> bool:
        if not _hashable(rid):
            return False
        incoming = self._incoming.pop(rid, None)
        if incoming is None:
            return False
        batch = incoming.batch
        if batch is None:
            self._outbox.append(encode_message(answer))
        else:
            batch.open -= 1
            batch.answers.append(answer)
            self._flush_batch(batch)
        return True

    def _send_or_batch(self, answer: Response | ErrorResponse, batch: _Batch | None) -> None:
        if batch is None:
            self._outbox.append(encode_message(answer))
        else:
            batch.answers.append(answer)

    def _flush_batch(self, batch: _Batch) -> None:
        if not batch.closed or batch.open or not batch.answers:
            return
        answers: list[Any] = batch.answers
        batch.answers = []
        self._outbox.append(encode_message(answers))


def _error(code: int, message: str, data: Any) -> ErrorObject:
    if data is None:
        return ErrorObject(code, message)
    return ErrorObject(code, message, data)


def _hashable(value: Any) -> bool:
    # ACP request ids are strings or integers (schema RequestId; never null).
    return isinstance(value, int | str) and not isinstance(value, bool)


def _method_of(raw: Any) -> str | None:
    if isinstance(raw, dict):
        method = raw.get("method")
        if isinstance(method, str):
            return method
    return None
