"""Faults of the reference agent: sessions and config options (v2).

Each bends one rule of ``session-setup.mdx``, ``session-list.mdx``,
``session-delete.mdx``, ``session-config-options.mdx`` or the schema's
``session/close`` and ``session/resume`` descriptions; the probes of
:mod:`acp_lite.probes.v2_session` fail on them.
"""

from __future__ import annotations

from typing import Any

from acp_lite.testing.faults._base import Fault, FaultState, error_response, fault

__all__: list[str] = []

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002

#: The config values the reference agent knows (``Session.config_options``).
_MODES = ("ask", "code")
_KNOWN = "known-session-ids"


def _response(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message


def _request_params(state: FaultState, message: Any) -> dict[str, Any]:
    params = state.params.get(message.get("id")) if isinstance(message, dict) else None
    return params if isinstance(params, dict) else {}


def _remember_sessions(state: FaultState, message: Any) -> None:
    """Keep the session ids the agent created (answers to ``session/new``)."""
    if not _response(message) or state.method_of(message) != "session/new":
        return
    result = message.get("result")
    if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
        with state.lock:
            state.store(_KNOWN).setdefault("ids", set()).add(result["sessionId"])


def _known(state: FaultState, session_id: Any) -> bool:
    with state.lock:
        return session_id in state.store(_KNOWN).get("ids", set())


_error = error_response


# -- session/new ------------------------------------------------------------------------


@fault("new-session-no-id", "answers session/new without a sessionId")
class NewSessionNoId(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = message.get("result") if isinstance(message, dict) else None
        if state.method_of(message) == "session/new" and isinstance(result, dict):
            rest = {k: v for k, v in result.items() if k != "sessionId"}
            return [{**message, "result": rest}]
        return [message]


@fault("new-session-same-id", "answers every session/new with the first session's id")
class NewSessionSameId(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = message.get("result") if isinstance(message, dict) else None
        if state.method_of(message) == "session/new" and isinstance(result, dict):
            with state.lock:
                first = state.store(self.name).setdefault("first", result.get("sessionId"))
            return [{**message, "result": {**result, "sessionId": first}}]
        return [message]


@fault("relative-cwd-accepted", "accepts a relative cwd in session/new (made absolute)")
class RelativeCwdAccepted(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and message.get("method") == "session/new":
            cwd = params.get("cwd")
            if isinstance(cwd, str) and not cwd.startswith("/"):
                return [{**message, "params": {**params, "cwd": "/" + cwd}}]
        return [message]


@fault(
    "relative-additional-directory-accepted",
    "accepts relative additionalDirectories entries in session/new (made absolute)",
)
class RelativeAdditionalDirectoryAccepted(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and message.get("method") == "session/new":
            extra = params.get("additionalDirectories")
            if isinstance(extra, list):
                fixed = [p if str(p).startswith("/") else f"/{p}" for p in extra]
                return [{**message, "params": {**params, "additionalDirectories": fixed}}]
        return [message]


@fault(
    "additional-directories-rejected",
    "rejects session/new with additionalDirectories although it advertises them",
)
class AdditionalDirectoriesRejected(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if (
            _response(message)
            and state.method_of(message) == "session/new"
            and _request_params(state, message).get("additionalDirectories")
        ):
            return [_error(message, INVALID_PARAMS, "additionalDirectories not supported")]
        return [message]


@fault(
    "new-session-stray-update",
    "sends a session/update for a session that does not exist before answering session/new",
)
class NewSessionStrayUpdate(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _response(message) and state.method_of(message) == "session/new":
            stray = {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": "sess-fault-stray",
                    "update": {"sessionUpdate": "session_info_update", "title": "stray"},
                },
            }
            return [stray, message]
        return [message]


# -- unknown sessions -------------------------------------------------------------------


def _prompt_not_found(state: FaultState, message: Any) -> dict[str, Any] | None:
    if not _response(message) or state.method_of(message) != "session/prompt":
        return None
    error = message.get("error")
    if isinstance(error, dict) and error.get("code") == RESOURCE_NOT_FOUND:
        return error
    return None


@fault("unknown-session-prompt-accepted", "answers a prompt to an unknown session successfully")
class UnknownSessionPromptAccepted(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _prompt_not_found(state, message) is not None:
            result = {"messageId": "msg-fault-accepted"}
            return [{"jsonrpc": "2.0", "id": message.get("id"), "result": result}]
        return [message]


@fault("unknown-session-invalid-params", "answers a prompt to an unknown session with -32602")
class UnknownSessionInvalidParams(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = _prompt_not_found(state, message)
        if error is not None:
            return [{**message, "error": {**error, "code": INVALID_PARAMS}}]
        return [message]


@fault("session-not-found-no-data", "sends -32002 for an unknown session without data.sessionId")
class SessionNotFoundNoData(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = _prompt_not_found(state, message)
        if error is not None:
            rest = {k: v for k, v in error.items() if k != "data"}
            return [{**message, "error": rest}]
        return [message]


# -- session/close ----------------------------------------------------------------------


@fault("close-answers-error", "answers session/close of an active session with -32603")
class CloseAnswersError(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        _remember_sessions(state, message)
        if (
            _response(message)
            and state.method_of(message) == "session/close"
            and _known(state, _request_params(state, message).get("sessionId"))
        ):
            return [_error(message, INTERNAL_ERROR, "close failed")]
        return [message]


@fault("close-ignored", "answers session/close but leaves the session open and working")
class CloseIgnored(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and message.get("method") == "session/close":
            # An unknown id is closed "successfully"; the real session stays open.
            return [{**message, "params": {**params, "sessionId": "sess-fault-ignored"}}]
        return [message]


@fault(
    "close-before-idle",
    "drops the idle state_update of work cancelled by session/close",
)
class CloseBeforeIdle(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and message.get("method") == "session/close":
            with state.lock:
                state.store(self.name)[str(params.get("sessionId"))] = True
        return [message]

    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and message.get("method") == "session/update":
            update = params.get("update")
            with state.lock:
                closing = state.store(self.name).get(str(params.get("sessionId")), False)
            if closing and isinstance(update, dict) and update.get("state") == "idle":
                return []
        return [message]


@fault("close-unknown-internal-error", "answers session/close of an unknown session with -32603")
class CloseUnknownInternalError(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        _remember_sessions(state, message)
        if (
            _response(message)
            and state.method_of(message) == "session/close"
            and not _known(state, _request_params(state, message).get("sessionId"))
        ):
            return [_error(message, INTERNAL_ERROR, "no such session")]
        return [message]


# -- session/list -----------------------------------------------------------------------


def _list_result(state: FaultState, message: Any) -> dict[str, Any] | None:
    if not _response(message) or state.method_of(message) != "session/list":
        return None
    result = message.get("result")
    return result if isinstance(result, dict) else None


@fault("list-drops-cwd", "lists sessions without their cwd")
class ListDropsCwd(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _list_result(state, message)
        if result is not None and isinstance(result.get("sessions"), list):
            sessions = [
                {k: v for k, v in s.items() if k != "cwd"} if isinstance(s, dict) else s
                for s in result["sessions"]
            ]
            return [{**message, "result": {**result, "sessions": sessions}}]
        return [message]


@fault("list-ignores-cwd-filter", "ignores the cwd filter of session/list")
class ListIgnoresCwdFilter(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and message.get("method") == "session/list":
            return [{**message, "params": {k: v for k, v in params.items() if k != "cwd"}}]
        return [message]


@fault("list-cursor-ignored", "ignores the cursor of session/list (always the first page)")
class ListCursorIgnored(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and message.get("method") == "session/list":
            return [{**message, "params": {k: v for k, v in params.items() if k != "cursor"}}]
        return [message]


@fault("list-invalid-cursor-first-page", "answers an invalid session/list cursor with page one")
class ListInvalidCursorFirstPage(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and message.get("method") == "session/list":
            cursor = params.get("cursor")
            if cursor is not None and not str(cursor).startswith("offset:"):
                rest = {k: v for k, v in params.items() if k != "cursor"}
                return [{**message, "params": rest}]
        return [message]


@fault("list-empty-omits-sessions", "answers a session/list with no match without `sessions`")
class ListEmptyOmitsSessions(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _list_result(state, message)
        if result is not None and result.get("sessions") == []:
            rest = {k: v for k, v in result.items() if k != "sessions"}
            return [{**message, "result": rest}]
        return [message]


# -- session/delete ---------------------------------------------------------------------


@fault("delete-ignored", "answers session/delete but keeps the session in session/list")
class DeleteIgnored(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and message.get("method") == "session/delete":
            return [{**message, "params": {**params, "sessionId": "sess-fault-ignored"}}]
        return [message]


@fault("delete-unknown-not-found", "answers session/delete of an unknown session with -32002")
class DeleteUnknownNotFound(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        _remember_sessions(state, message)
        if _response(message) and state.method_of(message) == "session/delete":
            session_id = _request_params(state, message).get("sessionId")
            if not _known(state, session_id):
                data = {"sessionId": session_id}
                return [_error(message, RESOURCE_NOT_FOUND, "Session not found", data)]
        return [message]


# -- session/resume ---------------------------------------------------------------------


def _resume_params(message: Any) -> dict[str, Any] | None:
    if not isinstance(message, dict) or message.get("method") != "session/resume":
        return None
    params = message.get("params")
    return params if isinstance(params, dict) else None


@fault("resume-replays-unasked", "replays the history on session/resume without replayFrom")
class ResumeReplaysUnasked(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = _resume_params(message)
        if params is not None and params.get("replayFrom") is None:
            return [{**message, "params": {**params, "replayFrom": {"type": "start"}}}]
        return [message]


@fault("resume-no-replay", "ignores replayFrom start on session/resume (no replay)")
class ResumeNoReplay(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = _resume_params(message)
        if (
            params is not None
            and isinstance(params.get("replayFrom"), dict)
            and params["replayFrom"].get("type") == "start"
        ):
            rest = {k: v for k, v in params.items() if k != "replayFrom"}
            return [{**message, "params": rest}]
        return [message]


@fault("resume-bad-cursor-ignored", "resumes without replay on an unsupported replayFrom type")
class ResumeBadCursorIgnored(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = _resume_params(message)
        if (
            params is not None
            and isinstance(params.get("replayFrom"), dict)
            and params["replayFrom"].get("type") != "start"
        ):
            rest = {k: v for k, v in params.items() if k != "replayFrom"}
            return [{**message, "params": rest}]
        return [message]


@fault("resume-no-state-snapshot", "answers session/resume without a state_update before it")
class ResumeNoStateSnapshot(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = _resume_params(message)
        if params is not None:
            with state.lock:
                state.store(self.name)[str(params.get("sessionId"))] = True
        return [message]

    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and message.get("method") == "session/update":
            update = params.get("update")
            with state.lock:
                resuming = state.store(self.name).get(str(params.get("sessionId")), False)
            if (
                resuming
                and isinstance(update, dict)
                and update.get("sessionUpdate") == "state_update"
            ):
                return []
        if _response(message) and state.method_of(message) == "session/resume":
            session_id = str(_request_params(state, message).get("sessionId"))
            with state.lock:
                state.store(self.name).pop(session_id, None)
        return [message]


@fault(
    "resume-state-before-replay",
    "sends the state_update snapshot of session/resume before the replayed history",
)
class ResumeStateBeforeReplay(Fault):
    _HISTORY = ("user_message", "agent_message", "agent_thought")

    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = _resume_params(message)
        if params is not None and isinstance(params.get("replayFrom"), dict):
            with state.lock:
                state.store(self.name)[str(params.get("sessionId"))] = []
        return [message]

    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        params = message.get("params") if isinstance(message, dict) else None
        with state.lock:
            store = state.store(self.name)
            if isinstance(params, dict) and message.get("method") == "session/update":
                held = store.get(str(params.get("sessionId")))
                update = params.get("update")
                kind = str(update.get("sessionUpdate")) if isinstance(update, dict) else ""
                if held is not None and kind.startswith(self._HISTORY):
                    held.append(message)
                    return []
                if held is not None and kind == "state_update":
                    store[str(params.get("sessionId"))] = []
                    return [message, *held]
            if _response(message) and state.method_of(message) == "session/resume":
                session_id = str(_request_params(state, message).get("sessionId"))
                return [*store.pop(session_id, []), message]
        return [message]


@fault(
    "close-held-prompt-internal-error",
    "answers a prompt that session/close kept from insertion with -32603, not -32800",
)
class CloseHeldPromptInternalError(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = message.get("error") if isinstance(message, dict) else None
        if (
            isinstance(error, dict)
            and error.get("code") == -32800
            and state.method_of(message) == "session/prompt"
        ):
            return [{**message, "error": {**error, "code": INTERNAL_ERROR}}]
        return [message]


@fault("resume-unknown-succeeds", "answers session/resume of an unknown session with {}")
class ResumeUnknownSucceeds(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _response(message) and state.method_of(message) == "session/resume":
            error = message.get("error")
            if isinstance(error, dict) and error.get("code") == RESOURCE_NOT_FOUND:
                return [{"jsonrpc": "2.0", "id": message.get("id"), "result": {}}]
        return [message]


# -- config options ---------------------------------------------------------------------


def _config_request(message: Any) -> dict[str, Any] | None:
    if not isinstance(message, dict) or message.get("method") != "session/set_config_option":
        return None
    params = message.get("params")
    return params if isinstance(params, dict) else None


@fault(
    "config-unknown-id-internal-error",
    "answers session/set_config_option of an unknown configId with -32603, not -32602",
)
class ConfigUnknownIdInternalError(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _response(message) and state.method_of(message) == "session/set_config_option":
            config_id = _request_params(state, message).get("configId")
            error = message.get("error")
            if isinstance(error, dict) and config_id not in ("mode", "verbose"):
                return [{**message, "error": {**error, "code": INTERNAL_ERROR}}]
        return [message]


@fault("config-invalid-value-accepted", "accepts an invalid select value (as `ask`)")
class ConfigInvalidValueAccepted(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = _config_request(message)
        if (
            params is not None
            and params.get("configId") == "mode"
            and params.get("value") not in _MODES
        ):
            return [{**message, "params": {**params, "type": "id", "value": "ask"}}]
        return [message]


@fault(
    "config-invalid-value-applied",
    "rejects an invalid select value with -32602 but changes the option anyway",
)
class ConfigInvalidValueApplied(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = _config_request(message)
        if (
            params is not None
            and params.get("configId") == "mode"
            and params.get("value") not in _MODES
        ):
            with state.lock:
                state.store(self.name)[message.get("id")] = True
            # The default is "code": the bent agent switches to "ask".
            return [{**message, "params": {**params, "type": "id", "value": "ask"}}]
        return [message]

    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _response(message):
            with state.lock:
                marked = state.store(self.name).pop(message.get("id"), False)
            if marked:
                return [_error(message, INVALID_PARAMS, "Invalid config value")]
        return [message]


@fault(
    "config-partial-response",
    "answers session/set_config_option with the changed option only, not the full list",
)
class ConfigPartialResponse(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = message.get("result") if isinstance(message, dict) else None
        if state.method_of(message) == "session/set_config_option" and isinstance(result, dict):
            config_id = _request_params(state, message).get("configId")
            options = result.get("configOptions")
            if isinstance(options, list):
                kept = [
                    o for o in options if isinstance(o, dict) and o.get("configId") == config_id
                ]
                return [{**message, "result": {**result, "configOptions": kept}}]
        return [message]


@fault(
    "config-unknown-type-accepted",
    "accepts a session/set_config_option value type it does not support (read as `id`)",
)
class ConfigUnknownTypeAccepted(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        params = _config_request(message)
        if params is not None and str(params.get("type")).startswith("_"):
            return [{**message, "params": {**params, "type": "id"}}]
        return [message]


@fault(
    "config-select-bad-current-value",
    "offers a select config option whose currentValue is not one of its options",
)
class ConfigSelectBadCurrentValue(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = message.get("result") if isinstance(message, dict) else None
        if state.method_of(message) == "session/new" and isinstance(result, dict):
            options = result.get("configOptions")
            if isinstance(options, list):
                bent = [
                    {**o, "currentValue": "fault-no-such-value"}
                    if isinstance(o, dict) and o.get("type") == "select"
                    else o
                    for o in options
                ]
                return [{**message, "result": {**result, "configOptions": bent}}]
        return [message]
