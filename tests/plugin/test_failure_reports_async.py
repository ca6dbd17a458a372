"""A trio test's acp_lite failure (pytest-trio raises it in a nursery's exception
group, which pytest prints natively) shows the user's frames, not acp_lite's."""

from __future__ import annotations

import pytest

from .conftest import LEAN_TRIO

SUITE = """
import pytest

@pytest.mark.trio
@pytest.mark.acp_agent(scenario="crash")
async def test_crash(acp_async_session):
    await acp_async_session.run("hi")
"""


def test_an_async_failure_shows_the_users_frames(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_async_suite=SUITE)
    result = pytester.runpytest(*LEAN_TRIO, "--tb=short", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert 'await acp_async_session.run("hi")' in out
    assert "AgentExited: the agent exited with code 3" in out
    assert "acp_lite/aio/_session.py" not in out
    assert "acp_lite/core/" not in out
