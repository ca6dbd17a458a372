"""``acp-lite-agent --scenario NAME`` with an unknown name: one short line saying
where the list is (not every known name on one line)."""

from __future__ import annotations

import pytest

from acp_lite.testing.agent import main


def test_unknown_scenario_is_one_short_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--scenario", "nosuch"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "acp-lite-agent: unknown scenario 'nosuch' (--list-scenarios lists them)\n"
