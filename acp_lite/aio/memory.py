"""What in-process agents are made of, for the layers above the trio one.

The blocking ``connect_in_memory`` (:mod:`acp_lite.sync`) and pytest_acp's
in-process fixtures reach an agent in this process the way
:func:`acp_lite.aio.connect_in_memory` does: an agent is a :class:`PipeAgent`
(the reference agent in threads, over two pipes) or an :data:`AgentFunction` (a
trio-native ``async def agent(stream)``, run on :func:`memory_stream_pair`'s agent
side by :func:`run_agent`); :class:`AgentOutput` wraps the client's receiving end
when the agent :class:`ReportsExit`, so errors name its exit code and stderr.
:class:`ConnectKeywords` types the keywords ``connect_in_memory`` passes on.
"""

from __future__ import annotations

from acp_lite.aio._memory import (
    AgentFunction,
    ConnectKeywords,
    PipeAgent,
    connect_in_memory,
    memory_stream_pair,
    run_agent,
)
from acp_lite.aio._peer import AgentOutput, ReportsExit

__all__ = [
    "AgentFunction",
    "AgentOutput",
    "ConnectKeywords",
    "PipeAgent",
    "ReportsExit",
    "connect_in_memory",
    "memory_stream_pair",
    "run_agent",
]
