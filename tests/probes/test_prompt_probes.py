"""Prompt-lifecycle probes: pass on the reference agent, fail on the fault breaking each."""

from __future__ import annotations

import pytest

from acp_lite.probes import suite_for
from tests.probes.conftest import run_one

CASES = [
    ("ACP-PROMPT-001", "prompt-result-no-message-id"),
    ("ACP-PROMPT-002", "prompt-result-same-message-id"),
    ("ACP-PROMPT-003", "no-user-message-echo"),
    ("ACP-PROMPT-005", "empty-prompt-accepted"),
    ("ACP-PROMPT-006", "unknown-content-accepted"),
    ("ACP-STATE-001", "no-running-state"),
    ("ACP-STATE-002", "idle-without-stop-reason"),
    ("ACP-UPDATE-001", "chunks-without-message-id"),
]


#: Cancellation needs work that outlasts the cancel: the slow_cancel scenario.
CANCEL_CASES = [
    ("ACP-CANCEL-001", "cancelled-reported-as-error"),
    ("ACP-CANCEL-002", "withdrawn-prompt-internal-error"),
]


@pytest.mark.parametrize(("requirement_id", "fault"), CANCEL_CASES)
def test_cancel_probe_passes_and_fails_on_its_fault(requirement_id: str, fault: str) -> None:
    clean = run_one(requirement_id, timeout=1.0, scenario="slow_cancel")
    assert clean.status == "pass", clean
    broken = run_one(requirement_id, [fault], timeout=1.0, scenario="slow_cancel")
    assert broken.status == "fail", broken
    assert broken.evidence, broken


def test_cancel_confirmed_fails_on_an_agent_that_goes_on_after_reading_the_cancel() -> None:
    result = run_one("ACP-CANCEL-001", timeout=1.0, scenario="broken_cancel_not_confirmed")
    assert result.status == "fail" and "'end_turn'" in result.reason, result


@pytest.mark.parametrize(("requirement_id", "fault"), CASES)
def test_probe_passes_and_fails_on_its_fault(requirement_id: str, fault: str) -> None:
    clean = run_one(requirement_id, timeout=1.0)
    assert clean.status == "pass", clean
    broken = run_one(requirement_id, [fault], timeout=1.0)
    assert broken.status == "fail", broken
    assert broken.evidence, broken


def test_every_prompt_probe_has_a_case() -> None:
    areas = ("ACP-PROMPT-", "ACP-STATE-", "ACP-UPDATE-0", "ACP-CANCEL-")
    probed = {p.id for p in suite_for(2) if p.id.startswith(areas) and p.id[-3] == "0"}
    assert probed == {rid for rid, _ in CASES + CANCEL_CASES}
