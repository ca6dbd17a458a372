"""ts_client.mjs (a client written with the official TypeScript SDK) drives agents.

First against ts_agent.mjs, which proves the TypeScript client's own checks
(SDK against SDK); then against *our* reference agent, so acp_lite's agent side
is checked by someone else's implementation.

Every case is driven by the real SDK over real pipes, but all cases run in
**one** Node process (``ts_client.mjs --cases``): Node and the SDK take ~0.5 s of
CPU to start, which would otherwise be paid 29 times. The module fixture runs the
batch once; each test then asserts its own case's result.

* The ts_agent.mjs cases share one agent process (``--shared-agent``: one
  connection, one session per case): they prove the checker, not the agent's
  start-up (test_ts_agent_raw.py does that).
* The reference agent runs in this process (:class:`acp_lite.testing.InProcessAgent`,
  the same agent code over two OS pipes that ts_client.mjs inherits,
  ``--agent-fds``): these cases check the agent's protocol behaviour, and an
  interpreter start per scenario costs ~0.2 s of CPU. The ``REAL_PROCESS`` cases
  still start ``python -m acp_lite.testing.agent``, so the SDK also checks the
  agent as users run it, on its own stdio.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from early import in_thread
from rawpipe import HERE, TS_AGENT, TS_CLIENT, node_executable

from acp_lite.testing import InProcessAgent

# (prompt for ts_agent.mjs, ts_client options)
TS_AGENT_CASES = {
    "echo": ("hello", ["--expect-text", "echo: hello"]),
    "permission-allow": ("permission", ["--expect-permission", "--expect-text", "granted"]),
    "permission-cancel": ("permission", ["--permission", "cancel", "--expect-stop", "cancelled"]),
    "cancel": ("slow", ["--cancel", "--expect-stop", "cancelled"]),
    "failure": ("fail", ["--expect-stop", "error"]),
    "background": ("background", ["--wait-background"]),
}

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

# Reference cases whose agent is a process of its own, not an InProcessAgent.
REAL_PROCESS = {"echo", "background"}

# Deliberately broken scenarios the SDK client must catch -> expected mismatch prefix.
BROKEN_CASES: dict[str, tuple[list[str], str]] = {
    "broken_no_user_message_echo": ([], "no user_message with the prompt's messageId"),
    "broken_bad_stop_reason": ([], "stopReason finished, expected end_turn"),
    "broken_chunk_without_message_id": ([], "SDK rejected a message"),
    "broken_cancel_not_confirmed": (
        # The agent ends the work only once it answered a request sent after the
        # cancel: what proves that it read the cancel (issue 24 item 12).
        ["--cancel", "--request-after-cancel", "_acp_lite/sync", "--expect-stop", "cancelled"],
        "stopReason end_turn, expected cancelled",
    ),
    "wrong_protocol_version": ([], "client error:"),
}


@dataclass
class Case:
    """ts_client.mjs arguments of one case: ``[options] -- AGENT`` or, when
    `in_process`, only the options (the reference agent with `scenario` runs here)."""

    args: list[str]
    in_process: bool = False
    scenario: str | None = None


# Cassettes recorded from ts_client.mjs against the reference agent (through
# `acp-lite cassette record`), replayed to it by `acp-lite replay` with no agent:
# case -> (cassette, ts_client options, expected report: "ok" or a line of its diff).
# (A changed prompt, and updates before the prompt response: tests/cassettes.)
CASSETTES = HERE / "__cassettes__" / "ts_client"
REPLAY_CASES: dict[str, tuple[str, list[str], str]] = {
    "echo": ("echo", ["--prompt", "hello there", "--expect-text", "hello there"], "ok"),
    "permission": ("permission", ["--expect-permission", "--expect-text", "Done"], "ok"),
    "changed-answer": (
        "permission",
        ["--permission", "reject"],
        '+      "optionId": "reject",',
    ),
}


def all_cases(reports: Path | None = None) -> dict[str, Case]:
    """Every case of this module, by name (the replay cases write their reports to
    ``reports``)."""
    ts_agent = [node_executable(), str(TS_AGENT)]
    # A generous limit (it includes the agent's start-up), only spent on failure:
    # loaded CI machines are slow.
    common = ["--timeout-ms", "20000"]
    cases: dict[str, Case] = {}
    for case, (prompt, options) in TS_AGENT_CASES.items():
        cases[f"ts_agent/{case}"] = Case(
            [*common, "--shared-agent", "--prompt", prompt, *options, "--", *ts_agent]
        )
    mismatch = ["--prompt", "hello", "--expect-stop", "refusal"]
    cases["ts_agent/mismatch"] = Case([*common, "--shared-agent", *mismatch, "--", *ts_agent])
    for case, (scenario, options) in REFERENCE_CASES.items():
        if case in REAL_PROCESS:
            agent = (
                REFERENCE_AGENT if scenario is None else [*REFERENCE_AGENT, "--scenario", scenario]
            )
            cases[f"reference/{case}"] = Case([*common, *options, "--", *agent])
        else:
            cases[f"reference/{case}"] = Case(
                [*common, *options], in_process=True, scenario=scenario
            )
    for scenario, (options, _) in BROKEN_CASES.items():
        cases[f"broken/{scenario}"] = Case([*common, *options], in_process=True, scenario=scenario)
    for case, (cassette, options, _) in REPLAY_CASES.items() if reports else ():
        # The replay's grace after a mismatch (refused requests still reach the
        # client) always expires here: the client waits for an idle until the
        # connection ends. A short one keeps the batch short.
        replay = [sys.executable, "-m", "acp_lite", "replay", "--report", str(reports / case)]
        replay += ["--mismatch-grace", "0.1"]
        agent = [*replay, str(CASSETTES / f"{cassette}.acp.jsonl")]
        cases[f"replay/{case}"] = Case([*common, *options, "--", *agent])
    return cases


def run_cases(cases: dict[str, Case]) -> dict[str, Any]:
    """Runs the cases in one ts_client.mjs process; case name -> {code, ms, summary},
    plus ``"_run"``: the process's exit code and stderr, for cases that report nothing."""
    agents: dict[str, InProcessAgent] = {}
    ours: list[int] = []  # this process's copies of the descriptors ts_client inherits
    try:
        specs = []
        # Agent processes first: their start-up is the longest part of the batch.
        for name, case in sorted(cases.items(), key=lambda item: item[1].in_process):
            args = case.args
            if case.in_process:
                agent = agents[name] = InProcessAgent(case.scenario)
                to_agent, from_agent = agent.start()
                ours += [to_agent, from_agent]
                args = [*args, "--agent-fds", f"{to_agent},{from_agent}"]
            specs.append({"name": name, "args": args})
        # Every agent at once (not ts_client's default of 2 per CPU): the batch's
        # length is its slowest agent's, so none may wait for a free slot.
        jobs = ["--jobs", str(len(specs))]
        proc = subprocess.Popen(
            [node_executable(), str(TS_CLIENT), "--cases", "-", *jobs],
            cwd=HERE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=ours,
        )
        # Only ts_client may hold them now: the agent must see end of input when it closes.
        for fd in ours:
            os.close(fd)
        ours.clear()
        try:
            out, err = proc.communicate(json.dumps(specs).encode(), timeout=120)
        finally:
            proc.kill()
            proc.wait()
    finally:
        for fd in ours:
            os.close(fd)
        for agent in agents.values():
            agent.close()
    results: dict[str, Any] = {}
    for line in out.decode().splitlines():
        result = json.loads(line)
        if result["name"] in agents:
            result["summary"]["stderrTail"] = "\n".join(agents[result["name"]].stderr_tail()[-20:])
        results[result["name"]] = result
    results["_run"] = {"code": proc.returncode, "stderr": err.decode()[-4000:]}
    return results


