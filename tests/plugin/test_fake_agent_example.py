"""examples/test_fake_agent.py (testing code that drives an agent, with the
``acp_fake_agent`` fixture) runs green as is, and fails when the code under test
misbehaves: the sample users copy must show both. The README's example runs too."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import LEAN

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "test_fake_agent.py"

#: The README example's ``run_my_bot``: a client in a process of its own would
#: do the same; this one prompts what the example expects, rejecting permissions.
README_BOT = """
import acp_lite


def run_my_bot(command):
    with acp_lite.connect(command, timeout=30) as client:
        session = client.new_session(cwd="/tmp")
        assert session.run("fix the bug").text == "Done"
        assert session.run("please deploy").text == "Not deployed"

"""


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Scripted fake agents", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_example_and_the_readme_pass_and_a_broken_bot_fails(pytester: pytest.Pytester) -> None:
    source = EXAMPLE.read_text(encoding="utf-8")
    # The bot as written, and a copy whose permission policy allows everything.
    broken = source.replace(
        "    return permissions.reject(request, session)",
        "    return permissions.allow_once(request, session)",
    )
    assert broken != source
    readme = README_BOT + readme_example()
    pytester.makepyfile(test_example=source, test_broken=broken, test_readme=readme)
    # (The broken copy's process-starting test adds nothing here but time.)
    deselect = "test_broken.py::test_the_command_line_entry_point"
    result = pytester.runpytest_inprocess(*LEAN, "-q", "--deselect", deselect)
    out = result.stdout.str()
    result.assert_outcomes(passed=9, failed=1, errors=1)
    assert "FAILED test_broken.py::test_allows_edits_and_rejects_commands" in out
    assert "ERROR test_broken.py::test_allows_edits_and_rejects_commands" in out
    assert "expected reject_once, the client answered allow_once (option 'allow')" in out
