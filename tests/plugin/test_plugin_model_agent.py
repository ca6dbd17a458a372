"""An agent under test launched on the ``acp_model`` scripted model: agent profiles
in pytest_acp (``acp_model.env_for``, the marker's ``profile=``, the profile
recognised from ``--acp-agent``). The pytester run in ``test_plugin_model.py`` covers
``--acp-model-profile``, a bad profile name and a shared agent."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from acp_lite.client import Session
from pytest_acp import AgentCommand, ModelFixture
from pytest_acp._model import model_command

#: A tiny real ACP v1 agent that calls the OpenAI Chat API at $OPENAI_BASE_URL.
MODEL_AGENT = [sys.executable, str(Path(__file__).parents[1] / "cli" / "agents" / "model_agent.py")]


def test_env_for_gives_an_agent_a_home_of_its_own_pointed_at_this_server(
    acp_model: ModelFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/home/someone/.claude-own")
    monkeypatch.setenv("IS_SANDBOX", "yes")
    env = acp_model.env_for("claude")
    assert env["ANTHROPIC_BASE_URL"] == acp_model.url
    home = Path(env["HOME"])
    assert home.is_dir() and home.name.startswith("acp-lite-home-claude")
    assert env["XDG_CONFIG_HOME"] == str(home / ".config")
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["defaultMode"] == "default"
    # Nothing that would point it at the user's own setup, the rest inherited.
    assert "CLAUDE_CONFIG_DIR" not in env and "IS_SANDBOX" not in env
    assert env["PATH"] == os.environ["PATH"]
    # One home per profile in a test.
    assert acp_model.env_for("claude") == env
    assert acp_model.env_for("gemini")["HOME"] != env["HOME"]


def test_the_agent_command_is_recognised_and_launched_on_the_model(
    acp_model: ModelFixture, request: pytest.FixtureRequest
) -> None:
    command = model_command(request, AgentCommand(("npx", "@qwen-code/qwen-code", "--acp")))
    assert command.argv == ("npx", "@qwen-code/qwen-code", "--acp", "--approval-mode", "default")
    assert command.env["OPENAI_BASE_URL"] == acp_model.openai_base_url
    assert command.env["HOME"] == acp_model.env_for("qwen")["HOME"]
    # Its whole environment, as env_for gives it: nothing inherited on top.
    assert not command.inherit_env
    assert command.env == acp_model.env_for("qwen")
    # An agent in this process has no environment to set.
    in_process = AgentCommand((), in_process=object)
    assert model_command(request, in_process) is in_process


def test_without_the_scripted_model_the_command_is_left_alone(
    request: pytest.FixtureRequest,
) -> None:
    command = AgentCommand(("qwen", "--acp"))
    assert model_command(request, command) is command


@pytest.mark.acp_agent(MODEL_AGENT, env={"OPENAI_MODEL": "picked-by-the-test"})
@pytest.mark.acp_permission("allow")
@pytest.mark.acp_model(
    script=[
        {"type": "tool_call", "name": "run", "arguments": {"command": "ls"}, "id": "call_1"},
        {"type": "reply", "text": "Listed.", "when": {"tool_result_for": "call_1"}},
    ],
    profile="generic",
)
def test_a_real_agent_runs_a_scripted_tool_call_and_reply(
    acp_session: Session, acp_model: ModelFixture
) -> None:
    turn = acp_session.run("list the files").raise_for_stop()
    assert turn.text == "Listed."
    (tool,) = turn.tool_calls
    assert tool.status == "completed"
    (asked,) = turn.permission_requests
    assert asked.tool_call_id == tool.id
    first, second = acp_model.requests
    assert first.body["model"] == "picked-by-the-test"  # the marker's env wins
    assert second.body["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "ran run",
    }
