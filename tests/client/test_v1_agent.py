"""The blocking API, unchanged, against an agent that speaks only ACP v1."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import acp_lite
from acp_lite.errors import UnsupportedProtocolVersion

V1_AGENT = [sys.executable, str(Path(__file__).parent.parent / "cli" / "agents" / "v1_agent.py")]


def test_run_on_a_v1_agent() -> None:
    with acp_lite.connect(V1_AGENT, timeout=20) as client:
        assert client.protocol_version == 1
        session = client.new_session(cwd="/")
        turn = session.run("hello v1")
        assert turn.stop_reason == "end_turn"
        assert turn.text == "hello v1"
        tags = [e.tag for e in turn.updates]
        assert tags[0] == "state_update" and "agent_message_chunk" in tags
        assert [e.synthesized for e in turn.updates if e.tag == "user_message"] == [True]
        # The transcript holds the wire as sent: v1, no message ids invented there.
        assert all(b"v1-prompt-" not in e.line for e in client.transcript if e.direction == "recv")
        again = session.run("twice")  # the turn is over: the next prompt is accepted
        assert again.text == "twice"


def test_insisting_on_v2_refuses_a_v1_agent() -> None:
    with pytest.raises(UnsupportedProtocolVersion):
        acp_lite.connect(V1_AGENT, timeout=20, protocol_version=2)
