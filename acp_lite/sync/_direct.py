"""Blocking request calls run in the caller's own thread: no crossing per call.

A blocking call normally posts its coroutine to the trio thread and waits for the
outcome: the caller wakes the trio thread, which writes the request, is woken
again by the response and wakes the caller (three thread wake-ups besides the
agent's, each tens of microseconds on a virtual machine). For the plain request
methods (those declared ``@outside_safe`` in ``acp_lite.aio``) the caller instead runs
the method's coroutine itself while the trio thread is parked:

* :class:`Gate` is a trio instrument: the trio thread holds its lock whenever it
  runs and releases it only around its I/O wait. A caller that takes the lock
  knows no trio code runs until it lets go, so it may touch the connection's
  sans-IO core (queue the request) and write the request to the agent's pipe.
* The coroutine runs until ``Connection.wait_response`` yields a
  :class:`~acp_lite.aio.outside.Parked` (see :mod:`acp_lite.aio.outside`); the
  caller makes its driver the request's waiter, lets go of the gate and waits on
  its own queue.
* For an agent run as a process, the caller *borrows* the agent's stdout pipe
  before it writes (:mod:`acp_lite.aio._pipe`): it waits on the pipe itself,
  takes the gate when the pipe is readable, feeds what it read to the connection
  (``OutsideReading.receive``), which resumes the coroutine with its
  response, and gives the pipe back in the same hold of the gate. One thread
  wakes per call, as on the async path; what else it read (updates, agent
  requests, trio tasks to wake) is left to the trio thread, in order. One caller
  borrows at a time; in the main thread only while Ctrl-C can be held off during
  a read (:class:`_HeldSigint`, in place for the call).
* Otherwise (another caller has the pipe, in-memory streams, not Linux), the trio
  thread's reader calls the waiter when the response arrives, which resumes the
  coroutine right there (it turns the response into the typed result, or raises)
  and hands the outcome to the caller's queue: the caller wakes once, while the
  trio thread finishes its pass.

A caller waits for the gate while the trio thread works (it opens between two
scheduler passes, so a streaming turn does not hold it for long). A timeout or
Ctrl-C takes the gate and resumes the coroutine in the caller's thread instead
(``Timeout`` raised by the connection; ``KeyboardInterrupt`` thrown in), which
withdraws the request (``$/cancel_request``) exactly as the trio path does.
Whoever resumes the coroutine holds the gate, so it never runs in two threads.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import queue
import select
import signal
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from acp_lite.aio.outside import OutsideTrio, Parked, step


def _raw_signal_functions() -> tuple[Callable[[int], object], Callable[[int, Any], object]]:
    # signal.getsignal / signal.signal convert handlers to and from an enum, which
    # for a function handler raises and catches a ValueError inside: ~6 µs each on
    # a small VM, more than the rest of a call's hand-over. The C functions under
    # them (CPython's _signal) take and return the handlers as they are.
    try:
        raw = importlib.import_module("_signal")
    except ImportError:  # pragma: no cover (not CPython)
        return signal.getsignal, signal.signal
    return raw.getsignal, raw.signal


_getsignal, _setsignal = _raw_signal_functions()

if TYPE_CHECKING:
    from acp_lite.aio.outside import AgentPipe, OutsideReading

__all__ = ["Gate", "drive"]

T = TypeVar("T")

_POLL_INTERVAL = 0.1
"""Seconds between wake-ups of a waiting caller (Ctrl-C, a trio run that ended)."""

_BORROW = True
"""Whether direct calls borrow the agent's pipe (off: the trio thread reads every
response; tests compare the two)."""

_TRIO = -1
"""The gate's holder while the trio thread runs (thread ids are never negative)."""


