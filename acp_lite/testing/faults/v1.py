"""Faults of the reference agent speaking v1 (``--protocol 1``): they see v1 messages.

Each breaks one v1 probe requirement (``acp_lite.probes.v1``); the ``v1-advertise-*``
and ``v1-modes`` faults are not broken behaviour but let the capability probes
run against the reference agent, which supports those methods but does not
advertise them in v1.
"""

from __future__ import annotations

import json
from typing import Any

from acp_lite.testing.faults._base import Fault, FaultState, fault

__all__: list[str] = []


def _is_response(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message


def _is_request(message: Any, method: str) -> bool:
    return isinstance(message, dict) and message.get("method") == method and "id" in message


def _result(message: Any) -> dict[str, Any] | None:
    if _is_response(message) and isinstance(message.get("result"), dict):
        result: dict[str, Any] = message["result"]
        return result
    return None


def _error(message: Any) -> dict[str, Any] | None:
    if _is_response(message) and isinstance(message.get("error"), dict):
        error: dict[str, Any] = message["error"]
        return error
    return None


def _answer(state: FaultState, message: Any) -> str | None:
    """The method of the client request ``message`` answers."""
    return state.method_of(message)


def _update(message: Any) -> dict[str, Any] | None:
    if isinstance(message, dict) and message.get("method") == "session/update":
        params = message.get("params")
        update = params.get("update") if isinstance(params, dict) else None
        return update if isinstance(update, dict) else None
    return None


def _refuse(state: FaultState, message: Any, code: int, text: str) -> list[Any]:
    state.send(
        {"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": code, "message": text}}
    )
    return []


def _with_result(message: dict[str, Any], **changes: Any) -> dict[str, Any]:
    result = {**message["result"], **changes}
    return {**message, "result": {k: v for k, v in result.items() if v is not _DROP}}


_DROP = object()


# -- initialization --------------------------------------------------------------------


def _init_version_asked(state: FaultState, message: Any) -> Any:
    params = state.params.get(message.get("id"))
    return params.get("protocolVersion") if isinstance(params, dict) else None


