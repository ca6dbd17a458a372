"""Probes against the reference agent in this process (no interpreter per agent)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from acp_lite.conformance.report import Result
from acp_lite.probes import PROBES, FdAgent, ProbeRun, suite_for
from acp_lite.testing.inprocess import InProcessAgent


def reference(faults: Iterable[str] = (), *, protocol: int = 2, **script: object) -> FdAgent:
    """The reference agent, with ``faults``, one in-process agent per connection."""
    names = tuple(faults)

    def start() -> tuple[int, int, Callable[[], list[str]], Callable[[], None]]:
        agent = InProcessAgent(protocol=protocol, faults=names, **script)
        write_fd, read_fd = agent.start()
        return write_fd, read_fd, agent.stderr_tail, agent.close

    label = "reference agent" + (f" --fault {' --fault '.join(names)}" if names else "")
    return FdAgent(start, label)


def run_one(
    requirement_id: str,
    faults: Iterable[str] = (),
    *,
    protocol: int = 2,
    timeout: float = 2.0,
    **script: object,
) -> Result:
    """The result of one probe against the reference agent with ``faults``."""
    suite_for(protocol)
    with ProbeRun(reference(faults, protocol=protocol, **script), timeout=timeout) as run:
        return run.run(PROBES[requirement_id])


@pytest.fixture
def probe_result() -> Callable[..., Result]:
    return run_one
