"""Running a request coroutine outside trio: the connection's two call paths.

The blocking facade runs the coroutine of a plain request method (for example
``AsyncClient.request``) in the *caller's* thread while the trio thread is parked
in its I/O wait (``acp_lite.sync._direct``: a gate the trio thread holds whenever it
runs, so no trio code runs meanwhile). The caller then writes the request to the
agent's pipe itself and reads the response itself from the borrowed pipe
(:mod:`acp_lite.aio._pipe`), or else waits for the trio thread to read it: no
thread crossing per call, or one, instead of three.

Such a coroutine must not call trio: its method is declared :func:`outside_safe`
where it is written (tests/aio/test_outside_safe.py checks the bodies), and the
facade runs exactly the methods so declared in the caller's thread.

The connection writes and waits through the *path* of whoever runs it
(:data:`PATH`): :data:`IN_TRIO`, a trio task (the plain path), or an
:class:`OutsideTrio`, a coroutine a driver runs in a blocking caller's thread. The
latter hands everything to the connection's :class:`OutsideReading`, which holds
what such callers leave for the trio thread (bytes not written yet, events read
from the borrowed pipe and not acted on) and gives it to the trio side first.
"""

from __future__ import annotations

import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import trio

from acp_lite.aio._deadlines import TaskWaiter
from acp_lite.core import CoreEvent, ResponseArrived, SessionOpened

if TYPE_CHECKING:
    from acp_lite.aio._client_requests import ClientRequests
    from acp_lite.aio._pipe import AgentPipe
    from acp_lite.core import ClientConnection, PendingRequest, SessionState

__all__ = [
    "IN_TRIO",
    "PATH",
    "Driver",
    "InTrio",
    "OutsideReading",
    "OutsideTrio",
    "Parked",
    "is_outside_safe",
    "outside_safe",
    "step",
]

F = TypeVar("F", bound=Callable[..., Any])

_MARK = "__acp_outside_safe__"


def outside_safe(method: F) -> F:
    """Declare that the coroutine function ``method`` may run outside trio.

    It never calls trio itself: what it awaits is the connection's ``call`` /
    ``wait_response`` (which park it, outside trio) or other methods declared so.
    The blocking facade runs such methods in the caller's thread
    (``blocking(...)`` reads this mark).
    """
    setattr(method, _MARK, True)
    return method


def is_outside_safe(method: object) -> bool:
    """Whether ``method`` was declared :func:`outside_safe`."""
    return getattr(method, _MARK, False) is True


class Driver(Protocol):
    """What runs a coroutine in a blocking caller's thread (``acp_lite.sync._direct``)."""

    def post(self, fn: Callable[[], object]) -> None:
        """Run ``fn()`` soon on the trio thread (never raises)."""

    def sending(self, outside: OutsideReading) -> None:
        """The coroutine is about to write to ``outside``'s connection."""


class Wire(Protocol):
    """What the paths need from the connection (``Connection`` is one)."""

    core: ClientConnection
    client_requests: ClientRequests | None
    #: Session id -> the event trio tasks waiting for that session to change wait on.
    session_waiters: dict[str, trio.Event]
    outside: OutsideReading

    def flush(self) -> None: ...

    def pump(self) -> None: ...

    def write(self, data: bytes) -> None: ...

    def write_now(self, data: bytes) -> bytes: ...

    def wait_in_trio(self, entry: PendingRequest, timeout: float) -> Awaitable[None]: ...

    def session_for(self, state: SessionState) -> Any: ...


class InTrio:
    """The plain path: the caller is a trio task on the connection's thread."""

    __slots__ = ()

    def flush(self, wire: Wire, data: bytes) -> None:
        """Write ``data`` (after what callers outside trio left), or queue it."""
        wire.write(wire.outside.take_bytes(data))

    def wait(self, wire: Wire, entry: PendingRequest, timeout: float) -> Awaitable[None]:
        """Wait (at most ``timeout`` s) until ``entry`` is answered."""
        return wire.wait_in_trio(entry, timeout)


IN_TRIO = InTrio()


class OutsideTrio:
    """The path of a coroutine that ``driver`` runs in a blocking caller's thread."""

    __slots__ = ("driver",)

    def __init__(self, driver: Driver) -> None:
        self.driver = driver

    def flush(self, wire: Wire, data: bytes) -> None:
        """Write what the pipe takes now; leave the rest to the trio thread."""
        wire.outside.flush(data, self.driver)

    def wait(self, wire: Wire, entry: PendingRequest, timeout: float) -> Awaitable[None]:
        """Hand the wait to the driver (see :class:`Parked`)."""
        return _park(Parked(wire.outside, entry, timeout))


PATH: ContextVar[InTrio | OutsideTrio] = ContextVar("acp_lite_path", default=IN_TRIO)
"""The path of the code running now: an :class:`OutsideTrio` while a driver runs a
coroutine (in the caller's thread), else :data:`IN_TRIO`."""


