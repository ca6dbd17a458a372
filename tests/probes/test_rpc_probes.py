"""JSON-RPC probes: pass on the reference agent, fail on the fault that breaks each."""

from __future__ import annotations

import pytest

from tests.probes.conftest import run_one


@pytest.mark.parametrize(
    ("requirement_id", "fault"),
    [
        ("ACP-RPC-001", "unknown-method-internal-error"),
    ],
)
def test_probe_passes_and_fails_on_its_fault(requirement_id: str, fault: str) -> None:
    clean = run_one(requirement_id)
    assert clean.status == "pass", clean
    broken = run_one(requirement_id, [fault])
    assert broken.status == "fail", broken
    assert broken.evidence, broken


def test_unknown_notification_probe_passes() -> None:
    assert run_one("ACP-RPC-002").status == "pass"
