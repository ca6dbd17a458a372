"""The trio-in-a-thread portal, alone, with plain async functions."""

from __future__ import annotations

import _thread
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import pytest
import trio

from acp_lite.errors import AgentExited, Timeout
from acp_lite.sync._portal import ClientClosed, Portal, unwrap_group


@pytest.fixture
def portal() -> Iterator[Portal]:
    p = Portal(name="test-portal", cancel_grace=2.0)
    try:
        yield p
    finally:
        p.close(timeout=5)
        assert not p.thread.is_alive()


async def add(a: int, b: int) -> int:
    await trio.sleep(0)
    return a + b


async def fail(exc: BaseException) -> None:
    await trio.sleep(0)
    raise exc


def test_call_returns_result_and_runs_on_the_trio_thread(portal: Portal) -> None:
    assert portal.call(add, 2, 3) == 5

    async def where() -> str:
        return threading.current_thread().name

    assert portal.call(where) == "test-portal"
    assert portal.run_sync(lambda: threading.current_thread().name) == "test-portal"


def test_exceptions_cross_unchanged(portal: Portal) -> None:
    with pytest.raises(ValueError, match="boom") as info:
        portal.call(fail, ValueError("boom"))
    assert info.value.__traceback__ is not None
    with pytest.raises(ZeroDivisionError):
        portal.run_sync(lambda: 1 / 0)


def test_single_leaf_exception_group_is_unwrapped(portal: Portal) -> None:
    async def nursery_failure() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(fail, AgentExited("gone", returncode=3))

    with pytest.raises(AgentExited) as info:
        portal.call(nursery_failure)
    assert info.value.returncode == 3


def test_multi_leaf_group_is_kept() -> None:
    group = ExceptionGroup("two", [ValueError("a"), KeyError("b")])
    assert unwrap_group(group) is group
    nested = BaseExceptionGroup("outer", [ExceptionGroup("inner", [ValueError("x")])])
    assert isinstance(unwrap_group(nested), ValueError)


def test_timeout_is_enforced_on_the_trio_side(portal: Portal) -> None:
    finished = threading.Event()
    cancelled = threading.Event()

    async def slow() -> None:
        try:
            await trio.sleep(10)
            finished.set()
        except trio.Cancelled:
            cancelled.set()
            raise

    start = time.monotonic()
    with pytest.raises(Timeout, match=r"timed out after 0.1s") as info:
        portal.call(slow, timeout=0.1)
    assert time.monotonic() - start < 2
    assert isinstance(info.value, TimeoutError)
    assert info.value.awaited == "slow"
    # The work was cancelled before the caller got the Timeout, not left running.
    assert cancelled.is_set() and not finished.is_set()


def test_on_timeout_builds_the_error_on_the_trio_thread(portal: Portal) -> None:
    def describe(timeout: float) -> BaseException:
        return Timeout(f"waited {timeout}s in {threading.current_thread().name}", awaited="idle")

    with pytest.raises(Timeout, match=r"waited 0\.05s in test-portal"):
        portal.call(trio.sleep, 5, timeout=0.05, on_timeout=describe)


def test_keyboard_interrupt_cancels_trio_work_and_reraises(portal: Portal) -> None:
    started = threading.Event()
    unwound = threading.Event()

    async def long_running() -> None:
        started.set()
        try:
            await trio.sleep(30)
        finally:
            # Like a prompt sending session/cancel while unwinding: takes a little time.
            with trio.CancelScope(shield=True):
                await trio.sleep(0.05)
            unwound.set()

    def interrupt() -> None:
        started.wait(5)
        _thread.interrupt_main()

    timer = threading.Thread(target=interrupt)
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        portal.call(long_running)
    timer.join()
    assert time.monotonic() - start < 5
    # The caller re-raised only after the trio side unwound (bounded wait).
    assert unwound.is_set()
    assert portal.call(add, 1, 1) == 2  # the portal is still usable


