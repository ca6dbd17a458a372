"""An agent in this process that exits mid-turn: what the client's error says."""

from __future__ import annotations

from pathlib import Path

import pytest

import acp_lite
from acp_lite.errors import AgentExited
from acp_lite.testing import InProcessAgent


def test_a_crash_in_process_names_the_exit_code_and_stderr(tmp_path: Path) -> None:
    # The `crash` scenario exits with code 3 after writing to stderr, as its process
    # does; the README promises both in the AgentExited a crashed turn raises.
    agent = InProcessAgent(scenario="crash")
    client = acp_lite.connect_in_memory(agent, timeout=10)
    with client, pytest.raises(AgentExited) as raised:
        client.new_session(cwd=tmp_path).run("hi")
    assert agent.returncode == 3  # the agent knows; the error should say so too
    assert raised.value.returncode == 3
    assert "code 3" in str(raised.value)
    assert raised.value.stderr_tail
