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


@pytest.mark.parametrize(("requirement_id", "fault"), CASES)
def test_probe_passes_and_fails_on_its_fault(requirement_id: str, fault: str) -> None:
    clean = run_one(requirement_id, timeout=1.0)
    assert clean.status == "pass", clean
    broken = run_one(requirement_id, [fault], timeout=1.0)
    assert broken.status == "fail", broken
    assert broken.evidence, broken


def test_every_prompt_probe_has_a_case() -> None:
    areas = ("ACP-PROMPT-", "ACP-STATE-", "ACP-UPDATE-0")
    probed = {p.id for p in suite_for(2) if p.id.startswith(areas) and p.id[-3] == "0"}
    assert probed == {rid for rid, _ in CASES}
