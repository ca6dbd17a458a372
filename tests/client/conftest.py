"""Helpers for the blocking-client tests: real reference-agent subprocesses over pipes."""

from __future__ import annotations

import _thread
import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from procs import child_processes

from acp_lite.limits import Limits

#: Short timeouts keep failing tests fast; the shutdown ladder stays bounded.
FAST = Limits(default_timeout=10.0, close_grace=1.0, terminate_grace=0.5, kill_grace=1.0)


def portal_threads() -> list[threading.Thread]:
    """Live client event-loop threads (named ``acp-lite-<agent>``)."""
    return [t for t in threading.enumerate() if t.name.startswith("acp-lite-")]


def foreign_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Threads started since ``before`` other than trio's worker-thread cache.

    trio keeps idle ``to_thread`` workers ("Trio thread N") for a few seconds; they
    are shared by the whole process and exit on their own.
    """
    return [
        t
        for t in threading.enumerate()
        if t not in before and t.is_alive() and not t.name.startswith("Trio thread")
    ]


def process_gone(pid: int) -> bool:
    """``True`` when ``pid`` no longer exists (exited *and* reaped: no zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def wait_for(predicate: object, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    assert callable(predicate)
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())


def run_threads(
    worker: Callable[[int], object], n: int, timeout: float = 30.0
) -> list[BaseException]:
    """Run ``worker(0)`` ... ``worker(n - 1)`` in ``n`` threads at once; what they
    raised (a thread still running after ``timeout`` fails the test)."""
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            worker(k)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a worker thread hangs"
    return errors


def _has_children() -> bool:
    """Whether this process has a child (live or zombie), from each thread's
    ``/proc/self/task/<tid>/children``: a few small files, where
    :func:`child_processes` reads every process of the machine.

    ``True`` where the kernel does not list children (the full scan decides then).
    Read twice when it finds none: a child moves to another thread's list when
    the thread that started it exits, and could be missed by one read.
    """
    for _ in range(2):
        try:
            tasks = os.listdir("/proc/self/task")
        except OSError:
            return True
        for tid in tasks:
            try:
                with open(f"/proc/self/task/{tid}/children") as f:
                    if f.read().strip():
                        return True
            except FileNotFoundError:
                if not os.path.exists(f"/proc/self/task/{tid}"):
                    continue  # the thread ended meanwhile
                return True  # no children lists here
            except OSError:
                return True
    return False


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    """Every test must leave no client thread and no agent process (nor zombie) behind."""
    before = set(threading.enumerate())
    # Most tests start no process: then neither snapshot needs the /proc scan.
    children = set(child_processes()) if _has_children() else set()
    yield
    assert wait_for(lambda: not foreign_threads(before), 5.0), foreign_threads(before)

    def new_children() -> list[str]:
        if not _has_children():
            return []
        return [c for c in child_processes() if c not in children]

    assert wait_for(lambda: not new_children(), 5.0), new_children()


@contextlib.contextmanager
def crossings(client: Any) -> Iterator[list[object]]:
    """Record every function posted to the client's trio thread during the block."""
    portal = client._portal
    posted: list[object] = []
    post = portal._post

    def counting_post(*args: Any) -> None:
        posted.append(args[1])
        post(*args)

    portal._post = counting_post
    try:
        yield posted
    finally:
        del portal._post


@contextlib.contextmanager
def ctrl_c_when(ready: Callable[[], bool]) -> Iterator[list[float]]:
    """Expect the block to be ended by a Ctrl-C sent once ``ready()`` (polled, 15 s
    at most) in another thread; yields a list that receives the Ctrl-C's time.

    Fails if the block ends on its own; the Ctrl-C never lands outside the block.
    """
    stamps: list[float] = []

    def interrupt() -> None:
        if wait_for(ready, 15):
            stamps.append(time.monotonic())
            _thread.interrupt_main()

    thread = threading.Thread(target=interrupt)
    returned = False
    with pytest.raises(KeyboardInterrupt):
        try:
            thread.start()
            yield stamps
            returned = True
        finally:
            thread.join()  # a late Ctrl-C lands here, still inside pytest.raises
    assert stamps, "never ready to be interrupted"
    assert not returned, "the call ended before the Ctrl-C"
