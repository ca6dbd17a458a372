"""The typed session-level methods of ``AsyncSession`` (see ``_methods.py``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from acp_lite.aio._methods import Meta, T, _Methods, _params
from acp_lite.aio._outside import outside_safe
from acp_lite.core.v1_shapes import advertises_close
from acp_lite.errors import CapabilityNotSupported, ProtocolError
from acp_lite.protocol import (
    ArchiveSessionResponse,
    CancelTerminalResponse,
    CancelToolCallResponse,
    CloseSessionResponse,
    DeleteSessionResponse,
    ForkSessionResponse,
    McpServer,
    SessionStatusResponse,
    SetSessionConfigOptionResponse,
    SetSessionTitleResponse,
    SystemPrompt,
    UnarchiveSessionResponse,
)
from acp_lite.protocol.capabilities import (
    entity_capability,
    entity_supports,
)

if TYPE_CHECKING:
    from acp_lite.model import SessionModel

__all__ = ["SessionMethods"]


class SessionMethods(_Methods):
    """Session-level methods of :class:`~acp_lite.aio.AsyncSession`."""

    id: str
    model: SessionModel

    def _call_state(self) -> Callable[[], str | None] | None:
        model = self.model
        return lambda: model.state

    @outside_safe
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

    @outside_safe
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

    @outside_safe
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

    @outside_safe
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

    @outside_safe
    async def close(
        self, *, meta: Meta | None = None, timeout: float | None = None, force: bool = False
    ) -> CloseSessionResponse:
        """``session/close``: stops the session's work, background included.

        Then the model's end-of-session checks run (``SessionModel.finish``).
        A v1 agent that does not advertise ``sessionCapabilities.close`` (v1
        schema: the method is optional there) is not sent it: the session is
        closed locally (``session/cancel`` first if it is busy, then
        ``finish``) and an empty response returned; ``force=True`` sends it.
        """
        core = self._conn.core
        if (
            not force
            and core.protocol_version == 1
            and not advertises_close(core.initialize_result)
        ):
            if self.model.state != "idle" or self.model.outstanding():
                self._conn.cancel_session(self.id)  # its work stops, as close would do
            self.model.finish()
            return CloseSessionResponse()
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

    @outside_safe
    async def delete(
        self, *, meta: Meta | None = None, timeout: float | None = None, force: bool = False
    ) -> DeleteSessionResponse:
        """``session/delete`` of this session. Needs ``capabilities.session.delete``."""
        return await self._session_request(
            "session/delete", {}, DeleteSessionResponse, meta=meta, timeout=timeout, force=force
        )

    @outside_safe
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

    @outside_safe
    async def archive(
        self, *, meta: Meta | None = None, timeout: float | None = None, force: bool = False
    ) -> ArchiveSessionResponse:
        """``session/archive`` (unstable): hide it from default ``session/list`` results.

        Needs ``capabilities.session.archive``; an active session is closed first.
        """
        return await self._session_request(
            "session/archive", {}, ArchiveSessionResponse, meta=meta, timeout=timeout, force=force
        )

    @outside_safe
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

    @outside_safe
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

    @outside_safe
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
