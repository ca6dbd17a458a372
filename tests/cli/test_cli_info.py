"""``acp-lite info``: the agent's info, capabilities and auth methods."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from acp_lite.cli import EXIT_OK

from .conftest import RunCli


def test_info_of_the_reference_agent(run_cli: RunCli) -> None:
    proc = run_cli("info")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert proc.stdout.startswith("agent:        ")
    assert "protocol:     2\n" in proc.stdout
    assert "capabilities: {" in proc.stdout
    assert "auth methods:" in proc.stdout


def test_info_json(run_cli: RunCli) -> None:
    proc = run_cli("info", "--json")
    assert proc.returncode == EXIT_OK, proc.stderr
    data = json.loads(proc.stdout)
    assert data["protocolVersion"] == 2
    assert isinstance(data["info"]["name"], str)
    assert isinstance(data["info"]["version"], str)
    assert isinstance(data["capabilities"], dict)
    assert isinstance(data["authMethods"], list)


def test_python_dash_m_acp_lite_is_the_command(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "acp_lite", "info", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == EXIT_OK, proc.stderr
    assert json.loads(proc.stdout)["protocolVersion"] == 2
