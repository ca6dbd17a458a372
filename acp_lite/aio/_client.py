"""``AsyncClient`` and the ``connect`` / ``connect_streams`` context managers."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal

import trio

from acp_lite.aio._client_methods import ClientMethods
from acp_lite.aio._connection import Connection
from acp_lite.aio._methods import _to_wire
from acp_lite.aio._outside import outside_safe
from acp_lite.aio._process import AgentProcess
from acp_lite.aio._session import AsyncSession
from acp_lite.aio._terminals import TerminalHandler
from acp_lite.auth import AuthMethod, auth_methods_from
from acp_lite.core import PROTOCOL_VERSION, ConnectionEvent
from acp_lite.errors import AcpError, AgentExited, ProtocolError, RequestError, Timeout
from acp_lite.files import FileHandler
from acp_lite.jsontypes import JsonObject
from acp_lite.limits import Limits
from acp_lite.model.rules import Violation
from acp_lite.options import ConnectOptions, command_argv
from acp_lite.protocol import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    McpServer,
    Unset,
    converter,
)
from acp_lite.transcript import Transcript

if TYPE_CHECKING:
    from acp_lite.permissions import ElicitationCallback, PermissionCallback

__all__ = [
    "PROTOCOL_VERSION",
    "AsyncClient",
    "connect",
    "connect_streams",
    "connect_streams_with",
    "connect_with",
]


def _version() -> str:
    # The package's own constant, not importlib.metadata: importing that costs ~20 ms
    # of start-up and a lookup scans every distribution on sys.path. A test checks
    # the constant against the installed metadata.
    from acp_lite._version import __version__

    return __version__


DEFAULT_CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}}
"""Advertised by default: form elicitation (answered by ``on_elicitation``, the
``acp_elicitation_request`` hooks, or the default policy: decline)."""


def _wire(value: Any) -> Any:
    if value is None or isinstance(value, dict | list | str | int | float | bool):
        return value
    return converter.unstructure(value)


def _extra(params: Mapping[str, object]) -> dict[str, object]:
    # Extra keyword arguments are protocol parameters: JSON values only (a callable
    # such as on_permission= belongs to connect(), not to the agent).
    return {k: _to_wire(v, f"keyword argument {k!r}") for k, v in params.items()}


class AsyncClient(ClientMethods):
    """A connection to one agent, after ``initialize`` (trio, async).

    Get one from :func:`connect` (spawns the agent) or :func:`connect_streams`.
    """

    _conn: Connection  # the methods need only its Link; the client reads more

    def __init__(
        self, connection: Connection, hook_client: Callable[[AsyncClient], object] | None = None
    ) -> None:
        self._conn = connection
        # What hooks receive as ``client``: this object, or what the blocking facade
        # makes of it (its ``Client``), from the first hook on.
        connection.hook_client = self if hook_client is None else hook_client(self)
        self.initialize_response: InitializeResponse | None = None

    def __repr__(self) -> str:
        name = self.agent_info.name if self.agent_info is not None else "?"
        return f"<AsyncClient agent={name!r} sessions={len(self._conn.sessions)}>"

    # ------------------------------------------------------------------ handshake

    async def _initialize(
        self,
        *,
        client_info: Implementation | Mapping[str, object] | None,
        capabilities: ClientCapabilities | Mapping[str, object] | None,
        timeout: float | None,
    ) -> None:
        conn = self._conn
        info = _wire(client_info) or {"name": "acp-lite", "version": _version()}
        caps = DEFAULT_CAPABILITIES if capabilities is None else _wire(capabilities)
        params: dict[str, Any] = {
            "protocolVersion": PROTOCOL_VERSION,
            "info": info,
            "capabilities": caps,
        }
        requests = conn.client_requests
        if requests is not None and conn.requested_version != 2:
            # v1 agents read v1 clientCapabilities: a v1 agent answering this v2
            # initialize sees what is served (docs/v1.md, "Files and terminals").
            params["clientCapabilities"] = requests.capabilities()
        entry = conn.core.initialize(params)
        conn.flush()
        try:
            response = await conn.wait_response(
                entry, timeout=conn.limits.connect_timeout if timeout is None else timeout
            )
        except (AgentExited, Timeout, RequestError, ProtocolError) as exc:
            foreign = conn.core.foreign
            if not foreign:
                raise
            # Whatever went wrong, the cause is likely that this is no ACP agent.
            printed = ", ".join(repr(line.decode("utf-8", "replace")) for line in foreign)
            raise ProtocolError(
                f"this does not look like an ACP agent: it printed {printed} (then: {exc.message})",
                method="initialize",
                stderr_tail=exc.stderr_tail,
            ) from exc
        self.initialize_response = response
        conn.call_hook("acp_connection_opened", client=conn.hook_client)

    # ------------------------------------------------------------------ reads

    @property
    def initialize_result(self) -> JsonObject:
        """The ``initialize`` result as the agent sent it (raw JSON)."""
        return self._conn.core.initialize_result

    @property
    def protocol_version(self) -> int | None:
        """The protocol version the connection speaks: 2, or 1 for an agent that
        answered in v1 (translated to the v2 model by the core; ``docs/v1.md``)."""
        if self.initialize_response is None:
            return None
        return self._conn.core.protocol_version

    @property
    def agent_info(self) -> Implementation | None:
        """The agent's ``Implementation`` (``name``, ``version``, ``title``)."""
        r = self.initialize_response
        return r.info if r is not None else None

    @property
    def agent_capabilities(self) -> AgentCapabilities | Unset | None:
        """The agent's ``AgentCapabilities`` (``UNSET`` if it sent none; ``None``
        before ``initialize``)."""
        r = self.initialize_response
        return r.capabilities if r is not None else None

    @property
    def auth_methods(self) -> list[AuthMethod]:
        """The ways to log in the agent advertised (``authMethods``, v1 or v2; see
        :mod:`acp_lite.auth`), empty if none."""
        return auth_methods_from(self._conn.core.initialize_result.get("authMethods"))

    @property
    def transcript(self) -> Transcript:
        """Every wire line both ways, in order (see :class:`Transcript`)."""
        return self._conn.transcript

    @property
    def events(self) -> list[ConnectionEvent]:
        """The client event log: protocol errors, updates for unknown sessions, ..."""
        return list(self._conn.core.log)

    def violations(self, *, since: int = 0) -> list[Violation]:
        """The session models' conformance violations so far, plus what ending the
        traffic now would add; located in :attr:`transcript` when connected with
        ``conformance=True`` (see ``ClientConnection.violations``)."""
        return self._conn.core.violations(since=since)

    @property
    def event_counts(self) -> dict[str, int]:
        """How many client events of each kind happened, kept in :attr:`events` or
        not (``Limits.max_events_per_kind`` bounds what is kept of each kind)."""
        return dict(self._conn.core.log_counts)

    @property
    def sessions(self) -> dict[str, AsyncSession]:
        """Sessions opened (or resumed) on this connection, by id."""
        return dict(self._conn.sessions)

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (by us, or because the agent went away)."""
        return self._conn.failure is not None

    @property
    def returncode(self) -> int | None:
        """The agent's exit status once it exited (``None`` while it runs): its
        process's, or an in-process agent's that records how it ended (as
        :meth:`stderr_tail` reads its log)."""
        process = self._conn.process
        if process is not None:
            return process.returncode
        peer = self._conn._peer
        return peer.returncode if peer is not None else None

    @property
    def pid(self) -> int | None:
        """The agent's process id (``None`` for a stream connection)."""
        process = self._conn.process
        return process.pid if process is not None else None

    @property
    def limits(self) -> Limits:
        """The connection's :class:`Limits`."""
        return self._conn.limits

    def stderr_tail(self) -> list[str]:
        """The last lines the agent wrote to stderr."""
        return self._conn.stderr_tail()

    def session(self, session_id: str) -> AsyncSession:
        """The session with this id (``KeyError`` if not opened here)."""
        return self._conn.sessions[session_id]

    # ------------------------------------------------------------------ methods

    async def notify(self, method: str, params: object = None) -> None:
        """Send any notification (e.g. a ``_``-prefixed extension notification)."""
        self._conn.notify(method, {} if params is None else _wire(params))

    @outside_safe
    async def new_session(
        self,
        cwd: str | os.PathLike[str],
        mcp_servers: Iterable[McpServer | Mapping[str, object]] = (),
        additional_directories: Sequence[str | os.PathLike[str]] | None = None,
        *,
        timeout: float | None = None,
        **params: object,
    ) -> AsyncSession:
        """``session/new``; updates that arrive before its response are kept and applied."""
        wire: dict[str, Any] = {
            "cwd": os.fspath(cwd),
            "mcpServers": [_wire(s) for s in mcp_servers],
            **_extra(params),
        }
        if additional_directories is not None:
            wire["additionalDirectories"] = [os.fspath(d) for d in additional_directories]
        response = await self._conn.call("session/new", wire, timeout=timeout)
        return self._conn.session_for(self._conn.core.sessions[response.session_id])

    @outside_safe
    async def resume_session(
        self,
        session_id: str,
        cwd: str | os.PathLike[str],
        replay: bool = False,
        *,
        mcp_servers: Iterable[McpServer | Mapping[str, object]] = (),
        timeout: float | None = None,
        **params: object,
    ) -> AsyncSession:
        """``session/resume``; with ``replay`` the history is replayed (events marked
        ``replayed``). The agent's state snapshot, not the response, sets the state."""
        conn = self._conn
        wire: dict[str, Any] = {
            "sessionId": session_id,
            "cwd": os.fspath(cwd),
            "mcpServers": [_wire(s) for s in mcp_servers],
            **_extra(params),
        }
        if replay:
            wire["replayFrom"] = {"type": "start"}
        entry = conn.core.resume(session_id, wire, replay=replay)
        conn.sent(entry, wire)
        conn.flush()
        session = conn.session_for(conn.core.sessions[session_id])
        await conn.wait_response(entry, timeout=timeout, state=lambda: session.model.state)
        return session

    async def aclose(self) -> None:
        """Close the connection and the agent (bounded shutdown ladder)."""
        await self._conn.aclose()

    async def close(self) -> None:
        """Same as :meth:`aclose` (the name the blocking ``Client`` uses)."""
        await self._conn.aclose()

    def kill_now(self) -> None:
        """SIGKILL the agent's process group now, skipping what is left of the
        shutdown graces (a second Ctrl-C during the blocking ``close()``); on the trio
        thread. Nothing for an agent that is not a process."""
        process = self._conn.process
        if process is not None:
            process.kill_now()


