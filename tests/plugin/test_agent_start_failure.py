"""A wrong agent command: one clear line per test, no traceback flood."""

from __future__ import annotations

import shlex
import sys

import pytest

from .conftest import LEAN

SUITE = """
import pytest

@pytest.mark.parametrize("n", range(6))
def test_uses_the_agent(acp_session, n):
    acp_session.run("hi")
"""


def test_unstartable_agent_reports_one_line_per_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess(*LEAN, "--acp-agent", "nope-agent-xyz", timeout=120)
    out = result.stdout.str()
    assert result.ret == 1
    assert result.parseoutcomes().get("errors", 0) + result.parseoutcomes().get("failed", 0) == 6
    assert "Traceback" not in out and "trio" not in out and "_portal" not in out, out
    assert out.count("could not start the agent nope-agent-xyz") >= 6, out
    assert len(out.splitlines()) < 80, len(out.splitlines())


def test_agent_that_exits_during_initialize_shows_its_stderr_once(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=SUITE.replace("range(6)", "range(1)"))
    code = "import sys; sys.stderr.write('boom' + '-marker' + chr(10)); sys.exit(3)"
    agent = shlex.join([sys.executable, "-c", code])
    result = pytester.runpytest_subprocess(*LEAN, "--acp-agent", agent, timeout=120)
    out = result.stdout.str()
    assert result.ret == 1
    assert "Traceback" not in out, out
    assert out.count("boom-marker") == 1, out
