"""Faults of the reference agent: JSON-RPC and extensibility (v2)."""

from __future__ import annotations

from typing import Any

from acp_lite.testing._wire import encode
from acp_lite.testing.faults._base import Fault, FaultState, fault

__all__: list[str] = []

METHOD_NOT_FOUND = -32601


@fault("unknown-method-internal-error", "answers an unknown method with -32603, not -32601")
class UnknownMethodInternalError(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = message.get("error") if isinstance(message, dict) else None
        if isinstance(error, dict) and error.get("code") == METHOD_NOT_FOUND:
            return [{**message, "error": {**error, "code": -32603}}]
        return [message]


def _is_response(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message and "id" in message


def _error_code(message: Any) -> Any:
    error = message.get("error") if isinstance(message, dict) else None
    return error.get("code") if isinstance(error, dict) else None


@fault("batch-answered-one-by-one", "answers each request of a batch on its own line")
class BatchAnsweredOneByOne(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        # Raw bytes are written line by line, so a batch's members leave the array.
        return [encode(message)] if _is_response(message) else [message]


@fault("notifications-answered", "answers every `_` notification with an id-null result")
class NotificationsAnswered(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        method = message.get("method") if isinstance(message, dict) else None
        if isinstance(method, str) and method.startswith("_") and "id" not in message:
            state.send({"jsonrpc": "2.0", "id": None, "result": {}})
        return [message]


@fault("empty-batch-answered-with-array", "answers an empty batch with an array")
class EmptyBatchAnsweredWithArray(Fault):
    """Wraps every id-null -32600 in an array. NB: the fault wire itself drops an
    empty batch line (``FaultWire.incoming_lines`` keeps a batch only when members
    remain), so under any fault the agent never sees ``[]`` and does not answer."""

    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _error_code(message) == -32600 and message.get("id") is None:
            return [[message]]
        return [message]


@fault("parse-error-invalid-request", "answers invalid JSON with -32600, not -32700")
class ParseErrorInvalidRequest(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _error_code(message) == -32700:
            return [{**message, "error": {**message["error"], "code": -32600}}]
        return [message]


@fault("method-coerced-to-string", "reads a non-string method as its string form")
class MethodCoercedToString(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if (
            isinstance(message, dict)
            and "method" in message
            and not isinstance(message["method"], str)
        ):
            return [{**message, "method": str(message["method"])}]
        return [message]


@fault("missing-jsonrpc-accepted", 'accepts messages without "jsonrpc": "2.0"')
class MissingJsonrpcAccepted(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if isinstance(message, dict) and "jsonrpc" not in message:
            return [{"jsonrpc": "2.0", **message}]
        return [message]


@fault("invalid-batch-entry-dropped", "drops invalid batch entries without an answer")
class InvalidBatchEntryDropped(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        return [message] if isinstance(message, dict) else []


@fault("numeric-string-id-as-number", "answers a numeric string id with a number")
class NumericStringIdAsNumber(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _is_response(message):
            rid = message.get("id")
            if isinstance(rid, str) and rid.isdigit():
                return [{**message, "id": int(rid)}]
        return [message]


@fault("unknown-method-empty-result", "answers unknown non-`_` methods with an empty result")
class UnknownMethodEmptyResult(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _error_code(message) == METHOD_NOT_FOUND:
            method = state.method_of(message)
            if method is not None and not method.startswith("_"):
                return [{"jsonrpc": "2.0", "id": message.get("id"), "result": {}}]
        return [message]


@fault("session-new-default-cwd", "session/new without cwd opens a session in /")
class SessionNewDefaultCwd(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if isinstance(message, dict) and message.get("method") == "session/new":
            params = message.get("params")
            if isinstance(params, dict) and "cwd" not in params:
                return [{**message, "params": {**params, "cwd": "/"}}]
        return [message]


@fault("cancel-unknown-answered", "answers $/cancel_request of an unknown id with -32800")
class CancelUnknownAnswered(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if isinstance(message, dict) and message.get("method") == "$/cancel_request":
            params = message.get("params")
            rid = params.get("requestId") if isinstance(params, dict) else None
            with state.lock:
                known = rid in state.methods
            if not known:
                error = {"code": -32800, "message": "Request cancelled"}
                state.send({"jsonrpc": "2.0", "id": rid, "error": error})
        return [message]


@fault("invalid-notification-answered", "answers an unknown non-`_` notification with -32601")
class InvalidNotificationAnswered(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        method = message.get("method") if isinstance(message, dict) else None
        if (
            isinstance(method, str)
            and "id" not in message
            and not method.startswith(("_", "$/", "session/"))
        ):
            error = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
            state.send({"jsonrpc": "2.0", "id": None, "error": error})
        return [message]


@fault("falsy-id-as-null", "answers request id 0 with id null (an `id or None` bug)")
class FalsyIdAsNull(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _is_response(message) and message.get("id") == 0:
            return [{**message, "id": None}]
        return [message]


@fault("large-id-as-double", "rounds integer ids through a double (JavaScript numbers)")
class LargeIdAsDouble(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        rid = message.get("id") if _is_response(message) else None
        if isinstance(rid, int) and not isinstance(rid, bool) and abs(rid) > 2**53:
            return [{**message, "id": int(float(rid))}]
        return [message]
