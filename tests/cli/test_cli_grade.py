"""`acp-lite grade-client`: usage, exit codes, the table and the JSON report."""

from __future__ import annotations

import json
import subprocess
import sys

from .conftest import RunCli

CLIENT = [sys.executable, "-m", "acp_lite", "prompt", "--reply", "--agent", "{agent}", "grade"]


def test_lists_the_scenarios(run_cli: RunCli) -> None:
    done = run_cli("grade-client", "--list")
    assert done.returncode == 0
    assert done.stdout.split("\n")[0].split()[0] == "basics"
    assert "cancel" in done.stdout


def test_usage_errors_exit_2(run_cli: RunCli) -> None:
    done = run_cli("grade-client")
    assert done.returncode == 2 and "after `--`" in done.stderr
    done = run_cli("grade-client", "--scenario", "nope", "--", "x")
    assert done.returncode == 2 and "unknown scenario 'nope'" in done.stderr


def test_a_client_that_cannot_start_exits_3(run_cli: RunCli) -> None:
    done = run_cli("grade-client", "--", "/no/such/client")
    assert done.returncode == 3 and "/no/such/client" in done.stderr


def test_json_report_of_one_scenario(run_cli: RunCli) -> None:
    done = run_cli("grade-client", "--json", "--scenario", "patches", "--", *CLIENT)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["role"] == "client" and report["protocolVersion"] == 2
    rows = {row["id"]: row for row in report["requirements"]}
    assert rows["ACP-CLIENT-011"]["status"] == "pass"
    assert rows["ACP-CLIENT-050"]["status"] == "not-tested"  # its scenario did not run


def test_table_names_a_failure_and_exits_1(run_cli: RunCli) -> None:
    # A client that prints nothing: the turn's reply is missing (mandatory).
    silent = [*CLIENT[:3], "prompt", "--agent", "{agent}", "--json", "grade"]
    done = run_cli("grade-client", "--scenario", "basics", "--", *silent)
    assert done.returncode == 1
    assert "FAIL ACP-CLIENT-010" in done.stdout and "grading:" in done.stdout


def test_the_grading_agent_refuses_an_unknown_scenario() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acp_lite.testing", "--grade", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "unknown grading scenario 'nope'" in done.stderr
