"""Our requests to the agent: the JSON-RPC engine and the one place they complete.

:class:`RequestBook` owns the :class:`~acp_lite.core.rpc.RpcEngine` (request ids,
the pending table, the outbox) and completes every request through
:meth:`RequestBook.complete`: its response, a dialect's synthesized answer (a v1
prompt answered at insertion) or the connection's end. A completion sets the
entry's ``result`` or ``error``, runs its method's handler (the response's side
effects on the models, ``core/_responses.py``) and reports it once
(:class:`~acp_lite.core.events.ResponseArrived`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, cast

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.core._dialect import Dialect
from acp_lite.core._reports import Reports
from acp_lite.core.events import CoreEvent, ResponseArrived
from acp_lite.core.records import PendingRequest
from acp_lite.core.rpc import ResponseReceived, RpcEngine
from acp_lite.core.v1_shapes import initialize_response as v1_initialize_response
from acp_lite.core.v1_shapes import is_v1_initialize
from acp_lite.errors import AcpError, ProtocolError, UnsupportedProtocolVersion, request_error_from
from acp_lite.protocol import METHODS, UNSET, ErrorObject, converter

__all__ = ["PROTOCOL_VERSION", "Handler", "Outcome", "RequestBook", "negotiate"]

PROTOCOL_VERSION = 2
"""The ACP protocol version this client speaks."""


@lazy_attrs.frozen
class Outcome:
    """How a request ends: its typed ``result`` or its ``error``, and the response
    that said so (``wire``; ``None`` when nothing on the wire did, yet)."""

    result: Any = None
    error: AcpError | None = None
    wire: ResponseReceived | None = None


#: A method's response handler: the side effects of ``outcome`` (may replace the
#: entry's result with an error, e.g. a session id already open).
Handler = Callable[[PendingRequest, Outcome], None]


class RequestBook:
    """Our pending requests and their completion (see the module doc)."""

    def __init__(
        self,
        rpc: RpcEngine,
        reports: Reports,
        emit: Callable[[CoreEvent], None],
        handlers: Mapping[str, Handler],
        *,
        protocol_version: int | Literal["auto"] = "auto",
    ) -> None:
        #: The JSON-RPC engine (ids, pending table, batches, outbox).
        self.rpc = rpc
        self._requested = protocol_version
        self._handlers = handlers
        self._reports = reports
        self._emit = emit

    def on_response(self, ev: ResponseReceived, dialect: Dialect) -> bool:
        """Complete the request ``ev`` answers (the dialect first: a v1 prompt's
        answer is the turn's end). ``True``: ``initialize`` was answered in v1."""
        entry = ev.pending
        if dialect.on_response(ev):
            return False
        if ev.error is not None:
            self.complete(entry, Outcome(error=self.error_of(entry, ev.error), wire=ev))
            return False
        result, v1 = ev.result, False
        if entry.method == "initialize":
            result, refused, v1 = negotiate(self._requested, result, self._reports.stderr_tail)
            if refused is not None:
                self.complete(entry, Outcome(error=refused, wire=ev))
                return False
        else:
            result = dialect.translate_result(entry, result)
        self.complete(entry, self.structured(entry, result, ev))
        return v1

    def complete(
        self,
        entry: PendingRequest,
        outcome: Outcome,
        *,
        effects: bool = True,
        report: bool = True,
    ) -> None:
        """End ``entry`` with ``outcome``; ``effects``: run its method's handler.

        Reported (:class:`ResponseArrived`, unless ``report`` is false) the first
        time only: a v1 prompt completed at insertion gets its final result later,
        with no second report.
        """
        first = not entry.done
        entry.done = True
        entry.result, entry.error = outcome.result, outcome.error
        if effects:
            handler = self._handlers.get(entry.method)
            if handler is not None:
                handler(entry, outcome)
        if first and report:
            self._emit(ResponseArrived(entry))

    def fail_all(self) -> list[PendingRequest]:
        """The connection ended: every pending request fails with its failure (not
        reported: the IO layer wakes what this returns). Returns them all."""
        failed = self.rpc.fail_all()
        for entry in failed:
            if entry.done:  # a v1 prompt answered at insertion keeps its result
                continue
            error = self._reports.failure_for(entry.method, entry.session_id)
            self.complete(entry, Outcome(error=error), effects=False, report=False)
        return failed

    def error_of(self, entry: PendingRequest, err: ErrorObject) -> AcpError:
        """The exception for an error response to ``entry`` (by code, then method)."""
        error = request_error_from(
            err.code,
            err.message,
            None if err.data is UNSET else err.data,
            method=entry.method,
            session_id=entry.session_id,
            stderr_tail=self._reports.stderr_tail(),
        )
        self._reports.name_auth_methods(error)
        return error

    def structured(self, entry: PendingRequest, result: Any, wire: ResponseReceived) -> Outcome:
        """The outcome of a success response: ``result`` structured with its method's
        typed class (the raw JSON value for a method the schema does not type)."""
        spec = METHODS.get(entry.method)
        cls = spec.result if spec is not None else None
        if cls is None:
            return Outcome(result, None, wire)
        try:
            # A wire class or union alias: a type form the converter dispatches on.
            typed: object = converter.structure(result, cast("type[object]", cls))
            return Outcome(typed, None, wire)
        except Exception as exc:
            error = ProtocolError(
                f"invalid {entry.method} result: {exc}",
                method=entry.method,
                session_id=entry.session_id,
                stderr_tail=self._reports.stderr_tail(),
            )
            return Outcome(None, error, wire)


def negotiate(
    requested: int | Literal["auto"], result: Any, stderr_tail: Callable[[], list[str]]
) -> tuple[Any, AcpError | None, bool]:
    """Check an ``initialize`` result: ``(result in the v2 shape, error, speaks v1)``.

    A v1 answer (by number or by shape) means v1, unless the caller asked for 2;
    asked for 1, a v2 answer is refused; any other version is refused.
    """
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    if requested != 2 and is_v1_initialize(result):
        return v1_initialize_response(result), None, True
    if requested == 1 and isinstance(result, dict):
        return (
            None,
            UnsupportedProtocolVersion(
                f"the agent answered protocol version {version!r} in the v2 shape; "
                "the connection was asked to speak 1",
                version=version,
                stderr_tail=stderr_tail(),
            ),
            False,
        )
    if isinstance(result, dict) and version != PROTOCOL_VERSION:
        return (
            None,
            UnsupportedProtocolVersion(
                _version_refusal(requested, version, result),
                version=version,
                stderr_tail=stderr_tail(),
            ),
            False,
        )
    return result, None, False


def _version_refusal(requested: int | Literal["auto"], version: object, result: Any) -> str:
    """Why an ``initialize`` answer is refused, naming what was wrong: the version
    asked for, or a number that contradicts the answer's shape."""
    speaks = (
        f"the connection was asked to speak {requested}"
        if requested != "auto"
        else f"acp_lite speaks versions {PROTOCOL_VERSION} and 1"
    )
    if version == 1 and requested != PROTOCOL_VERSION:
        # A 1 in the v2 shape (``info`` and no v1 field; core/v1_shapes.py): neither
        # a v1 answer (``agentInfo`` / ``agentCapabilities``) nor a v2 one (version 2).
        return (
            "the agent announced protocol version 1 but answered initialize in the v2 "
            "shape (`info`, not v1's `agentInfo` / `agentCapabilities`): neither a v1 "
            f"nor a v2 answer ({speaks})"
        )
    return f"the agent answered protocol version {version!r}; {speaks}"