def step(
    path: OutsideTrio, coro: Coroutine[Any, Any, Any], thrown: BaseException | None = None
) -> Parked:
    """Run ``coro`` on ``path`` to the :class:`Parked` it yields next and return that;
    its return (``StopIteration``) or error propagates.

    A coroutine that yields anything else awaited trio (it is not
    :func:`outside_safe`): it is closed (its cleanup runs on ``path`` too) and
    ``RuntimeError`` raised.
    """
    reset = PATH.set(path)
    try:
        yielded = coro.send(None) if thrown is None else coro.throw(thrown)
        if not isinstance(yielded, Parked):
            coro.close()
            name = getattr(coro, "__qualname__", coro)
            raise RuntimeError(
                f"{name} awaited trio while run outside it; it must not be declared @outside_safe"
            )
        return yielded
    finally:
        PATH.reset(reset)


class Parked:
    """What a coroutine run outside trio yields: wait for ``entry`` to be answered.

    The driver makes itself the entry's ``waiter`` (its ``set()`` is called on the
    trio thread when the response arrives, or when the connection is lost, or by
    :meth:`OutsideReading.receive`) and resumes the coroutine when ``entry.done``
    or after ``timeout`` seconds.
    """

    __slots__ = ("entry", "outside", "timeout")

    def __init__(self, outside: OutsideReading, entry: PendingRequest, timeout: float) -> None:
        #: The connection's outside reading (the driver may borrow its pipe meanwhile).
        self.outside = outside
        self.entry = entry
        self.timeout = timeout


@types.coroutine
def _park(parked: Parked) -> Generator[Parked, None, None]:
    yield parked


class OutsideReading:
    """A connection's side for callers outside trio (one per connection).

    A caller outside trio writes what the pipe takes at once (the trio thread is
    parked, so its writer is idle exactly when nothing is queued) and leaves the
    rest here, and the trio thread's next write sends it before anything newer
    (:meth:`take_bytes`), so the byte order is kept. A caller that borrowed the
    agent's pipe feeds what it read to :meth:`receive`; what it may not act on
    outside trio is left here too, for the trio thread's next pass
    (:meth:`take_events`, :meth:`take_sessions`), in order.
    """

    __slots__ = ("_backlog", "_events", "_sessions", "_wire", "pipe")

    def __init__(self, wire: Wire, pipe: AgentPipe | None) -> None:
        self._wire = wire
        #: The agent's pipe when a blocking caller may borrow it (acp_lite.aio._pipe).
        self.pipe = pipe
        self._backlog = b""
        self._events: list[CoreEvent] = []
        self._sessions: list[SessionState] = []

    # --- a caller outside trio (holding the gate: no trio code runs meanwhile) ------

    def flush(self, data: bytes, driver: Driver) -> None:
        """Write ``data`` as far as the pipe takes it now; post the rest."""
        if not data:
            return
        driver.sending(self)
        if not self._backlog:
            data = self._wire.write_now(data)
        if data:
            self._backlog += data
            driver.post(self._wire.flush)

    def receive(self, data: bytes, driver: Driver) -> None:
        """Bytes a blocking caller read from the borrowed pipe (holding the gate).

        It resumes the blocking calls whose responses lead what it read (their
        waiters run outside trio; a session they open gets its ``AsyncSession``
        here too); everything from the first other event on, and the wake-up of
        trio tasks waiting on a session, is left to the trio thread
        (``driver.post``), in order, as its own reader would have done.
        """
        wire = self._wire
        core = wire.core
        core.receive_data(data)
        events = core.next_events()
        n = 0
        if not self._events:  # else what is left to trio comes first
            for ev in events:
                if isinstance(ev, SessionOpened):  # its AsyncSession needs no trio
                    n += 1
                    continue
                if not isinstance(ev, ResponseArrived):
                    break
                if isinstance(ev.request.waiter, TaskWaiter | trio.Event):  # a trio task's
                    break
                n += 1
        waiters = wire.session_waiters
        sessions = [state for state in core.changed_sessions() if state.id in waiters]
        if n < len(events) or sessions:
            self._events.extend(events[n:])
            self._sessions.extend(sessions)
            driver.post(wire.pump)
        requests = wire.client_requests
        for ev in events[:n]:
            if isinstance(ev, SessionOpened):
                wire.session_for(ev.session)
                continue
            assert isinstance(ev, ResponseArrived)
            if requests is not None:
                requests.answered(ev.request)
            waiter = ev.request.waiter
            if waiter is not None:
                waiter.set()
        self.flush(core.data_to_send(), driver)

    # --- the trio thread: what was left comes first ---------------------------------

    def take_bytes(self, data: bytes) -> bytes:
        """``data`` after the bytes callers outside trio could not write."""
        backlog = self._backlog
        if not backlog:
            return data
        self._backlog = b""
        return backlog + data

    def take_events(self, events: list[CoreEvent]) -> list[CoreEvent]:
        """``events`` after those a borrower read and left (the core's order)."""
        if self._events:
            events[:0] = self._events
            self._events = []
        return events

    def take_sessions(self, changed: list[SessionState]) -> list[SessionState]:
        """``changed`` after the sessions a borrower changed while trio tasks waited."""
        if self._sessions:
            changed = self._sessions + changed
            self._sessions = []
        return changed
