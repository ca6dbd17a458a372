"""``connect`` and ``connect_streams``: start (or attach to) an agent and return a
blocking :class:`~acp_lite.sync.Client` (see :mod:`acp_lite.sync`)."""

from __future__ import annotations

import inspect
import os
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Literal

import trio

from acp_lite.aio import AsyncClient, connect_streams_with, connect_with
from acp_lite.limits import Limits
from acp_lite.options import ConnectOptions, command_argv
from acp_lite.sync._client import BACKSTOP, Client, Session

if TYPE_CHECKING:
    from acp_lite.aio import TerminalHandler
    from acp_lite.files import FileHandler
    from acp_lite.permissions import ElicitationCallback, PermissionCallback
    from acp_lite.protocol import ClientCapabilities, Implementation
    from acp_lite.transcript import Transcript

__all__ = ["StreamPair", "connect", "connect_streams"]


def connect(
    command: Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    timeout: float | None = None,
    client_info: Implementation | Mapping[str, object] | None = None,
    capabilities: ClientCapabilities | Mapping[str, object] | None = None,
    on_permission: PermissionCallback[Session] | None = None,
    on_elicitation: ElicitationCallback[Session | None] | None = None,
    files: FileHandler | None = None,
    terminals: TerminalHandler | None = None,
    plugins: Iterable[object] = (),
    limits: Limits | None = None,
    protocol_version: int | Literal["auto"] = "auto",
    conformance: bool = False,
) -> Client:
    """Start the agent ``command`` (argv list, no shell), run ``initialize``, return a Client.

    Use it as a context manager (``with connect(...) as client:``) or call
    ``client.close()``; closing stops the agent (close stdin, wait, SIGTERM, wait,
    SIGKILL, bounded). ``env`` is merged onto this process's environment, or
    replaces it with ``inherit_env=False``. ``timeout`` is the default timeout of
    every call (``Limits.default_timeout``) and of the handshake.
    ``on_permission(request, session)`` returns an option id or ``None``
    (cancelled); see :mod:`acp_lite.permissions`. Raises ``AgentStartFailed``,
    ``AgentExited``, ``Timeout`` or ``UnsupportedProtocolVersion``; no process or
    thread is left behind when it does. Such an error (``AgentStartFailed``
    aside: nothing was exchanged), and a ``KeyboardInterrupt`` while connecting,
    has a ``transcript`` attribute: what was exchanged before it.
    ``conformance=True`` locates every conformance violation the session models
    observe in the transcript, sessions not opened here included
    (:meth:`Client.violations`; a few bytes per update).
    ``files=`` / ``terminals=`` serve an ACP v1 agent's ``fs/*`` / ``terminal/*``
    requests (e.g. :class:`acp_lite.LocalFiles`, :class:`acp_lite.LocalTerminals`);
    without them those are neither advertised nor served.
    """
    argv = command_argv(command)  # TypeError for a string: no shell splits it
    options = ConnectOptions(  # checks every value before a thread or agent starts
        cwd=cwd,
        env=env,
        inherit_env=inherit_env,
        timeout=timeout,
        client_info=client_info,
        capabilities=capabilities,
        # The callbacks get the blocking Session: the session view maps each AsyncSession.
        on_permission=on_permission,
        on_elicitation=on_elicitation,
        files=files,
        terminals=terminals,
        plugins=plugins,
        limits=limits,
        protocol_version=protocol_version,
        conformance=conformance,
    )
    client = Client._new(os.path.basename(argv[0]), options.effective_limits)
    started: list[Transcript] = []
    connection = connect_with(
        argv,
        options,
        session_view=client._weak_session_view,
        # Hooks receive the blocking client (held strongly only when there are hooks).
        hook_client=_noting(started, client._attach if options.plugins else None),
    )
    _enter(client, connection, timeout, started)
    return client


StreamPair = tuple[trio.abc.SendStream, trio.abc.ReceiveStream]


def connect_streams(
    open_streams: Callable[[], StreamPair | Awaitable[StreamPair]],
    *,
    timeout: float | None = None,
    client_info: Implementation | Mapping[str, object] | None = None,
    capabilities: ClientCapabilities | Mapping[str, object] | None = None,
    on_permission: PermissionCallback[Session] | None = None,
    on_elicitation: ElicitationCallback[Session | None] | None = None,
    files: FileHandler | None = None,
    terminals: TerminalHandler | None = None,
    plugins: Iterable[object] = (),
    limits: Limits | None = None,
    name: str = "streams",
    protocol_version: int | Literal["auto"] = "auto",
    conformance: bool = False,
) -> Client:
    """Connect over byte streams you provide (tests, custom transports); return a Client.

    trio streams belong to the event loop they are used in, so pass a factory:
    ``open_streams()`` (plain or ``async``) runs on the client's trio thread and
    returns ``(send_stream, receive_stream)`` (client -> agent, agent -> client),
    e.g. ``lambda: (trio.lowlevel.FdStream(w), trio.lowlevel.FdStream(r))`` or an
    ``async`` function around ``trio.open_tcp_stream``. ``close()`` closes the
    streams; there is no process to stop. Other arguments as for :func:`connect`.
    """
    options = ConnectOptions(  # checks every value before a thread starts
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
    client = Client._new(name, options.effective_limits)
    session_view = client._weak_session_view
    started: list[Transcript] = []
    hook_client = _noting(started, client._attach if options.plugins else None)

    @asynccontextmanager
    async def streams_connection() -> AsyncIterator[AsyncClient]:
        opened = open_streams()
        send, receive = await opened if inspect.isawaitable(opened) else opened
        async with connect_streams_with(
            send, receive, options, session_view=session_view, hook_client=hook_client
        ) as aclient:
            yield aclient

    _enter(client, streams_connection(), timeout, started)
    return client


def _noting(
    started: list[Transcript], attach: Callable[[AsyncClient], object] | None
) -> Callable[[AsyncClient], object]:
    """``hook_client`` that also keeps the connection's transcript in ``started`` (no
    reference to the blocking client unless ``attach`` holds one)."""

    def hook_client(aclient: AsyncClient) -> object:
        started.append(aclient.transcript)
        return aclient if attach is None else attach(aclient)

    return hook_client


def _enter(
    client: Client,
    connection: AbstractAsyncContextManager[AsyncClient],
    timeout: float | None,
    started: list[Transcript],
) -> None:
    limits = client._limits
    handshake = limits.connect_timeout if timeout is None else timeout
    try:
        client._async = client._portal.enter_async_context(
            connection,
            # Process start + handshake, plus a failed start's shutdown ladder.
            timeout=handshake + limits.shutdown_timeout + BACKSTOP,
        )
    except BaseException as exc:
        client._portal.close(limits.shutdown_timeout + BACKSTOP)
        if isinstance(exc, KeyboardInterrupt) and started:
            # Ctrl-C while connecting: what was exchanged travels with it, as with
            # an AcpError's ``transcript`` (the caller never gets the client).
            exc.transcript = started[-1]  # type: ignore[attr-defined]
        raise
