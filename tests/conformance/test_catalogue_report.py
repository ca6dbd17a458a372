"""The requirement catalogue's checks and the report's verdicts and JSON form."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from acp_lite.conformance import (
    CATALOGUE,
    Evidence,
    Report,
    Requirement,
    Result,
    by_rule,
    register,
    requirement,
    unregister,
)

MUST = Requirement("ACP-TEST-001", "mandatory", "a must", "prompt-lifecycle#x", rule="test-rule")
CAP = Requirement("ACP-TEST-002", "capability", "a cap", "s", capability="loadSession")
SHOULD = Requirement("ACP-TEST-003", "advisory", "a should", "s", version="v1")


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    register(MUST, CAP, SHOULD)
    yield
    unregister(MUST.id, CAP.id, SHOULD.id, "ACP-TEST-009", "ACP-TEST-010")
    assert by_rule("test-rule") is None


def test_register_is_idempotent_and_finds_by_id_and_rule() -> None:
    register(MUST)
    assert requirement("ACP-TEST-001") is MUST
    assert by_rule("test-rule") is MUST
    assert by_rule("test-rule", "v1") is None
    assert by_rule("no-such-rule") is None
    assert list(CATALOGUE).count("ACP-TEST-001") == 1


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (Requirement("ACP-TEST-001", "mandatory", "other", "s"), "registered twice"),
        (Requirement("CANCEL-1", "mandatory", "x", "s"), "is not ACP-"),
        (Requirement("ACP-TEST-009", "capability", "x", "s"), "names it"),
        (Requirement("ACP-TEST-010", "mandatory", "x", "s", capability="c"), "names it"),
    ],
)
def test_bad_registrations_are_refused(item: Requirement, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        register(item)


def test_verdicts_passed_and_json() -> None:
    report = Report(
        "agent X",
        "agent",
        (
            Result(MUST, "pass"),
            Result(CAP, "fail", "broken", (Evidence(3, '{"jsonrpc":"2.0"}'),)),
            Result(SHOULD, "skipped", "not advertised"),
        ),
        protocol_version=2,
        stderr_tail=("boom",),
    )
    assert report.verdicts() == {
        "mandatory": "pass",
        "capability": "fail",
        "advisory": "not-tested",
        "informational": "not-tested",
    }
    assert report.passed
    assert [r.requirement.id for r in report.failures()] == ["ACP-TEST-002"]
    doc = report.to_json()
    assert json.loads(json.dumps(doc)) == doc
    assert doc["counts"] == {"pass": 1, "fail": 1, "skipped": 1, "not-tested": 0}
    row = doc["requirements"][1]  # type: ignore[index]
    assert row["capability"] == "loadSession"  # type: ignore[index,call-overload]
    assert row["evidence"] == [{"line": 3, "text": '{"jsonrpc":"2.0"}'}]  # type: ignore[index,call-overload]
    assert doc["stderrTail"] == ["boom"]


def test_a_failed_mandatory_requirement_fails_the_report() -> None:
    report = Report("a", "agent", (Result(MUST, "fail"), Result(SHOULD, "pass")))
    assert not report.passed
    assert report.verdicts()["mandatory"] == "fail"
    completed = Report("a", "agent", (Result(MUST, "pass"),)).complete([MUST, CAP])
    assert [(r.requirement.id, r.status) for r in completed.results] == [
        ("ACP-TEST-001", "pass"),
        ("ACP-TEST-002", "not-tested"),
    ]
