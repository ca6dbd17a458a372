"""python -m pytest_acp rules / explain show each rule's requirement id and tier."""

from __future__ import annotations

import pytest

from pytest_acp.__main__ import main


def test_rules_and_explain_name_the_requirement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split()[:2] == ["ACP-STATE-103", "work-not-ended"] for line in lines)
    assert all(line.startswith("ACP-") for line in lines)  # every rule has one
    assert main(["explain", "idle-without-stop-reason"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ACP-STOP-102 [advisory] idle-without-stop-reason (SHOULD): ")
