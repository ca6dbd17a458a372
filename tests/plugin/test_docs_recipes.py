"""README recipes for pytest_acp that are not in the sample suite: one suite against
several agents (a parametrized acp_agent_command), and a crash."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_one_suite_against_several_agents(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import sys

        import pytest

        BASE = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario"]


        @pytest.fixture(params=[BASE + ["echo"], BASE + ["streaming"]], ids=["echo", "stream"])
        def acp_agent_command(request):
            return request.param
        """
    )
    pytester.makepyfile(
        """
        def test_turn_ends(acp_session):
            assert acp_session.run("hello").stop_reason == "end_turn"
        """
    )
    result = pytester.runpytest("-v", "--acp-conformance", "strict")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*test_turn_ends?echo? PASSED*", "*test_turn_ends?stream? PASSED*"]
    )


def test_a_crash_raises_agent_exited_and_is_no_violation(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import sys

        import pytest
        from acp_lite.errors import AgentExited

        CRASH = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", "crash"]


        @pytest.mark.acp_agent(CRASH)
        def test_crash(acp_session):
            with pytest.raises(AgentExited, match="exited with code 3"):
                acp_session.run("hello")
        """
    )
    pytester.runpytest("--acp-conformance", "strict").assert_outcomes(passed=1)
