"""--acp-report-json FILE: one report over all tests' traffic, serially and merged
from two xdist workers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .conftest import IN_PROCESS, LEAN, LEAN_XDIST

SUITE = (
    IN_PROCESS
    + """

@scenario("echo")
@pytest.mark.parametrize("n", range(2))
def test_conforming(acp_session, n):
    assert acp_session.run("hi").text == "hi"


@scenario("broken_bad_stop_reason")
def test_bad_stop_reason(acp_session):
    acp_session.run("x")


@scenario("echo")
def test_failing(acp_session):
    acp_session.run("x")
    assert False, "on purpose"


@scenario("broken_bad_stop_reason")
@pytest.mark.acp_conformance("off")
def test_not_checked(acp_session):
    acp_session.run("x")
"""
)


def _run(pytester: pytest.Pytester, *args: str, workers: int = 0) -> dict[str, Any]:
    result = pytester.runpytest(*args, "--acp-report-json", "out/report.json")
    result.assert_outcomes(passed=4, failed=1)
    if workers:
        result.stdout.fnmatch_lines([f"*{workers} workers*"])
    data: dict[str, Any] = json.loads((pytester.path / "out" / "report.json").read_text())
    return data


def test_report_json_serially_and_merged_from_xdist_workers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    serial = _run(pytester, *LEAN)
    rows = {r["id"]: r for r in serial["requirements"]}
    stop = rows["ACP-STOP-101"]
    assert (stop["status"], stop["rule"]) == ("fail", "unknown-stop-reason")
    assert stop["reason"].startswith("test_suite.py::test_bad_stop_reason: stopReason 'finished'")
    [evidence] = stop["evidence"]
    assert isinstance(evidence["line"], int) and '"finished"' in evidence["text"]
    # Four tests' traffic checked (not the one with conformance off), none of it v1.
    echo = rows["ACP-PROMPT-102"]
    assert echo["status"] == "pass"
    assert echo["reason"] == "checked on 4 test transcript(s), no finding"
    assert rows["ACP-V1-PROMPT-101"]["status"] == "not-tested"
    assert serial["verdict"]["mandatory"] == "fail" and serial["passed"] is False
    assert serial["protocolVersion"] == 2
    assert "--- test_suite.py::test_failing ---" in serial["stderrTail"]
    # Two workers, one file: the controller merged them into the same report.
    merged = _run(pytester, *LEAN_XDIST, "--assert=plain", "-n", "2", workers=2)
    assert merged["requirements"] == serial["requirements"]
    assert merged["counts"] == serial["counts"] and merged["verdict"] == serial["verdict"]
    assert "--- test_suite.py::test_failing ---" in merged["stderrTail"]
