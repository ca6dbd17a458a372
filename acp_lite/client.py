"""The blocking facade: ``connect`` -> :class:`Client` -> :class:`Session` -> ``Turn``.

::

    import acp_lite
    with acp_lite.connect(["my-agent", "--stdio"], timeout=30) as client:
        session = client.new_session(cwd="/abs/dir")
        turn = session.run("hello")
        print(turn.stop_reason, turn.text)

Every name mirrors :class:`acp_lite.aio.AsyncClient` / :class:`acp_lite.aio.AsyncSession`
(httpx style): the same methods, not ``async``. Each client owns one daemon thread
running trio (:class:`acp_lite._portal.Portal`); each method crosses threads once
(``~50-100 µs``), never once per notification: updates are applied to the session
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
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

import trio

from acp_lite._portal import Portal, PortalClosed
from acp_lite.aio import AsyncClient, AsyncSession
from acp_lite.aio import connect as aio_connect
from acp_lite.aio import connect_streams as aio_connect_streams
from acp_lite.limits import Limits

if TYPE_CHECKING:
    from acp_lite.aio import ConnectionEvent
    from acp_lite.model import SessionModel
    from acp_lite.model.events import Event
    from acp_lite.model.submissions import Submission
    from acp_lite.transcript import Transcript
    from acp_lite.turn import Turn

__all__ = ["Client", "Session", "connect", "connect_streams"]

_BACKSTOP = 10.0
"""Seconds added to a call's own timeout for the portal's last-resort deadline: the
async layer enforces (and describes) every timeout; this only guards against a bug
there leaving a blocking caller stuck forever."""

_INTERRUPT_CANCEL_WAIT = 2.0
"""After Ctrl-C in ``run``, wait this long for the idle confirming ``session/cancel``."""


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
    plugins: Iterable[Any] = (),
    limits: Limits | None = None,
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
    thread is left behind when it does.
    """
    limits = limits or Limits()
    argv = [os.fspath(a) for a in command]
    name = os.path.basename(argv[0]) if argv else "agent"
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
        plugins=plugins,
        limits=limits,
        _session_view=client._weak_session_view,
    )
    _enter(client, connection, timeout, plugins)
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
    plugins: Iterable[Any] = (),
    limits: Limits | None = None,
    name: str = "streams",
) -> Client:
    """Connect over byte streams you provide (tests, custom transports); return a Client.

    trio streams belong to the event loop they are used in, so pass a factory:
    ``open_streams()`` (plain or ``async``) runs on the client's trio thread and
    returns ``(send_stream, receive_stream)`` (client -> agent, agent -> client),
    e.g. ``lambda: (trio.lowlevel.FdStream(w), trio.lowlevel.FdStream(r))`` or an
    ``async`` function around ``trio.open_tcp_stream``. ``close()`` closes the
    streams; there is no process to stop. Other arguments as for :func:`connect`.
    """
    limits = limits or Limits()
    plugins = list(plugins)
    client = Client._new(name, limits)
    session_view = client._weak_session_view

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
            plugins=plugins,
            limits=limits,
            _session_view=session_view,
        ) as aclient:
            yield aclient

    _enter(client, streams_connection(), timeout, plugins)
    return client


def _enter(
    client: Client,
    connection: AbstractAsyncContextManager[AsyncClient],
    timeout: float | None,
    plugins: list[Any],
) -> None:
    limits = client._limits
    handshake = limits.connect_timeout if timeout is None else timeout
    try:
        client._async = client._portal.enter_async_context(
            connection,
            # Process start + handshake, plus a failed start's shutdown ladder.
            timeout=handshake + limits.shutdown_timeout + _BACKSTOP,
        )
    except BaseException:
        client._portal.close(limits.shutdown_timeout + _BACKSTOP)
        raise
    if plugins:
        # Hooks receive the blocking client (except acp_connection_opened, which
        # runs during the handshake and sees the AsyncClient).
        client._async._conn.hook_client = client


