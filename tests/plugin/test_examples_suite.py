"""examples/test_with_pytest_acp.py runs green against its committed snapshots, with
strict conformance (it is the sample suite users copy).

The copy under test is the file as committed, with its snapshots; its reference
agent runs in this process (a conftest maps each reference-agent command it names
to an ``InProcessAgent`` of the same scenario): the suite's logic and snapshots are
the point here, and the plugin's agent processes are tested in
test_plugin_fixtures.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import LEAN

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "test_with_pytest_acp.py"
SNAPSHOTS = ROOT / "examples" / "__snapshots__" / EXAMPLE.stem

CONFTEST = """
import functools
import sys

import pytest
from acp_lite.testing import InProcessAgent
from pytest_acp import _settings

REFERENCE = (sys.executable, "-m", "acp_lite.testing.agent")


@pytest.fixture
def acp_agent_command(request):
    command = _settings.agent_command(request.node, request.config)
    assert command.argv[:3] == REFERENCE, command  # the reference agent, and nothing else
    args = command.argv[3:]
    assert args == () or (len(args) == 2 and args[0] == "--scenario"), args
    return functools.partial(InProcessAgent, scenario=args[1] if args else None)
"""


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_sample_suite_passes_with_committed_snapshots(pytester: pytest.Pytester) -> None:
    committed = _files(SNAPSHOTS)
    assert len(committed) == 5
    pytester.makepyfile(**{EXAMPLE.stem: EXAMPLE.read_text(encoding="utf-8")})
    pytester.makeconftest(CONFTEST)
    copied = pytester.path / "__snapshots__" / EXAMPLE.stem
    shutil.copytree(SNAPSHOTS, copied)
    result = pytester.runpytest(*LEAN, "--acp-conformance=strict", "-q")
    out = result.stdout.str()
    assert result.ret == 0, out + result.stderr.str()
    assert "10 passed" in out
    assert "5 snapshots passed." in out
    assert "generated" not in out and "unused" not in out
    assert _files(copied) == committed  # nothing written