def _unwrap_group(exc: BaseExceptionGroup[Any]) -> BaseException:
    # The nursery wraps even a single error in an ExceptionGroup; callers should see
    # AgentExited, Timeout, their own exception ... not a group.
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


@asynccontextmanager
async def connect_streams(
    send_stream: trio.abc.SendStream,
    receive_stream: trio.abc.ReceiveStream,
    *,
    timeout: float | None = None,
    client_info: Implementation | Mapping[str, object] | None = None,
    capabilities: ClientCapabilities | Mapping[str, object] | None = None,
    on_permission: PermissionCallback[AsyncSession] | None = None,
    on_elicitation: ElicitationCallback[AsyncSession | None] | None = None,
    files: FileHandler | None = None,
    terminals: TerminalHandler | None = None,
    plugins: Iterable[object] = (),
    limits: Limits | None = None,
    protocol_version: int | Literal["auto"] = "auto",
    conformance: bool = False,
) -> AsyncIterator[AsyncClient]:
    """Connect over an already-open pair of byte streams and run ``initialize``.

    ``send_stream`` carries client -> agent lines, ``receive_stream`` agent -> client.
    ``timeout`` sets the default timeout of every call (``Limits.default_timeout``).
    ``protocol_version``: ``"auto"`` asks for v2 and continues in v1 when the agent
    answers v1 (by version, or by the shape of its answer); ``2`` or ``1`` insist.
    ``conformance=True`` locates the session models' violations in the transcript
    (:meth:`AsyncClient.violations`). ``files`` / ``terminals`` serve the ACP v1
    agent requests ``fs/*`` / ``terminal/*`` (e.g. ``acp_lite.LocalFiles()``,
    ``acp_lite.LocalTerminals()``); only what is given is advertised. A bad value
    raises ``TypeError`` / ``ValueError`` here (:class:`~acp_lite.options.ConnectOptions`).
    """
    options = ConnectOptions(
        timeout=timeout,
        client_info=client_info,
        capabilities=capabilities,
        on_permission=on_permission,
        on_elicitation=on_elicitation,
        files=files,
        terminals=terminals,
        plugins=plugins,
        limits=limits,
        protocol_version=protocol_version,
        conformance=conformance,
    )
    async with connect_streams_with(send_stream, receive_stream, options) as client:
        yield client


