"""Work an interop module starts early, in a thread (see ``conftest.py``'s
``start_early``): its result, or the exception it raised, in a ``Future``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")


def in_thread(work: Callable[[], T], name: str) -> Future[T]:
    """Run ``work()`` in a daemon thread now; the future holds what it returned or
    raised (the test that takes it re-raises that)."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future
