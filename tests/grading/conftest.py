"""Grading runs of acp_lite's own client (`acp-lite prompt --reply`), made once."""

from __future__ import annotations

import sys

import pytest

from acp_lite.grading import SCENARIOS, ScenarioRun
from acp_lite.grading.runs import run_scenario

#: acp_lite's command-line client, as a grading client.
ACP_LITE_CLIENT = [sys.executable, "-m", "acp_lite", "prompt", "--reply", "--agent", "{agent}"]


@pytest.fixture(scope="session")
def acp_lite_runs() -> dict[str, ScenarioRun]:
    """Every scenario, played to acp_lite's client (in parallel: each is two processes)."""
    from concurrent.futures import ThreadPoolExecutor

    command = [*ACP_LITE_CLIENT, "grade"]
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = pool.map(lambda name: run_scenario(command, name, timeout=60), SCENARIOS)
        return dict(zip(SCENARIOS, runs, strict=True))