@asynccontextmanager
async def connect_streams_with(
    send_stream: trio.abc.SendStream,
    receive_stream: trio.abc.ReceiveStream,
    options: ConnectOptions,
    *,
    process: AgentProcess | None = None,
    session_view: Callable[[AsyncSession], object] | None = None,
    hook_client: Callable[[AsyncClient], object] | None = None,
) -> AsyncIterator[AsyncClient]:
    """:func:`connect_streams` with its options as one :class:`~acp_lite.options.ConnectOptions`.

    ``process``: the agent process the streams belong to (:func:`connect_with`
    passes it; without one, ``options`` may not set ``cwd`` / ``env`` /
    ``inherit_env``: there is no process they could apply to). For a layer above
    this one (the blocking facade passes its ``Session`` and ``Client``):
    ``session_view(async_session)`` is what callbacks and hooks receive as
    ``session``, ``hook_client(async_client)`` what hooks receive as ``client``
    (``None``: the async objects).
    """
    if process is None and options.process_options:
        names = ", ".join(sorted(options.process_options))
        raise ValueError(
            f"{names}: options of an agent process, and these streams have none "
            "(connect_with starts one)"
        )
    conn = Connection(
        send_stream,
        receive_stream,
        options,
        session_view=session_view,
        process=process,
    )
    client = AsyncClient(conn, hook_client)
    opened = False
    try:
        async with trio.open_nursery() as nursery:
            conn.start(nursery)
            try:
                await client._initialize(
                    client_info=options.client_info,
                    capabilities=options.capabilities,
                    timeout=None,
                )
                opened = True
                yield client
            finally:
                await conn.aclose()
                nursery.cancel_scope.cancel()
    except BaseException as exc:
        inner = _unwrap_group(exc) if isinstance(exc, BaseExceptionGroup) else exc
        if not opened and isinstance(inner, AcpError) and inner.transcript is None:
            # The caller never got the client: what was exchanged travels with the error.
            inner.transcript = conn.transcript
        if inner is exc:
            raise
        raise inner from inner.__cause__


