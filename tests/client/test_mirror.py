"""``acp_lite.sync._mirror.blocking``: one-line blocking twins of async methods.

Most tests use a made-up async class on a bare :class:`Portal` (no agent); the last
ones check the real ``Client`` / ``Session`` twins against the reference agent (in
this process: nothing here is about the agent being a process).
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar, assert_type

import pytest
import trio

import acp_lite.client as blocking_client
from acp_lite import connect_in_memory
from acp_lite.aio import AsyncClient, AsyncSession
from acp_lite.errors import Timeout
from acp_lite.model.submissions import Submission
from acp_lite.sync._mirror import Facade, blocking, mirrored_async
from acp_lite.sync._portal import Portal
from acp_lite.testing import InProcessAgent

from .conftest import FAST, ctrl_c_when, wait_for

T = TypeVar("T")


# --------------------------------------------------------------------- a made-up pair


class AsyncCounter:
    """A made-up async object (nothing to do with ACP)."""

    def __init__(self, name: str = "main") -> None:
        self.name = name
        self.value = 0
        self.threads: list[str] = []
        self.entered = threading.Event()
        self.cancelled = 0
        #: Ends ``stubborn``'s slow unwinding early (once the test measured it).
        self.release = threading.Event()

    async def add(self, n: int, step: int = 1, *, timeout: float | None = None) -> int:
        """Add ``n * step``; return the new value."""
        self.threads.append(threading.current_thread().name)
        await trio.sleep(0)
        self.value += n * step
        return self.value

    async def same(self, other: AsyncCounter) -> bool:
        """Whether ``other`` is this very counter."""
        return other is self

    async def hang(self, timeout: float | None = None) -> None:
        """Wait forever (``timeout`` is positional here)."""
        self.entered.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            self.cancelled += 1
            raise

    async def stubborn(self, *, timeout: float | None = None) -> None:
        """Wait forever, and take 3 s to unwind when cancelled (or until released)."""
        self.entered.set()
        try:
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(3):
                while not self.release.is_set():
                    await trio.sleep(0.01)

    async def fail(self) -> None:
        """Raise ``ValueError``."""
        raise ValueError("boom")


class AsyncRoom:
    """Hands out counters (an async result the facade must wrap)."""

    def __init__(self) -> None:
        self.counter = AsyncCounter()

    async def open_counter(self, name: str) -> AsyncCounter:
        """Open a new counter called ``name``."""
        return AsyncCounter(name)

    async def main_counter(self) -> AsyncCounter:
        """The room's own counter."""
        return self.counter


class _Blocking(Facade):
    def __init__(self, portal: Portal, target: Any) -> None:
        self._portal = portal
        self._async = target
        self.calls: list[float | None] = []

    def _call(
        self, afn: Callable[..., Awaitable[T]], *args: Any, timeout: float | None = None
    ) -> T:
        self.calls.append(timeout)
        return self._portal.call(afn, *args, timeout=10.0 if timeout is None else timeout)

    def _view(self, value: Any) -> Any:
        return Counter(self._portal, value) if isinstance(value, AsyncCounter) else value


class Counter(_Blocking):
    add = blocking(AsyncCounter.add)
    same = blocking(AsyncCounter.same)
    hang = blocking(AsyncCounter.hang)
    stubborn = blocking(AsyncCounter.stubborn)
    fail = blocking(AsyncCounter.fail)


class Room(_Blocking):
    open_counter = blocking(AsyncRoom.open_counter, returns=Counter)
    main_counter = blocking(AsyncRoom.main_counter, returns=Counter)


@pytest.fixture
def portal() -> Iterator[Portal]:
    p = Portal(name="acp-lite-test-mirror", cancel_grace=0.5)
    try:
        yield p
    finally:
        p.close(5.0)


# --------------------------------------------------------------------- the helper


