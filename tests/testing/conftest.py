"""Fixtures for the reference agent tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from acp_lite.testing import agent_command

from ._agentproc import AgentProcess
from ._schema import schema_errors


@pytest.fixture
def spawn() -> Iterator[Callable[..., AgentProcess]]:
    """``spawn("scenario", script=..., count=..., args=...)`` -> a running agent.

    At teardown every message the agent wrote is validated against the v2
    schema, except for ``broken_*`` scenarios and very long transcripts.
    """
    started: list[tuple[str | None, AgentProcess]] = []

    def start(scenario: str | None = None, **kwargs: Any) -> AgentProcess:
        agent = AgentProcess(agent_command(scenario, **kwargs))
        started.append((scenario, agent))
        return agent

    yield start
    errors: list[str] = []
    for scenario, agent in started:
        agent.close()
        if not (scenario or "").startswith("broken_") and len(agent.messages) < 1000:
            errors += schema_errors(agent.messages, agent.sent)
    assert errors == []
