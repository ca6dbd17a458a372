"""Blocking request calls run in the caller's thread (``acp_lite.sync._direct``).

The twin of an ``@outside_safe`` method runs its coroutine in the calling thread while
the trio thread is parked: it writes the request to the agent's pipe itself and
takes the response once the trio thread has read it. These tests check that the
path is taken (the portal's ordinary entry is made to fail), that what the trio
path guarantees still holds (timeouts withdraw the request, Ctrl-C too, an agent
that exits fails the call at once, bytes keep their order), and that a busy or
finished trio thread falls back or fails cleanly.
"""

from __future__ import annotations

import sys
import threading
import time
import types
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from aio.test_methods import CASES, Case

import acp_lite
from acp_lite import connect_in_memory
from acp_lite.errors import AgentExited, ClientClosed, Timeout
from acp_lite.sync._portal import Portal
from acp_lite.testing import InProcessAgent

from .conftest import FAST, crossings, ctrl_c_when, run_threads, wait_for
from .test_methods_sync import _sent, connected, owner

# A stdlib agent: answers initialize and echoes ``_t/echo``; ``_t/never`` is never
# answered; ``_t/exit`` makes it exit without answering. Each line it reads is
# logged to stderr as ``got <method> <id>``.
AGENT = r"""
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    print("got", method, rid, file=sys.stderr, flush=True)
    if method == "initialize":
        result = {"protocolVersion": 2, "capabilities": {},
                  "info": {"name": "t", "version": "1"}}
    elif method == "_t/echo":
        result = {"echo": msg["params"]}
    elif method == "_t/exit":
        sys.exit(4)
    else:
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n")
    sys.stdout.flush()
"""


@contextmanager
def no_portal_crossing(client: acp_lite.Client) -> Iterator[list[str]]:
    """Fail any call that takes the portal's ordinary path (a task on the trio
    thread) instead of running in the caller's thread; yields the names posted."""
    portal = client._portal
    ordinary = portal.call
    taken: list[str] = []

    def refuse(afn: Any, *args: Any, **kwargs: Any) -> Any:
        taken.append(getattr(afn, "__name__", "?"))
        return ordinary(afn, *args, **kwargs)

    portal.call = refuse  # type: ignore[method-assign]
    try:
        yield taken
    finally:
        del portal.call


def stderr_has(client: acp_lite.Client, text: str) -> bool:
    return any(text in line for line in client.stderr_tail())


def sent(client: acp_lite.Client, method: str | None = None) -> list[dict[str, Any]]:
    """The messages the client wrote (of ``method``), in order."""
    out = [e.json() for e in client.transcript if e.direction == "send"]
    return [m for m in out if method is None or m.get("method") == method]


@pytest.fixture
def client() -> Iterator[acp_lite.Client]:
    with acp_lite.connect([sys.executable, "-c", AGENT], limits=FAST) as client:
        yield client


def test_a_request_is_written_and_answered_without_a_task_on_the_trio_thread(
    client: acp_lite.Client,
) -> None:
    with crossings(client) as posted, no_portal_crossing(client) as taken:
        for i in range(20):
            assert client.request("_t/echo", {"i": i}) == {"echo": {"i": i}}
    assert taken == []
    assert posted == []  # not one crossing into the trio thread: the caller wrote
    # Each request went out once, in order, on the wire.
    assert [m["params"]["i"] for m in sent(client, "_t/echo")[-20:]] == list(range(20))


def test_a_timeout_withdraws_the_request_and_the_client_goes_on(
    client: acp_lite.Client,
) -> None:
    start = time.monotonic()
    with no_portal_crossing(client) as taken, pytest.raises(Timeout) as info:
        client.request("_t/never", timeout=0.05)
    assert time.monotonic() - start < 5
    assert taken == []
    text = str(info.value)
    assert "_t/never" in text and "0.05s" in text
    assert info.value.method == "_t/never"
    never = sent(client, "_t/never")[-1]
    assert wait_for(lambda: stderr_has(client, "got $/cancel_request None"))
    assert sent(client, "$/cancel_request")[-1]["params"] == {"requestId": never["id"]}
    assert client.request("_t/echo", [1]) == {"echo": [1]}


def test_ctrl_c_withdraws_the_request_and_reraises(client: acp_lite.Client) -> None:
    before = len(sent(client))
    asked = sum("got _t/never" in line for line in client.stderr_tail())

    def read_by_the_agent() -> bool:  # this test's request, not an earlier one
        return sum("got _t/never" in line for line in client.stderr_tail()) > asked

    with ctrl_c_when(read_by_the_agent) as stamps:
        client.request("_t/never", timeout=30)
    assert time.monotonic() - stamps[0] < 5
    out = sent(client)[before:]
    never = next(m for m in out if m.get("method") == "_t/never")
    assert {"requestId": never["id"]} in [
        m.get("params") for m in out if m.get("method") == "$/cancel_request"
    ]
    assert client.request("_t/echo", "after") == {"echo": "after"}


