"""Every example in examples/ runs as is, as ``__main__`` with no arguments.

In this interpreter (``runpy``, stdout/stderr captured): what the example does is
the point, not a fresh interpreter's start-up. The reference agent they start by
default runs in this process too (what the example does with its client is the
point); any other agent command, like the hand-written echo agent's, is a real
process.
"""

from __future__ import annotations

import runpy
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli.conftest import reference_agent_in_memory

from acp_lite.cli import main as cli_main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

RunExample = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> RunExample:
    """Run ``python examples/NAME ARGS`` here, in a temporary directory."""

    def run(name: str, *args: str) -> subprocess.CompletedProcess[str]:
        path = EXAMPLES / name
        with monkeypatch.context() as patch:
            patch.chdir(tmp_path)
            patch.setattr(sys, "argv", [str(path), *args])
            reference_agent_in_memory(patch)
            capsys.readouterr()
            try:
                runpy.run_path(str(path), run_name="__main__")
                code: object = 0
            except SystemExit as exc:
                code = exc.code
            out, err = capsys.readouterr()
        returncode = 0 if code is None else code if isinstance(code, int) else 1
        return subprocess.CompletedProcess([name, *args], returncode, out, err)

    return run


def test_drive_agent(run_example: RunExample) -> None:
    proc = run_example("drive_agent.py")
    assert proc.returncode == 0, proc.stderr
    assert "protocol version: 2" in proc.stdout
    assert "stop reason: end_turn" in proc.stdout
    assert "agent said: 'Streaming a reply in several small chunks.'" in proc.stdout
    assert "second message inserted: " in proc.stdout


def test_drive_agent_against_the_hand_written_echo_agent(run_example: RunExample) -> None:
    proc = run_example("drive_agent.py", sys.executable, str(EXAMPLES / "echo_agent.py"))
    assert proc.returncode == 0, proc.stderr
    assert "agent: echo-agent" in proc.stdout
    assert "agent said: 'Tell me about ACP.'" in proc.stdout


def test_async_drive(run_example: RunExample) -> None:
    proc = run_example("async_drive.py")
    assert proc.returncode == 0, proc.stderr
    assert "first question -> end_turn: " in proc.stdout
    assert "second question -> end_turn: " in proc.stdout


def test_permissions(run_example: RunExample) -> None:
    proc = run_example("permissions.py")
    assert proc.returncode == 0, proc.stderr
    first, _, second = proc.stdout.partition("second attempt:")
    # Allowed once: the tool ran. Asked again in the same session: rejected.
    assert "the agent asks: Allow writing notes.txt?" in first
    assert "tool call statuses: ['pending', 'in_progress', 'completed']" in first
    assert "the agent asks: Allow writing notes.txt?" in second
    assert "tool call statuses: ['pending', 'failed']" in second


def test_echo_agent_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The command of the agent's docstring; acp-lite's own process is not the point.
    agent = shlex.join([sys.executable, str(EXAMPLES / "echo_agent.py")])
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    code = cli_main(["prompt", "--agent", agent, "hello echo"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == "hello echo\n"
    assert "state: idle (end_turn)" in err
