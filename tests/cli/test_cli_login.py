"""``acp-lite login`` and what ``prompt`` / ``info`` say about authentication, against
a fake v1 agent that needs a login (``agents/auth_agent.py``)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from acp_lite.cli import EXIT_AUTH, EXIT_CODES, EXIT_OK, EXIT_USAGE

from .conftest import AGENTS, RunCli, assert_clean_error, fake_agent, run_cli_on_tty

AGENT = fake_agent("auth_agent.py")
ARGV = [sys.executable, str(AGENTS / "auth_agent.py")]


def test_prompt_on_an_auth_error_says_what_to_run_or_set(run_cli: RunCli) -> None:
    proc = run_cli("prompt", "--agent", AGENT, "hi")
    assert_clean_error(proc, EXIT_AUTH, "the agent needs authentication for session/new")
    # The agent method in the process that runs the turn; the terminal method's
    # program (which keeps its login) on its own.
    again = shlex.join(["acp-lite", "prompt", "--login", "token", "--agent", AGENT, "hi"])
    login = shlex.join(["acp-lite", "login", "--agent", shlex.join(ARGV), "tui"])
    assert f"run `{again}` or run `{login}`" in proc.stderr
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
    proc = run_cli("login", "--agent", AGENT, "tui", tty=True, input="y\n")
    assert proc.returncode == EXIT_OK, proc.stderr
    asked = f"the agent asks to run its login program:\n  {shlex.join([*ARGV, '--login'])}\n"
    assert proc.stderr.startswith(asked), proc.stderr
    assert proc.stderr.endswith("run it? [y/N] "), proc.stderr
    assert proc.stdout == "logged in with tui\n"
    monkeypatch.setenv("AUTH_AGENT_FAIL", "1")
    failed = run_cli("login", "--agent", AGENT, "--yes", "tui", tty=True)
    assert_clean_error(failed, EXIT_AUTH, "the login command exited with status 3", only=False)
    assert "run it?" not in failed.stderr  # --yes does not ask


HOSTILE = [sys.executable, str(AGENTS / "hostile_auth_agent.py")]


def hostile(marker: Path) -> str:
    return shlex.join([*HOSTILE, str(marker)])


def test_a_terminal_method_never_runs_without_a_terminal(run_cli: RunCli, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    proc = run_cli("login", "--agent", hostile(marker), "--yes", "sh", input="y\n")
    assert_clean_error(proc, EXIT_USAGE, "sh is a terminal method: run acp-lite login from a")
    assert not marker.exists()
    # The command is named, its escape sequence shown escaped, not sent raw.
    assert "\x1b" not in proc.stderr
    assert "#\\n#\\n#\\n#\\x1b[2K\\x1b[1Gharmless-login" in proc.stderr


@pytest.mark.parametrize("answer", ["", "yes please\n"])
def test_a_terminal_method_runs_only_when_the_user_says_yes(
    run_cli: RunCli, tmp_path: Path, answer: str
) -> None:
    marker = tmp_path / "ran"
    proc = run_cli("login", "--agent", hostile(marker), "sh", tty=True, input=answer)
    # (A terminal echoes the answer and its newline; this stdin does not.)
    assert proc.returncode == EXIT_AUTH, proc.stderr
    assert "acp-lite: error: not logged in: sh's command was not run\n" in proc.stderr
    assert not marker.exists()
    script = f"touch {marker} #\n#\n#\n#\x1b[2K\x1b[1Gharmless-login"
    shown = shlex.join(["/bin/sh", "-c", script]).replace("\n", "\\n").replace("\x1b", "\\x1b")
    assert proc.stderr.startswith(f"the agent asks to run its login program:\n  {shown}\n")
    assert "run it? [y/N] " in proc.stderr and "\x1b" not in proc.stderr
    if answer:
        return
    said_yes = run_cli("login", "--agent", hostile(marker), "sh", tty=True, input="Y\n")
    assert said_yes.returncode == EXIT_OK, said_yes.stderr
    assert marker.exists()


def test_a_method_setting_ld_preload_is_refused_even_with_yes(
    run_cli: RunCli, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    proc = run_cli("login", "--agent", hostile(marker), "--yes", "preload", tty=True)
    assert_clean_error(proc, EXIT_AUTH, "preload: not running the agent's login command")
    assert "it sets 'LD_PRELOAD', which can make it run code" in proc.stderr
    assert not marker.exists()


def test_info_escapes_the_auth_methods_and_the_agent_name(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli("info", "--agent", hostile(tmp_path / "ran"))
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "agent:        hostile\\x1b]0;t\\x07-auth 1.0\n" in proc.stdout
    # A newline in a name cannot forge a line of its own.
    assert "  - evil\\x1b]0;pwned\\x07 (agent) Name\\x1b[2J\\n  - fake (agent) forged\n" in (
        proc.stdout
    )
    assert "\n  - fake" not in proc.stdout
    assert not (tmp_path / "ran").exists()


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


def test_python_dash_m_reports_the_auth_error_without_a_traceback(run_cli: RunCli) -> None:
    # `python -m acp_lite.cli` runs the module as __main__; the subcommand modules
    # import acp_lite.cli: one CliError class must serve both (it once did not).
    # In this process: runpy runs it as -m does.
    proc = run_cli("prompt", "--agent", AGENT, "hi", module="acp_lite.cli")
    assert_clean_error(proc, EXIT_AUTH, "the agent needs authentication for session/new")


def test_on_a_real_terminal_the_answer_is_read_from_it(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    proc = run_cli_on_tty(["login", "--agent", hostile(marker), "sh"], "y\n", tmp_path)
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "run it? [y/N] " in proc.stderr and "\x1b" not in proc.stderr
    assert marker.exists()
