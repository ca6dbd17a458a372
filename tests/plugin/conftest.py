"""pytest_acp is tested the way users meet it: pytester runs of small test suites.

Runs are in-process (``runpytest``: no interpreter start-up per run; the agents
they start are closed by the inner session); only the xdist run and the sample
suite use a subprocess. The plugin loads through its ``pytest11`` entry point.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


def pytest_plugin_registered(plugin: object, manager: pytest.PytestPluginManager) -> None:
    # pytest refuses `pytest_plugins` in a conftest that is not top-level (this one,
    # when the whole suite runs from the root), so the pytester plugin is loaded
    # when this conftest is registered (a historic hook: it sees its own registration).
    if not manager.has_plugin("pytester"):
        manager.import_plugin("pytester")


HERE = Path(__file__).resolve().parent
REFERENCE_AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]
RANDOM_IDS_AGENT = [sys.executable, str(HERE / "random_ids_agent.py")]

#: Options for pytester subprocess runs that need neither pytest-trio nor hypothesis:
#: both import hypothesis, which costs seconds of start-up per run on a busy machine.
LEAN = ("-p", "no:cacheprovider", "-p", "no:trio", "-p", "no:hypothesispytest")


@pytest.fixture(autouse=True)
def _not_an_xdist_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner pytest runs must not believe they are xdist workers when this suite runs
    under ``-n``: syrupy would then keep its report to itself."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
