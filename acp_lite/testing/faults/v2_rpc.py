"""Faults of the reference agent: JSON-RPC and extensibility (v2)."""

from __future__ import annotations

from typing import Any

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
