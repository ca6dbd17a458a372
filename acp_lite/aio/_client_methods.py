"""The typed connection-level methods of ``AsyncClient`` (see ``_methods.py``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, overload

import trio

from acp_lite.aio._methods import Meta, T, _Methods, _params, _to_wire, _typed
from acp_lite.aio._outside import outside_safe
from acp_lite.errors import ProtocolError, Timeout
from acp_lite.protocol import (
    AuthStatusResponse,
    DeleteSessionResponse,
    DisableProviderResponse,
    InitializeResponse,
    ListProvidersResponse,
    ListSessionsResponse,
    LoginAuthResponse,
    LogoutAuthResponse,
    SessionInfo,
    SetProviderResponse,
)

if TYPE_CHECKING:
    pass

__all__ = ["ClientMethods"]


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
    @outside_safe
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

    @outside_safe
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

    @outside_safe
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

    @outside_safe
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

    @outside_safe
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

    @outside_safe
    async def list_providers(
        self, *, meta: Meta | None = None, timeout: float | None = None, force: bool = False
    ) -> ListProvidersResponse:
        """``providers/list`` (unstable). Needs ``capabilities.providers``."""
        params = _params({}, meta, {})
        return await self._request(
            "providers/list", params, ListProvidersResponse, timeout=timeout, force=force
        )

    @outside_safe
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

    @outside_safe
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

    @outside_safe
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
