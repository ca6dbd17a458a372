"""Initialization and authentication probes: pass on the reference agent, fail on the
fault that breaks each."""

from __future__ import annotations

import pytest

from tests.probes.conftest import run_one

#: Probes of agents that gate session/new on authentication (script auth_required).
_GATED = {"ACP-AUTH-004", "ACP-AUTH-005"}


@pytest.mark.parametrize(
    ("requirement_id", "fault"),
    [
        ("ACP-INIT-001", "initialize-info-without-version"),
        ("ACP-INIT-002", "initialize-answers-newer-version"),
        ("ACP-INIT-003", "newer-version-rejected"),
        ("ACP-INIT-004", "old-version-answers-latest"),
        ("ACP-INIT-005", "unsupported-version-without-data"),
        ("ACP-INIT-006", "capabilities-as-booleans"),
        ("ACP-INIT-007", "auth-method-without-type"),
        ("ACP-INIT-008", "terminal-auth-unasked"),
        ("ACP-INIT-009", "strict-initialize-params"),
        ("ACP-INIT-010", "second-initialize-ignored"),
        ("ACP-INIT-011", "pre-initialize-request-ignored"),
        ("ACP-INIT-012", "initialize-requires-capabilities"),
        ("ACP-AUTH-001", "logout-not-implemented"),
        ("ACP-AUTH-002", "login-not-implemented"),
        ("ACP-AUTH-003", "login-accepts-any-method"),
        ("ACP-AUTH-004", "login-without-effect"),
        ("ACP-AUTH-005", "logout-without-effect"),
    ],
)
def test_probe_passes_and_fails_on_its_fault(requirement_id: str, fault: str) -> None:
    script = {"auth_required": True} if requirement_id in _GATED else {}
    clean = run_one(requirement_id, **script)
    assert clean.status == "pass", clean
    broken = run_one(requirement_id, [fault], timeout=0.5, **script)
    assert broken.status == "fail", broken
    assert broken.evidence, broken


@pytest.mark.parametrize("requirement_id", sorted(_GATED))
def test_auth_gate_probes_skip_when_nothing_is_gated(requirement_id: str) -> None:
    assert run_one(requirement_id).status == "skipped"
