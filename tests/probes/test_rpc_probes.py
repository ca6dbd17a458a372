"""JSON-RPC probes: pass on the reference agent, fail on the fault that breaks each."""

from __future__ import annotations

import pytest

from tests.probes.conftest import run_one


@pytest.mark.parametrize(
    ("requirement_id", "fault"),
    [
        ("ACP-RPC-001", "unknown-method-internal-error"),
        ("ACP-RPC-002", "notifications-answered"),
        ("ACP-RPC-003", "batch-answered-one-by-one"),
        ("ACP-RPC-004", "notifications-answered"),
        ("ACP-RPC-005", "empty-batch-answered-with-array"),
        ("ACP-RPC-006", "parse-error-invalid-request"),
        ("ACP-RPC-007", "method-coerced-to-string"),
        ("ACP-RPC-008", "missing-jsonrpc-accepted"),
        ("ACP-RPC-009", "invalid-batch-entry-dropped"),
        ("ACP-RPC-010", "numeric-string-id-as-number"),
        ("ACP-RPC-011", "unknown-method-empty-result"),
        ("ACP-RPC-012", "session-new-default-cwd"),
        ("ACP-RPC-013", "cancel-unknown-answered"),
        ("ACP-RPC-014", "invalid-notification-answered"),
        ("ACP-RPC-015", "falsy-id-as-null"),
        ("ACP-RPC-016", "large-id-as-double"),
    ],
)
def test_probe_passes_and_fails_on_its_fault(requirement_id: str, fault: str) -> None:
    clean = run_one(requirement_id)
    assert clean.status == "pass", clean
    broken = run_one(requirement_id, [fault], timeout=0.5)
    assert broken.status == "fail", broken
    assert broken.evidence, broken
