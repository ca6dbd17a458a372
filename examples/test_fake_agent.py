"""Testing code that *drives* an agent, with a scripted fake agent (``acp_fake_agent``).

The code under test here is a small bot (``fix_issue``): it asks an agent to fix
an issue, allows file edits but never shell commands, and reports what the
agent said. Its tests need no real agent, no credentials and no network: each
scripts the fake agent's side, in the spirit of pytest-httpserver, and the
fixture fails the test if the bot did not ask what was expected. Run with::

    pytest examples/test_fake_agent.py
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

import acp_lite
from acp_lite import permissions
from acp_lite.protocol import RequestPermissionRequest, ToolCallPermissionSubject
from pytest_acp import FakeAgent

# --- the code under test ---------------------------------------------------------------


class BotError(Exception):
    """The agent could not do the task."""


def only_edits(request: RequestPermissionRequest, session: acp_lite.Session) -> str | None:
    """Allow file edits once; reject everything else (shell commands above all)."""
    subject = request.subject
    if isinstance(subject, ToolCallPermissionSubject) and subject.tool_call.kind == "edit":
        return permissions.allow_once(request, session)
    return permissions.reject(request, session)


def fix_issue(client: acp_lite.Client, issue: str, cwd: str) -> str:
    """Ask the agent to fix ``issue``; its answer, or :class:`BotError`."""
    turn = client.new_session(cwd=cwd).run(f"Fix this issue: {issue}")
    if turn.stop_reason != "end_turn":
        raise BotError(f"the agent stopped ({turn.stop_reason}): {turn.error}")
    return turn.text


def fix_issue_with(command: Sequence[str], issue: str, cwd: str) -> str:
    """The command-line entry point: start the agent ``command`` and fix one issue."""
    with acp_lite.connect(list(command), on_permission=only_edits, timeout=30) as client:
        return fix_issue(client, issue, cwd)


# --- its tests -----------------------------------------------------------------------


def test_reports_the_answer(acp_fake_agent: FakeAgent, tmp_path: Path) -> None:
    acp_fake_agent.expect_prompt("Fix this issue: the build is red").plan(
        "Read the log", "Fix the test"
    ).reply(thought="Reading the CI log", text="Fixed the flaky test.")
    with acp_fake_agent.connect() as client:
        assert fix_issue(client, "the build is red", str(tmp_path)) == "Fixed the flaky test."


def test_allows_edits_and_rejects_commands(acp_fake_agent: FakeAgent, tmp_path: Path) -> None:
    turn = acp_fake_agent.expect_prompt(re.compile("typo"))
    turn.tool_call("edit-1", "Edit README.md", kind="edit", status="pending")
    turn.ask_permission("Edit README.md?", tool_call_id="edit-1", expect="allow_once").then(
        text="Fixed the typo."
    )
    turn.tool_call("run-1", "rm -rf build", kind="execute", status="pending")
    turn.ask_permission("Run rm -rf build?", tool_call_id="run-1", expect="reject_once").then(
        text="Cleaned the build."
    ).otherwise(text="Left the build alone.")
    with acp_fake_agent.connect(on_permission=only_edits) as client:
        answer = fix_issue(client, "a typo in the README", str(tmp_path))
    assert answer == "Fixed the typo.\nLeft the build alone."  # two messages


def test_a_failed_turn_is_an_error(acp_fake_agent: FakeAgent, tmp_path: Path) -> None:
    acp_fake_agent.expect_prompt().text("Let me look").fail("rate limited", code=-32000)
    with acp_fake_agent.connect() as client, pytest.raises(BotError, match="rate limited"):
        fix_issue(client, "anything", str(tmp_path))


def test_a_v1_agent(acp_fake_agent: FakeAgent, tmp_path: Path) -> None:
    acp_fake_agent.protocol = 1  # one blocking session/prompt per turn
    acp_fake_agent.expect_prompt().reply(text="Done in v1.")
    with acp_fake_agent.connect() as client:
        assert fix_issue(client, "old agent", str(tmp_path)) == "Done in v1."
        assert client.protocol_version == 1


def test_the_command_line_entry_point(acp_fake_agent: FakeAgent, tmp_path: Path) -> None:
    # A black box that starts its own agent process: give it the fake's command.
    acp_fake_agent.expect_prompt("Fix this issue: docs").reply(text="Docs fixed.")
    assert fix_issue_with(acp_fake_agent.command, "docs", str(tmp_path)) == "Docs fixed."
