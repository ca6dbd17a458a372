"""examples/test_with_pytest_acp.py runs green against its committed snapshots, with
strict conformance (it is the sample suite users copy)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import LEAN

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "test_with_pytest_acp.py"


def test_sample_suite_passes_with_committed_snapshots() -> None:
    snapshots = ROOT / "examples" / "__snapshots__" / EXAMPLE.stem
    committed = sorted(p.name for p in snapshots.iterdir())
    assert len(committed) == 5
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(EXAMPLE), *LEAN, "--acp-conformance=strict", "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "10 passed" in result.stdout
    assert "5 snapshots passed." in result.stdout
    assert "generated" not in result.stdout and "unused" not in result.stdout
    assert sorted(p.name for p in snapshots.iterdir()) == committed  # nothing written
