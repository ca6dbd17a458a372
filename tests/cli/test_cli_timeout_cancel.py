"""``prompt --timeout``: a limit that fires stops the agent's work (``session/cancel``)
before the prompt is withdrawn (``$/cancel_request``) and the agent stopped (issue 24
item 15). Read from the transcript the command saves."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from acp_lite.cli import EXIT_TIMEOUT, REFERENCE_AGENT

from .conftest import RunCli


def _sent(path: Path) -> list[str]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [str(r["msg"].get("method")) for r in lines if r["dir"] == "send"]


@pytest.mark.parametrize(
    ("scenario", "protocol", "after_prompt"),
    [
        # The prompt's answer never comes: cancel the turn, then withdraw the request.
        ("hang", "2", ["session/cancel", "$/cancel_request"]),
        ("hang", "1", ["session/cancel", "$/cancel_request"]),
        # Inserted, but the work never ends: cancel it.
        ("broken_no_idle", "2", ["session/cancel"]),
    ],
)
def test_a_timeout_cancels_the_turn_before_stopping_the_agent(
    run_cli: RunCli, tmp_path: Path, scenario: str, protocol: str, after_prompt: list[str]
) -> None:
    # Served in this process (tests/cli/conftest.py): the command with "--protocol 1"
    # for v1, without for v2.
    v1 = ["--protocol", "1"] if protocol == "1" else []
    agent = shlex.join([*REFERENCE_AGENT, "--scenario", scenario, *v1])
    transcript = tmp_path / "t.jsonl"
    proc = run_cli(
        "prompt", "--agent", agent, "--timeout", "0.3", "--transcript", str(transcript), "x"
    )
    assert proc.returncode == EXIT_TIMEOUT, proc.stderr
    assert transcript.exists(), (proc.stdout, proc.stderr)
    sent = _sent(transcript)
    assert sent[sent.index("session/prompt") + 1 :] == after_prompt
