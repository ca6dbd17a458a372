"""Hostile agent text through the real ``acp-lite prompt`` (a process: stdout's
UTF-8 encoding and the terminal are what is at stake): no traceback, exit by the
turn's outcome, control characters escaped, lone surrogates replaced."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

HOSTILE = "a\ud800b \x1b]0;pwned\x07 \x1b[2J end"
SCRIPT = {
    "turns": [
        {
            "steps": [
                {"type": "text", "text": HOSTILE},
                {"type": "raw", "text": "[" * 5000 + "]" * 5000},  # deeper than json decodes
                {
                    "type": "update",
                    "update": {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": "t1",
                        "title": "title \x1b]2;evil\x07",
                        "status": "completed",
                    },
                },
            ],
            "stop_reason": "end_turn",
        }
    ]
}


def run(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    agent = [sys.executable, "-m", "acp_lite.testing.agent", "--script-json", json.dumps(SCRIPT)]
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}  # strict, as on a real terminal
    argv = [sys.executable, "-m", "acp_lite.cli", "prompt", "--timeout", "20", "--agent"]
    return subprocess.run(
        [*argv, shlex.join(agent), *extra, "x"],
        capture_output=True,
        timeout=30,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def rendered(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[bytes], Path]:
    """One run of the rendered output that also writes a transcript (both are checked,
    by separate tests, on the same run: one process instead of two)."""
    tmp_path = tmp_path_factory.mktemp("hostile")
    transcript = tmp_path / "t.jsonl"
    return run(tmp_path, "--transcript", str(transcript)), transcript


def test_rendered_text_is_escaped_and_replaced(
    rendered: tuple[subprocess.CompletedProcess[bytes], Path],
) -> None:
    proc, _ = rendered
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert "a\ufffdb" in out
    assert "\x1b" not in out and "\\x1b]0;pwned\\x07" in out
    assert "\x1b]2;" not in err and "\\x1b]2;evil\\x07" in err


def test_transcript_stays_valid(rendered: tuple[subprocess.CompletedProcess[bytes], Path]) -> None:
    proc, transcript = rendered
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    text = transcript.read_text(encoding="utf-8")
    assert all(json.loads(x) for x in text.splitlines())


def test_json_stays_valid(tmp_path: Path) -> None:
    proc = run(tmp_path, "--json")
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    lines = [json.loads(x) for x in proc.stdout.decode("utf-8").splitlines()]
    texts = [u["content"]["text"] for u in lines if u.get("sessionUpdate") == "agent_message_chunk"]
    assert "".join(texts) == HOSTILE  # --json is the wire, unescaped, surrogate kept
