"""``--agent "python AGENT.py"`` runs acp-lite's own interpreter (``sys.executable``),
not the ``python`` PATH finds first: the README's ``.venv/bin/acp-lite prompt --agent
"python examples/echo_agent.py" hi`` works without an activated venv."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from acp_lite.cli import EXIT_OK

from .conftest import RunCli

ECHO_AGENT = Path(__file__).parents[2] / "examples" / "echo_agent.py"


@pytest.fixture
def other_python_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH whose first ``python`` and ``python3`` are another program (one that
    says so and fails, like an interpreter without acp_lite)."""
    bin_dir = tmp_path / "other-bin"
    bin_dir.mkdir()
    for name in ("python", "python3"):
        fake = bin_dir / name
        fake.write_text("#!/bin/sh\necho 'the other python' >&2\nexit 9\n")
        fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return bin_dir


@pytest.mark.parametrize("python", ["python", "python3"])
def test_a_bare_python_is_acp_lites_interpreter(
    run_cli: RunCli, other_python_first: Path, python: str
) -> None:
    proc = run_cli("prompt", "--agent", f"{python} {ECHO_AGENT}", "hello there")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "hello there" in proc.stdout
    assert "the other python" not in proc.stderr


def test_a_python_path_is_run_as_given(run_cli: RunCli, other_python_first: Path) -> None:
    # Only the bare name is ours: a path names the interpreter the user wants.
    other = other_python_first / "python"
    proc = run_cli("prompt", "--agent", f"{other} {ECHO_AGENT}", "hi")
    assert proc.returncode != EXIT_OK
    assert "the other python" in proc.stderr


def test_the_command_shown_names_the_interpreter_run(run_cli: RunCli) -> None:
    proc = run_cli("info", "--agent", f"python {ECHO_AGENT}")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert f"command:      {sys.executable} {ECHO_AGENT}" in proc.stdout
