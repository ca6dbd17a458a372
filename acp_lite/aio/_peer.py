"""An in-process agent's end, as a process's would be read: exit status and stderr.

The in-memory transports wrap the client's receiving end in :class:`AgentOutput`
when the agent reports its own ``returncode`` and ``stderr_tail()`` (an
:class:`acp_lite.testing.InProcessAgent` does), so the error a crashed turn raises
names the exit code and the agent's last stderr lines, as it does for a process.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import trio

__all__ = ["AgentOutput", "ReportsExit"]


@runtime_checkable
class ReportsExit(Protocol):
    """An agent in this process that records how it ended."""

    returncode: int | None

    def stderr_tail(self) -> list[str]:
        """Its last stderr lines."""
        ...


class AgentOutput(trio.abc.ReceiveStream):
    """``stream`` (what the agent writes), knowing the agent that writes it."""

    def __init__(self, stream: trio.abc.ReceiveStream, agent: ReportsExit) -> None:
        self.stream = stream
        self.agent = agent

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        return await self.stream.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.stream.aclose()