@fault("v1-initialize-wrong-version", "answers a v1 client's initialize with protocolVersion 2")
class InitializeWrongVersion(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if (
            _result(message) is not None
            and _answer(state, message) == "initialize"
            and _init_version_asked(state, message) == 1
        ):
            return [_with_result(message, protocolVersion=2)]
        return [message]


@fault("v1-initialize-refuses-newer", "answers initialize asking for version 2 with an error")
class InitializeRefusesNewer(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if isinstance(message, dict) and message.get("method") == "initialize":
            params = message.get("params")
            if isinstance(params, dict) and params.get("protocolVersion") == 2:
                return _refuse(state, message, -32602, "Unsupported protocol version 2")
        return [message]


@fault("v1-terminal-auth-unasked", "advertises a terminal auth method to any client")
class TerminalAuthUnasked(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result(message)
        if result is not None and _answer(state, message) == "initialize":
            tty = {"id": "tty-login", "type": "terminal", "name": "Log in in a terminal"}
            return [_with_result(message, authMethods=[*(result.get("authMethods") or []), tty])]
        return [message]


@fault("v1-no-agent-info", "leaves agentInfo out of the initialize answer")
class NoAgentInfo(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _result(message) is not None and _answer(state, message) == "initialize":
            return [_with_result(message, agentInfo=_DROP)]
        return [message]


@fault(
    "v1-advertise-session-capabilities",
    "(enabler) advertises sessionCapabilities list, resume and close, which it supports",
)
class AdvertiseSessionCapabilities(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result(message)
        if result is not None and _answer(state, message) == "initialize":
            caps = dict(result.get("agentCapabilities") or {})
            caps["sessionCapabilities"] = {"list": {}, "resume": {}, "close": {}}
            return [_with_result(message, agentCapabilities=caps)]
        return [message]


@fault("v1-advertise-image", "advertises promptCapabilities.image, which it does not support")
class AdvertiseImage(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result(message)
        if result is not None and _answer(state, message) == "initialize":
            caps = dict(result.get("agentCapabilities") or {})
            caps["promptCapabilities"] = {**(caps.get("promptCapabilities") or {}), "image": True}
            return [_with_result(message, agentCapabilities=caps)]
        return [message]


@fault("v1-prompt-method-not-found", "answers session/prompt with -32601 (method not found)")
class PromptMethodNotFound(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if _is_request(message, "session/prompt"):
            return _refuse(state, message, -32601, "Method not found: session/prompt")
        return [message]


# -- session setup ---------------------------------------------------------------------


@fault("v1-session-id-missing", "answers session/new without its sessionId")
class SessionIdMissing(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _result(message) is not None and _answer(state, message) == "session/new":
            return [_with_result(message, sessionId=_DROP)]
        return [message]


@fault("v1-session-id-reused", "answers every session/new with the first session's id")
class SessionIdReused(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result(message)
        if result is not None and _answer(state, message) == "session/new":
            with state.lock:
                first = state.store(self.name).setdefault("first", result.get("sessionId"))
            return [_with_result(message, sessionId=first)]
        return [message]


@fault("v1-load-no-replay", "answers session/load without replaying the user's messages")
class LoadNoReplay(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        update = _update(message)
        if update is not None and update.get("sessionUpdate") == "user_message_chunk":
            return []
        return [message]


@fault("v1-list-no-cwd", "lists sessions without their cwd")
class ListNoCwd(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result(message)
        if result is not None and _answer(state, message) == "session/list":
            sessions = [
                {k: v for k, v in s.items() if k != "cwd"} if isinstance(s, dict) else s
                for s in result.get("sessions") or []
            ]
            return [_with_result(message, sessions=sessions)]
        return [message]


@fault("v1-resume-replays", "session/resume replays the history (as session/load does)")
class ResumeReplays(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if isinstance(message, dict) and message.get("method") == "session/resume":
            return [{**message, "method": "session/load"}]
        return [message]


@fault("v1-modes", "(enabler) reports its mode config option as v1 modes in session/new")
class Modes(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result(message)
        if result is not None and _answer(state, message) == "session/new":
            for option in result.get("configOptions") or []:
                if isinstance(option, dict) and option.get("configId") == "mode":
                    available = [
                        {"id": o.get("value"), "name": o.get("name")}
                        for o in option.get("options") or []
                        if isinstance(o, dict)
                    ]
                    modes = {
                        "currentModeId": option.get("currentValue"),
                        "availableModes": available,
                    }
                    return [_with_result(message, modes=modes)]
        return [message]


@fault("v1-set-mode-fails", "answers session/set_mode with -32603 (internal error)")
class SetModeFails(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if isinstance(message, dict) and message.get("method") == "session/set_mode":
            return _refuse(state, message, -32603, "Internal error")
        return [message]


@fault("v1-unknown-session-accepted", "answers a prompt to an unknown session with end_turn")
class UnknownSessionAccepted(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = _error(message)
        prompt = _answer(state, message) == "session/prompt"
        if prompt and error is not None and error.get("code") == -32002:
            return [
                {
                    "jsonrpc": "2.0",
                    "id": message.get("id"),
                    "result": {"stopReason": "end_turn"},
                }
            ]
        return [message]


# -- prompt turn -----------------------------------------------------------------------


@fault("v1-no-stop-reason", "answers session/prompt without its stopReason")
class NoStopReason(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _result(message) is not None and _answer(state, message) == "session/prompt":
            return [_with_result(message, stopReason=_DROP)]
        return [message]


def _prompt_blocks(message: Any) -> list[Any]:
    params = message.get("params") if isinstance(message, dict) else None
    prompt = params.get("prompt") if isinstance(params, dict) else None
    return prompt if isinstance(prompt, list) else []


class _RejectsBlock(Fault):
    block = ""

    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        blocks = _prompt_blocks(message) if _is_request(message, "session/prompt") else []
        if any(isinstance(b, dict) and b.get("type") == self.block for b in blocks):
            return _refuse(state, message, -32602, f"Unsupported content block {self.block}")
        return [message]


@fault("v1-rejects-text", "refuses prompts with text content blocks (-32602)")
class RejectsText(_RejectsBlock):
    block = "text"


@fault("v1-rejects-resource-link", "refuses prompts with resource_link content blocks (-32602)")
class RejectsResourceLink(_RejectsBlock):
    block = "resource_link"


@fault("v1-update-no-session-id", "sends session/update without its sessionId")
class UpdateNoSessionId(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _update(message) is not None:
            params = {k: v for k, v in message["params"].items() if k != "sessionId"}
            return [{**message, "params": params}]
        return [message]


@fault("v1-plan-no-priority", "sends plan entries without their priority")
class PlanNoPriority(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        update = _update(message)
        if update is not None and update.get("sessionUpdate") == "plan":
            entries = [
                {k: v for k, v in e.items() if k != "priority"} if isinstance(e, dict) else e
                for e in update.get("entries") or []
            ]
            params = {**message["params"], "update": {**update, "entries": entries}}
            return [{**message, "params": params}]
        return [message]


@fault("v1-permission-no-tool-call", "asks permission without naming the tool call")
class PermissionNoToolCall(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if isinstance(message, dict) and message.get("method") == "session/request_permission":
            params = {k: v for k, v in (message.get("params") or {}).items() if k != "toolCall"}
            return [{**message, "params": params}]
        return [message]


# -- cancellation ----------------------------------------------------------------------


@fault("v1-cancelled-as-end-turn", "ends a cancelled prompt with stopReason end_turn")
class CancelledAsEndTurn(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result(message)
        if result is not None and result.get("stopReason") == "cancelled":
            return [_with_result(message, stopReason="end_turn")]
        return [message]


@fault("v1-update-after-cancelled", "sends one more message chunk after the cancelled response")
class UpdateAfterCancelled(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result(message)
        if result is not None and result.get("stopReason") == "cancelled":
            params = state.params.get(message.get("id"))
            sid = params.get("sessionId") if isinstance(params, dict) else None
            chunk = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "late"},
            }
            late = {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": sid, "update": chunk},
            }
            return [message, late]
        return [message]


@fault("v1-answers-notifications", "answers every notification with an error (id null)")
class AnswersNotifications(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if (
            isinstance(message, dict)
            and isinstance(message.get("method"), str)
            and "id" not in message
        ):
            error = {"code": -32600, "message": "Notifications are not supported"}
            state.send({"jsonrpc": "2.0", "id": None, "error": error})
        return [message]


# -- capability-gated updates ----------------------------------------------------------


class _UpdateBeforeAnswer(Fault):
    updates: tuple[dict[str, Any], ...] = ()

    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _result(message) is not None and _answer(state, message) == "session/prompt":
            params = state.params.get(message.get("id"))
            sid = params.get("sessionId") if isinstance(params, dict) else None
            extra = [
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": sid, "update": u},
                }
                for u in self.updates
            ]
            return [*extra, message]
        return [message]


@fault("v1-notice-unasked", "sends a notice to a client that did not advertise session.notices")
class NoticeUnasked(_UpdateBeforeAnswer):
    updates = ({"sessionUpdate": "notice", "severity": "info", "title": "Retried the model"},)


@fault("v1-compaction-unasked", "sends compaction updates without session.compaction")
class CompactionUnasked(_UpdateBeforeAnswer):
    updates = (
        {"sessionUpdate": "compaction_update", "compactionId": "c-1", "status": "completed"},
    )


# -- JSON-RPC --------------------------------------------------------------------------


@fault("v1-ext-method-result", "answers unknown '_' requests with an empty result")
class ExtMethodResult(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = _error(message)
        method = _answer(state, message) or ""
        if error is not None and error.get("code") == -32601 and method.startswith("_"):
            return [{"jsonrpc": "2.0", "id": message.get("id"), "result": {}}]
        return [message]


@fault("v1-string-id-mangled", "answers a request with a string id under another id")
class StringIdMangled(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _is_response(message) and isinstance(message.get("id"), str):
            return [{**message, "id": message["id"] + "-answer"}]
        return [message]


@fault("v1-parse-error-code", "answers a line that is not JSON with -32600, not -32700")
class ParseErrorCode(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = _error(message)
        if error is not None and error.get("code") == -32700:
            return [{**message, "error": {**error, "code": -32600}}]
        return [message]


@fault("v1-batch-unbatched", "answers a batch with one line per response, not an array")
class BatchUnbatched(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _is_response(message):
            # Raw lines are written on their own: a batch's members leave the array.
            return [json.dumps(message, separators=(",", ":")).encode() + b"\n"]
        return [message]


@fault("v1-empty-batch-array", "answers an empty batch with an array holding the error")
class EmptyBatchArray(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = _error(message)
        if error is not None and error.get("code") == -32600 and message.get("id") is None:
            return [b"[" + json.dumps(message, separators=(",", ":")).encode() + b"]\n"]
        return [message]


@fault("v1-error-no-message", "sends error responses without a message")
class ErrorNoMessage(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = _error(message)
        if error is not None:
            return [{**message, "error": {k: v for k, v in error.items() if k != "message"}}]
        return [message]


@fault("v1-invalid-params-internal", "answers invalid session/new params with -32603")
class InvalidParamsInternal(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = _error(message)
        new = _answer(state, message) == "session/new"
        if new and error is not None and error.get("code") == -32602:
            return [{**message, "error": {**error, "code": -32603}}]
        return [message]
