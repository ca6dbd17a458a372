"""README recipes for pytest_acp that are not in the sample suite: one suite against
several agents (a parametrized acp_agent_command), and a crash. One run holds both,
each in its own directory (the parametrized fixture is its directory's conftest)."""

from __future__ import annotations

import pytest

from .conftest import LEAN

SEVERAL_CONFTEST = """
import sys

import pytest

BASE = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario"]


@pytest.fixture(params=[BASE + ["echo"], BASE + ["streaming"]], ids=["echo", "stream"])
def acp_agent_command(request):
    return request.param
"""

SEVERAL = """
def test_turn_ends(acp_session):
    assert acp_session.run("hello").stop_reason == "end_turn"
"""

CRASH = """
import sys

import pytest
from acp_lite.errors import AgentExited

CRASH = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", "crash"]


@pytest.mark.acp_agent(CRASH)
def test_crash(acp_session):
    with pytest.raises(AgentExited, match="exited with code 3"):
        acp_session.run("hello")
"""


def test_several_agents_and_a_crash_that_is_no_violation(pytester: pytest.Pytester) -> None:
    several = pytester.mkpydir("several")
    (several / "conftest.py").write_text(SEVERAL_CONFTEST)
    (several / "test_several.py").write_text(SEVERAL)
    crash = pytester.mkpydir("crash")
    (crash / "test_crash.py").write_text(CRASH)
    result = pytester.runpytest(*LEAN, "-v", "--acp-conformance", "strict")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "*test_crash.py::test_crash PASSED*",
            "*test_turn_ends?echo? PASSED*",
            "*test_turn_ends?stream? PASSED*",
        ]
    )
