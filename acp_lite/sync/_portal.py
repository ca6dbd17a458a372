"""A trio event loop in a background thread, reached from blocking code.

The blocking facade (``acp_lite.client``) owns one :class:`Portal` per ``Client``:
one daemon thread running ``trio.run``. A blocking call crosses threads exactly
once per user-level operation: the caller posts a task with
``TrioToken.run_sync_soon`` and waits on its own ``queue.SimpleQueue`` (its
"inbox"); the task puts the outcome there. Nothing here runs per notification.

Why not ``trio.from_thread.run``: it cannot cancel the work it started when the
caller gets ``KeyboardInterrupt`` (the trio task keeps running, for example a
prompt keeps streaming into an abandoned session), it has no deadline of its own,
and it cannot run callbacks in the waiting caller's thread.

Rules kept here:

* **Timeouts are enforced on the trio side** (a ``CancelScope`` deadline), so the
  work stops when the caller gives up; the caller gets ``acp_lite.errors.Timeout``.
* **Ctrl-C**: ``KeyboardInterrupt`` lands in the caller's thread (trio in a
  non-main thread installs no SIGINT handler). We cancel the trio task the call
  started, wait up to ``cancel_grace`` seconds for it to unwind (that is when a
  prompt sends ``session/cancel``), then re-raise.
* Exception groups with a single leaf are unwrapped so users see ``AgentExited``,
  not ``ExceptionGroup``.
* The thread is a daemon; ``close()`` joins it with a bound; an ``atexit`` hook
  closes portals still open at interpreter exit (atexit runs while daemon threads
  are alive). Calling into the portal from its own trio thread raises
  ``RuntimeError`` instead of deadlocking.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import math
import queue
import threading
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import outcome
import trio

from acp_lite.errors import ClientClosed, Timeout, TransportError
from acp_lite.sync._direct import Gate, drive

__all__ = ["ClientClosed", "Portal", "unwrap_group"]

T = TypeVar("T")

log = logging.getLogger("acp_lite.portal")

DEFAULT_CANCEL_GRACE = 5.0
"""Seconds a Ctrl-C'd call waits for its trio work to unwind before re-raising."""

DEFAULT_START_TIMEOUT = 10.0


