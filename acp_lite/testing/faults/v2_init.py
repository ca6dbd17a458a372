"""Faults of the reference agent: initialization and authentication (v2)."""

from __future__ import annotations

from typing import Any

from acp_lite.testing.faults._base import Fault, FaultState, error_response, fault

__all__: list[str] = []

#: The one version the reference agent speaks (``acp_lite.testing._agent``).
_LATEST = 2
_KNOWN_CLIENT_CAPABILITIES = frozenset({"auth", "elicitation", "_meta"})
_KNOWN_INITIALIZE_PARAMS = frozenset({"protocolVersion", "capabilities", "info", "_meta"})


def _request(message: Any, method: str) -> bool:
    return isinstance(message, dict) and message.get("method") == method and "id" in message


def _answers(state: FaultState, message: Any, method: str) -> bool:
    return state.method_of(message) == method


def _result_of(state: FaultState, message: Any, method: str) -> dict[str, Any] | None:
    if _answers(state, message, method):
        result = message.get("result")
        if isinstance(result, dict):
            return result
    return None


_error = error_response


@fault("initialize-info-without-version", "answers initialize with info lacking version")
class InitializeInfoWithoutVersion(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result_of(state, message, "initialize")
        if result is not None and isinstance(result.get("info"), dict):
            info = {k: v for k, v in result["info"].items() if k != "version"}
            return [{**message, "result": {**result, "info": info}}]
        return [message]


@fault("initialize-answers-newer-version", "answers initialize one version above the request")
class InitializeAnswersNewerVersion(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result_of(state, message, "initialize")
        params = state.params.get(message.get("id")) if isinstance(message, dict) else None
        if result is not None and isinstance(params, dict):
            requested = params.get("protocolVersion")
            if isinstance(requested, int):
                return [{**message, "result": {**result, "protocolVersion": requested + 1}}]
        return [message]


@fault("newer-version-rejected", "fails initialize (-32022) for any version but its own")
class NewerVersionRejected(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if _request(message, "initialize"):
            params = message.get("params")
            requested = params.get("protocolVersion") if isinstance(params, dict) else None
            if isinstance(requested, int) and requested > _LATEST:
                data = {"requested": requested, "supported": [_LATEST]}
                state.send(_error(message, -32022, "Unsupported protocol version", data))
                return []
        return [message]


@fault("old-version-answers-latest", "answers a too-old version with its latest, not -32022")
class OldVersionAnswersLatest(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = message.get("error") if isinstance(message, dict) else None
        if (
            _answers(state, message, "initialize")
            and isinstance(error, dict)
            and error.get("code") == -32022
        ):
            result = {
                "protocolVersion": _LATEST,
                "info": {"name": "acp-lite-reference-agent", "version": "0"},
                "capabilities": {"session": {}},
            }
            return [{"jsonrpc": "2.0", "id": message.get("id"), "result": result}]
        return [message]


@fault("unsupported-version-without-data", "fails initialize with -32022 but no error data")
class UnsupportedVersionWithoutData(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        error = message.get("error") if isinstance(message, dict) else None
        if isinstance(error, dict) and error.get("code") == -32022:
            return [{**message, "error": {k: v for k, v in error.items() if k != "data"}}]
        return [message]


@fault("capabilities-as-booleans", "advertises capabilities as booleans (v1 style), not {}")
class CapabilitiesAsBooleans(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result_of(state, message, "initialize")
        caps = result.get("capabilities") if result is not None else None
        if result is not None and isinstance(caps, dict):
            session = caps.get("session")
            if isinstance(session, dict):
                session = {**session, "delete": True, "prompt": {"embeddedContext": True}}
                caps = {**caps, "session": session}
                return [{**message, "result": {**result, "capabilities": caps}}]
        return [message]


@fault("auth-method-without-type", "advertises authMethods without their type discriminator")
class AuthMethodWithoutType(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result_of(state, message, "initialize")
        methods = result.get("authMethods") if result is not None else None
        if result is not None and isinstance(methods, list):
            stripped = [
                {k: v for k, v in m.items() if k != "type"} if isinstance(m, dict) else m
                for m in methods
            ]
            return [{**message, "result": {**result, "authMethods": stripped}}]
        return [message]


@fault("terminal-auth-unasked", "advertises a terminal auth method to every client")
class TerminalAuthUnasked(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        result = _result_of(state, message, "initialize")
        if result is not None:
            terminal = {
                "type": "terminal",
                "methodId": "terminal-login",
                "name": "Log in from the terminal",
                "args": ["--login"],
            }
            methods = [*(result.get("authMethods") or []), terminal]
            return [{**message, "result": {**result, "authMethods": methods}}]
        return [message]


@fault("strict-initialize-params", "rejects initialize params it does not know (-32602)")
class StrictInitializeParams(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if _request(message, "initialize"):
            params = message.get("params")
            caps = params.get("capabilities") if isinstance(params, dict) else None
            unknown = set(params or {}) - _KNOWN_INITIALIZE_PARAMS
            if isinstance(caps, dict):
                unknown |= set(caps) - _KNOWN_CLIENT_CAPABILITIES
            if unknown:
                state.send(_error(message, -32602, f"Unknown fields: {sorted(unknown)}"))
                return []
        return [message]


@fault("second-initialize-ignored", "never answers a second initialize")
class SecondInitializeIgnored(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if _request(message, "initialize"):
            with state.lock:
                store = state.store(self.name)
                seen = store.get("initialized", False)
                store["initialized"] = True
            if seen:
                return []
        return [message]


@fault("pre-initialize-request-ignored", "never answers requests sent before initialize")
class PreInitializeRequestIgnored(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            return [message]
        with state.lock:
            store = state.store(self.name)
            if message.get("method") == "initialize":
                store["initialized"] = True
            elif not store.get("initialized"):
                return []
        return [message]


@fault("initialize-requires-capabilities", "rejects initialize without capabilities (-32602)")
class InitializeRequiresCapabilities(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        if _request(message, "initialize"):
            params = message.get("params")
            if not isinstance(params, dict) or "capabilities" not in params:
                state.send(_error(message, -32602, "capabilities is required"))
                return []
        return [message]


def _not_implemented(state: FaultState, message: Any, method: str) -> list[Any]:
    if _answers(state, message, method):
        return [_error(message, -32601, f"Method not found: {method}")]
    return [message]


@fault("logout-not-implemented", "answers auth/logout with -32601 despite its authMethods")
class LogoutNotImplemented(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        return _not_implemented(state, message, "auth/logout")


@fault("login-not-implemented", "answers auth/login with -32601 despite its authMethods")
class LoginNotImplemented(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        return _not_implemented(state, message, "auth/login")


@fault("login-accepts-any-method", "auth/login succeeds for a methodId it never advertised")
class LoginAcceptsAnyMethod(Fault):
    def outgoing(self, state: FaultState, message: Any) -> list[Any]:
        if _answers(state, message, "auth/login") and "error" in message:
            return [{"jsonrpc": "2.0", "id": message.get("id"), "result": {}}]
        return [message]


def _without_effect(state: FaultState, message: Any, method: str) -> list[Any]:
    if _request(message, method):
        state.send({"jsonrpc": "2.0", "id": message.get("id"), "result": {}})
        return []
    return [message]


@fault("login-without-effect", "answers auth/login with success but stays logged out")
class LoginWithoutEffect(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        return _without_effect(state, message, "auth/login")


@fault("logout-without-effect", "answers auth/logout with success but stays logged in")
class LogoutWithoutEffect(Fault):
    def incoming(self, state: FaultState, message: Any) -> list[Any]:
        return _without_effect(state, message, "auth/logout")
