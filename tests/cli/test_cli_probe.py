"""``acp-lite probe``: the probes from the command line, a table or the JSON report."""

from __future__ import annotations

import json
import sys

from .conftest import RunCli

AGENT = [sys.executable, "-m", "acp_lite.testing.agent"]


def test_probe_passes_on_the_reference_agent(run_cli: RunCli) -> None:
    # Two probes: the whole suite against a process is the probe framework's to test.
    proc = run_cli("probe", "--id", "ACP-RPC-001", "--id", "ACP-INIT-001", "--", *AGENT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "  ok   ACP-RPC-001" in proc.stdout
    assert proc.stdout.rstrip().splitlines()[-1].startswith("PASSED: ")


def test_probe_json_fails_on_a_broken_agent(run_cli: RunCli) -> None:
    proc = run_cli(
        "probe", "--json", "--id", "ACP-RPC-001", "--", *AGENT, "--fault",
        "unknown-method-internal-error",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["format"] == "acp-lite-report/1"
    assert report["passed"] is False
    (row,) = report["requirements"]
    assert row["id"] == "ACP-RPC-001" and row["status"] == "fail"
    assert "-32603" in row["reason"]
    assert any('"method":"_acp_lite_probe/no_such_method"' in e["text"] for e in row["evidence"])


def test_probe_exit_codes_for_no_agent_and_bad_tiers(run_cli: RunCli) -> None:
    gone = run_cli("probe", "--", sys.executable, "-c", "pass")
    assert gone.returncode == 3, gone.stdout + gone.stderr
    assert "ACP-INIT-000" in gone.stdout
    bad = run_cli("probe", "--tiers", "nope")
    assert bad.returncode == 2
    assert "unknown tier 'nope'" in bad.stderr
