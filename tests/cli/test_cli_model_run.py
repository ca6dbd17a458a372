"""``acp-lite prompt --model-script / --model-reply``: a real agent on the scripted model.

The agent is a process (tests/cli/agents/model_agent.py, a tiny ACP agent calling
the OpenAI Chat API with urllib); the command runs in this process (``run_cli``), so
the model server's thread and the temporary home are this test's. Usage errors
come before anything starts.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from acp_lite.cli.base import EXIT_OK, EXIT_STOPPED, EXIT_USAGE

from .conftest import RunCli, assert_clean_error, fake_agent

AGENT = fake_agent("model_agent.py")


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the agent's temporary home is made, to see it removed afterwards."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def test_model_reply_is_the_agents_answer(run_cli: RunCli, temp_root: Path) -> None:
    proc = run_cli("prompt", "--agent", AGENT, "--model-reply", "some text, scripted", "hi")
    assert proc.returncode == EXIT_OK, proc.stderr
    # The agent refuses a session unless HOME is a temporary home and the OpenAI
    # variables reach it: the text went through the model server.
    assert proc.stdout == "some text, scripted\n"
    assert "agent profile generic" in proc.stderr
    assert list(temp_root.iterdir()) == []  # the home is gone


def test_a_scripted_tool_call_asks_then_answers(run_cli: RunCli, tmp_path: Path) -> None:
    script = tmp_path / "tool.json"
    steps = [
        {"type": "tool_call", "name": "run", "arguments": {"command": "ls"}, "id": "call_1"},
        {"type": "reply", "text": "Listed.", "when": {"tool_result_for": "call_1"}},
    ]
    script.write_text(json.dumps({"name": "tool", "steps": steps}), encoding="utf-8")
    proc = run_cli(
        "prompt", "--agent", AGENT, "--model-script", str(script), "--permission", "allow", "go"
    )
    assert proc.returncode == EXIT_OK, proc.stderr
    assert proc.stdout == "Listed.\n"
    assert 'tool: run {"command":"ls"} (execute) [pending]' in proc.stderr
    assert "-> Allow [allow_once]" in proc.stderr
    assert "-> completed" in proc.stderr


def test_an_unmatched_model_request_fails_the_run(run_cli: RunCli, tmp_path: Path) -> None:
    script = tmp_path / "picky.toml"
    script.write_text(
        'name = "picky"\n[[steps]]\ntype = "reply"\ntext = "x"\n'
        'when = { last_user_text_contains = "bye" }\n',
        encoding="utf-8",
    )
    proc = run_cli("prompt", "--agent", AGENT, "--model-script", str(script), "hi")
    assert proc.returncode == EXIT_STOPPED, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "unanswered model" in line]
    assert len(lines) == 1, proc.stderr
    assert "request #0: POST /v1/chat/completions: no step of scripted model 'picky'" in lines[0]


def test_a_malformed_script_names_the_step(run_cli: RunCli, tmp_path: Path) -> None:
    script = tmp_path / "bad.toml"
    script.write_text('[[steps]]\ntype = "tool_call"\narguments = { a = 1 }\n', encoding="utf-8")
    proc = run_cli("prompt", "--agent", AGENT, "--model-script", str(script), "hi")
    assert_clean_error(proc, EXIT_USAGE, "steps[0] (tool_call): a tool call needs a name")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--model-profile", "qwen"], "--model-profile needs --model-script or --model-reply"),
        (["--model-reply", "x", "--model-profile", "qwne"], "known: qwen, opencode, codex"),
    ],
)
def test_profile_usage_errors(run_cli: RunCli, args: list[str], fragment: str) -> None:
    proc = run_cli("prompt", "--agent", AGENT, *args, "hi")
    assert_clean_error(proc, EXIT_USAGE, fragment)


def test_the_help_names_every_profile() -> None:
    from acp_lite.cli.model_run import PROFILE_NAMES
    from acp_lite.models import PROFILES

    assert tuple(PROFILES) == PROFILE_NAMES
