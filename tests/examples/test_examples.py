"""Every example in examples/ runs as is (a real subprocess, no arguments)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def test_drive_agent(tmp_path: Path) -> None:
    proc = run_example("drive_agent.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "protocol version: 2" in proc.stdout
    assert "stop reason: end_turn" in proc.stdout
    assert "agent said: 'Streaming a reply in several small chunks.'" in proc.stdout
    assert "second message inserted: " in proc.stdout


def test_drive_agent_against_the_hand_written_echo_agent(tmp_path: Path) -> None:
    proc = run_example(
        "drive_agent.py", sys.executable, str(EXAMPLES / "echo_agent.py"), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "agent: echo-agent" in proc.stdout
    assert "agent said: 'Tell me about ACP.'" in proc.stdout


def test_async_drive(tmp_path: Path) -> None:
    proc = run_example("async_drive.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "first question -> end_turn: " in proc.stdout
    assert "second question -> end_turn: " in proc.stdout


def test_permissions(tmp_path: Path) -> None:
    proc = run_example("permissions.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first, _, second = proc.stdout.partition("second attempt:")
    # Allowed once: the tool ran. Asked again in the same session: rejected.
    assert "the agent asks: Allow writing notes.txt?" in first
    assert "tool call statuses: ['pending', 'in_progress', 'completed']" in first
    assert "the agent asks: Allow writing notes.txt?" in second
    assert "tool call statuses: ['pending', 'failed']" in second


def test_echo_agent_through_the_cli(tmp_path: Path) -> None:
    agent = shlex.join([sys.executable, str(EXAMPLES / "echo_agent.py")])
    proc = subprocess.run(
        [sys.executable, "-m", "acp_lite.cli", "prompt", "--agent", agent, "hello echo"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hello echo\n"
    assert "state: idle (end_turn)" in proc.stderr
