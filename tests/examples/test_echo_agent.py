"""examples/echo_agent.py follows the spec: driven by our client, checked for conformance."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acp_lite.client import connect
from acp_lite.errors import MethodNotFound, PromptRejected, ResourceNotFound
from pytest_acp.conformance import check_transcript, format_violations

AGENT = [sys.executable, str(Path(__file__).resolve().parents[2] / "examples" / "echo_agent.py")]


def test_echo_agent_full_surface_is_conformant(tmp_path: Path) -> None:
    with connect(AGENT, timeout=15) as client:
        assert client.protocol_version == 2
        assert client.agent_info.name == "echo-agent"

        session = client.new_session(cwd=str(tmp_path))
        turn = session.run("hello  there")
        assert (turn.stop_reason, turn.text) == ("end_turn", "hello  there")
        assert turn.message_id
        second = session.run([{"type": "text", "text": "again"}])
        assert second.text == "again"
        assert second.message_id != turn.message_id

        listed = client.list_sessions(cwd=str(tmp_path))
        assert [s.session_id for s in listed] == [session.id]

        # Prompts the agent cannot insert are rejected, and nothing is inserted.
        image = {"type": "image", "mimeType": "image/png", "data": ""}
        with pytest.raises(PromptRejected) as rejected:
            session.prompt([image])
        assert rejected.value.code == -32602
        with pytest.raises(MethodNotFound):
            client.request("_echo/nothing", {})

        resumed = client.resume_session(session.id, cwd=str(tmp_path))
        assert resumed.state == "idle"
        session.close()
        with pytest.raises(ResourceNotFound):
            client.resume_session(session.id, cwd=str(tmp_path))
        assert client.list_sessions() == []
        transcript = client.transcript

    violations = check_transcript(transcript)
    assert violations == [], format_violations(violations)


def test_echo_agent_answers_bad_input_with_errors() -> None:
    init_v1 = {"protocolVersion": 1, "info": {"name": "old", "version": "0"}}
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init_v1}),
        "not json",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {}}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/nope", "params": {}}),
        json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}}),
    ]
    proc = subprocess.run(
        AGENT, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    codes = [(a["id"], a["error"]["code"]) for a in answers]
    # v1 only -> -32022; bad JSON -> -32700 with id null; missing cwd -> -32602;
    # unknown method -> -32601; the notification gets no answer.
    assert codes == [(1, -32022), (None, -32700), (2, -32602), (3, -32601)]
