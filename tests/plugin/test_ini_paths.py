"""A relative path in an ini ``acp_agent`` is relative to the ini file, as pytest
resolves paths in ini files, not to the directory pytest runs in."""

from __future__ import annotations

import sys

import pytest

from .conftest import LEAN

pytest_plugins = ["pytester"]

AGENT = """
import runpy, sys
sys.argv = ["acp-lite-agent"]
runpy.run_module("acp_lite.testing.agent", run_name="__main__")
"""


def test_ini_agent_path_is_relative_to_the_ini_file(pytester: pytest.Pytester) -> None:
    project = pytester.mkdir("project")
    (project / "agents").mkdir()
    (project / "agents" / "my_agent.py").write_text(AGENT)
    (project / "pytest.ini").write_text(
        f"[pytest]\nacp_agent = {sys.executable} agents/my_agent.py\n"
    )
    (project / "tests").mkdir()
    (project / "tests" / "test_it.py").write_text(
        "def test_echo(acp_session):\n    assert acp_session.run('hi').text == 'hi'\n"
    )
    # Run from a subdirectory: the path must not resolve against it.
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project / "tests")
        result = pytester.runpytest_inprocess(
            *LEAN, "-c", str(project / "pytest.ini"), "test_it.py"
        )
    result.assert_outcomes(passed=1)
