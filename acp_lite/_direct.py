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
  caller makes itself the request's waiter, lets go of the gate and waits on its
  own queue, which the trio thread's reader fills when the response arrives.
* It takes the gate again and resumes the coroutine, which turns the response
  into the typed result (or raises), in the caller's thread.

A caller waits for the gate while the trio thread works (it opens between two
scheduler passes, so a streaming turn does not hold it for long). A
timeout or Ctrl-C resumes the coroutine early (``Timeout`` raised by the
connection; ``KeyboardInterrupt`` thrown in), which withdraws the request
(``$/cancel_request``) exactly as the trio path does.
"""

from __future__ import annotations

import contextlib
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
                try:
                    while self._holder is not None:
                        cond.wait()
                finally:
                    self._waiting -= 1
            self._holder = _TRIO

    # --- callers ---------------------------------------------------------------------

    def enter_wait(self, timeout: float, ready: Callable[[], bool] | None = None) -> bool:
        """Take the gate once it is free (and ``ready()``), waiting at most
        ``timeout`` seconds; whether it was taken.

        Waiting for the response this way (rather than being woken when it is read)
        wakes the caller once, when the trio thread parks after reading it.
        """
        cond = self._cond
        with cond:
            if self._holder is not None or (ready is not None and not ready()):
                self._waiting += 1
                try:
                    cond.wait_for(
                        lambda: self._holder is None and (ready is None or ready()), timeout
                    )
                finally:
                    self._waiting -= 1
                if self._holder is not None or (ready is not None and not ready()):
                    return False
            self._holder = threading.get_ident()
            return True

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


class _Driver:
    """One direct call: the outside hooks (``post``) and the request's waiter."""

    __slots__ = ("closed", "ended", "token")

    def __init__(
        self,
        token: trio.lowlevel.TrioToken,
        ended: threading.Event,
        closed: Callable[[], BaseException],
    ) -> None:
        self.token = token
        self.ended = ended
        self.closed = closed

    def post(self, fn: Callable[[], object]) -> None:
        # A run that is over: the caller notices when it waits.
        with contextlib.suppress(trio.RunFinishedError):
            self.token.run_sync_soon(fn)

    def set(self) -> None:
        """The request was answered, or the connection lost (trio thread).

        Nothing to do: the caller waits for the gate and the answer together
        (:meth:`Gate.enter_wait`), and the trio thread parks right after.
        """


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
        return _run(gate, _Driver(token, ended, closed), coroutine())
    finally:
        gate.exit()


def _run(gate: Gate, driver: _Driver, coro: Coroutine[Any, Any, T]) -> T:
    # Called holding the gate; lets go of it only while parked. Whatever escapes
    # while the coroutine is suspended closes it here, holding the gate, so its
    # cleanup (withdrawing the request) runs outside trio as it was written to.
    reset = OUTSIDE.set(driver)
    suspended = False
    try:
        thrown: BaseException | None = None
        while True:
            try:
                parked = coro.send(None) if thrown is None else coro.throw(thrown)
            except StopIteration as stop:
                suspended = False
                return stop.value  # type: ignore[no-any-return]
            except BaseException:
                suspended = False
                raise
            suspended = True
            if not isinstance(parked, Parked):
                raise RuntimeError(
                    f"{getattr(coro, '__qualname__', coro)} awaited trio while run outside it; "
                    "it must not be declared blocking(..., direct=True)"
                )
            parked.entry.waiter = driver
            thrown = _park(gate, driver, parked)
    finally:
        if suspended:
            if not gate.holds():
                _enter_again(gate)
            coro.close()
        OUTSIDE.reset(reset)


def _park(gate: Gate, driver: _Driver, parked: Parked) -> BaseException | None:
    """Let go of the gate, wait for the response, take the gate again; what to
    throw into the coroutine (``None``: resume it)."""
    entry = parked.entry
    deadline = time.monotonic() + parked.timeout
    thrown: BaseException | None = None
    try:
        gate.exit()
        # Polled: Ctrl-C delivered to another thread only reaches this one when it
        # runs bytecode, and a run that ended must not leave it waiting.
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break  # the coroutine sees the request unanswered: Timeout
            if gate.enter_wait(min(remaining, _POLL_INTERVAL), lambda: entry.done):
                break
            if driver.ended.is_set() and not entry.done:
                thrown = driver.closed()
                break
    except KeyboardInterrupt as exc:
        thrown = exc  # thrown in: the request is withdrawn, then it propagates
    interrupted = _enter_again(gate)
    return thrown or interrupted


def _enter_again(gate: Gate) -> KeyboardInterrupt | None:
    # The trio thread parks again right after waking this caller (it only has to
    # pump what it read), so this wait is short. Polled, and Ctrl-C is held until
    # the gate is taken: the coroutine must be resumed holding it.
    interrupted: KeyboardInterrupt | None = None
    while not gate.holds():
        try:
            gate.enter_wait(_POLL_INTERVAL)
        except KeyboardInterrupt as exc:
            interrupted = exc
    return interrupted
