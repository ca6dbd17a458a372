"""``acp-lite prompt --json`` prints what the agent streamed (the updates of the
transcript, in order) and each permission request as its own line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_lite.cli import EXIT_OK
from acp_lite.sync._client import Session

from .conftest import RunCli


def test_json_holds_the_streamed_updates_and_the_permission(
    run_cli: RunCli, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.ndjson"
    proc = run_cli(
        "prompt", "--json", "--permission", "allow", "--transcript", str(transcript),
        "--scenario", "tool_call_permission", "go",
    )  # fmt: skip
    assert proc.returncode == EXIT_OK, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    updates = [line for line in lines if "sessionUpdate" in line]
    (permission,) = [line["permission"] for line in lines if "permission" in line]
    streamed = []
    for text in transcript.read_text().splitlines():
        record = json.loads(text)
        msg = record.get("msg") or {}
        if record["dir"] == "recv" and msg.get("method") == "session/update":
            streamed.append(msg["params"]["update"])
    assert updates == streamed  # nothing the agent did not send
    assert permission == {
        "title": "Allow writing notes.txt?",
        "toolCallId": "call-1",
        "options": ["allow", "allow_always", "reject"],
        "answer": "allow",
    }
    # In stream order: after the state that asks, before the state that resumes.
    index = lines.index({"permission": permission})
    assert lines[index - 1].get("state") == "requires_action"
    assert lines[index + 1].get("state") == "running"


def test_wait_quiet_shows_the_background_work_finishing(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The quiet grace (no update for 0.5 s after the work ends) is waited out: a
    # shorter one shows the same output sooner.
    wait_quiet = Session.wait_quiet

    def wait_quiet_briefly(self: Session, *, timeout: float | None = None) -> None:
        wait_quiet(self, timeout=timeout, grace=0.05)

    monkeypatch.setattr(Session, "wait_quiet", wait_quiet_briefly)
    idle = run_cli("prompt", "--scenario", "background", "go")
    assert idle.returncode == EXIT_OK, idle.stderr
    assert "-> completed" not in idle.stderr  # stops at the turn's idle
    quiet = run_cli("prompt", "--wait", "quiet", "--scenario", "background", "go")
    assert quiet.returncode == EXIT_OK, quiet.stderr
    assert "tool: Index the repository -> completed" in quiet.stderr
    assert quiet.stderr.rstrip().endswith("state: idle")
