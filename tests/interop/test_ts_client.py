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
        [node_executable(), str(TS_CLIENT), "--timeout-ms", "10000", *options, "--", *agent],
        cwd=HERE,
        capture_output=True,
        timeout=30,
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

# scenario of the reference agent -> ts_client options. Covers the list
# (echo, streaming, permission, cancel, failure, background) plus every other
# update type the reference agent emits, so the SDK's schema validation sees each.
REFERENCE_CASES: dict[str, tuple[str | None, list[str]]] = {
    # No --scenario: the default (embedded demo) agent is the echo agent.
    "echo": (None, ["--prompt", "hello there", "--expect-text", "hello there"]),
    "streaming": ("streaming", []),
    "permission-allow": ("tool_call_permission", ["--expect-permission", "--expect-text", "Done"]),
    "permission-reject": ("tool_call_permission", ["--permission", "reject"]),
    "permission-cancel": (
        "tool_call_permission",
        ["--permission", "cancel", "--expect-stop", "cancelled"],
    ),
    "cancel": ("slow_cancel", ["--cancel", "--expect-stop", "cancelled"]),
    "failure": ("failure", ["--expect-stop", "error"]),
    "background": ("background", ["--wait-background"]),
    "thinking": ("thinking", []),
    "plan": ("plan", []),
    "usage": ("usage", []),
    "notice": ("notice", []),
    "compaction": ("compaction", []),
    "custom_update": ("custom_update", []),
    "updates_before_response": ("updates_before_response", []),
    "updates_before_session_response": ("updates_before_session_response", []),
    "elicitation-unsupported": ("elicitation", []),
}

# Deliberately broken scenarios the SDK client must catch -> expected mismatch prefix.
BROKEN_CASES: dict[str, tuple[list[str], str]] = {
    "broken_no_user_message_echo": ([], "no user_message with the prompt's messageId"),
    "broken_bad_stop_reason": ([], "stopReason finished, expected end_turn"),
    "broken_chunk_without_message_id": ([], "SDK rejected a message"),
    "broken_cancel_not_confirmed": (
        ["--cancel", "--expect-stop", "cancelled"],
        "stopReason end_turn, expected cancelled",
    ),
    "wrong_protocol_version": ([], "client error:"),
}


@pytest.mark.parametrize("case", sorted(REFERENCE_CASES))
def test_ts_client_against_reference_agent(case: str) -> None:
    scenario, options = REFERENCE_CASES[case]
    agent = REFERENCE_AGENT if scenario is None else [*REFERENCE_AGENT, "--scenario", scenario]
    code, summary = run_ts_client(options, agent)
    assert summary["mismatches"] == []
    assert (code, summary["ok"]) == (0, True)
    assert summary["agent"]["name"] == "acp-lite-reference-agent"


@pytest.mark.parametrize("scenario", sorted(BROKEN_CASES))
def test_ts_client_catches_broken_reference_scenarios(scenario: str) -> None:
    options, expected = BROKEN_CASES[scenario]
    code, summary = run_ts_client(options, [*REFERENCE_AGENT, "--scenario", scenario])
    assert code == 1
    assert any(m.startswith(expected) for m in summary["mismatches"]), summary["mismatches"]
