"""Session and config-option probes: pass on the reference agent, fail on the fault
that breaks each."""

from __future__ import annotations

import pytest

from tests.probes.conftest import run_one

#: A turn that works until it is cancelled (for closing a running session).
LONG_TURN = {"turns": [{"steps": [{"type": "sleep", "seconds": 5}]}]}

CASES: list[tuple[str, str, dict[str, object]]] = [
    ("ACP-SESSION-001", "new-session-no-id", {}),
    ("ACP-SESSION-002", "new-session-same-id", {}),
    ("ACP-SESSION-003", "relative-cwd-accepted", {}),
    ("ACP-SESSION-004", "relative-additional-directory-accepted", {}),
    ("ACP-SESSION-005", "additional-directories-rejected", {}),
    ("ACP-SESSION-006", "new-session-stray-update", {}),
    ("ACP-SESSION-007", "unknown-session-prompt-accepted", {}),
    ("ACP-SESSION-008", "unknown-session-invalid-params", {}),
    ("ACP-SESSION-009", "session-not-found-no-data", {}),
    ("ACP-SESSION-010", "close-answers-error", {}),
    ("ACP-SESSION-011", "close-ignored", {}),
    ("ACP-SESSION-012", "close-before-idle", {"script": LONG_TURN}),
    ("ACP-SESSION-013", "close-unknown-internal-error", {}),
    ("ACP-SESSION-014", "list-drops-cwd", {}),
    ("ACP-SESSION-015", "list-ignores-cwd-filter", {}),
    ("ACP-SESSION-016", "list-cursor-ignored", {}),
    ("ACP-SESSION-017", "list-invalid-cursor-first-page", {}),
    ("ACP-SESSION-018", "list-empty-omits-sessions", {}),
    ("ACP-SESSION-019", "delete-ignored", {}),
    ("ACP-SESSION-020", "delete-unknown-not-found", {}),
    ("ACP-SESSION-021", "resume-replays-unasked", {}),
    ("ACP-SESSION-022", "resume-no-state-snapshot", {}),
    ("ACP-SESSION-023", "resume-no-replay", {}),
    ("ACP-SESSION-024", "resume-bad-cursor-ignored", {}),
    ("ACP-SESSION-025", "resume-unknown-succeeds", {}),
    ("ACP-SESSION-026", "resume-state-before-replay", {}),
    ("ACP-SESSION-027", "close-held-prompt-internal-error", {"script": LONG_TURN}),
    ("ACP-CONFIG-001", "config-select-bad-current-value", {}),
    ("ACP-CONFIG-002", "config-unknown-id-internal-error", {}),
    ("ACP-CONFIG-003", "config-invalid-value-accepted", {}),
    ("ACP-CONFIG-004", "config-invalid-value-applied", {}),
    ("ACP-CONFIG-005", "config-partial-response", {}),
    ("ACP-CONFIG-006", "config-unknown-type-accepted", {}),
]


@pytest.mark.parametrize(("requirement_id", "fault", "script"), CASES, ids=[c[0] for c in CASES])
def test_probe_passes_and_fails_on_its_fault(
    requirement_id: str, fault: str, script: dict[str, object]
) -> None:
    clean = run_one(requirement_id, **script)
    assert clean.status == "pass", clean
    broken = run_one(requirement_id, [fault], **script)
    assert broken.status == "fail", broken
    assert broken.evidence, broken


def test_close_of_a_short_turn_is_skipped_not_failed() -> None:
    # The echo turn ends before session/close can be sent: nothing to cancel.
    assert run_one("ACP-SESSION-012").status in ("pass", "skipped")


def test_every_probe_of_the_area_has_a_case() -> None:
    from acp_lite.probes import PROBES

    ours = {i for i in PROBES if i.startswith(("ACP-SESSION-", "ACP-CONFIG-"))}
    assert ours == {c[0] for c in CASES}


@pytest.mark.parametrize(
    "requirement_id",
    ["ACP-SESSION-004", "ACP-SESSION-005", "ACP-SESSION-019", "ACP-SESSION-020"],
)
def test_capability_probes_skip_when_not_advertised(requirement_id: str) -> None:
    # Only the baseline session surface: no delete, no additional directories.
    bare = {"capabilities": {"session": {}}}
    result = run_one(requirement_id, initialize_result=bare)
    assert result.status == "skipped", result
