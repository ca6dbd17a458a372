"""``connect_in_memory``: a client connected to an agent in this process (no subprocess).

Two kinds of agent:

* a trio-native ``async def agent(stream: trio.abc.Stream) -> None``, run as a task
  in the client's own trio loop over an in-memory byte stream pair, so a test on
  ``trio.testing.MockClock(autojump_threshold=0)`` can time out without waiting;
* an :class:`acp_lite.testing.InProcessAgent` (the reference agent in daemon
  threads), reached over two pipes wrapped in ``trio.lowlevel.FdStream``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal, Protocol, TypedDict, Unpack, runtime_checkable

import trio

from acp_lite.aio._client import AsyncClient, _unwrap_group, connect_streams_with
from acp_lite.aio._peer import AgentOutput, ReportsExit
from acp_lite.aio._terminals import TerminalHandler
from acp_lite.files import FileHandler
from acp_lite.limits import Limits
from acp_lite.options import ConnectOptions
from acp_lite.protocol import CreateElicitationResponse

__all__ = [
    "AgentFunction",
    "ConnectKeywords",
    "PipeAgent",
    "connect_in_memory",
    "memory_stream_pair",
    "run_agent",
]


@runtime_checkable
class PipeAgent(Protocol):
    """An agent in this process reached over two pipes, such as
    :class:`acp_lite.testing.InProcessAgent` (the reference agent in threads)."""

    def start(self) -> tuple[int, int]:
        """Start it; the client's ends: ``(write_fd, read_fd)``."""
        ...

    def close(self) -> None:
        """Stop it and join its threads (the client closed its pipe ends first)."""
        ...


class ConnectKeywords(TypedDict, total=False):
    """The keywords of :func:`~acp_lite.aio.connect_streams`, for ``connect_in_memory``."""

    timeout: float | None
    client_info: Mapping[str, object] | None
    capabilities: Mapping[str, object] | None
    # The session argument is the connection's (AsyncSession; the blocking Session
    # for acp_lite.connect_in_memory, which shares these keywords).
    on_permission: Callable[..., str | None] | None
    on_elicitation: Callable[..., CreateElicitationResponse | Mapping[str, object] | None] | None
    files: FileHandler | None
    terminals: TerminalHandler | None
    plugins: Iterable[object]
    limits: Limits | None
    protocol_version: int | Literal["auto"]
    conformance: bool


log = logging.getLogger(__name__)

AgentFunction = Callable[[trio.abc.Stream], Awaitable[None]]
"""A trio-native agent: reads and writes the wire on its end of a byte stream."""

#: How long a trio-native agent may take to return once the client closed its side.
AGENT_CLOSE_GRACE = 1.0


def memory_stream_pair() -> tuple[trio.StapledStream[Any, Any], trio.StapledStream[Any, Any]]:
    """Two connected in-memory byte streams: ``(client_side, agent_side)``.

    Each direction is its own one-way pipe, so closing the client's send half is
    an end of input for the agent while the agent's replies can still be read.
    """
    from trio.testing import memory_stream_one_way_pair

    to_agent_send, to_agent_receive = memory_stream_one_way_pair()
    to_client_send, to_client_receive = memory_stream_one_way_pair()
    client = trio.StapledStream(to_agent_send, to_client_receive)
    agent = trio.StapledStream(to_client_send, to_agent_receive)
    return client, agent


async def run_agent(agent: AgentFunction, stream: trio.abc.Stream) -> None:
    """Run a trio-native agent on ``stream``; its side closes when it returns."""
    try:
        await agent(stream)
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()


@asynccontextmanager
async def connect_in_memory(
    agent: PipeAgent | AgentFunction, **connect_kwargs: Unpack[ConnectKeywords]
) -> AsyncIterator[AsyncClient]:
    """Connect to an agent in this process, run ``initialize``, yield the client.

    ``agent`` is an :class:`~acp_lite.testing.InProcessAgent` (started here, and
    stopped and joined on exit) or a trio-native ``async def agent(stream)`` (run
    in this loop; its errors propagate; it gets ``AGENT_CLOSE_GRACE`` seconds to
    return after the client closed its side, then it is cancelled).
    ``connect_kwargs`` are those of :func:`connect_streams` (``timeout``,
    ``on_permission``, ``limits``, ...); a bad one raises ``TypeError`` /
    ``ValueError`` before the agent starts.
    """
    options = ConnectOptions(**connect_kwargs)
    if isinstance(agent, PipeAgent):
        async with _in_process(agent, options) as client:
            yield client
        return
    client_stream, agent_stream = memory_stream_pair()
    done = trio.Event()

    async def agent_task() -> None:
        try:
            await run_agent(agent, agent_stream)
        finally:
            done.set()

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(agent_task)
            output = client_stream.receive_stream
            if isinstance(agent, ReportsExit):  # the client reads how it ended
                output = AgentOutput(output, agent)
            try:
                async with connect_streams_with(
                    client_stream.send_stream, output, options
                ) as client:
                    yield client
            finally:
                with trio.CancelScope(shield=True):
                    await client_stream.send_stream.aclose()
                    with trio.move_on_after(AGENT_CLOSE_GRACE):
                        await done.wait()
                    await client_stream.receive_stream.aclose()
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        inner = _unwrap_group(group)
        if inner is group:
            raise
        raise inner from inner.__cause__


@asynccontextmanager
async def _in_process(agent: PipeAgent, options: ConnectOptions) -> AsyncIterator[AsyncClient]:
    write_fd, read_fd = agent.start()
    send = trio.lowlevel.FdStream(write_fd)
    receive = trio.lowlevel.FdStream(read_fd)
    output = AgentOutput(receive, agent) if isinstance(agent, ReportsExit) else receive
    try:
        async with connect_streams_with(send, output, options) as client:
            yield client
    finally:
        with trio.CancelScope(shield=True):
            await close_in_process(agent, send, receive)


async def close_in_process(
    agent: PipeAgent, send: trio.abc.SendStream, receive: trio.abc.ReceiveStream
) -> None:
    """Close the client's two pipe ends, then stop the agent and join its threads."""
    await send.aclose()
    await receive.aclose()
    await trio.to_thread.run_sync(agent.close)
