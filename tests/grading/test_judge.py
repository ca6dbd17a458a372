"""The judge: acp_lite's client graded clean, and each requirement failing on a log
edited to break exactly its rule (the edit stands for a client that breaks it)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from acp_lite.conformance.report import Report
from acp_lite.grading import CLIENT_REQUIREMENTS, ScenarioRun, judge
from acp_lite.grading.runs import LogLine

Runs = dict[str, ScenarioRun]


def _status(report: Report, rid: str) -> str:
    return next(r.status for r in report.results if r.requirement.id == rid)


def test_acp_lite_client_is_graded_clean(acp_lite_runs: Runs) -> None:
    report = judge("acp-lite prompt --reply", acp_lite_runs)
    assert report.protocol_version == 2
    statuses = {r.requirement.id: (r.status, r.reason) for r in report.results}
    v1_only = {"ACP-CLIENT-022", "ACP-CLIENT-023", "ACP-CLIENT-024"}
    assert {rid for rid, (status, _) in statuses.items() if status != "pass"} == v1_only, statuses
    assert report.passed
    assert report.to_json()["role"] == "client"


def test_acp_lite_v1_path_is_graded_clean() -> None:
    """The agent answers 1 to acp_lite's initialize: acp_lite goes on in v1 (the
    scenarios its v1 translation handles differently from v2)."""
    from acp_lite.grading import grade_client

    from .conftest import ACP_LITE_CLIENT

    scenarios = ["basics", "unknown", "early", "cancel"]
    report = grade_client([*ACP_LITE_CLIENT, "grade"], scenarios=scenarios, protocol=1)
    assert report.protocol_version == 1
    failed = {r.requirement.id: r.reason for r in report.results if r.status == "fail"}
    assert failed == {}
    assert _status(report, "ACP-CLIENT-050") == "pass"
    assert _status(report, "ACP-CLIENT-011") == "skipped"  # a v2 rule


def _message(line: LogLine) -> Any:
    return line.message


def _replace(runs: Runs, scenario: str, edit: Callable[[list[LogLine]], list[LogLine]]) -> Runs:
    run = runs[scenario]
    return {**runs, scenario: attrs.evolve(run, log=tuple(edit(list(run.log))))}


def _client_line(line: LogLine, message: Any) -> LogLine:
    text = message if isinstance(message, str) else json.dumps(message)
    valid = not isinstance(message, str)
    return attrs.evolve(line, text=text, message=None if not valid else message, valid_json=valid)


def _edit_in(
    pick: Callable[[Any], bool], change: Callable[[Any], Any]
) -> Callable[[list[LogLine]], list[LogLine]]:
    """Change the client's lines whose message ``pick`` selects."""

    def edit(log: list[LogLine]) -> list[LogLine]:
        return [
            _client_line(x, change(json.loads(x.text)))
            if x.direction == "in" and x.valid_json and pick(x.message)
            else x
            for x in log
        ]

    return edit


def _answer_to(runs: Runs, scenario: str, method: str) -> Callable[[Any], bool]:
    ids = {
        item["id"]
        for x in runs[scenario].log
        if x.direction == "out"
        for item in (x.message if isinstance(x.message, list) else [x.message])
        if isinstance(item, dict) and item.get("method") == method and "id" in item
    }
    return lambda m: isinstance(m, dict) and "method" not in m and m.get("id") in ids


def _method(name: str) -> Callable[[Any], bool]:
    return lambda m: isinstance(m, dict) and m.get("method") == name


def _drop(pick: Callable[[LogLine], bool]) -> Callable[[list[LogLine]], list[LogLine]]:
    return lambda log: [x for x in log if not pick(x)]


def _stdout(text: str) -> Callable[[Runs, str], Runs]:
    return lambda runs, scenario: {**runs, scenario: attrs.evolve(runs[scenario], stdout=text)}


def _with_prompt_block(block: dict[str, Any]) -> Callable[[Any], Any]:
    def change(m: Any) -> Any:
        m["params"]["prompt"] = [block]
        return m

    return change


def _set(path: tuple[str, ...], value: Any) -> Callable[[Any], Any]:
    def change(m: Any) -> Any:
        node = m
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return m

    return change


def _break(rid: str, runs: Runs) -> Runs:
    """``runs`` edited to break requirement ``rid``."""
    if rid == "ACP-CLIENT-001":
        return _replace(runs, "basics", _edit_in(_method("initialize"), _set(("method",), "x")))
    if rid == "ACP-CLIENT-002":
        return _replace(runs, "basics", _edit_in(_method("session/new"), lambda m: "not json"))
    if rid == "ACP-CLIENT-003":
        change = _set(("params", "sessionId"), "other")
        return _replace(runs, "basics", _edit_in(_method("session/prompt"), change))
    if rid == "ACP-CLIENT-004":
        change = _with_prompt_block({"type": "image", "data": "", "mimeType": "image/png"})
        return _replace(runs, "basics", _edit_in(_method("session/prompt"), change))
    if rid == "ACP-CLIENT-005":
        pick = _answer_to(runs, "requests", "session/request_permission")
        return _replace(runs, "requests", _edit_in(pick, _set(("id",), "no-such-request")))
    if rid == "ACP-CLIENT-006":

        def twice(log: list[LogLine]) -> list[LogLine]:
            pick = _answer_to(runs, "requests", "session/request_permission")
            return [
                y for x in log for y in ([x, x] if x.direction == "in" and pick(x.message) else [x])
            ]

        return _replace(runs, "requests", twice)
    scenario, edit = _EDITS[rid]
    if isinstance(edit, str):
        return _stdout(edit)(runs, scenario)
    return _replace(runs, scenario, edit(runs))


