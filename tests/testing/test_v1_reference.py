"""The reference agent speaking ACP v1 (``--protocol 1``, ``InProcessAgent(protocol=1)``):
our client drives it through the v1 translator, the wire holds v1 only, and the
traffic conforms to the v1 rules."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from typing import Any

import pytest

from acp_lite import connect_in_memory, permissions
from acp_lite.errors import AuthRequired
from acp_lite.limits import Limits
from acp_lite.testing import InProcessAgent
from pytest_acp._tracking import Tracked, tracked_violations

FAST = Limits(default_timeout=5.0)


@contextlib.contextmanager
def v1(scenario: str, **kwargs: Any) -> Any:
    agent = InProcessAgent(scenario, protocol=1)
    with connect_in_memory(agent, limits=FAST, conformance=True, **kwargs) as client:
        assert client.protocol_version == 1
        yield client
        found = tracked_violations(Tracked(client, 0, None), ended=True)
        assert found == [], found
        received = [json.loads(e.line) for e in client.transcript if e.direction == "recv"]
        updates = [m["params"]["update"] for m in received if m.get("method") == "session/update"]
        # Only v1 on the wire: no v2 states, no message ids, no v2-only tags.
        assert not [u for u in updates if u["sessionUpdate"] == "state_update"]
        assert not [u for u in updates if "messageId" in u]
        assert not [u for u in updates if u["sessionUpdate"] in ("plan_update", "user_message")]


@pytest.mark.parametrize(
    ("scenario", "text"),
    [("echo", "hello"), ("streaming", None), ("thinking", None)],
)
def test_turns(scenario: str, text: str | None) -> None:
    with v1(scenario) as client:
        turn = client.new_session(cwd="/tmp").run("hello")
        assert turn.stop_reason == "end_turn"
        assert turn.text if text is None else turn.text == text
        assert [e.synthesized for e in turn.updates if e.tag == "user_message"] == [True]


@pytest.mark.parametrize(
    ("policy", "status", "text"),
    [
        (permissions.allow_once, "completed", "Done: notes.txt is written."),
        (permissions.reject, "failed", "Okay, I did not write the file."),
    ],
)
def test_tool_call_and_permission(policy: Any, status: str, text: str) -> None:
    with v1("tool_call_permission", on_permission=policy) as client:
        turn = client.new_session(cwd="/tmp").run("write the notes")
        (tool,) = client.sessions[turn.session_id].model.tool_calls
        assert (tool.title, tool.status) == ("Write notes.txt", status)
        assert (turn.stop_reason, turn.text) == ("end_turn", text)


def test_plan() -> None:
    with v1("plan") as client:
        session = client.new_session(cwd="/tmp")
        session.run("plan it")
        plans = [e for e in session.model.timeline if e.kind == "plan"]
        assert [e.status for e in plans[-1].entries] == ["completed"] * 3


def test_cancel() -> None:
    with v1("slow_cancel") as client:
        session = client.new_session(cwd="/tmp")
        session.submit("work")
        for event in session.iter_updates(timeout=5):
            if event.tag == "agent_message_chunk":
                break
        session.cancel(wait=True, timeout=5)
        assert session.model.stop_reason == "cancelled"


def test_failure_is_an_idle_with_error() -> None:
    with v1("failure") as client:
        turn = client.new_session(cwd="/tmp").run("fail")
        # v1 fails the prompt after its updates: the translator makes it an idle
        # with stopReason error, the agent's message kept.
        assert turn.stop_reason == "error"
        assert "Model provider unavailable" in str(turn.error)


def test_load_replays_the_history() -> None:
    with v1("echo") as client:
        first = client.new_session(cwd="/tmp")
        first.run("remember me")
        again = client.resume_session(first.id, cwd="/tmp", replay=True)
        replayed = [e for e in again.model.events if e.replayed]
        assert replayed
        assert "remember me" in again.model.text()


def test_login_with_authenticate() -> None:
    with v1("auth_required") as client:
        assert [m.method_id for m in client.auth_methods] == ["token"]
        with pytest.raises(AuthRequired):
            client.new_session(cwd="/tmp")
        client.login("token")
        assert client.new_session(cwd="/tmp").run("hi").stop_reason == "end_turn"


def test_the_process_speaks_v1() -> None:
    agent = [sys.executable, "-m", "acp_lite.testing.agent", "--protocol", "1"]
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    proc = subprocess.run(
        agent, input=json.dumps(init) + "\n", capture_output=True, text=True, timeout=30
    )
    result = json.loads(proc.stdout.splitlines()[0])["result"]
    assert result["protocolVersion"] == 1 and result["agentInfo"]["name"]
    assert result["authMethods"][0]["id"] == "token"
