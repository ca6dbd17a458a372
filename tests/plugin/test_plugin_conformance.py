"""--acp-conformance=strict fails every deliberately broken scenario of the reference
agent with the rule it breaks, and passes the conforming ones it drives (all scenarios:
tests/testing/test_conformance.py). The agents run in this process: the traffic is
the point, not the process."""

from __future__ import annotations

import pytest

from acp_lite.testing.scenarios import BROKEN_RULES, SCENARIOS, kind

from .conftest import LEAN

#: Each broken scenario and the rule its traffic must be reported for.
BROKEN = BROKEN_RULES

#: Conforming scenarios driven with one prompt through the plugin's fixtures. Every
#: scenario (conforming, broken, fault) is checked directly against
#: pytest_acp.conformance in tests/testing/test_conformance.py; this run shows the
#: plugin's strict mode end to end on a cheap subset.
CONFORMING = [
    "echo",
    "streaming",
    "thinking",
    "tool_call_permission",
    "plan",
    "usage",
    "notice",
    "compaction",
    "background",
    "failure",
    "updates_before_response",
    "custom_update",
    "elicitation",
    "updates_before_session_response",
]

SUITE = f"""
import functools
import time

import attrs
import pytest
from acp_lite.testing import InProcessAgent, scenarios


def wait_for_idles(session, count):
    # Until `count` idle state updates arrived (the run returns at the first).
    deadline = time.monotonic() + 5
    while sum(e.raw.get("state") == "idle" for e in session.updates) < count:
        assert time.monotonic() < deadline, "the second idle never came"
        time.sleep(0.01)


@pytest.fixture
def acp_agent_command(scenario):
    # A factory: each test gets its own agent, in this process.
    if scenario != "background":
        return functools.partial(InProcessAgent, scenario=scenario)
    # The same traffic with its background work shortened (0.3 s -> 0.05 s).
    script = scenarios.background()
    work, *rest = script.turns[0].steps
    turn = attrs.evolve(script.turns[0], steps=[attrs.evolve(work, seconds=0.05), *rest])
    return functools.partial(InProcessAgent, script=attrs.evolve(script, turns=[turn]))


@pytest.mark.parametrize("scenario", {sorted(BROKEN)!r})
def test_broken(scenario, acp_session, acp_client):
    if scenario == "broken_cancel_not_confirmed":
        acp_session.prompt("work")
        acp_session.cancel()
        # Answered, a request sent after the cancel proves that the agent read it.
        acp_client.request("_acp_lite/sync")
        acp_session.wait_idle(timeout=5)
    elif scenario == "broken_no_idle":
        submission = acp_session.prompt("x")
        for _ in acp_session.iter_updates(from_start=True):  # all it sends: the echo
            if acp_session.text(submission) == "x":
                break
        acp_session.wait_idle(timeout=0.01)  # the test gives up waiting: traffic ended
    elif scenario == "broken_duplicate_message_id":
        acp_session.run("first")
        acp_session.run("second")  # gets the same messageId
    elif scenario == "broken_idle_before_running":
        acp_session.run("x")
        wait_for_idles(acp_session, 2)  # the output after the first idle is the point
    else:
        acp_session.run("x")


@pytest.mark.parametrize("scenario", {CONFORMING!r})
def test_conforming(scenario, acp_session):
    acp_session.run("x")
    if scenario == "background":
        acp_session.wait_quiet(timeout=5, grace=0.05)  # the background work ends
        assert any(e.raw.get("background") for e in acp_session.updates)  # was listed


@pytest.mark.parametrize("scenario", ["slow_cancel"])
def test_cancel_conforming(scenario, acp_session):
    acp_session.prompt("work")
    acp_session.cancel()
    acp_session.wait_idle(timeout=5)
    assert acp_session.stop_reason == "cancelled"
"""


def test_every_broken_scenario_is_listed() -> None:
    assert sorted(BROKEN) == sorted(n for n in SCENARIOS if n.startswith("broken_"))
    assert all(kind(name) == "conforming" for name in CONFORMING)


def test_strict_conformance_fails_each_broken_scenario(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_scenarios=SUITE)
    result = pytester.runpytest(*LEAN, "--acp-conformance=strict", "-rf")
    result.assert_outcomes(passed=len(CONFORMING) + 1, failed=len(BROKEN))
    lines = result.stdout.lines
    for scenario, rule in BROKEN.items():
        summary = [
            ln
            for ln in lines
            if ln.startswith(f"FAILED test_scenarios.py::test_broken[{scenario}]")
        ]
        assert len(summary) == 1, scenario
        section = result.stdout.str().split(f"_ test_broken[{scenario}] _")[1].split("\n___")[0]
        assert f"{rule} (transcript line" in section or f"  {rule}:" in section, (scenario, section)
