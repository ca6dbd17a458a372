"""docs/grading.md names every client requirement and every scenario."""

from __future__ import annotations

from pathlib import Path

from acp_lite.grading import CLIENT_REQUIREMENTS, SCENARIOS

DOC = Path(__file__).resolve().parents[2] / "docs" / "grading.md"


def test_every_requirement_and_scenario_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ACP-")}
    assert rows == {c.requirement.id for c in CLIENT_REQUIREMENTS}
    for name in SCENARIOS:
        assert f"| `{name}` |" in text