class Gate(trio.abc.Instrument):
    """Held by the trio thread except while it waits for I/O (see the module docs).

    A state under a mutex rather than a bare lock, so that whoever holds the gate is
    known exactly even when Ctrl-C lands between two statements of a caller.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        # A caller's thread id, _TRIO, or None (free). Held by trio from the start:
        # no caller gets in before the run has installed the gate.
        self._holder: int | None = _TRIO
        self._waiting = 0  # threads waiting for the gate (told when it is let go)
        self._trio_waiting = False  # the trio thread is one of them

    # --- the trio thread (an instrument: called around each I/O wait) ---------------

    def leave(self) -> None:
        """The trio run has ended: the gate stays free for good."""
        with self._cond:
            self._holder = None
            self._cond.notify_all()

    def before_io_wait(self, timeout: float) -> None:
        """Let a caller in while the trio thread sleeps."""
        with self._cond:
            self._holder = None
            if self._waiting:
                self._cond.notify_all()

    def after_io_wait(self, timeout: float) -> None:
        """Wait for a caller inside to finish before any trio code runs."""
        cond = self._cond
        with cond:
            if self._holder is not None:
                self._waiting += 1
                self._trio_waiting = True  # it goes first: callers need it to progress
                try:
                    while self._holder is not None:
                        cond.wait()
                finally:
                    self._waiting -= 1
                    self._trio_waiting = False
            self._holder = _TRIO

    # --- callers ---------------------------------------------------------------------

    def enter_wait(self, timeout: float) -> bool:
        """Take the gate once it is free, waiting at most ``timeout`` seconds;
        whether it was taken."""
        cond = self._cond
        with cond:
            if self._holder is not None or self._trio_waiting:
                self._waiting += 1
                try:
                    cond.wait_for(self._free, timeout)
                finally:
                    self._waiting -= 1
                if not self._free():
                    return False
            self._holder = threading.get_ident()
            return True

    def _free(self) -> bool:
        return self._holder is None and not self._trio_waiting

    def holds(self) -> bool:
        """Whether this thread holds the gate."""
        return self._holder == threading.get_ident()

    def exit(self) -> None:
        """Give the gate back (a caller that holds it)."""
        with self._cond:
            if self._holder == threading.get_ident():
                self._holder = None
                if self._waiting:
                    self._cond.notify_all()


_Outcome = tuple[bool, Any]  # (ok, value or exception)

_RESUME: Any = object()
"""What a caller's wait gives when the request is still unanswered at its deadline."""


class _Driver:
    """One direct call: its coroutine, the request it waits for, its outcome.

    It is the :class:`~acp_lite.aio.outside.Driver` of the coroutine's path (an
    ``OutsideTrio``) while it runs the coroutine, and the waiter of the request the
    coroutine parked on.
    """

    __slots__ = (
        "borrowed",
        "claimed",
        "closed",
        "coro",
        "deadline",
        "ended",
        "holds_sigint",
        "inbox",
        "outcome",
        "outside",
        "parked",
        "path",
        "token",
        "wake_fd",
    )

    def __init__(
        self,
        token: trio.lowlevel.TrioToken,
        coro: Coroutine[Any, Any, Any],
        ended: threading.Event,
        closed: Callable[[], BaseException],
    ) -> None:
        self.token = token
        self.coro = coro
        self.ended = ended
        self.closed = closed
        self.inbox: queue.SimpleQueue[None] = queue.SimpleQueue()
        self.outcome: _Outcome | None = None
        self.parked: Parked | None = None
        self.deadline = 0.0
        #: Someone resumes (or resumed) the coroutine from the current park.
        self.claimed = False
        #: The connection's pipe while this caller has it (acp_lite.aio._pipe).
        self.borrowed: AgentPipe | None = None
        #: The connection side whose pipe it borrowed.
        self.outside: OutsideReading | None = None
        self.path = OutsideTrio(self)
        #: An eventfd the outcome is signalled on while borrowing (-1: the inbox).
        self.wake_fd = -1
        #: This call put _HeldSigint in place (the main thread), to be undone at its end.
        self.holds_sigint = False

    def post(self, fn: Callable[[], object]) -> None:
        # A run that is over: the caller notices when it waits.
        with contextlib.suppress(trio.RunFinishedError):
            self.token.run_sync_soon(fn)

    def step(self, thrown: BaseException | None = None) -> None:
        """Run the coroutine to its next park or its end (holding the gate)."""
        try:
            yielded = step(self.path, self.coro, thrown)
        except StopIteration as stop:
            self.outcome = (True, stop.value)
            return
        except BaseException as exc:  # the call's error (or it awaited trio: refused)
            self.outcome = (False, exc)
            return
        self.parked = yielded
        self.deadline = time.monotonic() + yielded.timeout
        self.claimed = False
        yielded.entry.waiter = self

    def set(self) -> None:
        """The request was answered, or the connection lost (the trio thread, which
        holds the gate): resume the coroutine here and hand its outcome over."""
        if self.claimed:
            return
        self.claimed = True
        self.step()
        if self.outcome is not None:
            if self.wake_fd >= 0:
                os.eventfd_write(self.wake_fd, 1)
            else:
                self.inbox.put(None)

    def sending(self, outside: OutsideReading) -> None:
        """The coroutine is about to write to ``outside``'s connection (holding the
        gate): borrow its pipe first, so that no answer can wake the trio thread."""
        if self.borrowed is None:
            self.borrow(outside)

    def borrow(self, outside: OutsideReading) -> None:
        """Borrow the connection's pipe, if it has one no one else has (holding the
        gate): this thread then reads its own response."""
        pipe = outside.pipe
        if not _BORROW or pipe is None or pipe.lent or pipe.closed:
            return
        if threading.current_thread() is threading.main_thread():
            if not self.holds_sigint and not _SIGINT.install():
                return  # Ctrl-C could not be held off while this thread reads
            self.holds_sigint = True
        if self.wake_fd < 0:
            try:
                self.wake_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
            except OSError:  # out of descriptors: wait for the trio thread instead
                return
        if pipe.lend():
            self.borrowed = pipe
            self.outside = outside

    def give_back(self) -> None:
        """Return the pipe to the trio thread (holding the gate)."""
        if self.borrowed is not None:
            self.borrowed.give_back()
            self.borrowed = None


