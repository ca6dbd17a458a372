"""``--acp-probes`` and ``pytest_acp.probes.acp_probe_suite``: one test per probe."""

from __future__ import annotations

import json

import pytest

AGENTS = """
from acp_lite.testing import InProcessAgent


def broken():
    return InProcessAgent(faults=["unknown-method-internal-error"])
"""


def test_acp_probes_adds_one_test_per_probe(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--acp-probes", "--acp-agent", "python:acp_lite.testing:InProcessAgent", "-v"
    )
    outcomes = result.parseoutcomes()
    # Every probe ran; skipped ones are those whose capability the agent does not offer.
    assert outcomes.get("passed", 0) + outcomes.get("skipped", 0) == len(_ids(result)) > 30
    assert "failed" not in outcomes and "error" not in outcomes, outcomes
    assert "acp-probes::ACP-RPC-001 PASSED" in result.stdout.str()


def _ids(result: pytest.RunResult) -> list[str]:
    return [line.split("::")[1].split()[0] for line in result.outlines if "acp-probes::" in line]


def test_a_broken_agent_fails_with_the_requirement_and_evidence(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(agents=AGENTS)
    pytester.syspathinsert()
    report = pytester.path / "report.json"
    result = pytester.runpytest(
        "--acp-probes=mandatory",
        "--acp-agent",
        "python:agents:broken",
        "-k",
        "RPC-001",
        f"--acp-report-json={report}",
    )
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1 and "passed" not in outcomes, outcomes
    out = result.stdout.str()
    assert "ACP-RPC-001 [mandatory]" in out
    assert "why: the unknown method got error code -32603, not -32601" in out
    assert '-> {"jsonrpc":"2.0","id":' in out
    rows = {r["id"]: r for r in json.loads(report.read_text())["requirements"]}
    assert rows["ACP-RPC-001"]["status"] == "fail"


@pytest.mark.parametrize(
    ("scenario", "requirement"),
    [
        ("broken_tool_call_reopened", "ACP-BG-106"),
        ("broken_wrong_session_id", "ACP-UPDATE-104"),
        ("broken_stdout_garbage", "ACP-RPC-101"),
    ],
)
def test_a_probe_fails_when_its_traffic_breaks_a_passive_rule(
    pytester: pytest.Pytester, scenario: str, requirement: str
) -> None:
    """The probes pass on these agents (what they break no probe provokes), but the
    passive rules judge each probe's own traffic too, as they do any test's."""
    pytester.makepyfile(
        agents=f"""
        from acp_lite.testing import InProcessAgent


        def broken():
            return InProcessAgent(scenario={scenario!r})
        """
    )
    pytester.syspathinsert()
    report = pytester.path / "report.json"
    result = pytester.runpytest(
        "--acp-probes=mandatory",
        "--acp-agent",
        "python:agents:broken",
        "-k",
        "CANCEL",
        f"--acp-report-json={report}",
    )
    out = result.stdout.str()
    assert "passed, but its traffic broke a rule:" in out, out[-3000:]
    assert f"{requirement} [mandatory]" in out
    rows = {r["id"]: r for r in json.loads(report.read_text())["requirements"]}
    assert rows[requirement]["status"] == "fail"
    assert rows[requirement]["evidence"]


def test_acp_probe_suite_in_a_test_module(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_conforms="""
        from acp_lite.testing import InProcessAgent
        from pytest_acp.probes import acp_probe_suite

        test_reference = acp_probe_suite(InProcessAgent, ids=["ACP-RPC-001", "ACP-RPC-002"])
        """
    )
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=2)
    assert "test_conforms.py::test_reference[ACP-RPC-001] PASSED" in result.stdout.str()


def test_unknown_tier_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--acp-probes=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--acp-probes: unknown tier 'nope'*"])
