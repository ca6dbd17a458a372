"""The trio layer: agent process transport, connection pump, ``AsyncClient``.

::

    import trio
    from acp_lite import aio

    async def main():
        async with aio.connect(["my-agent", "--stdio"], timeout=30) as client:
            session = await client.new_session(cwd="/abs/dir")
            turn = await session.run("hello")
            print(turn.stop_reason, turn.text)

    trio.run(main)
"""

from acp_lite.aio._client import PROTOCOL_VERSION, AsyncClient, connect, connect_streams
from acp_lite.aio._events import ConnectionEvent
from acp_lite.aio._lines import LineReader, OversizeLine
from acp_lite.aio._process import AgentProcess
from acp_lite.aio._session import AsyncSession, prompt_blocks

__all__ = [
    "PROTOCOL_VERSION",
    "AgentProcess",
    "AsyncClient",
    "AsyncSession",
    "ConnectionEvent",
    "LineReader",
    "OversizeLine",
    "connect",
    "connect_streams",
    "prompt_blocks",
]
