"""``acp-lite login --json`` prints JSON (issue 25 item 3), and the auth-required hint
names a journey that ends in a turn: ``prompt --login METHOD`` logs in within the
agent process that runs it (issue 25 item 4)."""

from __future__ import annotations

import json
import re
import shlex

from acp_lite.cli import EXIT_AUTH, EXIT_OK, EXIT_USAGE

from .conftest import RunCli, assert_clean_error, fake_agent


def test_login_json_prints_what_happened(run_cli: RunCli) -> None:
    proc = run_cli("login", "--scenario", "auth_required", "--json")
    assert proc.returncode == EXIT_OK, proc.stderr
    outcome = json.loads(proc.stdout)
    assert outcome == {"ok": True, "method": "token", "kind": "agent", "response": {}}


def test_login_json_says_what_failed(run_cli: RunCli) -> None:
    proc = run_cli("login", "--scenario", "auth_required", "--json", "nosuch")
    assert_clean_error(proc, EXIT_USAGE, "the agent has no auth method 'nosuch'")
    outcome = json.loads(proc.stdout)
    assert outcome["ok"] is False and outcome["method"] == "nosuch"
    assert outcome["exitCode"] == EXIT_USAGE
    assert "no auth method 'nosuch'" in outcome["error"]


def test_the_auth_hint_run_as_printed_gets_a_turn(run_cli: RunCli) -> None:
    first = run_cli("prompt", "--scenario", "auth_required", "hello there")
    assert_clean_error(first, EXIT_AUTH, "the agent needs authentication for session/new")
    (hint,) = re.findall(r"run `([^`]*)`", first.stderr)
    words = shlex.split(hint)
    assert words[:2] == ["acp-lite", "prompt"] and "--login" in words, hint
    again = run_cli(*words[1:])
    assert again.returncode == EXIT_OK, again.stderr
    assert again.stdout == "hello there\n"
    assert "logged in with token" in again.stderr


def test_login_with_a_method_that_is_not_an_agent_method(run_cli: RunCli) -> None:
    agent = fake_agent("auth_agent.py")
    proc = run_cli("prompt", "--agent", agent, "--login", "tui", "hi")
    assert_clean_error(proc, EXIT_USAGE, "--login tui: a terminal method")
    login = shlex.join(["acp-lite", "login", "--agent", shlex.join(shlex.split(agent)), "tui"])
    assert f"run `{login}` first" in proc.stderr
    unknown = run_cli("prompt", "--scenario", "auth_required", "--login", "nosuch", "hi")
    assert_clean_error(unknown, EXIT_USAGE, "the agent has no auth method 'nosuch'")
