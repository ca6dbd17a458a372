"""The blocking facade: ``connect`` -> :class:`Client` -> :class:`Session` -> ``Turn``.

::

    import acp_lite
    with acp_lite.connect(["my-agent", "--stdio"], timeout=30) as client:
        session = client.new_session(cwd="/abs/dir")
        turn = session.run("hello")
        print(turn.stop_reason, turn.text)

Every name mirrors :class:`acp_lite.aio.AsyncClient` / :class:`acp_lite.aio.AsyncSession`
(httpx style): the same methods, not ``async``, each declared in one line with
:func:`acp_lite._mirror.blocking` unless its blocking semantics differ (``run``,
``iter_updates``, ``on_update``, ``close``). Each client owns one daemon thread
running trio (:class:`acp_lite._portal.Portal`); each method crosses threads once
(``~50-100 µs``), never once per notification (plain requests run in the caller's
thread while the trio thread is parked, :mod:`acp_lite._direct`): updates are applied to the session
model on the trio thread, and streaming (``iter_updates``, ``on_update``) hands
them over in batches. A ``Client`` may be used from several threads at once, and
many clients may coexist.

Callbacks (``on_permission``, ``on_elicitation``, ``on_update``) run in worker
threads, never on the trio thread, so they may block and may call back into the
client. Ctrl-C in a blocking call cancels the work it started on the trio side
(``run`` sends ``session/cancel``), waits a bounded time, then re-raises.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import threading
import weakref
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import trio

from acp_lite._mirror import Facade, blocking
from acp_lite._portal import ClientClosed, Portal
from acp_lite._sync_session import BACKSTOP, Session
from acp_lite.aio import AsyncClient, AsyncSession
from acp_lite.aio import connect as aio_connect
from acp_lite.aio import connect_streams as aio_connect_streams
from acp_lite.aio._client import command_argv, effective_limits
from acp_lite.auth import AuthMethod
from acp_lite.limits import Limits
from acp_lite.model.rules import Violation

if TYPE_CHECKING:
    from acp_lite.aio import ConnectionEvent
    from acp_lite.aio._terminals import TerminalHandler
    from acp_lite.files import FileHandler
    from acp_lite.transcript import Transcript

__all__ = ["Client", "ClientClosed", "Session", "connect", "connect_streams"]

T = TypeVar("T")


def connect(
    command: Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    timeout: float | None = None,
    client_info: Mapping[str, Any] | Any | None = None,
    capabilities: Mapping[str, Any] | Any | None = None,
    on_permission: Callable[[Any, Session], Any] | None = None,
    on_elicitation: Callable[[Any, Session | None], Any] | None = None,
    files: FileHandler | None = None,
    terminals: TerminalHandler | None = None,
    plugins: Iterable[Any] = (),
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
    thread is left behind when it does. ``conformance=True`` locates every
    conformance violation the session models observe in the transcript, sessions
    not opened here included (:meth:`Client.violations`; a few bytes per update).
    ``files=`` / ``terminals=`` serve an ACP v1 agent's ``fs/*`` / ``terminal/*``
    requests (e.g. :class:`acp_lite.LocalFiles`, :class:`acp_lite.LocalTerminals`);
    without them those are neither advertised nor served.
    """
    argv = command_argv(command)  # TypeError for a string: no shell splits it
    limits = effective_limits(limits, timeout)
    name = os.path.basename(argv[0])
    plugins = list(plugins)
    client = Client._new(name, limits)
    connection = aio_connect(
        argv,
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
        _session_view=client._weak_session_view,
        # Hooks receive the blocking client (held strongly only when there are hooks).
        _hook_client=client._attach if plugins else None,
    )
    _enter(client, connection, timeout)
    return client


StreamPair = tuple[trio.abc.SendStream, trio.abc.ReceiveStream]