class Client:
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

    def _call(self, afn: Callable[..., Any], *args: Any, timeout: float | None = None) -> Any:
        budget = self._limits.default_timeout if timeout is None else timeout
        return self._portal.call(afn, *args, timeout=budget + _BACKSTOP)

    def _read(self, fn: Callable[[], Any]) -> Any:
        # Reads of state the trio thread mutates go through it (one hop) while it
        # runs; after close nothing mutates it any more.
        try:
            return self._portal.run_sync(fn)
        except PortalClosed:
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
    def auth_methods(self) -> list[Any]:
        """The agent's ``authMethods`` (empty if none)."""
        return self._async.auth_methods

    @property
    def initialize_response(self) -> Any:
        """The typed ``InitializeResponse``."""
        return self._async.initialize_response

    @property
    def initialize_result(self) -> dict[str, Any]:
        """The raw ``initialize`` result."""
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

    def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Send any request (e.g. a ``_``-prefixed extension method); return the raw result."""

        async def request() -> Any:
            return await self._async.request(method, params, timeout=timeout)

        return self._call(request, timeout=timeout)

    def notify(self, method: str, params: Any = None) -> None:
        """Send any notification (e.g. a ``_``-prefixed extension notification)."""
        self._call(self._async.notify, method, params)

    def login(self, method_id: str, *, timeout: float | None = None, **params: Any) -> Any:
        """``auth/login`` with ``methodId`` (and any extra params, wire-named)."""

        async def login() -> Any:
            return await self._async.login(method_id, timeout=timeout, **params)

        return self._call(login, timeout=timeout)

    def logout(self, *, timeout: float | None = None, **params: Any) -> Any:
        """``auth/logout``."""

        async def logout() -> Any:
            return await self._async.logout(timeout=timeout, **params)

        return self._call(logout, timeout=timeout)

    def new_session(
        self,
        cwd: str | os.PathLike[str],
        mcp_servers: Iterable[Any] = (),
        additional_directories: Sequence[str | os.PathLike[str]] | None = None,
        *,
        timeout: float | None = None,
        **params: Any,
    ) -> Session:
        """``session/new``; updates that arrive before its response are kept and applied."""

        async def new_session() -> AsyncSession:
            return await self._async.new_session(
                cwd, list(mcp_servers), additional_directories, timeout=timeout, **params
            )

        return self._session_view(self._call(new_session, timeout=timeout))

    def resume_session(
        self,
        session_id: str,
        cwd: str | os.PathLike[str],
        replay: bool = False,
        *,
        mcp_servers: Iterable[Any] = (),
        timeout: float | None = None,
        **params: Any,
    ) -> Session:
        """``session/resume``; with ``replay`` the history is replayed (events marked
        ``replayed``)."""

        async def resume_session() -> AsyncSession:
            return await self._async.resume_session(
                session_id,
                cwd,
                replay,
                mcp_servers=list(mcp_servers),
                timeout=timeout,
                **params,
            )

        return self._session_view(self._call(resume_session, timeout=timeout))

    def list_sessions(
        self, cwd: str | os.PathLike[str] | None = None, *, timeout: float | None = None
    ) -> list[Any]:
        """``session/list``, following ``nextCursor`` through every page."""

        async def list_sessions() -> list[Any]:
            return await self._async.list_sessions(cwd, timeout=timeout)

        # Several pages, each bounded by ``timeout``: give the backstop room.
        result: list[Any] = self._portal.call(list_sessions)
        return result

    def delete_session(self, session_id: str, *, timeout: float | None = None) -> Any:
        """``session/delete``."""

        async def delete_session() -> Any:
            return await self._async.delete_session(session_id, timeout=timeout)

        return self._call(delete_session, timeout=timeout)

    def close(self) -> None:
        """Close the connection and stop the agent (bounded). Idempotent.

        Calls still waiting in other threads raise ``PortalClosed``.
        """
        self._portal.close(self._limits.shutdown_timeout + _BACKSTOP)


class Session:
    """One ACP session on a :class:`Client` (blocking). Get one from ``Client.new_session``.

    ``model`` is the live :class:`~acp_lite.SessionModel`, updated on the client's trio
    thread as notifications arrive: read it freely once the session is idle (after
    ``run`` / ``wait_idle``); while updates stream, prefer ``iter_updates`` or
    ``on_update``, which hand over consistent batches.
    """

    def __init__(self, client: Client, asession: AsyncSession) -> None:
        self._client = client
        self._async = asession
        self.id: str = asession.id

    def __repr__(self) -> str:
        return f"<Session {self.id!r} state={self._async.model.state!r}>"

    # ------------------------------------------------------------------ reads

    @property
    def client(self) -> Client:
        """The client this session belongs to."""
        return self._client

    @property
    def async_session(self) -> AsyncSession:
        """The underlying :class:`AsyncSession` (use it only on the client's trio thread)."""
        return self._async

    @property
    def model(self) -> SessionModel:
        """The session model (live; see the class docstring)."""
        return self._async.model

    @property
    def state(self) -> str:
        """The foreground state (``idle``, ``running``, ``requires_action`` ...)."""
        return self._async.state

    @property
    def stop_reason(self) -> str | None:
        """The stop reason of the last idle."""
        return self._async.stop_reason

    @property
    def updates(self) -> Sequence[Event]:
        """Every update received for this session, in order (the model's event log)."""
        return self._async.updates

    @property
    def timeline(self) -> list[Any]:
        """Entities in timeline order (a consistent snapshot)."""
        result: list[Any] = self._client._read(lambda: list(self._async.timeline))
        return result

    def text(self, submission: Submission | int | None = None) -> str:
        """Agent message text of the session, or of the work after ``submission``."""
        result: str = self._client._read(lambda: self._async.text(submission))
        return result

    # ------------------------------------------------------------------ prompts

    def submit(self, content: Any) -> Submission:
        """Send ``session/prompt`` and return its pending ``Submission`` at once."""
        return self._client._call(self._async.submit, content)  # type: ignore[no-any-return]

    def wait_inserted(self, submission: Submission, *, timeout: float | None = None) -> Submission:
        """Wait for the prompt's response; raise ``PromptRejected`` on error."""

        async def wait_inserted() -> Submission:
            return await self._async.wait_inserted(submission, timeout=timeout)

        return self._client._call(wait_inserted, timeout=timeout)  # type: ignore[no-any-return]

    def prompt(self, content: Any, *, timeout: float | None = None) -> Submission:
        """Send a prompt; return once the agent inserted it (``submission.message_id``).

        ``content`` is a str, a content block or a list of them. Raises
        ``PromptRejected`` when the agent answers with an error (not inserted).
        """

        async def prompt() -> Submission:
            return await self._async.prompt(content, timeout=timeout)

        return self._client._call(prompt, timeout=timeout)  # type: ignore[no-any-return]

    def withdraw(self, submission: Submission) -> bool:
        """Send ``$/cancel_request`` for a prompt not answered yet (a held prompt)."""
        result: bool = self._client._portal.run_sync(self._async.withdraw, submission)
        return result

    def run(self, content: Any, *, timeout: float | None = None) -> Turn:
        """Prompt and wait until the foreground work that followed its insertion ends.

        A failure after insertion is not an exception: it is ``turn.stop_reason ==
        "error"`` with ``turn.error`` (use ``turn.raise_for_stop()``). Ctrl-C sends
        ``session/cancel``, waits briefly for the agent to confirm, and re-raises.
        """
        asession = self._async

        async def run() -> Turn:
            try:
                return await asession.run(content, timeout=timeout)
            except trio.Cancelled:
                # Only our portal cancels this task (Ctrl-C, backstop, close): stop the
                # agent's work too instead of leaving it streaming into nobody.
                # The agent may be gone or never confirm: the Ctrl-C still wins.
                with (
                    trio.CancelScope(shield=True),
                    trio.move_on_after(_INTERRUPT_CANCEL_WAIT),
                    contextlib.suppress(Exception),
                ):
                    await asession.cancel(wait=True, timeout=_INTERRUPT_CANCEL_WAIT)
                raise

        return self._client._call(run, timeout=timeout)  # type: ignore[no-any-return]

    def wait_idle(self, *, timeout: float | None = None) -> None:
        """Wait until the foreground state is ``idle`` (returns at once if it is)."""

        async def wait_idle() -> None:
            await self._async.wait_idle(timeout=timeout)

        self._client._call(wait_idle, timeout=timeout)

    def wait_quiet(self, *, timeout: float | None = None, grace: float = 0.5) -> None:
        """Wait until idle with no background work, and still so after ``grace`` s."""

        async def wait_quiet() -> None:
            await self._async.wait_quiet(timeout=timeout, grace=grace)

        self._client._call(wait_quiet, timeout=timeout)

    def cancel(self, *, wait: bool = False, timeout: float | None = None) -> None:
        """Send ``session/cancel`` and answer pending foreground permission requests
        ``cancelled``; with ``wait``, wait for the idle that confirms it (``Timeout``
        saying so if the agent never confirms)."""

        async def cancel() -> None:
            await self._async.cancel(wait=wait, timeout=timeout)

        self._client._call(cancel, timeout=timeout)

    # ------------------------------------------------------------------ other methods

    def set_config_option(self, config_id: str, value: Any, *, timeout: float | None = None) -> Any:
        """``session/set_config_option``: a bool sets a boolean option, a str an id."""

        async def set_config_option() -> Any:
            return await self._async.set_config_option(config_id, value, timeout=timeout)

        return self._client._call(set_config_option, timeout=timeout)

    def cancel_tool_call(self, tool_call_id: str, *, timeout: float | None = None) -> Any:
        """``tool_call/cancel``."""

        async def cancel_tool_call() -> Any:
            return await self._async.cancel_tool_call(tool_call_id, timeout=timeout)

        return self._client._call(cancel_tool_call, timeout=timeout)

    def cancel_terminal(self, terminal_id: str, *, timeout: float | None = None) -> Any:
        """``terminal/cancel``."""

        async def cancel_terminal() -> Any:
            return await self._async.cancel_terminal(terminal_id, timeout=timeout)

        return self._client._call(cancel_terminal, timeout=timeout)

    def close(self, *, timeout: float | None = None) -> Any:
        """``session/close``: stops the session's work, background included."""

        async def close() -> Any:
            return await self._async.close(timeout=timeout)

        return self._client._call(close, timeout=timeout)

    def delete(self, *, timeout: float | None = None) -> Any:
        """``session/delete``."""

        async def delete() -> Any:
            return await self._async.delete(timeout=timeout)

        return self._client._call(delete, timeout=timeout)

    # ------------------------------------------------------------------ streaming

    def iter_updates(
        self, *, from_start: bool = False, timeout: float | None = None
    ) -> Iterator[Event]:
        """Yield events as they arrive (from now, or from the first with ``from_start``).

        One thread hop per *batch* of events, never per event. Ends when the
        connection closes, after the events received before that. ``timeout``
        (default: the client's default timeout) bounds each wait for new events:
        ``Timeout`` when nothing arrives for that long.
        """
        asession = self._async
        client = self._client
        budget = client._limits.default_timeout if timeout is None else timeout
        index: int = client._read(lambda: 0 if from_start else len(asession.model.events))

        async def next_batch(start: int) -> list[Event] | None:
            # Runs on the trio thread: a consistent slice of the log, or None at the end.
            conn = asession._conn
            with trio.move_on_after(budget):
                while True:
                    events = asession.model.events
                    if len(events) > start:
                        return list(events[start:])
                    if conn.failure is not None:
                        return None
                    await asession._changed_wait()
            from acp_lite.errors import Timeout

            raise Timeout(
                f"no update for session {asession.id} within {budget:g}s",
                awaited="the next session update",
                state=asession.model.state,
                session_id=asession.id,
                stderr_tail=conn.stderr_tail(),
            )

        while True:
            try:
                batch = client._portal.call(next_batch, index, timeout=budget + _BACKSTOP)
            except PortalClosed:
                return
            if batch is None:
                return
            index += len(batch)
            yield from batch

    def __iter__(self) -> Iterator[Event]:
        return self.iter_updates()

    def on_update(self, callback: Callable[[Event], object]) -> Callable[[], None]:
        """Call ``callback(event)`` for each update from now on; returns ``unsubscribe``.

        Callbacks run in a worker thread (never the trio thread), in order, several
        per thread hop. An exception in a callback is logged, not raised.
        """
        portal = self._client._portal
        unsubscribe: Callable[[], None] = portal.run_sync(self._async.on_update, callback)

        def stop() -> None:
            if portal.in_trio_thread():
                unsubscribe()
                return
            with contextlib.suppress(PortalClosed):
                portal.run_sync(unsubscribe)

        return stop
