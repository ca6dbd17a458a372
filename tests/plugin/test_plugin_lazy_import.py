"""The plugin loads in every pytest run of an environment that has acp-lite, ACP or
not: a run whose tests use none of its fixtures or markers must not pay for the
client, trio (the cassette replay), the session model or the conformance checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = (
    "trio",
    "acp_lite.aio",
    "acp_lite.client",
    "acp_lite.core",
    "acp_lite.model",
    "acp_lite.cassettes",
    "pytest_acp.conformance",
)

PLAIN_TEST = f"""
import sys

def test_plain():
    assert "pytest_acp.plugin" in sys.modules  # the plugin did load
    assert [m for m in {HEAVY!r} if m in sys.modules] == []
"""

ACP_TEST = """
import sys

import pytest

AGENT = [sys.executable, "-m", "acp_lite.testing.agent", "--scenario", "broken_bad_stop_reason"]

@pytest.mark.acp_agent(AGENT)
@pytest.mark.acp_conformance("strict")
def test_uses_the_client(acp_session):
    acp_session.run("hi")
"""


def test_only_a_test_that_uses_the_fixtures_loads_the_client(tmp_path: Path) -> None:
    # One run (it costs a pytest start-up): the plain test runs first, the ACP one
    # after it, whose conformance checks still load and fail it.
    (tmp_path / "test_a_plain.py").write_text(PLAIN_TEST)
    (tmp_path / "test_b_acp.py").write_text(ACP_TEST)
    # pytest-trio (a test dependency of this project, not of the plugin) imports trio.
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:trio", "-p", "no:cacheprovider"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "1 failed, 1 passed" in out, out
    assert "test_b_acp.py::test_uses_the_client - " in out and "unknown-stop-reason" in out
