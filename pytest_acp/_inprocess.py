"""Agents in this process for the fixtures (``@pytest.mark.acp_agent(in_process=...)``,
``--acp-agent python:MODULE:NAME``), over acp_lite's in-memory transport.

No interpreter starts per test, so a suite of many short tests runs in a fraction of
the time. What only a process tells the plugin is read from the agent instead: an
agent in this process that records how it ended (``returncode`` and
``stderr_tail()``: an ``InProcessAgent``, a cassette's ``ReplayAgent``) is what
acp_lite's client reports as its ``returncode`` and ``stderr_tail()`` (the
conformance checks and the failure report use them). A trio-native agent gets its
end recorded here: ``0`` once it returned, ``1`` and its traceback when it raised.
``pid`` stays ``None``.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeAlias

import pytest
import trio

from acp_lite.aio import AsyncClient, PipeAgent
from acp_lite.aio import connect_in_memory as aio_connect_in_memory
from acp_lite.client import Client
from acp_lite.sync import connect_in_memory
from pytest_acp._settings import describe_factory

__all__ = [
    "Agent",
    "connect_in_process",
    "connect_in_process_async",
    "new_agent",
    "stderr_tail_of",
]


Agent: TypeAlias = PipeAgent | Callable[[trio.abc.Stream], Awaitable[None]]
"""What one connection talks to: a ``PipeAgent`` or a trio-native agent."""


class _NativeAgent:
    """A trio-native agent whose end is recorded, as a process's exit would be."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.returncode: int | None = None
        self._tail: list[str] = []

    async def __call__(self, stream: trio.abc.Stream) -> None:
        try:
            await self.function(stream)
        except Exception as exc:
            self._tail = "".join(traceback.format_exception(exc)).splitlines()
            self.returncode = 1
            raise
        finally:
            if self.returncode is None:
                self.returncode = 0

    def stderr_tail(self) -> list[str]:
        return list(self._tail)


def _is_native(obj: Any) -> bool:
    """An ``async def agent(stream)`` (or an object with an async ``__call__``)."""
    if inspect.iscoroutinefunction(obj):
        return True
    return not isinstance(obj, type) and inspect.iscoroutinefunction(type(obj).__call__)


def new_agent(factory: Callable[..., Any]) -> Agent:
    """The agent of one connection: ``factory()`` (a ``PipeAgent`` such as
    ``acp_lite.testing.InProcessAgent``, or a trio-native agent function), or
    ``factory`` itself when it is a trio-native ``async def agent(stream)``.

    What the factory raises propagates (it is the test suite's own code); a value
    that is no agent is a ``UsageError``."""
    if _is_native(factory):
        return _NativeAgent(factory)
    agent = factory()
    if isinstance(agent, PipeAgent):
        return agent
    if _is_native(agent):
        # An agent object that reports its own end (a cassette's ReplayAgent) is
        # used as it is; others get their end recorded.
        reports = callable(getattr(agent, "stderr_tail", None)) and hasattr(agent, "returncode")
        native: Callable[[trio.abc.Stream], Awaitable[None]] = agent
        return native if reports else _NativeAgent(native)
    raise pytest.UsageError(
        f"{describe_factory(factory)} returned {agent!r}: expected a PipeAgent "
        "(such as acp_lite.testing.InProcessAgent) or an async def agent(stream)"
    )


def connect_in_process(agent: Agent, **kwargs: Any) -> Client:
    """A blocking client connected to ``agent`` (from :func:`new_agent`; ``kwargs``:
    those of ``acp_lite.connect_in_memory``)."""
    return connect_in_memory(agent, name="in-process", **kwargs)


def stderr_tail_of(agent: Agent) -> list[str]:
    """What ``agent`` logged (its stderr tail, or a trio-native agent's traceback)."""
    tail = getattr(agent, "stderr_tail", None)
    return [str(line) for line in tail()] if callable(tail) else []


@asynccontextmanager
async def connect_in_process_async(
    factory: Callable[..., Any], **kwargs: Any
) -> AsyncIterator[AsyncClient]:
    """``acp_lite.aio.connect_in_memory`` to a new agent from ``factory``."""
    async with aio_connect_in_memory(new_agent(factory), **kwargs) as client:
        yield client
