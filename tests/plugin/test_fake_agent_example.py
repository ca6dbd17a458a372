"""examples/test_fake_agent.py (testing code that drives an agent, with the
``acp_fake_agent`` fixture) runs green as is, and fails when the code under test
misbehaves: the sample users copy must show both. (The README's example runs in
tests/cli/test_readme_commands.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import LEAN

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "test_fake_agent.py"


def test_the_example_passes_and_a_broken_bot_fails(pytester: pytest.Pytester) -> None:
    source = EXAMPLE.read_text(encoding="utf-8")
    # The bot as written, and a copy whose permission policy allows everything.
    broken = source.replace(
        "    return permissions.reject(request, session)",
        "    return permissions.allow_once(request, session)",
    )
    assert broken != source
    pytester.makepyfile(test_example=source, test_broken=broken)
    # (The broken copy's process-starting test adds nothing here but time.)
    deselect = "test_broken.py::test_the_command_line_entry_point"
    result = pytester.runpytest_inprocess(*LEAN, "-q", "--deselect", deselect)
    out = result.stdout.str()
    # Reported once, as the test's failure, the fake agent's problem with it.
    result.assert_outcomes(passed=8, failed=1, errors=0)
    assert "FAILED test_broken.py::test_allows_edits_and_rejects_commands" in out
    assert "ERROR test_broken.py" not in out
    section = out.split("acp_fake_agent ---", 1)[1]
    assert "expected reject_once, the client answered allow_once (option 'allow')" in section