def test_keyboard_interrupt_waits_only_a_bounded_time() -> None:
    portal = Portal(name="stubborn", cancel_grace=0.1)
    started = threading.Event()
    release = threading.Event()

    async def ignores_cancel() -> None:
        started.set()
        # 1 s to unwind, or until released at the end of the test (the no-leak
        # check would otherwise wait for the thread to finish the whole second).
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            while not release.is_set():
                await trio.sleep(0.01)

    def interrupt() -> None:
        started.wait(5)
        _thread.interrupt_main()

    threading.Thread(target=interrupt).start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        portal.call(ignores_cancel)
    # cancel_grace (0.1 s) bounds the wait, not the 1 s the work takes to unwind.
    assert time.monotonic() - start < 0.9
    portal.close(timeout=0.05)  # the shielded sleep outlives this bound: must not hang
    assert portal.closed
    release.set()


def test_calling_from_the_trio_thread_is_a_clear_error(portal: Portal) -> None:
    async def reenter() -> int:
        return portal.call(add, 1, 2)

    with pytest.raises(RuntimeError, match="own trio thread"):
        portal.call(reenter)


def test_many_threads_share_one_portal(portal: Portal) -> None:
    results: list[int] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        for i in range(200):
            value = portal.call(add, k, i)
            with lock:
                results.append(value)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == sorted(k + i for k in range(8) for i in range(200))


def test_entered_context_is_exited_on_close_after_calls_are_cancelled() -> None:
    events: list[str] = []
    started = threading.Event()

    @asynccontextmanager
    async def resource() -> AsyncIterator[str]:
        events.append("enter")
        try:
            yield "value"
        finally:
            events.append("exit")

    async def pending() -> None:
        started.set()
        try:
            await trio.sleep(30)
        finally:
            events.append("call cancelled")

    portal = Portal(name="ctx")
    assert portal.enter_async_context(resource()) == "value"
    outcome: list[BaseException] = []

    def caller() -> None:
        try:
            portal.call(pending)
        except BaseException as exc:
            outcome.append(exc)

    t = threading.Thread(target=caller)
    t.start()
    started.wait(5)
    portal.close(timeout=5)
    t.join(5)
    assert events == ["enter", "call cancelled", "exit"]
    assert len(outcome) == 1 and isinstance(outcome[0], ClientClosed)
    assert not portal.thread.is_alive()
    with pytest.raises(ClientClosed):
        portal.call(add, 1, 2)
    portal.close()  # idempotent


def test_failed_enter_raises_the_error() -> None:
    @asynccontextmanager
    async def broken() -> AsyncIterator[None]:
        raise AgentExited("agent died during start", returncode=1)
        yield  # pragma: no cover

    portal = Portal(name="broken")
    try:
        with pytest.raises(AgentExited, match="during start"):
            portal.enter_async_context(broken())
    finally:
        portal.close()


def test_enter_timeout() -> None:
    @asynccontextmanager
    async def hangs() -> AsyncIterator[None]:
        await trio.sleep(30)
        yield  # pragma: no cover

    portal = Portal(name="hangs")
    try:
        with pytest.raises(Timeout):
            portal.enter_async_context(hangs(), timeout=0.1)
    finally:
        portal.close()


def test_error_escaping_an_entered_context_fails_waiters_with_it() -> None:
    """A background failure inside the entered context ends the loop: waiters see it."""
    started = trio.Event()

    @asynccontextmanager
    async def connection() -> AsyncIterator[None]:
        async def reader() -> None:
            await started.wait()
            await trio.sleep(0.05)
            raise AgentExited("agent exited", returncode=7)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(reader)
            yield

    portal = Portal(name="dies")
    portal.enter_async_context(connection())

    async def wait_forever() -> None:
        started.set()
        await trio.sleep_forever()

    with pytest.raises(AgentExited) as info:
        portal.call(wait_forever)
    assert info.value.returncode == 7
    portal.thread.join(2)
    assert not portal.thread.is_alive()
    with pytest.raises(AgentExited):
        portal.call(add, 1, 1)
    portal.close()


def test_atexit_closes_a_forgotten_portal() -> None:
    script = textwrap.dedent(
        """
        import sys, threading
        from contextlib import asynccontextmanager
        import trio
        from acp_lite.sync._portal import Portal

        @asynccontextmanager
        async def resource():
            try:
                yield
            finally:
                with trio.CancelScope(shield=True):
                    await trio.sleep(0.05)
                print("exited cleanly", flush=True)

        portal = Portal(name="forgotten")
        portal.enter_async_context(resource())
        print("threads", threading.active_count(), flush=True)
        # no close(): the atexit hook must exit the context before the interpreter ends
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["threads 2", "exited cleanly"]