def drive(
    gate: Gate,
    token: trio.lowlevel.TrioToken,
    coroutine: Callable[[], Coroutine[Any, Any, T]],
    *,
    ended: threading.Event,
    closed: Callable[[], BaseException],
    fallback: Callable[[], T],
) -> T:
    """Run ``coroutine()`` in this thread while the trio thread is parked.

    ``ended`` is set when the trio run has ended (``closed()`` is then the error a
    waiting call raises); ``fallback()`` then runs the call the ordinary way, which
    reports why.
    """
    # Waiting for the gate beats the ordinary path even while the trio thread is
    # busy: that path needs the trio thread too, and the gate opens at its next
    # scheduler pass (between two batches of work), not only when it is idle.
    # gate.exit() is a no-op unless this thread holds the gate, so it is in a
    # `finally` that also covers taking it (Ctrl-C may land right after).
    try:
        while not gate.enter_wait(_POLL_INTERVAL):
            if ended.is_set():
                return fallback()
        if ended.is_set():
            return fallback()  # the gate is free for good; the portal says why
        driver = _Driver(token, coroutine(), ended, closed)
        parked = False
        try:
            driver.step()  # borrows the pipe before it writes (_Driver.sending)
            if driver.outcome is None and driver.borrowed is None:
                assert driver.parked is not None
                driver.borrow(driver.parked.outside)  # it parked without writing
            parked = driver.outcome is None
        finally:
            if not parked:  # done already (or interrupted): the pipe goes back now
                driver.give_back()
                if driver.outcome is None:  # interrupted: _finish will not run
                    _close_wake_fd(driver)
                    if driver.holds_sigint:
                        _SIGINT.uninstall()
    finally:
        gate.exit()
    try:
        ok, value = _finish(gate, driver)
    finally:
        try:
            _return_pipe(gate, driver)
        finally:
            if driver.holds_sigint:
                _SIGINT.uninstall()
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


def _return_pipe(gate: Gate, driver: _Driver) -> None:
    # The pipe goes back to the trio thread when the call ends whichever way (it is
    # already back when this thread read the response, in the same hold of the gate).
    interrupted = None
    if driver.borrowed is not None:
        try:
            interrupted = _enter_again(gate)
            driver.give_back()
        finally:
            gate.exit()
    _close_wake_fd(driver)
    if interrupted is not None:
        raise interrupted


def _close_wake_fd(driver: _Driver) -> None:
    if driver.wake_fd >= 0:
        os.close(driver.wake_fd)
        driver.wake_fd = -1


def _finish(gate: Gate, driver: _Driver) -> _Outcome:
    """Wait for the outcome; at a deadline, Ctrl-C or the end of the run, resume the
    coroutine here (holding the gate) with what it must see."""
    while driver.outcome is None:
        thrown = _wait(gate, driver)
        if thrown is None:
            continue  # the trio thread delivered (or parked it again)
        interrupted = None
        try:
            interrupted = _enter_again(gate)
            if driver.outcome is None and not driver.claimed:
                driver.claimed = True
                parked = driver.parked
                assert parked is not None
                parked.entry.waiter = None
                driver.step(None if thrown is _RESUME else thrown)
        finally:
            gate.exit()
        if isinstance(thrown, KeyboardInterrupt):
            raise thrown  # even if the call completed meanwhile: Ctrl-C wins
        if interrupted is not None:
            raise interrupted
    return driver.outcome


def _wait(gate: Gate, driver: _Driver) -> BaseException | None:
    """Wait on the caller's queue: ``None`` once there is an outcome, else what to
    resume the coroutine with (``_RESUME``: the deadline passed)."""
    if driver.wake_fd >= 0:
        return _wait_borrowing(gate, driver)
    # Polled: Ctrl-C delivered to another thread only reaches this one when it runs
    # bytecode, and a run that ended without answering must not leave it waiting.
    try:
        while driver.outcome is None:
            remaining = driver.deadline - time.monotonic()
            if remaining <= 0:
                return _RESUME  # type: ignore[no-any-return]
            try:
                driver.inbox.get(timeout=min(remaining, _POLL_INTERVAL))
            except queue.Empty:
                if driver.ended.is_set() and driver.outcome is None:
                    return driver.closed()
    except KeyboardInterrupt as exc:
        return exc  # thrown in: the request is withdrawn, then it propagates
    return None


