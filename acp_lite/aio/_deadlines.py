"""Response waits of trio tasks, with their timeouts kept by one task.

``with trio.move_on_after(timeout): await event.wait()`` per request costs a
cancel scope, a ``trio.Event`` and their bookkeeping in trio's deadline heap:
~25 µs on a small VM, an eighth of an async no-op round trip. Here a waiting
task parks itself (``wait_task_rescheduled``) with a :class:`TaskWaiter` as the
request's ``waiter``; the reader's ``set()`` reschedules it. The timeouts live in
one heap, watched by one task (:meth:`Deadlines.run`) that sleeps in a cancel
scope until the earliest deadline it knows of. A wait that ends does not move
that deadline (moving it costs what the cancel scope per request did): the
watcher may wake for a wait already answered, drops it and the answered waits
above the next live one, and sleeps again; a new wait moves the deadline only if
it is earlier. Answered waits are dropped in bulk when they are half the heap.
Deadlines are on the trio clock, so a ``MockClock`` drives them as it drives
cancel scopes (an autojumping clock may stop at a deadline whose wait was
answered: a wake-up with nothing to do, not a change of time).
"""

from __future__ import annotations

import heapq
import math

import trio

__all__ = ["Deadlines", "TaskWaiter"]


class TaskWaiter:
    """A trio task waiting for a response: the request's ``waiter`` (``set()``)."""

    __slots__ = ("deadline", "task", "timed_out", "woken")

    def __init__(self, task: trio.lowlevel.Task, deadline: float) -> None:
        self.task = task
        self.deadline = deadline
        self.woken = False
        self.timed_out = False

    def __lt__(self, other: TaskWaiter) -> bool:  # heap order
        return self.deadline < other.deadline

    def set(self) -> None:
        """The response arrived, or the connection was lost (trio thread)."""
        if not self.woken:
            self.woken = True
            trio.lowlevel.reschedule(self.task)


class Deadlines:
    """The timeouts of the response waits of one connection's trio tasks."""

    def __init__(self) -> None:
        self._heap: list[TaskWaiter] = []
        self._scope: trio.CancelScope | None = None
        self._done = 0  # woken waiters still in the heap

    @property
    def running(self) -> bool:
        """Whether :meth:`run` keeps the timeouts (else wait another way)."""
        return self._scope is not None

    async def run(self) -> None:
        """Wake each wait whose deadline passed (a task of the connection)."""
        heap = self._heap
        try:
            while True:
                with trio.CancelScope(deadline=self._earliest()) as scope:
                    self._scope = scope
                    await trio.sleep_forever()
                now = trio.current_time()
                while heap and (heap[0].woken or heap[0].deadline <= now):
                    waiter = heapq.heappop(heap)
                    if waiter.woken:
                        self._done -= 1
                    else:
                        waiter.woken = waiter.timed_out = True
                        trio.lowlevel.reschedule(waiter.task)
        finally:
            # Stopped (the connection's tasks are cancelled): no wait may hang on a
            # deadline nobody watches; each goes on waiting its own way.
            self._scope = None
            for waiter in heap:
                waiter.set()

    async def wait(self, waiter: TaskWaiter) -> bool:
        """Park the current task until ``waiter.set()`` (``True``: answered, or the
        watcher stopped) or its deadline (``False``); a cancellation propagates."""
        heap = self._heap
        if self._done > 32 and 2 * self._done > len(heap):
            # Answered waits stay in the heap until they reach the top: drop them
            # in one pass now and then (amortized O(1) per request).
            heap[:] = [w for w in heap if not w.woken]
            heapq.heapify(heap)
            self._done = 0
        heapq.heappush(heap, waiter)
        scope = self._scope
        if scope is not None and waiter.deadline < scope.deadline:
            scope.deadline = waiter.deadline

        def abort(_: object) -> trio.lowlevel.Abort:
            waiter.woken = True
            return trio.lowlevel.Abort.SUCCEEDED

        try:
            await trio.lowlevel.wait_task_rescheduled(abort)
        finally:
            if not waiter.timed_out:
                self._done += 1  # answered or cancelled: left in the heap
        return not waiter.timed_out

    def _earliest(self) -> float:
        heap = self._heap
        return heap[0].deadline if heap else math.inf
