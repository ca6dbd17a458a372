"""``acp_lite.connect_in_memory``: the blocking client on an agent in this process."""

from __future__ import annotations

import json
import os
import threading

import attrs
import pytest
import trio

import acp_lite
from acp_lite.errors import AgentExited
from acp_lite.testing import InProcessAgent

from .conftest import FAST, portal_threads, wait_for


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_echo_turn_with_the_in_process_reference_agent() -> None:
    fds = open_fds()
    agent = InProcessAgent()
    with acp_lite.connect_in_memory(agent, limits=FAST) as client:
        assert client.agent_info.name == "acp-lite-reference-agent"
        turn = client.new_session(cwd="/tmp").run("Hello, agent")
        assert turn.stop_reason == "end_turn"
        assert turn.text == "Hello, agent"
    # Closed: the agent saw the end of its input, its threads and our fds are gone.
    assert agent.returncode == 0
    assert agent.threads() == []
    assert portal_threads() == []
    assert open_fds() == fds


def test_in_process_agent_exit_is_agent_exited() -> None:
    agent = InProcessAgent("crash")
    with acp_lite.connect_in_memory(agent, limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        with pytest.raises(AgentExited):
            session.run("go")
        assert client.closed
    assert agent.returncode == 3
    assert agent.threads() == []


def test_closing_stops_a_hanging_in_process_agent() -> None:
    agent = InProcessAgent("hang")
    with acp_lite.connect_in_memory(agent, limits=FAST) as client:
        session = client.new_session(cwd="/tmp")
        session.submit("hang")
        assert wait_for(lambda: session.model.state == "running")  # then it hangs
    assert agent.threads() == []
    assert portal_threads() == []


def test_echo_turn_with_a_trio_native_agent_on_the_clients_loop() -> None:
    loops: list[str] = []
    ended = threading.Event()

    async def echo(stream: trio.abc.Stream) -> None:
        loops.append(threading.current_thread().name)
        buffer = b""
        try:
            while data := await stream.receive_some():
                *lines, buffer = (buffer + data).split(b"\n")
                for line in lines:
                    await answer(stream, json.loads(line))
        finally:
            ended.set()

    with acp_lite.connect_in_memory(echo, limits=FAST) as client:
        turn = client.new_session(cwd="/tmp").run("hi there")
        assert turn.stop_reason == "end_turn"
        assert turn.text == "hi there"
        assert loops == ["acp-lite-in-memory"]  # on the client's trio thread (its loop)
    assert ended.is_set()
    assert portal_threads() == []


def test_trio_native_agent_is_cancelled_on_close() -> None:
    cancelled = threading.Event()

    async def stubborn(stream: trio.abc.Stream) -> None:
        await answer(stream, json.loads((await stream.receive_some()).split(b"\n")[0]))
        try:
            await trio.sleep_forever()  # ignores the end of its input
        finally:
            cancelled.set()

    # It never closes its output either: a short wait for that, then the cancel.
    with acp_lite.connect_in_memory(stubborn, limits=attrs.evolve(FAST, exit_status_wait=0.05)):
        pass
    assert cancelled.is_set()
    assert portal_threads() == []


async def answer(stream: trio.abc.Stream, msg: dict[str, object]) -> None:
    """A minimal echo agent's answer to one message."""

    async def send(message: dict[str, object]) -> None:
        await stream.send_all(json.dumps(message).encode() + b"\n")

    def update(sid: object, body: dict[str, object]) -> dict[str, object]:
        params = {"sessionId": sid, "update": body}
        return {"jsonrpc": "2.0", "method": "session/update", "params": params}

    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        info = {"name": "echo", "version": "0"}
        result = {"protocolVersion": 2, "info": info, "capabilities": {}}
        await send({"jsonrpc": "2.0", "id": rid, "result": result})
    elif method == "session/new":
        await send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        params = msg["params"]
        assert isinstance(params, dict)
        sid, text = params["sessionId"], params["prompt"][0]["text"]
        await send(update(sid, {"sessionUpdate": "state_update", "state": "running"}))
        await send({"jsonrpc": "2.0", "id": rid, "result": {"messageId": "u1"}})
        content = [{"type": "text", "text": text}]
        await send(
            update(sid, {"sessionUpdate": "user_message", "messageId": "u1", "content": content})
        )
        chunk = {"type": "text", "text": text}
        body = {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": chunk}
        await send(update(sid, body))
        idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
        await send(update(sid, idle))