def _enter_again(gate: Gate) -> KeyboardInterrupt | None:
    # Polled, and Ctrl-C is held until the gate is taken: the coroutine must be
    # resumed holding it.
    interrupted: KeyboardInterrupt | None = None
    while not gate.holds():
        try:
            gate.enter_wait(_POLL_INTERVAL)
        except KeyboardInterrupt as exc:
            interrupted = exc
    return interrupted


def _wait_borrowing(gate: Gate, driver: _Driver) -> BaseException | None:
    """:func:`_wait` for a caller that borrowed the pipe: it waits on the pipe and
    on its eventfd (the outcome, when another thread resumed the coroutine)."""
    poller = select.poll()
    poller.register(driver.wake_fd, select.POLLIN)
    pipe_fd = -1
    if driver.borrowed is not None:
        pipe_fd = driver.borrowed.fileno()
        poller.register(pipe_fd, select.POLLIN)
    try:
        while driver.outcome is None:
            remaining = driver.deadline - time.monotonic()
            if remaining <= 0:
                return _RESUME  # type: ignore[no-any-return]
            ready = poller.poll(max(1, int(min(remaining, _POLL_INTERVAL) * 1000) + 1))
            if not ready:
                if driver.ended.is_set() and driver.outcome is None:
                    return driver.closed()
                continue
            for fd, _ in ready:
                if fd == driver.wake_fd:
                    with contextlib.suppress(BlockingIOError):
                        os.eventfd_read(fd)
                elif fd == pipe_fd and driver.borrowed is not None:
                    _read_borrowed(gate, driver)
                    if driver.borrowed is None:
                        poller.unregister(pipe_fd)
                        pipe_fd = -1
    except KeyboardInterrupt as exc:
        return exc  # thrown in: the request is withdrawn, then it propagates
    return None


def _read_borrowed(gate: Gate, driver: _Driver) -> None:
    """Read what the borrowed pipe holds and feed it to the connection (holding the
    gate, with Ctrl-C held off: bytes read are never dropped halfway)."""
    try:
        while not gate.enter_wait(_POLL_INTERVAL):
            if driver.ended.is_set():
                return
        with _SIGINT.holding_off():
            pipe, outside = driver.borrowed, driver.outside
            assert pipe is not None and outside is not None
            data = None if driver.outcome is not None else pipe.read_lent()
            if data:
                outside.receive(data, driver)
            if data == b"" or pipe.closed or driver.outcome is not None:
                # Answered (the pipe goes back in this same hold of the gate), or
                # the pipe ended (the trio reader reads the end and reports it), or
                # the trio thread closed it (its descriptor is no longer polled).
                driver.give_back()
    finally:
        gate.exit()


class _HeldSigint:
    """A SIGINT handler that holds Ctrl-C off while the main thread feeds the core.

    A borrower reading in the main thread runs the sans-IO core there, and a
    ``KeyboardInterrupt`` raised halfway through would drop bytes already read.
    For the whole of a blocking call that borrows the pipe in the main thread, this
    handler stands in for Python's default one; outside :meth:`holding_off` it
    behaves as the default (raises ``KeyboardInterrupt``). It is only installed
    over the default handler (with another one in place, the main thread does not
    borrow: it waits for the trio thread), and the default is back when the call
    returns: a ``trio.run`` in the main thread later installs trio's own handler
    only over the default one, and without it a Ctrl-C breaks trio's run.
    """

    def __init__(self) -> None:
        self.holding = False
        self.caught = False  # a SIGINT was held off

    def __call__(self, signum: int, frame: Any) -> None:
        if self.holding:
            self.caught = True
            return
        signal.default_int_handler(signum, frame)

    def install(self) -> bool:
        """(Main thread) Put this handler in place of Python's default one, for a
        call; ``False`` (nothing done) if another handler is in place."""
        if _getsignal(signal.SIGINT) is not signal.default_int_handler:
            return False
        _setsignal(signal.SIGINT, self)
        return True

    def uninstall(self) -> None:
        """(Main thread) Put Python's default handler back (the call ended), unless
        someone replaced this one meanwhile."""
        if _getsignal(signal.SIGINT) is self:
            _setsignal(signal.SIGINT, signal.default_int_handler)

    @contextlib.contextmanager
    def holding_off(self) -> Iterator[None]:
        """Hold a SIGINT that lands inside, then raise it (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
            caught, self.caught = self.caught, False
            if caught:
                signal.default_int_handler(signal.SIGINT, None)


_SIGINT = _HeldSigint()
