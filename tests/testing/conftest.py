"""Fixtures for the reference agent tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from acp_lite.testing import agent_command

from ._agentproc import AgentProcess


@pytest.fixture
def spawn() -> Iterator[Callable[..., AgentProcess]]:
    """``spawn("scenario", script=..., count=..., args=...)`` -> a running agent."""
    started: list[AgentProcess] = []

    def start(scenario: str | None = None, **kwargs: Any) -> AgentProcess:
        agent = AgentProcess(agent_command(scenario, **kwargs))
        started.append(agent)
        return agent

    yield start
    for agent in started:
        agent.close()
