"""The typed client -> agent method surface: mixins for ``AsyncClient`` and ``AsyncSession``.

Every method goes through one primitive, :meth:`_Methods._request`:

1. the capability gate (:mod:`acp_lite.protocol.capabilities`): a method the agent
   did not advertise raises :class:`~acp_lite.errors.CapabilityNotSupported`
   before anything is sent, unless ``force=True`` (spec, initialization
   "Capabilities": omitted capabilities MUST be treated as unsupported);
2. the connection's ``call`` (raw result today; an already-typed result is kept);
3. the typed result, ``METHODS[method].result``; a result that does not fit its
   schema raises :class:`~acp_lite.errors.ProtocolError` naming the method.

Parameters are snake_case wire names; values may be typed wire objects or plain
JSON values. ``meta`` is the wire ``_meta``; ``**extra`` adds wire-named keys as
given (the protocol's open values).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

import trio

from acp_lite.errors import CapabilityNotSupported, ProtocolError, Timeout
from acp_lite.protocol import (
    UNSET,
    ArchiveSessionResponse,
    AuthStatusResponse,
    AuthStatusUpdateNotification,
    CancelTerminalResponse,
    CancelToolCallResponse,
    CloseSessionResponse,
    DeleteSessionResponse,
    DisableProviderResponse,
    ForkSessionResponse,
    InitializeResponse,
    ListProvidersResponse,
    ListSessionsResponse,
    LoginAuthResponse,
    LogoutAuthResponse,
    McpServer,
    SessionInfo,
    SessionStatusResponse,
    SetProviderResponse,
    SetSessionConfigOptionResponse,
    SetSessionTitleResponse,
    SystemPrompt,
    UnarchiveSessionResponse,
    converter,
)
from acp_lite.protocol._runtime import WireObject
from acp_lite.protocol.capabilities import (
    entity_capability,
    entity_supports,
    param_capability,
    required_capability,
    supports,
    supports_param,
)

if TYPE_CHECKING:
    from acp_lite.aio._connection import Connection
    from acp_lite.core import ConnectionEvent
    from acp_lite.model import SessionModel

__all__ = [
    "AUTH_STATUS_UPDATE",
    "ClientMethods",
    "SessionMethods",
    "auth_status_update",
]

T = TypeVar("T")

AUTH_STATUS_UPDATE = "auth/status_update"
"""The agent's notification that its authentication state changed (unstable)."""

Meta = Mapping[str, Any]
"""The wire ``_meta`` object (open: implementations attach what they like)."""