def test_twin_has_the_async_methods_name_docstring_and_signature() -> None:
    for name in ("add", "same", "hang", "stubborn", "fail"):
        twin = getattr(Counter, name)
        amethod = getattr(AsyncCounter, name)
        assert inspect.isfunction(twin) and not inspect.iscoroutinefunction(twin)
        assert twin.__name__ == name
        assert twin.__qualname__ == f"Counter.{name}"
        assert twin.__module__ == __name__
        assert twin.__doc__ == amethod.__doc__
        assert inspect.signature(twin) == inspect.signature(amethod)
        assert mirrored_async(twin) is amethod
    # Bound: the same parameters as the bound async method.
    counter = Counter.__new__(Counter)
    assert inspect.signature(counter.add) == inspect.signature(AsyncCounter().add)
    assert counter.add.__doc__ == AsyncCounter.add.__doc__
    # ``returns=`` changes the documented result type, nothing else.
    asig = inspect.signature(AsyncRoom.open_counter)
    assert inspect.signature(Room.open_counter) == asig.replace(return_annotation="Counter")


def test_twin_returns_the_typed_result_after_one_crossing(portal: Portal) -> None:
    acounter = AsyncCounter()
    counter = Counter(portal, acounter)
    posts: list[object] = []
    post = portal._post

    def counting_post(*args: Any) -> None:
        posts.append(args[1])
        post(*args)

    portal._post = counting_post  # type: ignore[method-assign,assignment]
    try:
        result = counter.add(2, 3)
    finally:
        del portal._post
    assert_type(result, int)
    assert result == 6 and acounter.value == 6
    assert len(posts) == 1  # one thread hop for the whole call
    assert acounter.threads == [portal.thread.name]  # it ran on the trio thread
    assert counter.add(1, step=4, timeout=3.0) == 10
    # The call's own timeout reaches the owner's _call (the portal deadline).
    assert counter.calls == [None, 3.0]


def test_async_results_come_back_wrapped_and_arguments_unwrapped(portal: Portal) -> None:
    aroom = AsyncRoom()
    room = Room(portal, aroom)
    counter = room.open_counter("side")
    assert_type(counter, Counter)
    assert isinstance(counter, Counter) and counter._async.name == "side"
    assert counter.add(5) == 5
    main = room.main_counter()
    assert main._async is aroom.counter
    # A blocking object passed as an argument reaches the async side as its async one
    # (at run time; statically a twin's parameters keep the async types).
    assert main.same(main) is True  # type: ignore[arg-type]
    assert main.same(counter) is False  # type: ignore[arg-type]
    assert main.same(other=main) is True  # type: ignore[arg-type]


def test_declared_result_type_is_checked(portal: Portal) -> None:
    class Liar(_Blocking):
        add = blocking(AsyncCounter.add, returns=Counter)  # add returns an int

    with pytest.raises(TypeError, match="returned int, declared Counter"):
        Liar(portal, AsyncCounter()).add(1)


def test_errors_propagate_and_timeouts_follow_the_call(portal: Portal) -> None:
    acounter = AsyncCounter()
    counter = Counter(portal, acounter)
    with pytest.raises(ValueError, match="boom"):
        counter.fail()
    # ``hang`` takes ``timeout`` positionally: found by binding the arguments.
    started = time.monotonic()
    with pytest.raises(Timeout):
        counter.hang(0.1)
    assert time.monotonic() - started < 3
    assert acounter.cancelled == 1
    assert counter.calls[-1] == 0.1
    with pytest.raises(Timeout):
        counter.hang(timeout=0.05)
    assert counter.calls[-1] == 0.05


def test_ctrl_c_during_a_twin_cancels_its_work_and_reraises(portal: Portal) -> None:
    acounter = AsyncCounter()
    counter = Counter(portal, acounter)
    with ctrl_c_when(acounter.entered.is_set) as stamps:
        try:
            counter.hang()  # forever unless cancelled
        finally:
            done = time.monotonic()
    assert done - stamps[0] < 2
    # The trio-side work was cancelled (and had unwound) before the re-raise.
    assert acounter.cancelled == 1
    assert counter.add(1) == 1  # the portal is still usable


def test_ctrl_c_waits_only_the_portals_bound_for_work_that_does_not_unwind(
    portal: Portal,
) -> None:
    portal.cancel_grace = 0.1  # the bound is the point, not its length
    acounter = AsyncCounter()
    counter = Counter(portal, acounter)
    with ctrl_c_when(acounter.entered.is_set) as stamps:
        try:
            counter.stubborn()  # unwinding takes 3 s; the portal waits 0.1 s
        finally:
            done = time.monotonic()
            # Measured: let the unwinding end now rather than make the teardown
            # (the portal's close) wait out the rest of the 3 s.
            acounter.release.set()
    assert portal.cancel_grace / 2 <= done - stamps[0] < portal.cancel_grace + 1.5