def connect_streams(
    open_streams: Callable[[], StreamPair | Awaitable[StreamPair]],
    *,
    timeout: float | None = None,
    client_info: Mapping[str, Any] | Any | None = None,
    capabilities: Mapping[str, Any] | Any | None = None,
    on_permission: Callable[[Any, Session], Any] | None = None,
    on_elicitation: Callable[[Any, Session | None], Any] | None = None,
    files: FileHandler | None = None,
    terminals: TerminalHandler | None = None,
    plugins: Iterable[Any] = (),
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
    limits = effective_limits(limits, timeout)
    plugins = list(plugins)
    client = Client._new(name, limits)
    session_view = client._weak_session_view
    hook_client = client._attach if plugins else None

    @asynccontextmanager
    async def streams_connection() -> AsyncIterator[AsyncClient]:
        opened = open_streams()
        send, receive = await opened if inspect.isawaitable(opened) else opened
        async with aio_connect_streams(
            send,
            receive,
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
            _session_view=session_view,
            _hook_client=hook_client,
        ) as aclient:
            yield aclient

    _enter(client, streams_connection(), timeout)
    return client


def _enter(
    client: Client,
    connection: AbstractAsyncContextManager[AsyncClient],
    timeout: float | None,
) -> None:
    limits = client._limits
    handshake = limits.connect_timeout if timeout is None else timeout
    try:
        client._async = client._portal.enter_async_context(
            connection,
            # Process start + handshake, plus a failed start's shutdown ladder.
            timeout=handshake + limits.shutdown_timeout + BACKSTOP,
        )
    except BaseException:
        client._portal.close(limits.shutdown_timeout + BACKSTOP)
        raise


class Client(Facade):
    """A connection to one agent process (blocking). Get one from :func:`connect`."""

    _async: AsyncClient
    _limits: Limits
    _portal: Portal
    _sessions: dict[int, Session]
    _sessions_lock: threading.Lock
    _weak_session_view: Callable[[AsyncSession], Any]

    def __init__(self) -> None:
        raise TypeError("use acp_lite.connect(...) to create a Client")

    @classmethod
    def _new(cls, name: str, limits: Limits) -> Client:
        self = object.__new__(cls)
        self._limits = limits
        self._portal = Portal(name=f"acp-lite-{name}")
        self._sessions = {}
        self._sessions_lock = threading.Lock()
        # Closing a forgotten client when it is garbage collected: only *request* the
        # stop (the finalizer may run on any thread, even the trio thread).
        finalizer = weakref.finalize(self, self._portal.close, 0.0)
        finalizer.atexit = False  # the portal's own atexit hook waits properly
        # The trio side holds the client only weakly (unless a plugin needs it as the
        # hooks' ``client``), so a client dropped without close() can be collected
        # and its finalizer can stop the agent.
        ref = weakref.ref(self)

        def weak_session_view(asession: AsyncSession) -> Any:
            owner = ref()
            return owner._session_view(asession) if owner is not None else asession

        self._weak_session_view = weak_session_view
        return self

    def __repr__(self) -> str:
        state = "closed" if self._portal.closed else "open"
        agent = getattr(self, "_async", None)
        name = getattr(agent.agent_info, "name", "?") if agent is not None else "?"
        return f"<Client agent={name!r} {state}>"

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ plumbing

    def _attach(self, aclient: AsyncClient) -> Client:
        # Trio thread, while connecting: hooks (acp_connection_opened first) get this
        # client, whose reads need the AsyncClient already.
        self._async = aclient
        return self

    def _call(
        self, afn: Callable[..., Awaitable[T]], *args: Any, timeout: float | None = None
    ) -> T:
        budget = self._limits.default_timeout if timeout is None else timeout
        return self._portal.call(afn, *args, timeout=budget + BACKSTOP)

    def _direct_runner(self) -> Portal:
        return self._portal

    def _view(self, value: Any) -> Any:
        # Results of mirrored methods: sessions come back as their blocking Session.
        return self._session_view(value) if isinstance(value, AsyncSession) else value

    def _read(self, fn: Callable[[], Any]) -> Any:
        # Reads of state the trio thread mutates run while it is parked (no hop);
        # after close nothing mutates it any more.
        try:
            return self._portal.read(fn)
        except ClientClosed:
            return fn()

    def _session_view(self, asession: AsyncSession) -> Session:
        # Called on the trio thread (hooks) and from worker threads (callbacks).
        key = id(asession)
        with self._sessions_lock:
            session = self._sessions.get(key)
            if session is None or session._async is not asession:
                session = self._sessions[key] = Session(self, asession)
            return session

    # ------------------------------------------------------------------ reads

    @property
    def async_client(self) -> AsyncClient:
        """The underlying :class:`AsyncClient` (use it only on the client's trio thread)."""
        return self._async

    @property
    def protocol_version(self) -> int | None:
        """The protocol version the agent answered."""
        return self._async.protocol_version

    @property
    def agent_info(self) -> Any:
        """The agent's ``Implementation`` (``name``, ``version``, ``title``)."""
        return self._async.agent_info

    @property
    def agent_capabilities(self) -> Any:
        """The agent's ``AgentCapabilities``."""
        return self._async.agent_capabilities

    @property
    def auth_methods(self) -> list[AuthMethod]:
        """The ways to log in the agent advertised (``authMethods``, v1 or v2; see
        :mod:`acp_lite.auth`), empty if none."""
        return self._async.auth_methods

    @property
    def initialize_response(self) -> Any:
        """The typed ``InitializeResponse``."""
        return self._async.initialize_response

    @property
    def initialize_result(self) -> dict[str, object]:
        """The ``initialize`` result as the agent sent it (raw JSON)."""
        return self._async.initialize_result

    @property
    def transcript(self) -> Transcript:
        """Every wire line both ways, in order (safe to read from any thread)."""
        return self._async.transcript

    @property
    def events(self) -> list[ConnectionEvent]:
        """The client event log: protocol errors, updates for unknown sessions, ..."""
        result: list[ConnectionEvent] = self._read(lambda: self._async.events)
        return result

    def violations(self, *, since: int = 0) -> list[Violation]:
        """The session models' conformance violations so far, plus what ending the
        traffic now would add; located in :attr:`transcript` when connected with
        ``conformance=True`` (see ``ClientConnection.violations``)."""
        result: list[Violation] = self._read(lambda: self._async.violations(since=since))
        return result

    @property
    def event_counts(self) -> dict[str, int]:
        """How many client events of each kind happened, kept in :attr:`events` or not."""
        result: dict[str, int] = self._read(lambda: self._async.event_counts)
        return result

    @property
    def sessions(self) -> dict[str, Session]:
        """Sessions opened (or resumed) on this connection, by id."""
        found: dict[str, AsyncSession] = self._read(lambda: self._async.sessions)
        return {sid: self._session_view(s) for sid, s in found.items()}

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (by us, or because the agent went away)."""
        return self._portal.closed or self._async.closed

    @property
    def returncode(self) -> int | None:
        """The agent's exit status once it exited (``None`` while it runs)."""
        return self._async.returncode

    @property
    def pid(self) -> int | None:
        """The agent's process id."""
        return self._async.pid

    @property
    def limits(self) -> Limits:
        """The connection's :class:`Limits`."""
        return self._limits

    def stderr_tail(self) -> list[str]:
        """The last lines the agent wrote to stderr."""
        result: list[str] = self._read(self._async.stderr_tail)
        return result

    def session(self, session_id: str) -> Session:
        """The session with this id (``KeyError`` if not opened here)."""
        asession: AsyncSession = self._read(lambda: self._async.session(session_id))
        return self._session_view(asession)

    # ------------------------------------------------------------------ methods

    request = blocking(AsyncClient.request, direct=True)
    notify = blocking(AsyncClient.notify)
    login = blocking(AsyncClient.login, direct=True)
    logout = blocking(AsyncClient.logout, direct=True)
    new_session = blocking(AsyncClient.new_session, returns=Session, direct=True)
    resume_session = blocking(AsyncClient.resume_session, returns=Session, direct=True)
    list_sessions = blocking(AsyncClient.list_sessions)
    delete_session = blocking(AsyncClient.delete_session, direct=True)
    auth_status = blocking(AsyncClient.auth_status, direct=True)
    list_providers = blocking(AsyncClient.list_providers, direct=True)
    set_provider = blocking(AsyncClient.set_provider, direct=True)
    disable_provider = blocking(AsyncClient.disable_provider, direct=True)
    mcp_message = blocking(AsyncClient.mcp_message, direct=True)

    def close(self) -> None:
        """Close the connection and stop the agent (bounded). Idempotent.

        Calls still waiting in other threads raise ``ClientClosed``.
        """
        # Hand-written: closing stops the trio thread itself (bounded join), which a
        # call running on that thread could not do; ``AsyncClient.close`` runs as the
        # portal exits the connection context.
        try:
            self._portal.close(self._limits.shutdown_timeout + BACKSTOP)
        except KeyboardInterrupt:
            # Ctrl-C while the shutdown ladder waits (a second one, typically: the
            # first is why we are closing): stop waiting, kill the agent now.
            self._kill_now()
            with contextlib.suppress(KeyboardInterrupt):
                self._portal.wait_done(self._limits.kill_grace + BACKSTOP)
            raise

    def _kill_now(self) -> None:
        process = getattr(getattr(self, "_async", None), "_conn", None)
        process = getattr(process, "process", None)
        if process is not None:
            self._portal.run_sync_soon_while_closing(process.kill_now)
