"""``acp-lite login`` and what ``prompt`` / ``info`` say about authentication, against
a fake v1 agent that needs a login (``agents/auth_agent.py``)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from acp_lite.cli import EXIT_AUTH, EXIT_CODES, EXIT_OK, EXIT_USAGE

from .conftest import AGENTS, RunCli, assert_clean_error, cli_env, fake_agent

AGENT = fake_agent("auth_agent.py")
ARGV = [sys.executable, str(AGENTS / "auth_agent.py")]


def test_prompt_on_an_auth_error_says_what_to_run_or_set(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--agent", AGENT, "hi")
    assert_clean_error(proc, EXIT_AUTH, "the agent needs authentication for session/new")
    login = shlex.join(["acp-lite", "login", "--agent", shlex.join(ARGV), "METHOD"])
    assert f"run `{login}` (METHOD: token, tui)" in proc.stderr
    assert "or set AUTH_AGENT_KEY" in proc.stderr
    assert "authentication" in EXIT_CODES[EXIT_AUTH]


def test_info_shows_protocol_1_the_name_and_the_methods(run_cli: RunCli) -> None:
    proc = run_cli("info", "--agent", AGENT)
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "agent:        auth-agent 1.0" in proc.stdout
    assert "protocol:     1" in proc.stdout
    assert "  - token (agent) Token\n" in proc.stdout
    assert "  - tui (terminal) Terminal login\n" in proc.stdout
    assert "  - key (env_var) API key: set AUTH_AGENT_KEY\n" in proc.stdout


def test_login_with_an_agent_method_goes_through_the_protocol(run_cli: RunCli) -> None:
    proc = run_cli("login", "--agent", AGENT, "token")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert proc.stdout == "logged in with token\n"


def test_login_with_a_terminal_method_runs_the_agents_program(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = run_cli("login", "--agent", AGENT, "tui")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert f"running {shlex.join([*ARGV, '--login'])}" in proc.stderr
    assert proc.stdout == "logged in with tui\n"
    monkeypatch.setenv("AUTH_AGENT_FAIL", "1")
    failed = run_cli("login", "--agent", AGENT, "tui")
    assert_clean_error(failed, EXIT_AUTH, "the login command exited with status 3", only=False)


def test_login_choices_and_env_var_methods(run_cli: RunCli) -> None:
    several = run_cli("login", "--agent", AGENT)
    assert_clean_error(several, EXIT_USAGE, "choose an auth method")
    assert "token (agent) Token" in several.stderr
    unknown = run_cli("login", "--agent", AGENT, "nope")
    assert_clean_error(unknown, EXIT_USAGE, "the agent has no auth method 'nope'")
    env = run_cli("login", "--agent", AGENT, "key")
    assert_clean_error(env, EXIT_AUTH, "key: set AUTH_AGENT_KEY for the agent")


def test_the_reference_agent_has_one_method_so_login_needs_no_argument(run_cli: RunCli) -> None:
    proc = run_cli("login", "--scenario", "auth_required")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert proc.stdout == "logged in with token\n"


def test_python_dash_m_reports_the_auth_error_without_a_traceback(tmp_path: Path) -> None:
    # `python -m acp_lite.cli` runs the module as __main__; the subcommand modules
    # import acp_lite.cli: one CliError class must serve both (it once did not).
    proc = subprocess.run(
        [sys.executable, "-m", "acp_lite.cli", "prompt", "--agent", AGENT, "hi"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
    )
    assert_clean_error(proc, EXIT_AUTH, "the agent needs authentication for session/new")