#: The batch started early (:func:`start_early`), if it was.
_early: list[Future[dict[str, Any]]] = []


def start_early(tmp_path_factory: pytest.TempPathFactory, items: list[pytest.Function]) -> bool:
    """Starts the batch in a thread now; the ``results`` fixture then takes its
    results (``tests/interop/conftest.py`` calls this at the first interop test).
    The batch mostly waits for Node (two SDK loads) and its agents to start, which
    overlaps the interop tests that run before this module's."""
    if _early:
        return False
    reports = tmp_path_factory.mktemp("replay-reports")
    _early.append(in_thread(lambda: _run_all(reports), "ts_client batch"))  # the tests report it
    return True


def end_early() -> None:
    """Waits for the batch (started early) to end."""
    with contextlib.suppress(Exception):  # the tests report a failed batch
        _early[0].result(timeout=300)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The batch's results. Under pytest-xdist the first worker that needs them runs
    the batch and the others read its file (pytest-xdist's documented recipe for
    running a fixture once), instead of every worker running all 29 cases."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        if _early:
            return _early[0].result(timeout=300)
        return _run_all(tmp_path_factory.mktemp("replay-reports"))
    shared = tmp_path_factory.getbasetemp().parent  # one directory per test run
    path = shared / "ts_client_results.json"
    with open(shared / "ts_client_results.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file():
            reports = shared / "ts_client_replay_reports"
            reports.mkdir(exist_ok=True)
            path.write_text(json.dumps(_run_all(reports)))
        loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def _run_all(reports: Path) -> dict[str, Any]:
    results = run_cases(all_cases(reports))
    for case in REPLAY_CASES:
        report = reports / case
        text = report.read_text() if report.is_file() else "(no report written)"
        results.setdefault(f"replay/{case}", {"code": None, "summary": {}})["report"] = text
    return results


def result_of(results: dict[str, Any], case: str) -> tuple[int, dict[str, Any]]:
    """The exit code and JSON summary ts_client.mjs reported for `case`."""
    result = results.get(case)
    assert result is not None, f"ts_client reported nothing for {case}: {results['_run']}"
    return result["code"], result["summary"]


@pytest.mark.parametrize("case", sorted(TS_AGENT_CASES))
def test_ts_client_against_ts_agent(results: dict[str, Any], case: str) -> None:
    code, summary = result_of(results, f"ts_agent/{case}")
    assert summary["mismatches"] == []
    assert (code, summary["ok"]) == (0, True)


def test_ts_client_reports_a_mismatch(results: dict[str, Any]) -> None:
    """The checker can fail: a wrong expectation gives exit 1 and names the mismatch."""
    code, summary = result_of(results, "ts_agent/mismatch")
    assert code == 1
    assert summary["mismatches"] == ["stopReason end_turn, expected refusal"]


@pytest.mark.parametrize("case", sorted(REFERENCE_CASES))
def test_ts_client_against_reference_agent(results: dict[str, Any], case: str) -> None:
    code, summary = result_of(results, f"reference/{case}")
    assert summary["mismatches"] == []
    assert (code, summary["ok"]) == (0, True)
    assert summary["agent"]["name"] == "acp-lite-reference-agent"


@pytest.mark.parametrize("scenario", sorted(BROKEN_CASES))
def test_ts_client_catches_broken_reference_scenarios(
    results: dict[str, Any], scenario: str
) -> None:
    code, summary = result_of(results, f"broken/{scenario}")
    _, expected = BROKEN_CASES[scenario]
    assert code == 1
    assert any(m.startswith(expected) for m in summary["mismatches"]), summary["mismatches"]


@pytest.mark.parametrize("case", sorted(REPLAY_CASES))
def test_ts_client_against_a_replayed_cassette(results: dict[str, Any], case: str) -> None:
    """`acp-lite replay` is an agent for a client in another language: the SDK client
    passes against the cassette it recorded, and fails when it sends something
    else; the replay's report (here a file: ts_client keeps its agent's stderr)
    says what, with a diff."""
    code, summary = result_of(results, f"replay/{case}")
    report = results[f"replay/{case}"]["report"]
    _, _, expected = REPLAY_CASES[case]
    if expected == "ok":
        assert summary["mismatches"] == []
        assert (code, summary["ok"], report) == (0, True, "ok\n")
        assert summary["agent"]["name"] == "acp-lite-reference-agent"
    else:
        assert code == 1, summary
        assert "does not match the recorded" in report, report
        assert expected in report.splitlines(), report