def _to_wire(value: object) -> object:
    """A JSON value for ``value``: wire objects unstructured, containers walked."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, WireObject):
        return converter.unstructure(value)
    if isinstance(value, Mapping):
        return {str(k): _to_wire(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_wire(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return converter.unstructure(value)


def _params(
    base: Mapping[str, object], meta: Meta | None, extra: Mapping[str, object]
) -> dict[str, object]:
    params: dict[str, object] = {k: _to_wire(v) for k, v in base.items()}
    if meta is not None:
        params["_meta"] = _to_wire(meta)
    for key, value in extra.items():
        params[key] = _to_wire(value)
    return params


def _typed(method: str, result: object, result_type: type[T], session_id: str | None) -> T:
    if isinstance(result, result_type):
        return result
    try:
        typed: T = converter.structure(result, result_type)
    except Exception as exc:
        raise ProtocolError(
            f"invalid {method} result ({result_type.__name__}): {exc}",
            method=method,
            session_id=session_id,
        ) from exc
    return typed


def auth_status_update(event: ConnectionEvent) -> AuthStatusUpdateNotification | None:
    """The typed ``auth/status_update`` carried by a client event, else ``None``.

    Today such notifications reach ``client.events`` as ``kind == "notification"``
    entries whose ``data`` is the decoded ``Notification``.
    """
    if event.method != AUTH_STATUS_UPDATE:
        return None
    params = getattr(event.data, "params", None)
    if isinstance(params, AuthStatusUpdateNotification):
        return params
    if isinstance(params, Mapping):
        try:
            typed: AuthStatusUpdateNotification = converter.structure(
                params, AuthStatusUpdateNotification
            )
        except Exception:
            return None
        return typed
    return None


class _Methods:
    """The shared primitive: gate, send, type the result."""

    _conn: Connection

    def _initialize_response(self) -> InitializeResponse | None:
        # What the agent advertised, as the core recorded it.
        return self._conn.core.initialize_response

    def _call_state(self) -> Callable[[], str | None] | None:
        return None

    def _check(self, method: str, *, session_id: str | None, force: bool) -> None:
        """Raise :class:`CapabilityNotSupported` unless the agent advertised ``method``."""
        if force:
            return
        init = self._initialize_response()
        capabilities = init.capabilities if init is not None else UNSET
        auth_methods = init.auth_methods if init is not None else UNSET
        if supports(capabilities, method, auth_methods=auth_methods):
            return
        path = required_capability(method)
        assert path is not None
        raise CapabilityNotSupported(
            method, path, session_id=session_id, stderr_tail=self._conn.stderr_tail()
        )

    def _check_params(
        self, method: str, params: Mapping[str, object], *, session_id: str | None, force: bool
    ) -> None:
        """Raise for optional parameters that need a capability the agent lacks."""
        if force:
            return
        init = self._initialize_response()
        capabilities = init.capabilities if init is not None else UNSET
        for name, value in params.items():
            if value is None:
                continue
            path = param_capability(method, name)
            if path is not None and not supports_param(capabilities, method, name):
                raise CapabilityNotSupported(
                    f"{method} with {name}",
                    path,
                    session_id=session_id,
                    stderr_tail=self._conn.stderr_tail(),
                )

    async def _request(
        self,
        method: str,
        params: Mapping[str, object] | WireObject | None,
        result_type: type[T],
        *,
        session_id: str | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> T:
        """Gate ``method``, send it, return its result as ``result_type``."""
        self._check(method, session_id=session_id, force=force)
        wire = {} if params is None else _to_wire(params)
        if isinstance(wire, dict):
            self._check_params(method, wire, session_id=session_id, force=force)
        result = await self._conn.call(
            method, wire, session_id=session_id, timeout=timeout, state=self._call_state()
        )
        return _typed(method, result, result_type, session_id)

    def _send_notification(
        self,
        method: str,
        params: Mapping[str, object],
        *,
        session_id: str | None = None,
        force: bool = False,
    ) -> None:
        """Gate and send a notification (nothing to wait for)."""
        self._check(method, session_id=session_id, force=force)
        self._conn.notify(method, _to_wire(params))


class ClientMethods(_Methods):
    """Connection-level methods of :class:`~acp_lite.aio.AsyncClient`."""

    initialize_response: InitializeResponse | None

    # ------------------------------------------------------------------ raw

    @overload
    async def request(
        self,
        method: str,
        params: object = None,
        *,
        result_type: None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> object: ...
    @overload
    async def request(
        self,
        method: str,
        params: object = None,
        *,
        result_type: type[T],
        timeout: float | None = None,
        force: bool = False,
    ) -> T: ...
    async def request(
        self,
        method: str,
        params: object = None,
        *,
        result_type: type[T] | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> T | object:
        """Send any request, e.g. a ``_``-prefixed extension method.

        Returns the raw JSON result, or the result structured as ``result_type``.
        A known method is gated like its typed method (``force=True`` skips that).
        """
        self._check(method, session_id=None, force=force)
        result: object = await self._conn.call(
            method, {} if params is None else _to_wire(params), timeout=timeout
        )
        if result_type is None:
            return result
        return _typed(method, result, result_type, None)

    # ------------------------------------------------------------------ auth

    async def login(
        self,
        method_id: str,
        *,
        meta: Meta | None = None,
        timeout: float | None = None,
        force: bool = False,
        **extra: Any,
    ) -> LoginAuthResponse:
        """``auth/login`` with ``methodId`` (extra params wire-named).

        Needs a non-empty ``authMethods`` in the ``initialize`` result.
        """
        params = _params({"methodId": method_id}, meta, extra)
        return await self._request(
            "auth/login", params, LoginAuthResponse, timeout=timeout, force=force
        )

    async def logout(
        self,
        *,
        meta: Meta | None = None,
        timeout: float | None = None,
        force: bool = False,
        **extra: Any,
    ) -> LogoutAuthResponse:
        """``auth/logout``. Needs a non-empty ``authMethods`` in the ``initialize`` result."""
        params = _params({}, meta, extra)
        return await self._request(
            "auth/logout", params, LogoutAuthResponse, timeout=timeout, force=force
        )

    async def auth_status(
        self, *, meta: Meta | None = None, timeout: float | None = None, force: bool = False
    ) -> AuthStatusResponse:
        """``auth/status`` (unstable): the agent's authentication state.

        Needs ``capabilities.auth.status``. Clients MUST treat an unknown ``state``
        as ``unknown``.
        """
        params = _params({}, meta, {})
        return await self._request(
            "auth/status", params, AuthStatusResponse, timeout=timeout, force=force
        )

    # ------------------------------------------------------------------ sessions

    async def list_sessions(
        self,
        cwd: str | os.PathLike[str] | None = None,
        *,
        archived: str | None = None,
        meta: Meta | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> list[SessionInfo]:
        """``session/list``, following ``nextCursor`` through every page.

        ``timeout`` bounds the whole listing, not each page: an agent that keeps
        sending new cursors cannot keep the caller forever; a cursor seen twice is
        a :class:`ProtocolError`. ``archived`` (``exclude`` / ``include`` / ``only``)
        needs ``capabilities.session.archive`` and is kept on every page.
        """
        conn = self._conn
        budget = conn.limits.default_timeout if timeout is None else timeout
        deadline = trio.current_time() + budget
        out: list[SessionInfo] = []
        cursor: str | None = None
        seen: set[str] = set()
        base: dict[str, object] = {}
        if cwd is not None:
            base["cwd"] = os.fspath(cwd)
        if archived is not None:
            base["archived"] = archived
        while True:
            params = _params(base, meta, {} if cursor is None else {"cursor": cursor})
            try:
                remaining = deadline - trio.current_time()
                if remaining <= 0:
                    raise Timeout(f"no time left (timeout {budget:g}s)", method="session/list")
                page = await self._request(
                    "session/list", params, ListSessionsResponse, timeout=remaining, force=force
                )
            except Timeout as exc:
                if not seen and cursor is None:
                    raise  # the first page never came: that error says it best
                raise Timeout(
                    f"session/list still had pages after {budget:g}s "
                    f"({len(seen) + 1} pages, {len(out)} sessions so far)",
                    awaited="the last page of session/list",
                    method="session/list",
                    stderr_tail=conn.stderr_tail(),
                ) from exc
            out.extend(page.sessions)
            next_cursor = page.next_cursor
            if not isinstance(next_cursor, str):
                return out
            if next_cursor in seen:  # a looping cursor would never end
                raise ProtocolError(
                    f"session/list returned cursor {next_cursor!r} twice", method="session/list"
                )
            seen.add(next_cursor)
            cursor = next_cursor

    async def delete_session(
        self,
        session_id: str,
        *,
        meta: Meta | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> DeleteSessionResponse:
        """``session/delete`` of any session ``session/list`` returns.

        Needs ``capabilities.session.delete``.
        """
        params = _params({"sessionId": session_id}, meta, {})
        return await self._request(
            "session/delete",
            params,
            DeleteSessionResponse,
            session_id=session_id,
            timeout=timeout,
            force=force,
        )

    # ------------------------------------------------------------------ providers

    async def list_providers(
        self, *, meta: Meta | None = None, timeout: float | None = None, force: bool = False
    ) -> ListProvidersResponse:
        """``providers/list`` (unstable). Needs ``capabilities.providers``."""
        params = _params({}, meta, {})
        return await self._request(
            "providers/list", params, ListProvidersResponse, timeout=timeout, force=force
        )

    async def set_provider(
        self,
        provider_id: str,
        api_type: str,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        meta: Meta | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> SetProviderResponse:
        """``providers/set`` (unstable): replace one provider's whole configuration.

        Needs ``capabilities.providers``. ``api_type`` is an ``LlmProtocol``
        (``anthropic``, ``openai``, ``azure``, ``vertex``, ``bedrock`` or custom).
        """
        base: dict[str, object] = {
            "providerId": provider_id,
            "apiType": api_type,
            "baseUrl": base_url,
        }
        if headers is not None:
            base["headers"] = dict(headers)
        return await self._request(
            "providers/set",
            _params(base, meta, {}),
            SetProviderResponse,
            timeout=timeout,
            force=force,
        )

    async def disable_provider(
        self,
        provider_id: str,
        *,
        meta: Meta | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> DisableProviderResponse:
        """``providers/disable`` (unstable). Needs ``capabilities.providers``."""
        params = _params({"providerId": provider_id}, meta, {})
        return await self._request(
            "providers/disable", params, DisableProviderResponse, timeout=timeout, force=force
        )

    # ------------------------------------------------------------------ MCP over ACP

    async def mcp_message(
        self,
        server_id: str,
        request_id: str,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        meta: Meta | None = None,
        force: bool = False,
    ) -> None:
        """Send the ``mcp/message`` notification (unstable, MCP over ACP).

        For an active inner MCP request ``request_id`` on the ACP MCP server
        ``server_id`` the client declared (subscription acknowledgements, updates).
        Needs ``capabilities.session.mcp.acp``. Nothing is awaited.
        """
        base: dict[str, object] = {"serverId": server_id, "requestId": request_id, "method": method}
        if params is not None:
            base["params"] = params
        self._send_notification("mcp/message", _params(base, meta, {}), force=force)


class SessionMethods(_Methods):
    """Session-level methods of :class:`~acp_lite.aio.AsyncSession`."""

    id: str
    model: SessionModel

    def _call_state(self) -> Callable[[], str | None] | None:
        model = self.model
        return lambda: model.state

    async def _session_request(
        self,
        method: str,
        params: Mapping[str, object],
        result_type: type[T],
        *,
        meta: Meta | None,
        extra: Mapping[str, object] | None = None,
        timeout: float | None,
        force: bool,
    ) -> T:
        wire = _params({"sessionId": self.id, **params}, meta, extra or {})
        return await self._request(
            method, wire, result_type, session_id=self.id, timeout=timeout, force=force
        )

    def _check_entity(self, method: str, kind: str, entity_id: str, *, force: bool) -> None:
        if force:
            return
        gate = entity_capability(method)
        assert gate is not None and gate[0] == kind
        entity = self.model.get_entity(kind, entity_id)
        caps = getattr(entity, "capabilities", None)
        if not entity_supports(caps, method):
            label = kind.replace("_", " ")
            state = "was never reported" if entity is None else "does not advertise it"
            raise CapabilityNotSupported(
                method,
                gate[1],
                entity=f"{label} {entity_id!r} ({state})",
                session_id=self.id,
                stderr_tail=self._conn.stderr_tail(),
            )

    async def set_config_option(
        self,
        config_id: str,
        value: str | bool | object,
        *,
        value_type: str | None = None,
        meta: Meta | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> SetSessionConfigOptionResponse:
        """``session/set_config_option``: a bool sets a boolean option, a str an id.

        Other value types need ``value_type`` (the wire ``type``, e.g. a ``_``-prefixed
        custom type). Returns the full set of options and their values.
        """
        if value_type is None:
            if isinstance(value, bool):
                value_type = "boolean"
            elif isinstance(value, str):
                value_type = "id"
            else:
                raise TypeError(
                    f"set_config_option({config_id!r}, {value!r}): pass value_type= for a "
                    "value that is neither a bool nor a str"
                )
        return await self._session_request(
            "session/set_config_option",
            {"configId": config_id, "type": value_type, "value": value},
            SetSessionConfigOptionResponse,
            meta=meta,
            timeout=timeout,
            force=force,
        )

    async def cancel_tool_call(
        self,
        tool_call_id: str,
        *,
        meta: Meta | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> CancelToolCallResponse:
        """``tool_call/cancel``: cancel one tool call, not the session's other work.

        Only while the tool call advertises ``capabilities.cancel`` (its latest
        update in the model). The response means accepted; a final
        ``tool_call_update`` confirms it.
        """
        self._check_entity("tool_call/cancel", "tool_call", tool_call_id, force=force)
        return await self._session_request(
            "tool_call/cancel",
            {"toolCallId": tool_call_id},
            CancelToolCallResponse,
            meta=meta,
            timeout=timeout,
            force=force,
        )

    async def cancel_terminal(
        self,
        terminal_id: str,
        *,
        meta: Meta | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> CancelTerminalResponse:
        """``terminal/cancel``: stop one terminal's process.

        Only while the terminal advertises ``capabilities.cancel``. A
        ``terminal_update`` with ``exitStatus`` confirms it.
        """
        self._check_entity("terminal/cancel", "terminal", terminal_id, force=force)
        return await self._session_request(
            "terminal/cancel",
            {"terminalId": terminal_id},
            CancelTerminalResponse,
            meta=meta,
            timeout=timeout,
            force=force,
        )

    async def close(
        self, *, meta: Meta | None = None, timeout: float | None = None, force: bool = False
    ) -> CloseSessionResponse:
        """``session/close``: stops the session's work, background included.

        Then the model's end-of-session checks run (``SessionModel.finish``).
        """
        try:
            result = await self._session_request(
                "session/close",
                {},
                CloseSessionResponse,
                meta=meta,
                timeout=timeout,
                force=force,
            )
        except ProtocolError:
            self.model.finish()  # answered, only not as the schema says
            raise
        self.model.finish()
        return result

    async def delete(
        self, *, meta: Meta | None = None, timeout: float | None = None, force: bool = False
    ) -> DeleteSessionResponse:
        """``session/delete`` of this session. Needs ``capabilities.session.delete``."""
        return await self._session_request(
            "session/delete", {}, DeleteSessionResponse, meta=meta, timeout=timeout, force=force
        )

    async def fork(
        self,
        cwd: str | os.PathLike[str],
        *,
        additional_directories: Sequence[str | os.PathLike[str]] | None = None,
        mcp_servers: Iterable[McpServer | Mapping[str, object]] = (),
        system_prompt: SystemPrompt | Mapping[str, object] | None = None,
        meta: Meta | None = None,
        timeout: float | None = None,
        force: bool = False,
        **extra: Any,
    ) -> ForkSessionResponse:
        """``session/fork`` (unstable): a new session with this one's context.

        Needs ``capabilities.session.fork``; ``additional_directories`` needs
        ``session.additionalDirectories`` and ``system_prompt`` (a ``SystemPrompt``)
        ``session.systemPrompt``. The forked session is open on this connection
        once the agent answers (its early updates are kept for it, as for
        ``session/new``): ``client.session(response.session_id)``.
        """
        params: dict[str, object] = {
            "cwd": os.fspath(cwd),
            "mcpServers": list(mcp_servers),
        }
        if additional_directories is not None:
            params["additionalDirectories"] = [os.fspath(d) for d in additional_directories]
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        return await self._session_request(
            "session/fork",
            params,
            ForkSessionResponse,
            meta=meta,
            extra=extra,
            timeout=timeout,
            force=force,
        )

    async def archive(
        self, *, meta: Meta | None = None, timeout: float | None = None, force: bool = False
    ) -> ArchiveSessionResponse:
        """``session/archive`` (unstable): hide it from default ``session/list`` results.

        Needs ``capabilities.session.archive``; an active session is closed first.
        """
        return await self._session_request(
            "session/archive", {}, ArchiveSessionResponse, meta=meta, timeout=timeout, force=force
        )

    async def unarchive(
        self, *, meta: Meta | None = None, timeout: float | None = None, force: bool = False
    ) -> UnarchiveSessionResponse:
        """``session/unarchive`` (unstable). Needs ``capabilities.session.archive``."""
        return await self._session_request(
            "session/unarchive",
            {},
            UnarchiveSessionResponse,
            meta=meta,
            timeout=timeout,
            force=force,
        )

    async def set_title(
        self,
        title: str,
        *,
        meta: Meta | None = None,
        timeout: float | None = None,
        force: bool = False,
    ) -> SetSessionTitleResponse:
        """``session/set_title`` (unstable): returns the title the agent stored.

        Needs ``capabilities.session.title``. Show the returned ``title``: the
        agent may have normalised it.
        """
        return await self._session_request(
            "session/set_title",
            {"title": title},
            SetSessionTitleResponse,
            meta=meta,
            timeout=timeout,
            force=force,
        )

    async def status(
        self, *, meta: Meta | None = None, timeout: float | None = None, force: bool = False
    ) -> SessionStatusResponse:
        """``session/status`` (unstable): whether the agent has the session in memory.

        Needs ``capabilities.session.status``. A snapshot: an ``idle`` ``state`` in
        it is not a new completion.
        """
        return await self._session_request(
            "session/status", {}, SessionStatusResponse, meta=meta, timeout=timeout, force=force
        )
