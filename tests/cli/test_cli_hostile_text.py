"""Hostile agent text through ``acp-lite prompt``: no traceback, exit by the turn's
outcome, control characters escaped, lone surrogates replaced.

stdout's UTF-8 encoding is what is at stake: ``run_cli`` writes to pytest's capture
streams, strict UTF-8 like a real terminal's (checked below), and shows on stderr
what the process would print there (log records, thread exceptions). The agent's
bytes reach the client through a pipe as from a process (``InProcessAgent``).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import RunCli

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


def run(run_cli: RunCli, *extra: str) -> subprocess.CompletedProcess[str]:
    # Strict, as on a real terminal: a lone surrogate written as is would raise.
    assert (sys.stdout.encoding.lower(), sys.stdout.errors) == ("utf-8", "strict")
    assert (sys.stderr.encoding.lower(), sys.stderr.errors) == ("utf-8", "strict")
    agent = [sys.executable, "-m", "acp_lite.testing.agent", "--script-json", json.dumps(SCRIPT)]
    return run_cli("prompt", "--timeout", "20", "--agent", shlex.join(agent), *extra, "x")


def test_rendered_text_is_escaped_and_replaced(run_cli: RunCli) -> None:
    proc = run(run_cli)
    out, err = proc.stdout, proc.stderr
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert "a\ufffdb" in out
    assert "\x1b" not in out and "\\x1b]0;pwned\\x07" in out
    assert "\x1b]2;" not in err and "\\x1b]2;evil\\x07" in err


@pytest.mark.parametrize("option", ["--json", "--transcript"])
def test_json_and_transcript_stay_valid(run_cli: RunCli, tmp_path: Path, option: str) -> None:
    extra = [option] if option == "--json" else [option, str(tmp_path / "t.jsonl")]
    proc = run(run_cli, *extra)
    err = proc.stderr
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    if option == "--json":
        lines = [json.loads(x) for x in proc.stdout.splitlines()]
        texts = [
            u["content"]["text"] for u in lines if u.get("sessionUpdate") == "agent_message_chunk"
        ]
        assert "".join(texts) == HOSTILE  # --json is the wire, unescaped, surrogate kept
    else:
        text = (tmp_path / "t.jsonl").read_text(encoding="utf-8")
        assert all(json.loads(x) for x in text.splitlines())
