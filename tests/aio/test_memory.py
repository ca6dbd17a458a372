"""``aio.connect_in_memory``: trio-native fake agents and the in-process reference agent."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest
import trio

from acp_lite import aio
from acp_lite.errors import AgentExited, Timeout
from acp_lite.testing import InProcessAgent, Script, Stderr, Text, Turn

from .conftest import FAST
from .fakes import NO_ANSWER, FakeAgent, echo_prompt

pytestmark = pytest.mark.trio


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def agent_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("inproc-agent-")]


async def test_echo_turn_with_a_trio_native_agent() -> None:
    fake = FakeAgent({"session/prompt": echo_prompt})
    async with aio.connect_in_memory(fake, limits=FAST) as client:
        assert client.agent_info.name == "fake-agent"
        assert client.pid is None
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("hello in memory")
        assert turn.stop_reason == "end_turn"
        assert turn.text == "hello in memory"
    assert fake.methods() == ["initialize", "session/new", "session/prompt"]
    assert fake.ended.is_set()  # closing the client ended the agent (end of input)


async def test_a_60_second_timeout_fires_at_once_on_the_mock_clock(autojump_clock: Any) -> None:
    fake = FakeAgent({"session/prompt": lambda _agent, _msg: NO_ANSWER})
    wall = time.monotonic()
    async with aio.connect_in_memory(fake, limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        start = trio.current_time()
        with pytest.raises(Timeout):
            await session.prompt("never answered", timeout=60)
        assert trio.current_time() - start >= 60  # 60 s passed on the trio clock ...
    assert time.monotonic() - wall < 5  # ... but not on the wall clock
    # The abandoned request was withdrawn.
    assert "$/cancel_request" in fake.methods()


async def test_agent_returning_ends_the_connection() -> None:
    async def init_then_leave(stream: trio.abc.Stream) -> None:
        fake = FakeAgent()
        fake.stream = stream
        async for message in _messages(stream):
            await fake.send({"jsonrpc": "2.0", "id": message["id"], "result": _init()})
            return  # the agent side closes: the client sees the end of the stream

    async with aio.connect_in_memory(init_then_leave, limits=FAST) as client:
        with pytest.raises(AgentExited):
            await client.new_session(cwd="/tmp")
        assert client.closed


async def test_agent_errors_propagate() -> None:
    async def broken(stream: trio.abc.Stream) -> None:
        raise RuntimeError("the fake agent has a bug")

    with pytest.raises(RuntimeError, match="has a bug"):
        async with aio.connect_in_memory(broken, limits=FAST):
            pass  # pragma: no cover - initialize cannot succeed


async def test_agent_that_ignores_end_of_input_is_cancelled(autojump_clock: Any) -> None:
    cancelled = trio.Event()

    async def stubborn(stream: trio.abc.Stream) -> None:
        fake = FakeAgent()
        fake.stream = stream
        async for message in _messages(stream):
            await fake.send({"jsonrpc": "2.0", "id": message["id"], "result": _init()})
            break
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()

    async with aio.connect_in_memory(stubborn, limits=FAST):
        pass
    assert cancelled.is_set()


async def test_in_process_reference_agent_echo_and_no_leaks() -> None:
    fds = open_fds()
    agent = InProcessAgent()
    async with aio.connect_in_memory(agent, limits=FAST) as client:
        assert client.agent_info.name == "acp-lite-reference-agent"
        session = await client.new_session(cwd="/tmp")
        turn = await session.run("Hello, agent")
        assert turn.stop_reason == "end_turn"
        assert turn.text == "Hello, agent"
        assert agent.returncode is None
    assert agent.returncode == 0
    assert agent.threads() == []
    assert agent_threads() == []
    assert open_fds() == fds
    assert any("ready" in line for line in agent.stderr_tail())


async def test_in_process_exit_step_closes_the_output_and_records_the_code() -> None:
    agent = InProcessAgent("crash")
    async with aio.connect_in_memory(agent, limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        with pytest.raises(AgentExited):
            await session.run("go")
        assert agent.wait(5) == 3
    assert agent.threads() == []
    assert any("exiting with code" in line for line in agent.stderr_tail())


async def test_in_process_stderr_steps_go_to_the_tail() -> None:
    script = Script(turns=[Turn(steps=[Stderr(text="to stderr"), Text(text="ok")])])
    agent = InProcessAgent(script=script)
    async with aio.connect_in_memory(agent, limits=FAST) as client:
        turn = await (await client.new_session(cwd="/tmp")).run("x")
        assert turn.text == "ok"
    assert "to stderr" in agent.stderr_tail()


async def test_closing_stops_a_hanging_in_process_agent() -> None:
    agent = InProcessAgent("hang")
    async with aio.connect_in_memory(agent, limits=FAST) as client:
        session = await client.new_session(cwd="/tmp")
        await session.submit("hang")
        await trio.sleep(0.1)
    assert agent.threads() == []
    assert agent_threads() == []


async def test_an_in_process_agent_serves_one_connection() -> None:
    agent = InProcessAgent()
    write_fd, read_fd = agent.start()
    try:
        with pytest.raises(RuntimeError, match="one connection"):
            agent.start()
    finally:
        os.close(write_fd)
        agent.close()
        os.close(read_fd)
    assert agent.returncode == 0
    assert agent.threads() == []


def _init() -> dict[str, Any]:
    from .fakes import INITIALIZE_RESULT

    return INITIALIZE_RESULT


def _messages(stream: trio.abc.Stream) -> Any:
    from .fakes import read_messages

    return read_messages(stream)


async def test_requests_larger_than_the_pipe_arrive_whole_and_in_order() -> None:
    """Writes go straight to the agent's pipe when nothing is queued before them
    (aio/_connection.py, flush) and the rest through the writer task: requests from
    concurrent tasks, each bigger than a pipe buffer, must reach the agent intact."""
    payloads = [str(i) * (100_000 + i) for i in range(8)]
    echoed: dict[int, object] = {}
    async with aio.connect_in_memory(InProcessAgent(), limits=FAST) as client:
        conn = client._conn
        assert conn._direct  # the in-process agent's stdin is a pipe

        async def one(i: int) -> None:
            echoed[i] = await client.request("_acp_lite/echo", {"p": payloads[i]})

        async with trio.open_nursery() as nursery:
            for i in range(len(payloads)):
                nursery.start_soon(one, i)
        assert conn._queued == 0
        assert echoed == {i: {"echo": {"p": p}} for i, p in enumerate(payloads)}
