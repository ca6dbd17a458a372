"""The response waits of trio tasks and the one task that keeps their timeouts
(``acp_lite.aio._deadlines``), on trio's ``MockClock``."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio
import trio.testing

from acp_lite import aio
from acp_lite.aio._deadlines import Deadlines, TaskWaiter
from acp_lite.errors import Timeout

from .conftest import FAST
from .fakes import NO_ANSWER, FakeAgent

pytestmark = pytest.mark.trio


async def _wait(deadlines: Deadlines, timeout: float, out: dict[str, Any], name: str) -> None:
    waiter = TaskWaiter(trio.lowlevel.current_task(), trio.current_time() + timeout)
    out[name] = waiter
    answered = await deadlines.wait(waiter)
    out[name + " ended"] = (answered, trio.current_time())


@contextlib.asynccontextmanager
async def watched() -> AsyncIterator[tuple[Deadlines, dict[str, Any], trio.Nursery]]:
    """A running watcher, a dict for what the waits saw, and a nursery for them."""
    deadlines: Deadlines = Deadlines()
    with trio.fail_after(1000):  # a broken watcher fails the test, not hangs it
        async with trio.open_nursery() as nursery:
            nursery.start_soon(deadlines.run)
            await trio.testing.wait_all_tasks_blocked()
            yield deadlines, {}, nursery
            nursery.cancel_scope.cancel()


async def test_each_wait_times_out_at_its_own_deadline(autojump_clock: Any) -> None:
    async with watched() as (deadlines, out, nursery):
        assert deadlines.running
        start = trio.current_time()
        nursery.start_soon(_wait, deadlines, 60, out, "long")
        await trio.sleep(1)
        nursery.start_soon(_wait, deadlines, 5, out, "short")  # later, but earlier
        await trio.sleep(100)
    assert out["short ended"] == (False, start + 6)
    assert out["long ended"] == (False, start + 60)


async def test_an_answered_wait_does_not_time_out_nor_delay_the_next(autojump_clock: Any) -> None:
    async with watched() as (deadlines, out, nursery):
        start = trio.current_time()
        nursery.start_soon(_wait, deadlines, 60, out, "a")
        await trio.sleep(1)
        out["a"].set()  # answered at 1 s: the watcher still has its 60 s deadline
        out["a"].set()  # a second answer is nothing
        await trio.sleep(1)
        nursery.start_soon(_wait, deadlines, 100, out, "b")
        await trio.sleep(200)
    assert out["a ended"] == (True, start + 1)
    assert out["b ended"] == (False, start + 102)


async def test_a_cancelled_wait_raises_and_is_not_woken_again(autojump_clock: Any) -> None:
    async with watched() as (deadlines, out, _):
        with trio.move_on_after(3) as scope:
            await _wait(deadlines, 10, out, "w")
        assert scope.cancelled_caught and "w ended" not in out
        waiter = out["w"]
        assert waiter.woken and not waiter.timed_out
        waiter.set()  # the response after the cancellation: no reschedule
        await trio.sleep(20)  # nor at its deadline
        assert not waiter.timed_out


async def test_answered_waits_are_dropped_in_bulk(autojump_clock: Any) -> None:
    # 300 waits: nine rounds of the drop (after 33 answered ones); without it, the
    # heap would hold all 300, four times the bound below.
    n = 300
    sizes = []
    async with watched() as (deadlines, out, nursery):
        for i in range(n):
            nursery.start_soon(_wait, deadlines, 60, out, f"w{i}")
            await trio.sleep(0.001)
            out[f"w{i}"].set()
            await trio.sleep(0)
            sizes.append(len(deadlines._heap))
    assert all(out[f"w{i} ended"][0] for i in range(n))
    assert max(sizes) <= 70  # not one entry per request of the last minute


async def test_a_stopped_watcher_lets_its_waits_go_on_their_own(autojump_clock: Any) -> None:
    deadlines, out = Deadlines(), dict[str, Any]()
    with trio.fail_after(1000):  # a broken watcher fails the test, not hangs it
        async with trio.open_nursery() as nursery:
            watcher = trio.CancelScope()

            async def run() -> None:
                with watcher:
                    await deadlines.run()

            nursery.start_soon(run)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(_wait, deadlines, 60, out, "w")
            await trio.sleep(1)
            watcher.cancel()
            with trio.fail_after(100):  # not woken: it would wait forever
                while "w ended" not in out:
                    await trio.sleep(1)
            assert out["w ended"][0] is True  # woken: its caller waits another way
            assert not deadlines.running


async def test_a_request_times_out_through_the_watcher_and_after_it(autojump_clock: Any) -> None:
    fake = FakeAgent({"_t/never": lambda _agent, _msg: NO_ANSWER})
    with trio.fail_after(1000):  # a broken watcher fails the test, not hangs it
        await _requests_time_out(fake)
    assert fake.methods().count("$/cancel_request") == 2


async def _requests_time_out(fake: FakeAgent) -> None:
    async with aio.connect_in_memory(fake, limits=FAST) as client:
        assert client._conn.deadlines.running
        start = trio.current_time()
        with pytest.raises(Timeout, match="within 7s"):
            await client.request("_t/never", timeout=7)
        assert trio.current_time() - start == pytest.approx(7)
        # A watcher that stopped while a request waits: the wait keeps its deadline.
        conn = client._conn

        async def stop_the_watcher() -> None:
            await trio.sleep(2)
            for waiter in list(conn.deadlines._heap):
                waiter.set()  # as the watcher's end does
            conn.deadlines._scope = None

        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stop_the_watcher)
            with pytest.raises(Timeout, match="within 9s"):
                await client.request("_t/never", timeout=9)
        assert trio.current_time() - start == pytest.approx(9)
