"""A program that is not an ACP agent, or one that writes junk mid-turn: the CLI
quotes what it printed instead of a bare exit, timeout or "Method not found"."""

from __future__ import annotations

import shlex
import sys

from acp_lite.cli import EXIT_OK, EXIT_PROTOCOL

from .conftest import RunCli, assert_clean_error


def py(code: str) -> str:
    return shlex.join([sys.executable, "-c", code])


def test_a_program_that_prints_and_exits(run_cli: RunCli) -> None:
    proc = run_cli("info", "--agent", py("print(1)"))
    assert_clean_error(proc, EXIT_PROTOCOL, "this does not look like an ACP agent: it printed '1'")
    assert "exited with code 0" in proc.stderr


def test_a_program_that_prints_and_sleeps(run_cli: RunCli) -> None:
    agent = py("print('hello world', flush=True); import time; time.sleep(30)")
    proc = run_cli("info", "--agent", agent, "--timeout", "0.5")
    assert_clean_error(proc, EXIT_PROTOCOL, "it printed 'hello world'")


def test_cat_echoing_our_request(run_cli: RunCli) -> None:
    proc = run_cli("info", "--agent", "cat", "--timeout", "5")
    assert_clean_error(proc, EXIT_PROTOCOL, "our initialize request, echoed back")


def test_junk_mid_turn_is_reported_on_stderr(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--scenario", "broken_stdout_garbage", "hi")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "warning: the agent wrote 2 line(s) that are not ACP (JSON-RPC), skipped" in proc.stderr
    assert "'this is not JSON {'" in proc.stderr
