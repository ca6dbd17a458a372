"""pytest_acp is tested the way users meet it: pytester runs of small test suites.

Runs are in-process (``runpytest``: no interpreter start-up per run; the agents
they start are closed by the inner session); only the xdist workers are other
interpreters (the runs without syrupy or pytest drop pytest_acp's modules so that
they are imported afresh, and put them back). Most inner tests run the reference agent in
this process too (``in_process=``, see :data:`IN_PROCESS`); agent processes are
kept where the process is the point: env and cwd, stderr, exit status, start
failures, process sharing, and once per kind of client fixture. The plugin loads
through its ``pytest11`` entry point.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

# Imported here so that in-process pytester runs find them loaded: each run drops
# the modules it imported itself (pytester restores sys.modules), and importing the
# client again costs about a second of CPU per run.
for _module in (
    "acp_lite.client",
    "acp_lite.sync",
    "acp_lite.testing.inprocess",
    "pytest_acp._inprocess",
    "pytest_acp.snapshot",
):
    importlib.import_module(_module)


def pytest_plugin_registered(plugin: object, manager: pytest.PytestPluginManager) -> None:
    # pytest refuses `pytest_plugins` in a conftest that is not top-level (this one,
    # when the whole suite runs from the root), so the pytester plugin is loaded
    # when this conftest is registered (a historic hook: it sees its own registration).
    if not manager.has_plugin("pytester"):
        manager.import_plugin("pytester")


HERE = Path(__file__).resolve().parent
REFERENCE_AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]

#: Inner-suite source: ``scenario(name)`` marks a test to run that scenario of the
#: reference agent in this process (no interpreter start-up per test).
IN_PROCESS = """
import functools
import pytest
from acp_lite.testing import InProcessAgent


def scenario(name, **overrides):
    return pytest.mark.acp_agent(
        in_process=functools.partial(InProcessAgent, scenario=name, **overrides)
    )
"""

#: An ini line putting ``random_ids_agent`` (the reference agent behind an id-rewriting
#: proxy, in this process) on the inner runs' ``sys.path``, workers included.
PYTHONPATH = f"pythonpath = {HERE}"

#: pytest's own plugins that no inner suite here uses: each plugin loaded costs every
#: run time (its hooks registered, its namespace scanned for fixtures), a fifth of a
#: small run.
_UNUSED = ("doctest", "junitxml", "pastebin", "legacypath", "stepwise", "setuponly")
_UNUSED += ("setupplan", "subtests", "unittest", "faulthandler")


def _blocked(*names: str) -> tuple[str, ...]:
    return tuple(arg for name in names for arg in ("-p", f"no:{name}"))


#: Options for pytester runs that need neither pytest-trio nor hypothesis (both import
#: hypothesis, which costs seconds of start-up in a new interpreter), nor the cache,
#: nor the plugins above.
LEAN_XDIST = _blocked("cacheprovider", "trio", "hypothesispytest", *_UNUSED)
#: In this process, this session's rewrite hook still rewrites the inner suites'
#: test files and conftests (their names match), so their assertions keep their
#: explanations; an inner hook would only read the file lists of every installed
#: plugin again, a tenth of a small run.
_PLAIN = ("--assert=plain",)
#: --no-header: the header's plugin list reads every plugin's package metadata.
_NO_HEADER = ("--no-header",)
#: :data:`LEAN_XDIST` for in-process runs that use no pytest-xdist, with the header
#: (for the tests of the plugin's ``acp:`` header line).
LEAN_HEADER = LEAN_XDIST + _blocked("xdist", "xdist.looponfail") + _PLAIN
#: :data:`LEAN_HEADER` without the header.
LEAN = LEAN_HEADER + _NO_HEADER
#: :data:`LEAN` for runs with async tests: pytest-trio loaded.
LEAN_TRIO = _blocked("cacheprovider", "hypothesispytest", *_UNUSED, "xdist", "xdist.looponfail")
LEAN_TRIO += _PLAIN + _NO_HEADER


@pytest.fixture(autouse=True)
def _not_an_xdist_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner pytest runs must not believe they are xdist workers when this suite runs
    under ``-n``: syrupy would then keep its report to itself."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