def test_lines_larger_than_the_pipe_keep_their_order_across_threads(
    client: acp_lite.Client,
) -> None:
    # 300 kB does not fit a pipe buffer: the caller writes what fits and leaves the
    # rest to the trio thread, while other threads write their own requests.
    big = "x" * 300_000
    results: dict[int, object] = {}

    def worker(n: int) -> None:
        for i in range(15):
            payload = {"n": n, "i": i, "pad": big if i % 5 == n % 5 else ""}
            results[n * 100 + i] = client.request("_t/echo", payload)

    assert run_threads(worker, 4) == []
    assert len(results) == 60
    for key, result in results.items():
        n, i = divmod(key, 100)
        assert result == {"echo": {"n": n, "i": i, "pad": big if i % 5 == n % 5 else ""}}


def test_an_agent_that_exits_fails_the_waiting_call_at_once() -> None:
    with acp_lite.connect([sys.executable, "-c", AGENT], limits=FAST) as client:
        start = time.monotonic()
        with no_portal_crossing(client) as taken, pytest.raises(AgentExited) as info:
            client.request("_t/exit", timeout=30)
        assert time.monotonic() - start < 5
        assert taken == []
        assert info.value.returncode == 4
        assert any("got _t/exit" in line for line in info.value.stderr_tail)
        with pytest.raises(AgentExited):
            client.request("_t/echo")


def test_a_busy_trio_thread_delays_the_call_which_still_runs_here(
    client: acp_lite.Client,
) -> None:
    # The trio thread works (holds the gate) for a while: the call waits for the
    # gate rather than queueing behind that work the ordinary way.
    busy = threading.Event()

    def work() -> None:
        busy.set()
        time.sleep(0.15)

    client._portal.run_sync_soon(work)
    assert busy.wait(5)
    with no_portal_crossing(client) as taken:
        assert client.request("_t/echo", "busy") == {"echo": "busy"}
    assert taken == []


def test_in_memory_agents_take_the_direct_path_too() -> None:
    with connect_in_memory(InProcessAgent("echo"), limits=FAST) as client:
        with no_portal_crossing(client) as taken:
            session = client.new_session(cwd="/tmp")
            assert client.request("_acp_lite/ping", {"a": 1}) == {"echo": {"a": 1}}
        assert taken == []
        assert session.run("hi").text == "hi"  # a turn is not direct: it waits on the model
        assert client.sessions == {session.id: session}


def _is_direct(case: Case) -> bool:
    cls = acp_lite.Client if owner(case) == "Client" else acp_lite.Session
    return bool(getattr(getattr(cls, case.name), "_acp_direct", False))


DIRECT = [c for c in CASES if _is_direct(c)]


def test_the_typed_request_methods_are_direct() -> None:
    twins = {f"{owner(c)}.{c.name}" for c in DIRECT}
    assert {"Client.login", "Session.set_config_option", "Session.close"} <= twins
    for cls in (acp_lite.Client, acp_lite.Session):
        for name in ("new_session", "resume_session", "request"):
            if hasattr(cls, name):
                assert cls.__dict__[name]._acp_direct, name
    # Sending a prompt and waiting for its insertion (a response) are direct...
    for name in ("submit", "prompt", "wait_inserted"):
        assert acp_lite.Session.__dict__[name]._acp_direct, name
    # ...waiting on the session model (trio events) stays on the trio thread.
    for name in ("wait_idle", "wait_quiet", "cancel"):
        assert not acp_lite.Session.__dict__[name]._acp_direct, name
    assert not acp_lite.Client.__dict__["list_sessions"]._acp_direct  # reads trio's clock


@pytest.mark.parametrize("case", DIRECT, ids=[c.name for c in DIRECT])
def test_each_direct_method_runs_in_the_callers_thread(case: Case) -> None:
    from aio.fake_method_agent import FakeAgent

    agent = FakeAgent()
    with connected(agent) as (client, session):
        with no_portal_crossing(client) as taken:
            result = case.call(client, session, {})  # type: ignore[arg-type]
        assert taken == []
    assert _sent(agent, case) == case.params
    if case.result_type is not None:
        assert isinstance(result, case.result_type)
        assert case.check(result)