def unwrap_group(exc: BaseException) -> BaseException:
    """Strip ``BaseExceptionGroup`` wrappers that hold exactly one exception."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


_POLL_INTERVAL = 0.1
"""Seconds between wake-ups of a blocked caller (see :func:`_get`)."""


def _get(inbox: queue.SimpleQueue[tuple[str, Any]]) -> tuple[str, Any]:
    # Wake up now and then: a SIGINT the kernel delivered to another thread (such as
    # the trio thread) only sets a flag that the main thread checks when it runs
    # bytecode, and an untimed lock wait never does; on Windows lock waits cannot be
    # interrupted at all. Polling makes Ctrl-C reach a blocked call within 0.1 s.
    while True:
        try:
            return inbox.get(timeout=_POLL_INTERVAL)
        except queue.Empty:
            continue


class _Call:
    """One blocking call in flight: its inbox and the trio scope of its work."""

    __slots__ = ("finished", "inbox", "interrupted", "posted", "scope")

    def __init__(self) -> None:
        self.inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        # Created here, only *cancelled* on the trio thread (CancelScope is not
        # thread-safe); cancelling before it is entered makes it start cancelled.
        self.scope = trio.CancelScope()
        self.interrupted = False
        self.posted = False  # handed to the trio thread (set just before posting)
        self.finished = False  # the trio side delivered the outcome

    def finish(self, kind: str, payload: Any) -> None:
        """Deliver the outcome (trio thread)."""
        self.finished = True
        self.inbox.put((kind, payload))


class _Host:
    """An entered async context manager: stop it, wait until it has exited."""

    __slots__ = ("done", "stop")

    def __init__(self) -> None:
        self.stop = trio.Event()
        self.done = trio.Event()


# Portals whose trio thread is still running (each thread removes its portal when it
# ends, so a close() still in progress elsewhere is waited for at exit too).
_OPEN_PORTALS: set[Portal] = set()
_OPEN_LOCK = threading.Lock()


@atexit.register
def _close_open_portals() -> None:
    # Safety net for scripts that never call close() (or exit while a close() runs in
    # another thread): stop the agents before the interpreter tears the daemon
    # threads down mid-write.
    with _OPEN_LOCK:
        portals = list(_OPEN_PORTALS)
    for portal in portals:
        with contextlib.suppress(Exception):
            portal.close(timeout=5.0)


class Portal:
    """A ``trio.run`` in a daemon thread plus blocking entry points into it."""

    def __init__(
        self,
        *,
        name: str = "acp-lite-trio",
        cancel_grace: float = DEFAULT_CANCEL_GRACE,
        start_timeout: float = DEFAULT_START_TIMEOUT,
    ) -> None:
        self.cancel_grace = cancel_grace
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._closing = False
        self._fatal: BaseException | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        #: Set when the trio run has ended (the thread is about to exit).
        self._done = threading.Event()
        self._calls: trio.Nursery | None = None
        self._stop: trio.Event | None = None
        self._hosts_nursery: trio.Nursery | None = None
        self._hosts: list[_Host] = []
        self._gate = Gate()
        self._thread = threading.Thread(target=self._thread_main, name=name, daemon=True)
        with _OPEN_LOCK:
            _OPEN_PORTALS.add(self)
        self._thread.start()
        if not self._ready.wait(start_timeout):  # pragma: no cover - trio failed to start
            raise RuntimeError(f"the trio thread {name!r} did not start in {start_timeout}s")
        if self._fatal is not None:  # pragma: no cover - trio failed to start
            raise self._fatal

    # --- the trio thread ------------------------------------------------------------

    def _thread_main(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # recorded: every later call raises it
            self._fatal = unwrap_group(exc)
            log.debug("trio thread ended with %r", self._fatal)
        finally:
            self._gate.leave()
            self._ready.set()
            self._done.set()
            with _OPEN_LOCK:
                _OPEN_PORTALS.discard(self)

    async def _main(self) -> None:
        self._stop = trio.Event()
        trio.lowlevel.add_instrument(self._gate)  # direct calls: see acp_lite.sync._direct
        # Contexts entered with enter_async_context each live in a "host" task of the
        # outer nursery (trio requires a nursery/cancel scope to be exited by the task
        # that entered it, in nesting order). Calls run in the inner nursery, so
        # closing first cancels the calls, then exits the contexts, newest first.
        async with trio.open_nursery() as hosts:
            self._hosts_nursery = hosts
            async with trio.open_nursery() as calls:
                self._token = trio.lowlevel.current_trio_token()
                self._calls = calls
                self._ready.set()
                await self._stop.wait()
                calls.cancel_scope.cancel()
            for host in reversed(self._hosts):
                host.stop.set()
                await host.done.wait()

    async def _host(self, call: _Call, cm: AbstractAsyncContextManager[Any], host: _Host) -> None:
        entered = False
        try:
            # One scope around the whole `async with`: its deadline bounds __aenter__
            # only (removed once entered); Ctrl-C during the enter cancels it.
            with call.scope:
                async with cm as value:
                    entered = True
                    call.scope.deadline = math.inf
                    call.finish("ok", value)
                    await host.stop.wait()
        except trio.Cancelled:
            if not entered:
                call.finish("error", ClientClosed("the client was closed"))
            raise
        except BaseException as exc:
            if not entered:
                call.finish("error", exc)
            elif not self._closing:
                # The context failed on its own (e.g. the connection's reader task
                # raised): record it so every waiter and later call sees this error,
                # then stop the loop.
                self._fatal = unwrap_group(exc)
                log.debug("entered context failed: %r", self._fatal)
                assert self._stop is not None
                self._stop.set()
            else:
                log.debug("error while closing an entered context: %r", exc)
        else:
            if not entered:
                if call.interrupted:
                    call.finish("error", KeyboardInterrupt())
                else:
                    call.finish("error", Timeout("timed out while connecting"))
        finally:
            host.done.set()

    # --- entry points ---------------------------------------------------------------

    @property
    def thread(self) -> threading.Thread:
        """The trio thread."""
        return self._thread

    @property
    def closed(self) -> bool:
        """``True`` once ``close()`` was called or the trio thread ended."""
        return self._closing or not self._thread.is_alive()

    def in_trio_thread(self) -> bool:
        """``True`` when called from this portal's trio thread."""
        return threading.current_thread() is self._thread

    def _check_caller(self) -> trio.lowlevel.TrioToken:
        if self.in_trio_thread():
            raise RuntimeError(
                "a blocking acp_lite call was made from the client's own trio thread "
                "(e.g. from a session-update hook); use the async API there, or hand "
                "the work to another thread"
            )
        if self._closing or (self._token is None and self._fatal is None):
            raise ClientClosed("the client is closed")
        if self._fatal is not None:
            raise self._fatal
        assert self._token is not None
        return self._token

    def _post(self, token: trio.lowlevel.TrioToken, fn: Callable[..., object], *args: Any) -> None:
        try:
            token.run_sync_soon(fn, *args)
        except trio.RunFinishedError:
            raise self._fatal or ClientClosed("the client is closed") from None

    def call(
        self,
        afn: Callable[..., Awaitable[T]],
        *args: Any,
        timeout: float | None = None,
        on_timeout: Callable[[float], BaseException] | None = None,
    ) -> T:
        """Run ``await afn(*args)`` on the trio thread and return its result.

        ``timeout`` (seconds, ``None`` = no limit) is a deadline on the trio side:
        when it passes, the work is cancelled and ``on_timeout(timeout)`` (called on
        the trio thread, so it can read state consistently) gives the exception to
        raise, by default :class:`acp_lite.errors.Timeout`.
        """
        token = self._check_caller()
        call = _Call()
        return self._roundtrip(  # type: ignore[no-any-return]
            call, token, self._start, call, afn, args, timeout, on_timeout
        )

    def call_direct(
        self,
        coroutine: Callable[[], Coroutine[Any, Any, T]],
        *,
        fallback: Callable[[], T],
    ) -> T:
        """Run ``coroutine()`` in the calling thread while the trio thread is parked
        (no thread crossing, or one; see :mod:`acp_lite.sync._direct`), else ``fallback()``.

        Only for coroutines whose awaits are all ``Connection.wait_response``.
        """
        token = self._check_caller()
        try:
            return drive(
                self._gate,
                token,
                coroutine,
                ended=self._done,
                closed=lambda: self._fatal or ClientClosed("the client was closed"),
                fallback=fallback,
            )
        except TransportError as exc:
            if self._closing:  # cut short by close(), as the ordinary path reports it
                raise ClientClosed("the client was closed") from exc
            raise

    def _start(
        self,
        call: _Call,
        afn: Callable[..., Awaitable[Any]],
        args: tuple[Any, ...],
        timeout: float | None,
        on_timeout: Callable[[float], BaseException] | None,
    ) -> None:
        if self._calls is None or self._closing:
            call.finish("error", ClientClosed("the client is closed"))
            return
        self._calls.start_soon(self._run_call, call, afn, args, timeout, on_timeout)

    async def _run_call(
        self,
        call: _Call,
        afn: Callable[..., Awaitable[Any]],
        args: tuple[Any, ...],
        timeout: float | None,
        on_timeout: Callable[[float], BaseException] | None,
    ) -> None:
        result: outcome.Outcome[Any] | None = None
        try:
            with call.scope:
                if timeout is not None:
                    call.scope.relative_deadline = max(timeout, 0.0)
                result = outcome.Value(await afn(*args))
        except trio.Cancelled:
            # Not our scope: the portal is shutting down under this call.
            call.finish("error", self._fatal or ClientClosed("the client was closed"))
            raise
        except BaseException as exc:
            call.finish("error", exc)
            return
        if result is not None:
            call.finish("ok", result.unwrap())
        elif call.interrupted:
            call.finish("error", KeyboardInterrupt())
        elif timeout is None:  # pragma: no cover - only we cancel call scopes
            call.finish("error", ClientClosed("the call was cancelled"))
        else:
            awaited = getattr(afn, "__name__", "")
            error: BaseException = Timeout(f"timed out after {timeout:g}s", awaited=awaited)
            if on_timeout is not None:
                try:
                    error = on_timeout(timeout)
                except Exception as exc:  # a bug there must not kill the loop
                    error = exc
            call.finish("error", error)

    def _roundtrip(
        self,
        call: _Call,
        token: trio.lowlevel.TrioToken,
        start: Callable[..., object],
        *args: Any,
    ) -> Any:
        # Posting and waiting share one try: Ctrl-C can land anywhere, also between
        # handing the work over and starting to wait for it.
        try:
            call.posted = True
            self._post(token, start, *args)
            kind, payload = _get(call.inbox)
        except KeyboardInterrupt:
            self._interrupt(call, token)
            raise
        if kind == "ok":
            return payload
        exc = unwrap_group(payload)
        if isinstance(exc, trio.Cancelled):  # never leak trio internals to sync users
            exc = ClientClosed("the client was closed")
        if isinstance(exc, ClientClosed) and not self._closing:
            # Not closed by the user: an entered context failed (recorded before the
            # calls were cancelled). Report that error rather than a bare "closed".
            exc = self._fatal or exc
        raise exc

    def _interrupt(self, call: _Call, token: trio.lowlevel.TrioToken) -> None:
        """Ctrl-C in the caller: cancel the work this call started, wait briefly."""
        call.interrupted = True
        if not call.posted or call.finished:
            return  # nothing was started, or it is already over
        try:
            token.run_sync_soon(call.scope.cancel)
        except trio.RunFinishedError:
            return
        # A second Ctrl-C while waiting stops waiting (the caller re-raises the first).
        with contextlib.suppress(queue.Empty, KeyboardInterrupt):
            call.inbox.get(timeout=self.cancel_grace)

    def read(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` in the calling thread while the trio thread is parked: a
        consistent read of state the trio thread mutates, with no thread crossing.

        ``fn`` must be quick and must not call trio nor block (it holds up the
        trio thread while it runs).
        """
        self._check_caller()
        gate = self._gate
        # exit() is a no-op unless this thread holds the gate: the `finally` covers
        # taking it too (a Ctrl-C right after must not leave the trio thread parked).
        try:
            while not gate.enter_wait(_POLL_INTERVAL):
                if self._done.is_set():
                    break  # the run is over: nothing mutates that state any more
            return fn()
        finally:
            gate.exit()

    def run_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """Run the quick, non-blocking ``fn(*args)`` on the trio thread; return its result.

        For consistent reads of state the trio thread mutates. Must not block.
        """
        token = self._check_caller()
        inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()

        def job() -> None:
            try:
                inbox.put(("ok", fn(*args)))
            except BaseException as exc:
                inbox.put(("error", exc))

        self._post(token, job)
        kind, payload = _get(inbox)
        if kind == "ok":
            return payload  # type: ignore[no-any-return]
        raise unwrap_group(payload)

    def run_sync_soon(self, fn: Callable[..., object], *args: Any) -> None:
        """Schedule ``fn(*args)`` on the trio thread without waiting (fire and forget)."""
        self._post(self._check_caller(), fn, *args)

    def run_sync_soon_while_closing(self, fn: Callable[..., object], *args: Any) -> bool:
        """Schedule ``fn(*args)`` on the trio thread even while it is closing (to
        hurry the shutdown along); ``False`` when the thread has already stopped."""
        # Not ``Thread.is_alive()``: after a join() interrupted by Ctrl-C it may
        # wrongly say False (CPython before 3.13); a finished run raises instead.
        token = self._token
        if token is None or self._done.is_set():
            return False
        try:
            token.run_sync_soon(fn, *args)
        except trio.RunFinishedError:
            return False
        return True

    def enter_async_context(
        self, cm: AbstractAsyncContextManager[T], *, timeout: float | None = None
    ) -> T:
        """Enter ``cm`` on the trio thread and return its value; :meth:`close` exits it.

        ``timeout`` bounds the ``__aenter__`` (``Timeout`` when it passes). If the
        context fails later on its own, the loop stops and every waiting and later
        call raises that error.
        """
        token = self._check_caller()
        call = _Call()
        if timeout is not None:
            call.scope.relative_deadline = max(timeout, 0.0)
        return self._roundtrip(call, token, self._start_host, call, cm)  # type: ignore[no-any-return]

    def _start_host(self, call: _Call, cm: AbstractAsyncContextManager[Any]) -> None:
        if self._hosts_nursery is None or self._closing or self._fatal is not None:
            call.finish("error", ClientClosed("the client is closed"))
            return
        host = _Host()
        self._hosts.append(host)
        self._hosts_nursery.start_soon(self._host, call, cm, host)

    def close(self, timeout: float = 10.0) -> None:
        """Cancel calls in flight, exit entered contexts, stop the thread. Idempotent.

        Waits at most ``timeout`` seconds for the thread; from the trio thread itself
        it only requests the stop (it cannot wait for itself).
        """
        with self._lock:
            first = not self._closing
            self._closing = True
        if first and self._token is not None and self._stop is not None:
            with contextlib.suppress(trio.RunFinishedError):
                self._token.run_sync_soon(self._stop.set)
        if self.in_trio_thread():
            return
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("the trio thread %r did not stop within %gs", self._thread.name, timeout)

    def wait_done(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for the trio run to end (works after an
        interrupted :meth:`close`, unlike ``Thread.join``); whether it ended."""
        return self._done.wait(timeout)

    @property
    def fatal_error(self) -> BaseException | None:
        """The exception that ended the trio thread, if it ended with one."""
        return self._fatal
