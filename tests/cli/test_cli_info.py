"""``acp-lite info``: the agent's info, capabilities and auth methods."""

from __future__ import annotations

import json

from acp_lite.cli import EXIT_OK

from .conftest import RunCli


def test_info_of_the_reference_agent(run_cli: RunCli) -> None:
    proc = run_cli("info")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert proc.stdout.startswith("agent:        ")
    assert "protocol:     2\n" in proc.stdout
    assert "capabilities:\n  session.prompt.embeddedContext" in proc.stdout
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


def test_python_dash_m_acp_lite_is_the_command(run_cli: RunCli) -> None:
    # `python -m acp_lite` in this process (runpy, as -m does; the installed
    # `acp-lite` binary runs for real in tests/cli/test_readme_commands.py).
    proc = run_cli("info", "--json", module="acp_lite")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert json.loads(proc.stdout)["protocolVersion"] == 2
