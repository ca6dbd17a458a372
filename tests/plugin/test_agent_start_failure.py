"""A wrong agent command: one clear line per test, no traceback flood."""

from __future__ import annotations

import sys

import pytest

from .conftest import LEAN

CODE = "import sys; sys.stderr.write('boom' + '-marker' + chr(10)); sys.exit(3)"
EXITING = [sys.executable, "-c", CODE]

SUITE = f"""
import pytest

@pytest.mark.acp_agent(["nope-agent-xyz"])
@pytest.mark.parametrize("n", range(6))
def test_uses_a_missing_agent(acp_session, n):
    acp_session.run("hi")

@pytest.mark.acp_agent({EXITING!r})
def test_uses_an_agent_that_exits(acp_session):
    acp_session.run("hi")
"""


def test_unstartable_agents_report_one_line_per_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(*LEAN)
    out = result.stdout.str()
    assert result.ret == 1
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) + outcomes.get("failed", 0) == 7, outcomes
    assert "Traceback" not in out and "trio" not in out and "_portal" not in out, out
    assert out.count("could not start the agent nope-agent-xyz") >= 6, out
    # The agent's stderr, once in its test's report (the -r summary may repeat it).
    report = out.split("short test summary info")[0]
    assert report.count("boom-marker") == 1, out
    assert len(out.splitlines()) < 90, len(out.splitlines())
