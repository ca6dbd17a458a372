"""Faults of the reference agent: the v2 prompt lifecycle (see :mod:`._base`)."""

from __future__ import annotations

from typing import Any

from acp_lite.testing.faults._base import Fault, FaultState, fault
from acp_lite.testing.faults.v2_session import CloseHeldPromptInternalError

__all__: list[str] = []

_KNOWN_BLOCKS = {"text", "resource_link", "resource"}


def _prompt_result(state: FaultState, message: Any) -> dict[str, Any] | None:
    result = message.get("result") if isinstance(message, dict) else None
    if isinstance(result, dict) and state.method_of(message) == "session/prompt":
        return result
    return None


def _update(message: Any) -> dict[str, Any] | None:
    if isinstance(message, dict) and message.get("method") == "session/update":
        update = (message.get("params") or {}).get("update")
        return update if isinstance(update, dict) else None
    return None


def _with_update(message: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    return {**message, "params": {**message["params"], "update": update}}


@fault("prompt-result-no-message-id", "answers session/prompt without its messageId")
class PromptResultNoMessageId(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _prompt_result(state, message)
        if result is not None:
            rest = {k: v for k, v in result.items() if k != "messageId"}
            return [{**message, "result": rest}]
        return [message]


@fault("prompt-result-same-message-id", "answers every session/prompt with one messageId")
class PromptResultSameMessageId(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _prompt_result(state, message)
        if result is not None and "messageId" in result:
            return [{**message, "result": {**result, "messageId": "msg-always-the-same"}}]
        return [message]


@fault("no-user-message-echo", "never reports the inserted user message (user_message*)")
class NoUserMessageEcho(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        update = _update(message)
        if update is not None and update.get("sessionUpdate") in (
            "user_message",
            "user_message_chunk",
        ):
            return []
        return [message]


@fault("empty-prompt-accepted", "inserts an empty prompt array (as an empty text)")
class EmptyPromptAccepted(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params: Any = message.get("params") if isinstance(message, dict) else None
        is_prompt = isinstance(params, dict) and message.get("method") == "session/prompt"
        if is_prompt and params.get("prompt") == []:
            params = {**params, "prompt": [{"type": "text", "text": ""}]}
            return [{**message, "params": params}]
        return [message]


@fault("unknown-content-accepted", "inserts a prompt with unknown content types (as text)")
class UnknownContentAccepted(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params: Any = message.get("params") if isinstance(message, dict) else None
        prompt = params.get("prompt") if isinstance(params, dict) else None
        if message.get("method") == "session/prompt" and isinstance(prompt, list):
            blocks = [
                b
                if not isinstance(b, dict) or b.get("type") in _KNOWN_BLOCKS
                else {"type": "text", "text": str(b.get("type"))}
                for b in prompt
            ]
            return [{**message, "params": {**params, "prompt": blocks}}]
        return [message]


@fault("no-running-state", "never reports running (or requires_action) work")
class NoRunningState(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        update = _update(message)
        if (
            update is not None
            and update.get("sessionUpdate") == "state_update"
            and update.get("state") in ("running", "requires_action")
        ):
            return []
        return [message]


@fault("idle-without-stop-reason", "reports the end of foreground work with no stopReason")
class IdleWithoutStopReason(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        update = _update(message)
        is_state = update is not None and update.get("sessionUpdate") == "state_update"
        if update is not None and is_state and "stopReason" in update:
            rest = {k: v for k, v in update.items() if k != "stopReason"}
            return [_with_update(message, rest)]
        return [message]


@fault("chunks-without-message-id", "sends agent message chunks without their messageId")
class ChunksWithoutMessageId(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        update = _update(message)
        if update is not None and update.get("sessionUpdate") == "agent_message_chunk":
            rest = {k: v for k, v in update.items() if k != "messageId"}
            return [_with_update(message, rest)]
        return [message]


@fault("cancelled-reported-as-error", "ends cancelled work with stopReason error, not cancelled")
class CancelledReportedAsError(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        update = _update(message)
        if (
            update is not None
            and update.get("sessionUpdate") == "state_update"
            and update.get("stopReason") == "cancelled"
        ):
            error = {"code": -32603, "message": "aborted"}
            return [_with_update(message, {**update, "stopReason": "error", "error": error})]
        return [message]


@fault(
    "withdrawn-prompt-internal-error",
    "answers a session/prompt withdrawn by $/cancel_request with -32603, not -32800",
)
class WithdrawnPromptInternalError(CloseHeldPromptInternalError):
    """The same rewrite as for a prompt that session/close kept from insertion: a
    session/prompt answered -32800 gets -32603."""
