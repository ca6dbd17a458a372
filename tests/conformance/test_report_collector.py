"""The --acp-report-json collector: passive statuses, merging, and the xdist wire form."""

from __future__ import annotations

import json

from acp_lite.conformance import Evidence, Requirement, Result
from acp_lite.conformance.passive import PASSIVE, for_rule
from pytest_acp._report import ReportCollector, merge_results
from pytest_acp.conformance import Violation

PROBE = Requirement("ACP-ZZTEST-001", "mandatory", "a probe", "prompt-lifecycle#x")


def _status(collector: ReportCollector) -> dict[str, Result]:
    return {r.requirement.id: r for r in collector.report().results}


def _req(rule: str) -> Requirement:
    found = for_rule(rule)
    assert found is not None
    return found


def test_merge_fail_beats_pass_beats_skipped_beats_not_tested() -> None:
    order = ["not-tested", "skipped", "pass", "fail"]
    for i, weaker in enumerate(order):
        for stronger in order[i:]:
            a, b = Result(PROBE, weaker, "a"), Result(PROBE, stronger, "b")  # type: ignore[arg-type]
            assert merge_results(a, b).status == stronger
            assert merge_results(b, a).status == stronger
    one = Result(PROBE, "fail", "t1: x", (Evidence(1, "l1"),))
    two = Result(PROBE, "fail", "t2: y", (Evidence(2, "l2"),))
    both = merge_results(one, two)
    assert both.reason == "t1: x; t2: y" and [e.line for e in both.evidence] == [1, 2]
    assert merge_results(both, two).reason == both.reason  # the same reason once


def test_passive_statuses_by_version_waiver_and_finding() -> None:
    c = ReportCollector("agent")
    bad = Violation("unknown-stop-reason", "stopReason 'finished'", entry_index=7)
    c.passive("t.py::test_a", 2, [(bad, '{"stopReason":"finished"}')], waived=())
    c.passive("t.py::test_b", 2, [], waived={"idle-without-stop-reason"})
    got = _status(c)
    assert set(got) == {q.id for q in PASSIVE.values()}  # every passive requirement
    stop = got[_req("unknown-stop-reason").id]
    assert (stop.status, stop.reason) == ("fail", "t.py::test_a: stopReason 'finished'")
    assert stop.evidence == (Evidence(7, '{"stopReason":"finished"}'),)
    echo = got[_req("user-message-not-echoed").id]
    assert (echo.status, echo.reason) == ("pass", "checked on 2 test transcript(s), no finding")
    # Waived in one test, checked in the other: a pass on one transcript.
    assert got[_req("idle-without-stop-reason").id].reason.startswith("checked on 1 ")
    assert got[_req("stdout-not-jsonrpc").id].status == "pass"  # both versions
    v1 = got[_req("v1-unknown-stop-reason").id]
    assert v1.status == "not-tested" and "no v1 traffic" in v1.reason
    report = c.report()
    assert report.protocol_version == 2 and not report.passed
    assert [r.requirement.id for r in report.failures()] == [_req("unknown-stop-reason").id]


def test_waived_everywhere_is_skipped_and_nothing_checked_is_not_tested() -> None:
    c = ReportCollector("agent")
    c.passive("t.py::test_v1", 1, [], waived={"v1-tool-call-incomplete"})
    got = _status(c)
    assert got[_req("v1-tool-call-incomplete").id].status == "skipped"
    assert got[_req("v1-unknown-stop-reason").id].status == "pass"
    assert got[_req("user-message-not-echoed").id].status == "not-tested"
    assert ReportCollector("x").report().verdicts()["mandatory"] == "not-tested"


def test_probe_results_join_and_workers_merge_into_one_report() -> None:
    one, two, controller = ReportCollector("a"), ReportCollector("a"), ReportCollector("a")
    one.passive("t.py::test_1", 2, [], waived=())
    one.add(Result(PROBE, "pass", "probed"))
    bad = Violation("work-not-ended", "still running", entry_index=None)
    two.passive("t.py::test_2", 2, [(bad, None)], waived=())
    two.add(Result(PROBE, "fail", "probe failed", (Evidence(3, "line"),)))
    two.stderr_tail("t.py::test_2", ["boom"] * 30)
    for worker in (one, two):  # as sent through execnet: a JSON string
        controller.merge_wire(json.loads(json.dumps(worker.to_wire())))
    got = _status(controller)
    assert got[PROBE.id].status == "fail" and got[PROBE.id].evidence == (Evidence(3, "line"),)
    assert got[PROBE.id].requirement == PROBE  # rebuilt from its row: not registered here
    ended = got[_req("work-not-ended").id]
    assert (ended.status, ended.evidence) == ("fail", ())  # located nowhere
    assert got[_req("user-message-not-echoed").id].reason.startswith("checked on 2 ")
    out = controller.report().to_json()
    assert out["stderrTail"] == ["--- t.py::test_2 ---"] + ["boom"] * 20
    assert out["format"] == "acp-lite-report/1" and out["passed"] is False
