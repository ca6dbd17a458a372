"""Fixtures for the reference agent tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from acp_lite.testing import InProcessAgent, agent_command

from ._agentproc import AgentProcess, InProcessPipes, RawAgent
from ._schema import schema_errors


@pytest.fixture
def spawn() -> Iterator[Callable[..., RawAgent]]:
    """``spawn("scenario", script=..., count=...)`` -> a running agent.

    In this process (:class:`InProcessPipes`) unless ``process=True`` (then
    ``args=...`` are extra command-line options of the subprocess).

    At teardown every message the agent wrote is validated against the v2
    schema, except for ``broken_*`` scenarios and very long transcripts.
    """
    started: list[tuple[str | None, RawAgent]] = []

    def start(scenario: str | None = None, *, process: bool = False, **kwargs: Any) -> RawAgent:
        agent: RawAgent
        if process:
            agent = AgentProcess(agent_command(scenario, **kwargs))
        else:
            agent = InProcessPipes(InProcessAgent(scenario, stderr_lines=10_000, **kwargs))
        started.append((scenario, agent))
        return agent

    yield start
    errors: list[str] = []
    for scenario, agent in started:
        agent.close()
        if not (scenario or "").startswith("broken_") and len(agent.messages) < 1000:
            errors += schema_errors(agent.messages, agent.sent)
    assert errors == []
