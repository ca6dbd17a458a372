"""Helpers: run the ``acp-lite`` command, in this process or as a real subprocess.

``run_cli`` calls ``acp_lite.cli.main`` here (stdout/stderr captured, stdin not a
TTY): no interpreter start-up and no client import per test; the agent is still
the process the command line names. ``run_cli_process`` runs ``python -m
acp_lite.cli`` for what only a real process shows (end to end).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

AGENTS = Path(__file__).parent / "agents"

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def fake_agent(name: str, *args: str) -> str:
    """An ``--agent`` command line running one of the fake agents in tests/cli/agents."""
    import shlex

    return shlex.join([sys.executable, str(AGENTS / name), *args])


@pytest.fixture
def run_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> RunCli:
    """Run ``acp_lite.cli.main(ARGS)`` in this process, in a temporary directory.

    Same interface and result as :func:`run_cli_process`: ``input=`` is the text on
    stdin (never a TTY), ``cwd=`` the working directory.
    """
    from acp_lite.cli import main

    def run(
        *args: str,
        timeout: float = 60,
        input: str | None = None,
        cwd: Path | str | None = None,
        stdin: Any = None,
    ) -> subprocess.CompletedProcess[str]:
        with monkeypatch.context() as patch:
            patch.chdir(cwd if cwd is not None else tmp_path)
            patch.delenv("NO_COLOR", raising=False)
            patch.setattr(sys, "stdin", io.StringIO(input or ""))
            capsys.readouterr()
            code = main(list(args))
            out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["acp-lite", *args], code, out, err)

    return run


@pytest.fixture
def run_cli_process(tmp_path: Path) -> RunCli:
    """Run ``python -m acp_lite.cli ARGS`` (stdin not a TTY) in a temporary directory."""

    def run(*args: str, timeout: float = 60, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        kwargs.setdefault("cwd", tmp_path)
        return subprocess.run(
            [sys.executable, "-m", "acp_lite.cli", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=cli_env(),
            **kwargs,
        )

    return run


def assert_clean_error(
    proc: subprocess.CompletedProcess[str], code: int, fragment: str, *, only: bool = True
) -> None:
    """A failure reported as one clear line on stderr, no traceback.

    ``only``: nothing else on stderr but indented detail lines (the agent's stderr
    tail) -- true for failures before any session output."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    errors = [line for line in lines if line.startswith("acp-lite: error: ")]
    assert len(errors) == 1, proc.stderr
    assert fragment in errors[0], proc.stderr
    if not only:
        return
    for line in lines:
        assert line.startswith(("acp-lite: error: ", "  ")) or not line.strip(), proc.stderr
