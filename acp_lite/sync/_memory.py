"""``acp_lite.connect_in_memory``: the blocking client connected to an agent in this process."""

from __future__ import annotations

import logging
from typing import Unpack

import trio

from acp_lite.aio.memory import (
    AgentFunction,
    AgentOutput,
    ConnectKeywords,
    PipeAgent,
    ReportsExit,
    memory_stream_pair,
    run_agent,
)
from acp_lite.sync._client import Client
from acp_lite.sync._connect import StreamPair, connect_streams

__all__ = ["connect_in_memory"]

log = logging.getLogger(__name__)


class BlockingConnectKeywords(ConnectKeywords, total=False):
    """The keywords of :func:`acp_lite.connect_streams`, for ``connect_in_memory``."""

    name: str


def connect_in_memory(
    agent: PipeAgent | AgentFunction, **kwargs: Unpack[BlockingConnectKeywords]
) -> Client:
    """Connect to an agent in this process, run ``initialize``, return a blocking Client.

    ``agent`` is an :class:`~acp_lite.testing.InProcessAgent` (started here;
    ``client.close()`` stops it and joins its threads) or a trio-native
    ``async def agent(stream)``, run as a task of the client's trio loop and
    cancelled when the client closes (its errors are logged, not raised).
    ``kwargs`` are those of :func:`acp_lite.connect_streams`.
    """
    kwargs.setdefault("name", "in-memory")
    if isinstance(agent, PipeAgent):
        in_process = agent

        async def open_pipes() -> StreamPair:
            write_fd, read_fd = in_process.start()
            send = trio.lowlevel.FdStream(write_fd)
            receive = trio.lowlevel.FdStream(read_fd)
            # Closed when the client's trio loop ends (system tasks are cancelled
            # once the client closed); joins the agent's threads.
            trio.lowlevel.spawn_system_task(
                _hold_in_process, in_process, send, receive, name="inproc-agent-holder"
            )
            if isinstance(in_process, ReportsExit):
                return send, AgentOutput(receive, in_process)
            return send, receive

        return connect_streams(open_pipes, **kwargs)
    function = agent

    async def open_memory() -> StreamPair:
        client_stream, agent_stream = memory_stream_pair()
        trio.lowlevel.spawn_system_task(_run_native, function, agent_stream, name="in-memory-agent")
        if isinstance(function, ReportsExit):  # the client reads how it ended
            return client_stream.send_stream, AgentOutput(client_stream.receive_stream, function)
        return client_stream.send_stream, client_stream.receive_stream

    return connect_streams(open_memory, **kwargs)


async def _hold_in_process(
    agent: PipeAgent, send: trio.abc.SendStream, receive: trio.abc.ReceiveStream
) -> None:
    try:
        await trio.sleep_forever()
    finally:
        with trio.CancelScope(shield=True):
            await send.aclose()
            await receive.aclose()
            agent.close()  # bounded; the loop is ending anyway


async def _run_native(agent: AgentFunction, stream: trio.abc.Stream) -> None:
    try:
        await run_agent(agent, stream)
    except Exception:  # a system task must not raise: it would crash the client's loop
        log.exception("the in-memory agent %r failed", agent)