_EDITS: dict[str, tuple[str, Any]] = {
    "ACP-CLIENT-010": ("basics", ""),
    "ACP-CLIENT-011": ("patches", "ADE"),  # chunks only: the upserts ignored
    "ACP-CLIENT-012": (
        "unknown",
        lambda runs: _edit_in(
            _answer_to(runs, "unknown", "_grade/ask"), _set(("error", "code"), -32603)
        ),
    ),
    "ACP-CLIENT-013": (
        "unknown",
        lambda runs: _edit_in(
            _answer_to(runs, "unknown", "grade/future_method"),
            lambda m: {"jsonrpc": "2.0", "id": m["id"], "result": {}},
        ),
    ),
    "ACP-CLIENT-014": (
        "unknown",
        lambda runs: _drop(
            lambda x: x.direction == "in" and _answer_to(runs, "unknown", "_grade/ask")(x.message)
        ),
    ),
    "ACP-CLIENT-015": ("unknown", "Still "),
    "ACP-CLIENT-016": (
        "early",
        lambda runs: _drop(lambda x: x.direction == "in" and _method("session/prompt")(x.message)),
    ),
    "ACP-CLIENT-020": (
        "requests",
        lambda runs: _edit_in(
            _answer_to(runs, "requests", "session/request_permission"),
            _set(("result", "outcome"), {"outcome": "selected", "optionId": "bogus"}),
        ),
    ),
    "ACP-CLIENT-021": (
        "requests",
        lambda runs: _edit_in(
            _answer_to(runs, "requests", "elicitation/create"),
            _set(("result",), {"action": "maybe"}),
        ),
    ),
    "ACP-CLIENT-030": (
        "batch",
        lambda runs: _drop(lambda x: x.direction == "in" and isinstance(x.message, list)),
    ),
    "ACP-CLIENT-031": (
        "batch",
        lambda runs: (
            lambda log: [
                y
                for x in log
                for y in (
                    [_client_line(x, item) for item in x.message]
                    if x.direction == "in" and isinstance(x.message, list)
                    else [x]
                )
            ]
        ),
    ),
    "ACP-CLIENT-032": (
        "batch",
        lambda runs: _drop(
            lambda x: (
                x.direction == "in"
                and isinstance(x.message, dict)
                and x.message.get("id", 0) is None
            )
        ),
    ),
    "ACP-CLIENT-040": ("long_line", "x" * 65536 + "END"),
    "ACP-CLIENT-050": (
        "cancel",
        lambda runs: _edit_in(
            _answer_to(runs, "cancel", "session/request_permission"),
            _set(("result", "outcome"), {"outcome": "selected", "optionId": "allow"}),
        ),
    ),
    "ACP-CLIENT-051": (
        "cancel",
        lambda runs: _drop(lambda x: x.direction is None and x.text == "turn_end"),
    ),
    "ACP-CLIENT-052": (
        "cancel",
        lambda runs: _drop(
            lambda x: (
                (x.direction is None and x.text == "cancel")
                or (x.direction == "in" and _method("session/cancel")(x.message))
            )
        ),
    ),
}

V2_CHECKED = [
    c.requirement.id for c in CLIENT_REQUIREMENTS if c.requirement.version in ("both", "v2")
]


@pytest.mark.parametrize("rid", V2_CHECKED)
def test_each_requirement_fails_on_a_client_that_breaks_it(acp_lite_runs: Runs, rid: str) -> None:
    report = judge("broken", _break(rid, acp_lite_runs))
    result = next(r for r in report.results if r.requirement.id == rid)
    assert result.status == "fail", result
    assert result.reason
    if result.requirement.tier == "mandatory":
        assert not report.passed


def test_no_cancel_leaves_the_cancel_rules_not_tested(acp_lite_runs: Runs) -> None:
    report = judge("no cancel", _break("ACP-CLIENT-052", acp_lite_runs))
    assert _status(report, "ACP-CLIENT-050") == "not-tested"
    assert _status(report, "ACP-CLIENT-051") == "not-tested"


def test_a_client_that_never_speaks_fails_the_first_rule() -> None:
    silent = ScenarioRun("basics", (), "", ("boom",), 1, None, True)
    report = judge("silent", {"basics": silent})
    assert _status(report, "ACP-CLIENT-001") == "fail"
    assert _status(report, "ACP-CLIENT-011") == "not-tested"  # its scenario was not run
    assert report.stderr_tail == ("boom",)
