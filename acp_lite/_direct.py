"""Blocking request calls run in the caller's own thread: one crossing per call.

A blocking call normally posts its coroutine to the trio thread and waits for the
outcome: the caller wakes the trio thread, which writes the request, is woken
again by the response and wakes the caller (three thread wake-ups besides the
agent's, each tens of microseconds on a virtual machine). For the plain request
methods (those declared ``blocking(..., direct=True)``) the caller instead runs
the method's coroutine itself while the trio thread is parked:

* :class:`Gate` is a trio instrument: the trio thread holds its lock whenever it
  runs and releases it only around its I/O wait. A caller that takes the lock
  knows no trio code runs until it lets go, so it may touch the connection's
  sans-IO core (queue the request) and write the request to the agent's pipe.
* The coroutine runs until ``Connection.wait_response`` yields a
  :class:`~acp_lite.aio._outside.Parked` (see :mod:`acp_lite.aio._outside`); the
  caller makes its driver the request's waiter, lets go of the gate and waits on
  its own queue.
* When the response arrives, the trio thread's reader calls the waiter, which
  resumes the coroutine right there (it turns the response into the typed result,
  or raises) and hands the outcome to the caller's queue: the caller wakes once,
  while the trio thread finishes its pass, instead of waking and then waiting for
  the trio thread to park again.

A caller waits for the gate while the trio thread works (it opens between two
scheduler passes, so a streaming turn does not hold it for long). A timeout or
Ctrl-C takes the gate and resumes the coroutine in the caller's thread instead
(``Timeout`` raised by the connection; ``KeyboardInterrupt`` thrown in), which
withdraws the request (``$/cancel_request``) exactly as the trio path does.
Whoever resumes the coroutine holds the gate, so it never runs in two threads.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import trio

from acp_lite.aio._outside import OUTSIDE, Parked

__all__ = ["Gate", "drive"]

T = TypeVar("T")

_POLL_INTERVAL = 0.1
"""Seconds between wake-ups of a waiting caller (Ctrl-C, a trio run that ended)."""

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

    It is the ``Outside`` of :mod:`acp_lite.aio._outside` while it runs the
    coroutine, and the waiter of the request the coroutine parked on.
    """

    __slots__ = (
        "claimed",
        "closed",
        "coro",
        "deadline",
        "ended",
        "inbox",
        "outcome",
        "parked",
        "token",
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

    def post(self, fn: Callable[[], object]) -> None:
        # A run that is over: the caller notices when it waits.
        with contextlib.suppress(trio.RunFinishedError):
            self.token.run_sync_soon(fn)

    def step(self, thrown: BaseException | None = None) -> None:
        """Run the coroutine to its next park or its end (holding the gate)."""
        reset = OUTSIDE.set(self)
        try:
            try:
                yielded = self.coro.send(None) if thrown is None else self.coro.throw(thrown)
            except StopIteration as stop:
                self.outcome = (True, stop.value)
                return
            except BaseException as exc:  # the call's error, delivered to the caller
                self.outcome = (False, exc)
                return
            if not isinstance(yielded, Parked):
                self.coro.close()
                name = getattr(self.coro, "__qualname__", self.coro)
                self.outcome = (
                    False,
                    RuntimeError(
                        f"{name} awaited trio while run outside it; "
                        "it must not be declared blocking(..., direct=True)"
                    ),
                )
                return
        finally:
            OUTSIDE.reset(reset)
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
            self.inbox.put(None)


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
    while not gate.enter_wait(_POLL_INTERVAL):
        if ended.is_set():
            return fallback()
    try:
        if ended.is_set():
            return fallback()  # the gate is free for good; the portal says why
        driver = _Driver(token, coroutine(), ended, closed)
        driver.step()
    finally:
        gate.exit()
    ok, value = _finish(gate, driver)
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


def _finish(gate: Gate, driver: _Driver) -> _Outcome:
    """Wait for the outcome; at a deadline, Ctrl-C or the end of the run, resume the
    coroutine here (holding the gate) with what it must see."""
    while driver.outcome is None:
        thrown = _wait(driver)
        if thrown is None:
            continue  # the trio thread delivered (or parked it again)
        interrupted = _enter_again(gate)
        try:
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


def _wait(driver: _Driver) -> BaseException | None:
    """Wait on the caller's queue: ``None`` once there is an outcome, else what to
    resume the coroutine with (``_RESUME``: the deadline passed)."""
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
