"""``Limits.stream_read_delay``: while a message streams a line per write, the reader
waits a little before reading again, so that one wake-up handles many chunks; nothing
is lost, reordered or held longer than the delay. Over in-memory streams, on trio's
MockClock."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing

from acp_lite import aio
from acp_lite.core import ClientConnection
from acp_lite.limits import Limits

CHUNKS = 200
GAP = 0.0001  # the agent writes one chunk line every 0.1 ms (virtual time)


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **obj}).encode() + b"\n"


def _update(update: dict[str, Any]) -> bytes:
    return _line({"method": "session/update", "params": {"sessionId": "s1", "update": update}})


def _chunk(i: int) -> bytes:
    text = {"type": "text", "text": f"chunk {i} "}
    return _update({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text})


class CountingReceive:
    """The client's receive side, counting the reads that returned data."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.reads: list[float] = []

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = await self.stream.receive_some(max_bytes)
        if data:
            self.reads.append(trio.current_time())
        return bytes(data)

    async def aclose(self) -> None:
        await self.stream.aclose()


async def _agent(stream: trio.abc.Stream, wrote: dict[str, float]) -> None:
    buf = b""
    while True:
        data = await stream.receive_some()
        if not data:
            return
        buf += data
        *lines, buf = buf.split(b"\n")
        for raw in lines:
            msg = json.loads(raw)
            method, rid = msg.get("method"), msg.get("id")
            if method == "initialize":
                init = {"protocolVersion": 2, "info": {"name": "f", "version": "1"}}
                await stream.send_all(_line({"id": rid, "result": {**init, "capabilities": {}}}))
            elif method == "session/new":
                await stream.send_all(_line({"id": rid, "result": {"sessionId": "s1"}}))
            elif method == "session/prompt":
                running = {"sessionUpdate": "state_update", "state": "running", "background": []}
                await stream.send_all(_update(running))
                await stream.send_all(_line({"id": rid, "result": {"messageId": "u1"}}))
                for i in range(CHUNKS):
                    await trio.sleep(GAP)
                    await stream.send_all(_chunk(i))
                wrote["last"] = trio.current_time()
                idle = {"sessionUpdate": "state_update", "state": "idle", "background": []}
                await stream.send_all(_update({**idle, "stopReason": "end_turn"}))


def _turn(delay: float) -> tuple[str, list[float], float, float]:
    out: dict[str, Any] = {}

    async def main() -> None:
        client_side, agent_side = trio.testing.memory_stream_pair()
        wrote: dict[str, float] = {}
        counting = CountingReceive(client_side)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_agent, agent_side, wrote)
            limits = Limits(stream_read_delay=delay)
            async with aio.connect_streams(client_side, counting, limits=limits) as client:
                session = await client.new_session("/")
                turn = await session.run("go", timeout=60)
                out.update(text=turn.text, done=trio.current_time(), last=wrote["last"])
            nursery.cancel_scope.cancel()
        out["reads"] = counting.reads

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return out["text"], out["reads"], out["last"], out["done"]


def test_a_line_per_write_is_read_in_batches_and_nothing_is_lost() -> None:
    expected = "".join(f"chunk {i} " for i in range(CHUNKS))
    text0, reads0, _, _ = _turn(0.0)
    text, reads, last, done = _turn(0.002)
    assert text0 == expected and text == expected
    # Without the delay each line is a read of its own; with it, one read per 2 ms of
    # stream once the stream is hot (after a few lines read one by one).
    assert len(reads0) >= CHUNKS
    assert len(reads) <= 8 + 2 + CHUNKS * GAP / 0.002 + 5
    # What follows the stream (the idle) is seen at most the delay after it was sent.
    assert done - last <= 0.002 + 1e-9


def test_no_delay_outside_a_stream() -> None:
    # The handshake and session/new are not streams: read at once (no virtual time).
    async def main() -> float:
        client_side, agent_side = trio.testing.memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_agent, agent_side, {})
            limits = Limits(stream_read_delay=5.0)
            t0 = trio.current_time()
            async with aio.connect_streams(client_side, client_side, limits=limits) as client:
                await client.new_session("/")
                took = trio.current_time() - t0
            nursery.cancel_scope.cancel()
        return took

    assert trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0)) == 0


@pytest.mark.parametrize("then", [b'{"jsonrpc":"2.0","id":7,"result":{}}\n', b"not json\n"])
def test_streaming_is_what_the_last_line_was(then: bytes) -> None:
    core = ClientConnection()
    core.receive_data(b"".join(_chunk(i) for i in range(4)))
    assert not core.streaming  # a stream's first lines: not hot yet
    core.receive_data(b"".join(_chunk(i) for i in range(4, 20)))
    assert core.streaming
    core.receive_data(_chunk(20))
    assert core.streaming
    core.receive_data(_chunk(21) + then)
    assert not core.streaming
    core.receive_data(_chunk(22) + b"partial")
    assert core.streaming  # the partial line is not read yet
    core.receive_data(b"")
    assert not core.streaming