@asynccontextmanager
async def connect(
    command: Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    timeout: float | None = None,
    client_info: Implementation | Mapping[str, object] | None = None,
    capabilities: ClientCapabilities | Mapping[str, object] | None = None,
    on_permission: PermissionCallback[AsyncSession] | None = None,
    on_elicitation: ElicitationCallback[AsyncSession | None] | None = None,
    files: FileHandler | None = None,
    terminals: TerminalHandler | None = None,
    plugins: Iterable[object] = (),
    limits: Limits | None = None,
    protocol_version: int | Literal["auto"] = "auto",
    conformance: bool = False,
) -> AsyncIterator[AsyncClient]:
    """Start the agent ``command`` (argv list, no shell), ``initialize``, yield the client.

    ``env`` is merged onto this process's environment, or replaces it with
    ``inherit_env=False``. Leaving the block closes the agent: close stdin, wait,
    SIGTERM, wait, SIGKILL (bounded by ``limits.shutdown_timeout``).
    ``protocol_version``, ``conformance``, ``files`` and ``terminals`` as for
    :func:`connect_streams`. A bad value raises ``TypeError`` / ``ValueError``
    before the agent starts.
    """
    argv = command_argv(command)
    options = ConnectOptions(
        cwd=cwd,
        env=env,
        inherit_env=inherit_env,
        timeout=timeout,
        client_info=client_info,
        capabilities=capabilities,
        on_permission=on_permission,
        on_elicitation=on_elicitation,
        files=files,
        terminals=terminals,
        plugins=plugins,
        limits=limits,
        protocol_version=protocol_version,
        conformance=conformance,
    )
    async with connect_with(argv, options) as client:
        yield client


@asynccontextmanager
async def connect_with(
    command: Sequence[str | os.PathLike[str]],
    options: ConnectOptions,
    *,
    session_view: Callable[[AsyncSession], object] | None = None,
    hook_client: Callable[[AsyncClient], object] | None = None,
) -> AsyncIterator[AsyncClient]:
    """:func:`connect` with its options as one :class:`~acp_lite.options.ConnectOptions`
    (``session_view`` / ``hook_client`` as for :func:`connect_streams_with`)."""
    argv = command_argv(command)
    process = await AgentProcess.start(
        argv,
        cwd=options.cwd,
        env=options.env,
        inherit_env=options.inherit_env,
        limits=options.effective_limits,
    )
    try:
        async with connect_streams_with(
            process.stdin,
            process.stdout,
            options,
            process=process,
            session_view=session_view,
            hook_client=hook_client,
        ) as client:
            yield client
    finally:
        with trio.CancelScope(shield=True):
            await process.aclose()
