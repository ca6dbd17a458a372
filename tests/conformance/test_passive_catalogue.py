"""Every passive rule has exactly one requirement, and findings print its id."""

from __future__ import annotations

import re

import pytest

from acp_lite.conformance import CATALOGUE, by_rule
from acp_lite.conformance.passive import PASSIVE, for_rule
from acp_lite.model import rules as model_rules
from pytest_acp import conformance
from pytest_acp._conformance_v1 import V1_RULES
from pytest_acp.conformance import Violation, format_violations

ALL_RULES = {**model_rules.RULES, **conformance.RULES, **V1_RULES}


def test_every_passive_rule_has_exactly_one_requirement() -> None:
    passive = [q for q in CATALOGUE.values() if q.kind == "passive"]
    for rule in ALL_RULES:
        linked = [q.id for q in passive if q.rule == rule]
        assert len(linked) == 1, f"passive rule {rule!r}: requirements {linked}"
    # ... and none links to a rule that does not exist (a renamed or removed rule).
    assert sorted(q.rule or "" for q in passive) == sorted(ALL_RULES)
    assert len(PASSIVE) == len(passive) == len(ALL_RULES)


@pytest.mark.parametrize("rule", sorted(ALL_RULES))
def test_tier_version_and_lookup_follow_the_rule(rule: str) -> None:
    found = for_rule(rule)
    assert found is not None and found.kind == "passive" and found.rule == rule
    level = ALL_RULES[rule].level
    assert found.tier == ("mandatory" if level == "MUST" else "advisory"), found
    assert re.match(r"ACP-[A-Z0-9-]+-1\d\d$", found.id)  # 001-099: the probes'
    assert found.summary and found.spec and "\n" not in found.summary
    v1 = rule in V1_RULES
    assert found.version == ("v1" if v1 else "v2") or found.version == "both"
    # The catalogue's own lookup agrees, for the versions the rule applies to.
    assert by_rule(rule, "v1" if v1 else "v2") is found


def test_rules_of_every_version_are_marked_both() -> None:
    # The rules the checker keeps for every version (pytest_acp._conformance_v1 says which).
    shared = {"stdout-not-jsonrpc", "message-not-checkable", "response-without-request"}
    shared.add("update-unknown-session")
    assert {r for r, q in PASSIVE.items() if q.version == "both"} == shared


def test_findings_print_their_requirement_id() -> None:
    found = [
        Violation("unknown-stop-reason", "stopReason 'x'", spec="s", entry_index=4),
        Violation("idle-without-stop-reason", "no reason", spec="t", level="SHOULD"),
        Violation("v1-tool-call-incomplete", "tool_call without title", spec="u"),
        Violation("not-a-rule", "m", spec="w"),
    ]
    lines = format_violations(found).splitlines()
    assert lines == [
        "  ACP-STOP-101 unknown-stop-reason (transcript line 4): stopReason 'x' [spec: s]",
        "  ACP-STOP-102 idle-without-stop-reason (SHOULD): no reason [spec: t]",
        "  ACP-V1-TOOL-101 v1-tool-call-incomplete: tool_call without title [spec: u]",
        "  not-a-rule: m [spec: w]",
    ]
