"""Testing code that drives an agent, without the agent: recorded cassettes.

``triage`` below stands for *your* code: a bot, an editor integration, a batch
runner whose job is to talk to an agent. Its tests run against a real agent once,
to record what was said, and from then on against the recording: no agent
process, no credentials, no network. The cassettes of this file are committed in
``examples/__cassettes__/test_with_cassettes/``; run the tests with::

    pytest examples/test_with_cassettes.py                        # replay (the default)
    pytest examples/test_with_cassettes.py --acp-record-mode=all  # record them again

A test whose client sends something else than what was recorded fails with a
diff naming the request (change a prompt below and run it to see one).
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from acp_lite import permissions

REFERENCE_AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]

# Every test of this module records / replays its own cassette.
pytestmark = pytest.mark.acp_cassette


def triage(session: Any, issue: str) -> dict[str, Any]:
    """The code under test: ask the agent about an issue and sum up what it did."""
    turn = session.run(f"Triage this issue: {issue}")
    return {
        "answer": turn.text,
        "stop_reason": turn.stop_reason,
        "tools": [(t.title, t.status) for t in session.model.tool_calls],
    }


def test_triage_reports_the_answer(acp_session: Any) -> None:
    report = triage(acp_session, "the login button does nothing")
    assert report == {
        "answer": "Triage this issue: the login button does nothing",
        "stop_reason": "end_turn",
        "tools": [],
    }


@pytest.mark.acp_agent([*REFERENCE_AGENT, "--scenario", "tool_call_permission"])
@pytest.mark.acp_permission(policy=permissions.allow_once)
def test_triage_lets_the_agent_write(acp_session: Any) -> None:
    # The agent asks for permission; the replay checks that our answer is the
    # recorded one (allow), then plays the rest of the turn.
    report = triage(acp_session, "notes are not saved")
    assert report["stop_reason"] == "end_turn"
    assert [status for _, status in report["tools"]] == ["completed"]


@pytest.mark.acp_agent([*REFERENCE_AGENT, "--scenario", "failure"])
def test_triage_sees_a_failed_turn(acp_session: Any) -> None:
    report = triage(acp_session, "the model is down")
    assert report["stop_reason"] == "error"
    assert acp_session.model.error.message == "Model provider unavailable"