def test_misuse_is_refused_when_the_class_is_made() -> None:
    def not_async(self: Any) -> int:
        return 1

    with pytest.raises(TypeError, match="async def"):
        blocking(not_async)  # type: ignore[arg-type]
    with pytest.raises((TypeError, RuntimeError)) as info:

        class Misnamed(_Blocking):
            total = blocking(AsyncCounter.add)

    error: BaseException | None = info.value
    while error is not None and not isinstance(error, TypeError):
        error = error.__cause__
    assert error is not None and "must have the async method's name" in str(error)


# --------------------------------------------------------------------- Client / Session


def test_real_twins_carry_the_async_docs_and_signatures() -> None:
    for acls, cls in (
        (AsyncClient, blocking_client.Client),
        (AsyncSession, blocking_client.Session),
    ):
        for name, member in vars(cls).items():
            amethod = mirrored_async(member)
            if amethod is None:
                continue
            assert amethod is getattr(acls, name), name
            assert member.__doc__ == amethod.__doc__, name
            asig = inspect.signature(amethod)
            if asig.return_annotation == "AsyncSession":
                asig = asig.replace(return_annotation="Session")
            assert inspect.signature(member) == asig, name
    assert mirrored_async(blocking_client.Session.wait_idle) is AsyncSession.wait_idle
    assert mirrored_async(blocking_client.Session.iter_updates) is None  # hand-written


def test_sessions_come_back_as_blocking_sessions() -> None:
    with connect_in_memory(InProcessAgent("many_sessions", count=3), limits=FAST) as client:
        session = client.new_session("/tmp")
        assert_type(session, blocking_client.Session)
        assert isinstance(session, blocking_client.Session)
        assert client.session(session.id) is session
        resumed = client.resume_session("stored-2", "/tmp")
        assert_type(resumed, blocking_client.Session)
        assert isinstance(resumed, blocking_client.Session)
        assert client.sessions["stored-2"] is resumed
        assert resumed.async_session is client.async_client.session("stored-2")
        infos = client.list_sessions()
        assert_type(infos, list[Any])
        assert {i.session_id for i in infos} >= {"stored-1", "stored-2", "stored-3"}


def test_session_twins_return_their_typed_results() -> None:
    with connect_in_memory(InProcessAgent("echo"), limits=FAST) as client:
        session = client.new_session("/tmp")
        pending = session.submit("hello")
        assert_type(pending, Submission)
        assert session.wait_inserted(pending) is pending
        assert pending.status == "inserted"
        assert_type(session.wait_idle(), None)
        assert session.text(pending) == "hello"


def test_ctrl_c_during_a_mirrored_wait_cancels_the_wait_and_reraises() -> None:
    with connect_in_memory(InProcessAgent("slow_cancel"), limits=FAST) as client:
        session = client.new_session("/tmp")
        session.prompt("long work")  # inserted; its work runs ~30 s
        # Running for sure (the state update may follow the prompt's response).
        assert wait_for(lambda: "step 2" in session.text(), 15)
        portal = client._portal
        calls = portal._calls
        assert calls is not None

        def waiting() -> bool:  # the wait's task runs on the trio thread
            return portal.run_sync(lambda: len(calls.child_tasks)) > 0

        with ctrl_c_when(waiting) as stamps:
            try:
                session.wait_idle(timeout=60)
            finally:
                done = time.monotonic()
        # Within the portal's bound (the wait itself unwinds at once).
        assert done - stamps[0] < portal.cancel_grace
        assert portal.run_sync(lambda: len(calls.child_tasks)) == 0  # the wait is gone
        # A wait started nothing on the agent: its work goes on, the client works.
        assert session.state == "running"
        assert client.request("_acp_lite/ping") == {"echo": {}}
        session.cancel(wait=True)
        assert session.stop_reason == "cancelled"
