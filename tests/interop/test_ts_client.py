"""ts_client.mjs (a client written with the official TypeScript SDK) drives agents.

First against ts_agent.mjs, which proves the TypeScript client's own checks
(SDK against SDK); then against *our* reference agent, so acp_lite's agent side
is checked by someone else's implementation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from rawpipe import HERE, TS_AGENT, TS_CLIENT, node_executable

# (prompt for ts_agent.mjs, ts_client options)
TS_AGENT_CASES = {
    "echo": ("hello", ["--expect-text", "echo: hello"]),
    "permission-allow": ("permission", ["--expect-permission", "--expect-text", "granted"]),
    "permission-cancel": ("permission", ["--permission", "cancel", "--expect-stop", "cancelled"]),
    "cancel": ("slow", ["--cancel", "--expect-stop", "cancelled"]),
    "failure": ("fail", ["--expect-stop", "error"]),
    "background": ("background", ["--wait-background"]),
}


def run_ts_client(options: list[str], agent: list[str]) -> tuple[int, dict[str, Any]]:
    """Runs ts_client.mjs; returns its exit code and JSON summary."""
    proc = subprocess.run(
        [node_executable(), str(TS_CLIENT), "--timeout-ms", "5000", *options, "--", *agent],
        cwd=HERE,
        capture_output=True,
        timeout=15,
    )
    lines = proc.stdout.decode().splitlines()
    assert lines, f"ts_client printed nothing; stderr:\n{proc.stderr.decode()}"
    summary: dict[str, Any] = json.loads(lines[-1])
    return proc.returncode, summary


@pytest.mark.parametrize("case", sorted(TS_AGENT_CASES))
def test_ts_client_against_ts_agent(case: str) -> None:
    prompt, options = TS_AGENT_CASES[case]
    code, summary = run_ts_client(
        ["--prompt", prompt, *options], [node_executable(), str(TS_AGENT)]
    )
    assert summary["mismatches"] == []
    assert (code, summary["ok"]) == (0, True)


def test_ts_client_reports_a_mismatch() -> None:
    """The checker can fail: a wrong expectation gives exit 1 and names the mismatch."""
    code, summary = run_ts_client(
        ["--prompt", "hello", "--expect-stop", "refusal"], [node_executable(), str(TS_AGENT)]
    )
    assert code == 1
    assert summary["mismatches"] == ["stopReason end_turn, expected refusal"]


REFERENCE_AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]
