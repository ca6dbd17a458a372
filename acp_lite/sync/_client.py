"""The blocking facade: ``connect`` -> :class:`Client` -> :class:`Session` -> ``Turn``.

::

    import acp_lite
    with acp_lite.connect(["my-agent", "--stdio"], timeout=30) as client:
        session = client.new_session(cwd="/abs/dir")
        turn = session.run("hello")
        print(turn.stop_reason, turn.text)

Every name mirrors :class:`acp_lite.aio.AsyncClient` / :class:`acp_lite.aio.AsyncSession`
(httpx style): the same methods, not ``async``, each declared in one line with
:func:`acp_lite.sync._mirror.blocking` unless its blocking semantics differ (``run``,
``iter_updates``, ``on_update``, ``close``). Each client owns one daemon thread
running trio (:class:`acp_lite.sync._portal.Portal`); each method crosses threads once
(``~50-100 µs``), never once per notification (plain requests run in the caller's
thread while the trio thread is parked, :mod:`acp_lite.sync._direct`): updates are
applied to the session model on the trio thread, and streaming (``iter_updates``,
``on_update``) hands them over in batches. A ``Client`` may be used from several
threads at once, and many clients may coexist.

Callbacks (``on_permission``, ``on_elicitation``, ``on_update``) run in worker
threads, never on the trio thread, so they may block and may call back into the
client. Ctrl-C in a blocking call cancels the work it started on the trio side
(``run`` sends ``session/cancel``), waits a bounded time, then re-raises.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from acp_lite.aio import AsyncClient, AsyncSession
from acp_lite.auth import AuthMethod
from acp_lite.jsontypes import JsonObject
from acp_lite.limits import Limits
from acp_lite.model.rules import Violation
from acp_lite.sync._mirror import DirectRunner, Facade, blocking
from acp_lite.sync._portal import ClientClosed, Portal

if TYPE_CHECKING:
    from acp_lite.aio import ConnectionEvent
    from acp_lite.model import SessionModel
    from acp_lite.model.entities import Entity
    from acp_lite.model.events import Event
    from acp_lite.model.submissions import Submission
    from acp_lite.protocol import AgentCapabilities, Implementation, InitializeResponse, Unset
    from acp_lite.transcript import Transcript

__all__ = ["BACKSTOP", "Client", "ClientClosed", "Session"]

T = TypeVar("T")

BACKSTOP = 10.0
"""Seconds added to a call's own timeout for the portal's last-resort deadline: the
async layer enforces (and describes) every timeout; this only guards against a bug
there leaving a blocking caller stuck forever."""


class Session(Facade):
    """One ACP session on a :class:`Client` (blocking). Get one from ``Client.new_session``.

    ``model`` is the live :class:`~acp_lite.SessionModel`, updated on the client's trio
    thread as notifications arrive: read it freely once the session is idle (after
    ``run`` / ``wait_idle``); while updates stream, prefer ``iter_updates`` or
    ``on_update``, which hand over consistent batches.
    """

    _async: AsyncSession

    def __init__(self, client: Client, asession: AsyncSession) -> None:
        self._client = client
        self._async = asession
        self.id: str = asession.id

    def __repr__(self) -> str:
        return f"<Session {self.id!r} state={self._async.model.state!r}>"

    # ------------------------------------------------------------------ plumbing

    def _call(
        self, afn: Callable[..., Awaitable[T]], *args: Any, timeout: float | None = None
    ) -> T:
        return self._client._call(afn, *args, timeout=timeout)

    def _direct_runner(self) -> DirectRunner:
        return self._client._direct_runner()

    def _view(self, value: Any) -> Any:
        return self._client._view(value)

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
    def timeline(self) -> list[Entity]:
        """Entities in timeline order (a consistent snapshot)."""
        result: list[Entity] = self._client._read(lambda: list(self._async.timeline))
        return result

    def text(self, submission: Submission | int | None = None) -> str:
        """Agent message text of the session, or of the work after ``submission``."""
        result: str = self._client._read(lambda: self._async.text(submission))
        return result

    # ------------------------------------------------------------------ prompts

    submit = blocking(AsyncSession.submit)
    wait_inserted = blocking(AsyncSession.wait_inserted)
    prompt = blocking(AsyncSession.prompt)

    def withdraw(self, submission: Submission) -> bool:
        """Send ``$/cancel_request`` for a prompt not answered yet (a held prompt)."""
        # Not async: a quick step on the trio thread, no wait and no timeout.
        result: bool = self._client._portal.run_sync(self._async.withdraw, submission)
        return result

    # Ctrl-C cancels the call's trio task (only our portal does, also at its backstop
    # or close): AsyncSession.run then stops the work it started, bounded.
    run = blocking(AsyncSession.run)
    wait_idle = blocking(AsyncSession.wait_idle)
    wait_quiet = blocking(AsyncSession.wait_quiet)
    cancel = blocking(AsyncSession.cancel)

    # ------------------------------------------------------------------ other methods

    set_config_option = blocking(AsyncSession.set_config_option)
    cancel_tool_call = blocking(AsyncSession.cancel_tool_call)
    cancel_terminal = blocking(AsyncSession.cancel_terminal)
    close = blocking(AsyncSession.close)
    delete = blocking(AsyncSession.delete)
    fork = blocking(AsyncSession.fork)
    archive = blocking(AsyncSession.archive)
    unarchive = blocking(AsyncSession.unarchive)
    set_title = blocking(AsyncSession.set_title)
    status = blocking(AsyncSession.status)

    # ------------------------------------------------------------------ streaming

    next_updates = blocking(AsyncSession.next_updates)

    def iter_updates(
        self,
        *,
        from_start: bool = False,
        timeout: float | None = None,
        until: Literal["idle", "quiet"] | None = None,
    ) -> Iterator[Event]:
        """Yield events as they arrive (from now, or from the first with ``from_start``).

        One thread hop per *batch* of events, never per event. Without ``until``
        it ends when the connection closes, after the events received before
        that; ``until="idle"`` / ``"quiet"`` end it as for
        :meth:`AsyncSession.iter_updates`. ``timeout`` (default: the connection's
        default timeout) bounds each wait for new events: ``Timeout`` when
        nothing arrives for that long.
        """
        # Hand-written: a blocking generator, not one call; each step fetches a whole
        # batch on the trio thread, and the end of the connection ends it quietly.
        # "From now" is the call, not the first step (as for the async iterator).
        if until not in (None, "idle", "quiet"):
            raise ValueError(f"until must be 'idle', 'quiet' or None, not {until!r}")
        asession = self._async
        budget = self._client.limits.default_timeout if timeout is None else timeout
        index: int = self._client._read(lambda: 0 if from_start else len(asession.model.events))
        return self._batches(index, budget, until)

    def _batches(
        self, index: int, budget: float, until: Literal["idle", "quiet"] | None
    ) -> Iterator[Event]:
        while True:
            try:
                batch = self.next_updates(index, timeout=budget, until=until)
            except ClientClosed:
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
        # Hand-written: not async; the returned ``unsubscribe`` must itself cross to
        # the trio thread (or run directly when called there, e.g. from a hook).
        portal = self._client._portal
        unsubscribe: Callable[[], None] = portal.run_sync(self._async.on_update, callback)

        def stop() -> None:
            if portal.in_trio_thread():
                unsubscribe()
                return
            with contextlib.suppress(ClientClosed):
                portal.run_sync(unsubscribe)

        return stop


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
    def agent_info(self) -> Implementation | None:
        """The agent's ``Implementation`` (``name``, ``version``, ``title``)."""
        return self._async.agent_info

    @property
    def agent_capabilities(self) -> AgentCapabilities | Unset | None:
        """The agent's ``AgentCapabilities`` (``UNSET`` if it sent none)."""
        return self._async.agent_capabilities

    @property
    def auth_methods(self) -> list[AuthMethod]:
        """The ways to log in the agent advertised (``authMethods``, v1 or v2; see
        :mod:`acp_lite.auth`), empty if none."""
        return self._async.auth_methods

    @property
    def initialize_response(self) -> InitializeResponse | None:
        """The typed ``InitializeResponse``."""
        return self._async.initialize_response

    @property
    def initialize_result(self) -> JsonObject:
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

    request = blocking(AsyncClient.request)
    notify = blocking(AsyncClient.notify)
    login = blocking(AsyncClient.login)
    logout = blocking(AsyncClient.logout)
    new_session = blocking(AsyncClient.new_session, returns=Session)
    resume_session = blocking(AsyncClient.resume_session, returns=Session)
    list_sessions = blocking(AsyncClient.list_sessions)
    delete_session = blocking(AsyncClient.delete_session)
    auth_status = blocking(AsyncClient.auth_status)
    list_providers = blocking(AsyncClient.list_providers)
    set_provider = blocking(AsyncClient.set_provider)
    disable_provider = blocking(AsyncClient.disable_provider)
    mcp_message = blocking(AsyncClient.mcp_message)

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
            self.kill_now()
            with contextlib.suppress(KeyboardInterrupt):
                self._portal.wait_done(self._limits.kill_grace + BACKSTOP)
            raise

    def kill_now(self) -> None:
        """SIGKILL the agent's process group now, skipping what is left of the
        shutdown graces (``close()`` does so on a second Ctrl-C); from any thread.
        Nothing for an agent that is not a process, or once closed."""
        aclient: AsyncClient | None = getattr(self, "_async", None)  # None: not connected
        if aclient is not None:
            self._portal.run_sync_soon_while_closing(aclient.kill_now)