def test_a_coroutine_that_awaits_trio_outside_it_is_refused() -> None:
    @types.coroutine
    def not_a_request() -> Generator[str, None, None]:
        yield "a trio trap"

    closed: list[bool] = []

    async def method() -> None:
        try:
            await not_a_request()
        finally:
            closed.append(True)

    portal = Portal(name="acp-lite-direct-test")
    try:
        with pytest.raises(RuntimeError, match="must not be declared"):
            portal.call_direct(method, fallback=lambda: pytest.fail("fell back"))
        assert closed == [True]  # the coroutine was closed, its cleanup ran
        # The gate was given back: the trio thread still runs calls.
        assert portal.run_sync(lambda: 41 + 1) == 42
    finally:
        portal.close()


def test_a_closed_client_refuses_direct_calls() -> None:
    with connect_in_memory(InProcessAgent("echo"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
    with pytest.raises(ClientClosed):
        client.request("_acp_lite/ping")
    with pytest.raises(ClientClosed):
        session.status()


def test_a_coroutine_may_wait_for_several_responses_and_errors_cross_over(
    client: acp_lite.Client,
) -> None:
    # The first answer resumes the coroutine on the trio thread, which sends the
    # second request from there and parks again; its error reaches the caller.
    aclient = client.async_client

    async def two_then_fail() -> list[object]:
        first = await aclient.request("_t/echo", 1)
        second = await aclient.request("_t/echo", 2)
        await aclient.request("_t/never", timeout=0.05)
        return [first, second]

    with no_portal_crossing(client) as taken, pytest.raises(Timeout, match="_t/never"):
        client._portal.call_direct(two_then_fail, fallback=lambda: pytest.fail("fell back"))
    assert taken == []
    assert [m["params"] for m in sent(client, "_t/echo")] == [1, 2]

    async def two() -> list[object]:
        return [await aclient.request("_t/echo", n) for n in (3, 4)]

    assert client._portal.call_direct(two, fallback=lambda: pytest.fail("fell back")) == [
        {"echo": 3},
        {"echo": 4},
    ]


def test_reads_of_the_model_run_here_without_crossing() -> None:
    with connect_in_memory(InProcessAgent("echo"), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        session.run("hello")
        with crossings(client) as posted:
            assert session.text() == "hello"
            assert client.sessions == {session.id: session}
            assert client.session(session.id) is session
        assert posted == []
    assert session.text() == "hello"  # closed: read directly


def test_close_cuts_a_waiting_call_short_with_client_closed() -> None:
    client = acp_lite.connect([sys.executable, "-c", AGENT], limits=FAST)
    outcome: list[BaseException] = []

    def wait() -> None:
        try:
            client.request("_t/never", timeout=30)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=wait)
    thread.start()
    assert wait_for(lambda: stderr_has(client, "got _t/never"), 10)
    client.close()
    thread.join(10)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], ClientClosed), outcome


def test_direct_calls_while_a_turn_streams_lose_nothing() -> None:
    # The trio thread is busy applying a flood of updates: callers get the gate
    # between its passes; every answer and every chunk arrives.
    n = 20_000
    with connect_in_memory(InProcessAgent("flood", count=n), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        answers: dict[tuple[int, int], object] = {}
        errors: list[BaseException] = []

        def ask(t: int) -> None:
            try:
                for i in range(100):
                    answers[t, i] = client.request("_acp_lite/ping", {"t": t, "i": i})
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=ask, args=(t,)) for t in range(3)]
        for t in threads:
            t.start()
        turn = session.run("go")
        for t in threads:
            t.join()
    assert errors == []
    assert answers == {(t, i): {"echo": {"t": t, "i": i}} for t in range(3) for i in range(100)}
    chunks = [e for e in turn.updates if e.tag == "agent_message_chunk"]
    assert len(chunks) == n


HOLDING = {
    "while_busy": "hold",
    "turns": [{"steps": [{"type": "text", "text": "first"}, {"type": "sleep", "seconds": 30}]}],
}


def test_a_held_prompt_is_withdrawn_by_its_timeout_and_by_ctrl_c() -> None:
    with connect_in_memory(InProcessAgent(script=HOLDING), limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        first = session.prompt("first")  # inserted; its work runs for 30 s
        with no_portal_crossing(client) as taken:
            with pytest.raises(Timeout, match="session/prompt"):
                session.prompt("held", timeout=0.05)
            prompts = len(sent(client, "session/prompt"))
            with ctrl_c_when(lambda: len(sent(client, "session/prompt")) > prompts):
                session.prompt("held again", timeout=30)
        assert taken == []
        held = session.model.submissions[1:]
        assert len(held) == 2
        for submission in held:
            cancel = {"requestId": submission.request_id}
            assert {"jsonrpc": "2.0", "method": "$/cancel_request", "params": cancel} in sent(
                client
            )
        assert wait_for(lambda: all(s.status == "rejected" for s in held))  # -32800
        assert not sent(client, "session/cancel")  # the first prompt's work goes on
        assert session.state == "running" and not first.done
