"""Agents in this process for the fixtures (``@pytest.mark.acp_agent(in_process=...)``,
``--acp-agent python:MODULE:NAME``), over acp_lite's in-memory transport.

No interpreter starts per test, so a suite of many short tests runs in a fraction of
the time. What only a process tells the plugin is read from the agent instead: the
client's ``returncode`` and ``stderr_tail()`` (the conformance checks and the failure
report use them) are an ``InProcessAgent``'s own, or, for a trio-native agent, ``0``
once it returned (``1`` and its traceback when it raised). ``pid`` stays ``None``.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from acp_lite.aio import AsyncClient, PipeAgent
from acp_lite.aio import connect_in_memory as aio_connect_in_memory
from acp_lite.client import Client
from acp_lite.sync import connect_in_memory
from pytest_acp._settings import describe_factory

__all__ = [
    "InProcessAsyncClient",
    "InProcessClient",
    "connect_in_process",
    "connect_in_process_async",
    "new_agent",
    "stderr_tail_of",
]


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


def new_agent(factory: Callable[..., Any]) -> Any:
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
        return agent if reports else _NativeAgent(agent)
    raise pytest.UsageError(
        f"{describe_factory(factory)} returned {agent!r}: expected a PipeAgent "
        "(such as acp_lite.testing.InProcessAgent) or an async def agent(stream)"
    )


def _returncode(agent: Any) -> int | None:
    code = getattr(agent, "returncode", None)
    return code if isinstance(code, int) else None


def _stderr_tail(agent: Any) -> list[str]:
    tail = getattr(agent, "stderr_tail", None)
    return [str(line) for line in tail()] if callable(tail) else []


class InProcessClient(Client):
    """An ``acp_lite.Client`` whose agent runs in this process: ``returncode`` and
    ``stderr_tail()`` are the agent's (``pid`` is ``None``: there is no process)."""

    _acp_agent: Any

    @property
    def returncode(self) -> int | None:
        """The agent's exit status once it stopped (``None`` while it runs)."""
        return _returncode(self._acp_agent)

    def stderr_tail(self) -> list[str]:
        """The last lines the agent logged (an ``InProcessAgent``'s stderr tail)."""
        return _stderr_tail(self._acp_agent)


class InProcessAsyncClient(AsyncClient):
    """The ``AsyncClient`` twin of :class:`InProcessClient`."""

    _acp_agent: Any

    @property
    def returncode(self) -> int | None:
        """The agent's exit status once it stopped (``None`` while it runs)."""
        return _returncode(self._acp_agent)

    def stderr_tail(self) -> list[str]:
        """The last lines the agent logged (an ``InProcessAgent``'s stderr tail)."""
        return _stderr_tail(self._acp_agent)


def connect_in_process(agent: Any, **kwargs: Any) -> InProcessClient:
    """A blocking client connected to ``agent`` (from :func:`new_agent`; ``kwargs``:
    those of ``acp_lite.connect_in_memory``)."""
    client = connect_in_memory(agent, name="in-process", **kwargs)
    # acp_lite builds the Client; the subclass only adds the agent's reads.
    client.__class__ = InProcessClient
    assert isinstance(client, InProcessClient)
    client._acp_agent = agent
    return client


def stderr_tail_of(agent: Any) -> list[str]:
    """What ``agent`` logged (its stderr tail, or a trio-native agent's traceback)."""
    return _stderr_tail(agent)


@asynccontextmanager
async def connect_in_process_async(
    factory: Callable[..., Any], **kwargs: Any
) -> AsyncIterator[InProcessAsyncClient]:
    """``acp_lite.aio.connect_in_memory`` to a new agent from ``factory``."""
    agent = new_agent(factory)
    async with aio_connect_in_memory(agent, **kwargs) as client:
        client.__class__ = InProcessAsyncClient
        assert isinstance(client, InProcessAsyncClient)
        client._acp_agent = agent
        yield client
