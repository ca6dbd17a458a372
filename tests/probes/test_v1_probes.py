"""v1 probes: pass on the reference agent (``--protocol 1``), fail on the fault that
breaks each; the capability probes the reference agent does not advertise run with
an enabler fault that advertises what it supports."""

from __future__ import annotations

from typing import Any

import pytest

from acp_lite.conformance.v1_probes import V1_PROBES
from acp_lite.probes import PROBES, suite_for
from acp_lite.probes._runner import NegotiationFailed
from acp_lite.testing import scenarios
from acp_lite.testing.script import Text, Turn, WaitForCancel
from tests.probes.conftest import run_one

LONG = {"turns": [Turn(steps=[Text(text="working"), WaitForCancel(timeout=1.0)])]}
PLAN = {"turns": scenarios.plan().turns}
PERMISSION = {"turns": scenarios.tool_call_permission().turns}
SESSIONS = ["v1-advertise-session-capabilities"]

# (requirement id, the fault that breaks it, faults both runs need, script overrides)
CASES: list[tuple[str, str, list[str], dict[str, Any]]] = [
    ("ACP-V1-INIT-001", "v1-initialize-wrong-version", [], {}),
    ("ACP-V1-INIT-002", "v1-initialize-refuses-newer", [], {}),
    ("ACP-V1-INIT-003", "v1-terminal-auth-unasked", [], {}),
    ("ACP-V1-INIT-004", "v1-no-agent-info", [], {}),
    ("ACP-V1-INIT-005", "v1-prompt-method-not-found", [], {}),
    ("ACP-V1-SESSION-001", "v1-session-id-missing", [], {}),
    ("ACP-V1-SESSION-002", "v1-session-id-reused", [], {}),
    ("ACP-V1-SESSION-003", "v1-load-no-replay", [], {}),
    ("ACP-V1-SESSION-004", "v1-list-no-cwd", SESSIONS, {}),
    ("ACP-V1-SESSION-005", "v1-resume-replays", SESSIONS, {}),
    ("ACP-V1-SESSION-006", "v1-cancelled-as-end-turn", SESSIONS, LONG),
    ("ACP-V1-SESSION-007", "v1-set-mode-fails", ["v1-modes"], {}),
    ("ACP-V1-SESSION-008", "v1-unknown-session-accepted", [], {}),
    ("ACP-V1-PROMPT-001", "v1-no-stop-reason", [], {}),
    ("ACP-V1-PROMPT-002", "v1-rejects-text", [], {}),
    ("ACP-V1-PROMPT-003", "v1-rejects-resource-link", [], {}),
    ("ACP-V1-PROMPT-005", "v1-update-no-session-id", [], {}),
    ("ACP-V1-PROMPT-006", "v1-plan-no-priority", [], PLAN),
    ("ACP-V1-PROMPT-007", "v1-permission-no-tool-call", [], PERMISSION),
    ("ACP-V1-CANCEL-001", "v1-cancelled-as-end-turn", [], LONG),
    ("ACP-V1-CANCEL-002", "v1-cancelled-as-end-turn", [], PERMISSION),
    ("ACP-V1-CANCEL-003", "v1-update-after-cancelled", [], LONG),
    ("ACP-V1-CANCEL-004", "v1-answers-notifications", [], {}),
    ("ACP-V1-UPDATE-001", "v1-notice-unasked", [], {}),
    ("ACP-V1-UPDATE-002", "v1-compaction-unasked", [], {}),
    ("ACP-V1-RPC-001", "unknown-method-internal-error", [], {}),
    ("ACP-V1-RPC-002", "v1-ext-method-result", [], {}),
    ("ACP-V1-RPC-003", "v1-answers-notifications", [], {}),
    ("ACP-V1-RPC-004", "v1-string-id-mangled", [], {}),
    ("ACP-V1-RPC-005", "v1-parse-error-code", [], {}),
    ("ACP-V1-RPC-006", "v1-batch-unbatched", [], {}),
    ("ACP-V1-RPC-007", "v1-empty-batch-array", [], {}),
    ("ACP-V1-RPC-008", "v1-error-no-message", [], {}),
    ("ACP-V1-RPC-009", "v1-invalid-params-internal", [], {}),
]


@pytest.mark.parametrize(
    ("requirement_id", "fault", "base", "script"), CASES, ids=[c[0] for c in CASES]
)
def test_probe_passes_and_fails_on_its_fault(
    requirement_id: str, fault: str, base: list[str], script: dict[str, Any]
) -> None:
    clean = run_one(requirement_id, base, protocol=1, **script)
    assert clean.status == "pass", clean
    try:
        broken = run_one(requirement_id, [*base, fault], protocol=1, **script)
    except NegotiationFailed as exc:
        # The run negotiates at version 2 first: an agent refusing it fails there.
        assert requirement_id == "ACP-V1-INIT-002", exc
        assert exc.lines
        return
    assert broken.status == "fail", broken
    assert broken.evidence, broken


def test_image_probe_skips_unadvertised_and_fails_when_advertised_but_refused() -> None:
    assert run_one("ACP-V1-PROMPT-004", protocol=1).status == "skipped"
    broken = run_one("ACP-V1-PROMPT-004", ["v1-advertise-image"], protocol=1)
    assert broken.status == "fail" and broken.evidence, broken


def test_turn_probes_skip_when_the_agent_does_not_act() -> None:
    # The echo agent: no plan, no permission, a turn too short to cancel.
    for rid in ("ACP-V1-PROMPT-006", "ACP-V1-PROMPT-007", "ACP-V1-CANCEL-001"):
        assert run_one(rid, protocol=1).status == "skipped", rid


@pytest.mark.xfail(
    strict=True, reason="the reference agent ignores $/cancel_request of a blocking v1 prompt"
)
def test_cancel_request_probe_passes() -> None:
    short = [Turn(steps=[Text(text="working"), WaitForCancel(timeout=0.4)])]
    assert run_one("ACP-V1-CANCEL-005", protocol=1, turns=short).status == "pass"


def test_every_v1_requirement_has_a_probe() -> None:
    suite = {p.id for p in suite_for(1)}
    assert {q.id for q in V1_PROBES} <= suite
    assert all(PROBES[q.id].requirement is q for q in V1_PROBES)


@pytest.mark.parametrize(
    ("requirement_id", "scenario"),
    [("ACP-V1-UPDATE-001", "notice"), ("ACP-V1-UPDATE-002", "compaction")],
)
def test_gated_updates_sent_only_to_a_client_that_advertised_them(
    requirement_id: str, scenario: str
) -> None:
    turns = scenarios.get(scenario).turns
    assert run_one(requirement_id, protocol=1, turns=turns).status == "pass"
